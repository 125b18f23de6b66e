"""`POST /v1/ingest`: pushed bodies accepted durably, and group-committed to the warehouse.

A push is received (in memory up to `MEMORY_BODY`, past it in a temporary file), then
appended to the journal (`service.journal`) by one appender thread, with every push that
arrived while it wrote and synced the last ones: the `202` comes once the journal is on
disk up to it, so a server killed at any moment after it loses nothing. One committer thread takes the pushes waiting — at most every
`commit_interval` seconds (counted from the last commit's start: a commit that takes
longer is followed at once by the next), at once when `commit_lines` lines wait — and commits them
together as one warehouse batch, in journal order (the order of acceptance), through a
long-lived writer process (`ingest.live.commit_files`: its CPU and memory never slow the
API or take it down, and its imports are paid once). Each push's receipt names the batch
it went into.

After a restart the committer goes on from its committed position in the journal. A group
the warehouse committed but the journal was not told of (a kill in between) is found in
the warehouse's own record — the batch's files are named by their receipts — so no push
is committed twice, and none is lost.

Receipts (`GET /v1/batches/{id}`): a push's is kept in memory while it is in flight; once
its group is finished, it is written, per batch, to `commits.log`, and the most recent
finished ones (`RECENT_RECEIPTS`) are kept in bounded memory
(`service.receipts.FinishedReceipts`); older ones are found in `commits.log`.

Back-pressure: while the committer keeps up, pushes are never refused; when the oldest
waiting push is older than `max_lag` seconds, or the waiting bodies pass `max_waiting`
bytes, a push is answered `429` with how long to wait, estimated from the recent commit
rate (`IngestQueue.back_pressure`).

`<state>` is a local folder (`<warehouse>/_api` for a warehouse on this disk, a folder of
the user's state directory for one on S3; `serve --state` names another).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import mmap
import multiprocessing
import os
import queue
import secrets
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import orjson

from engine import _core
from ingest.storage import Location
from service.journal import Journal, Record
from service.receipts import FinishedReceipts, Receipt, is_id
from service.receipts import new_id as new_receipt_id
from service.receipts import now as _now

log = logging.getLogger("haftkhabis.service")

STATE_DIR = "_api"
#: finished receipts kept in memory, about 210 bytes each (older ones are read from commits.log)
RECENT_RECEIPTS = 200_000
#: commits.log is started again past this size (the previous one is kept as commits.log.1)
COMMITS_LOG_BYTES = 256 << 20
#: a pushed body up to this size waits for the journal in memory (past it, in a file)
MEMORY_BODY = 256 << 10  # a game is tens of kilobytes; connections × this is the most held


def state_folder(location: Location) -> Path:
    """Where the API keeps its journal and receipts for the warehouse at `location`:
    `<warehouse>/_api` on this disk; for S3, `$XDG_STATE_HOME/haftkhabis/api/<bucket>/<prefix>`
    (default `~/.local/state/...`)."""
    if location.local:
        return Path(location.uri) / STATE_DIR
    home = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    bucket, prefix = location.bucket_key(location.uri)
    return Path(home, "haftkhabis", "api", bucket, *[p for p in prefix.split("/") if p])


@dataclass(frozen=True, slots=True)
class CommitPolicy:
    """When the committer commits, and when a push is told to wait."""

    interval: float = 1.0  # seconds: a group is committed at most this long after the last
    lines: int = 100_000  # a group is committed at once when this many lines wait
    #: the most lines one group takes (memory: a batch this size is replayed at once); a
    #: committer that fell behind takes bigger groups, whose fixed cost is shared by more
    max_lines: int = 1_000_000
    #: after this many groups the parts due are merged (`ingest.merge`: each partition's
    #: parts of a size tier joined once the tier holds `FANOUT`), so a table's part count,
    #: and the cost of every Delta commit with it, stays bounded (0: never)
    compact_every: int = 8
    max_lag: float = 30.0  # seconds: past this age of the oldest waiting push, pushes wait
    max_waiting: int = 1 << 30  # bytes: past this much waiting, pushes wait
    #: a longer line of a push is quarantined as `line_too_long`, read past unheld
    max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES


def _lines_with(file: IO[bytes], needle: bytes) -> Iterator[bytes]:
    """The lines of `file` holding `needle`, the last first."""
    try:
        if os.fstat(file.fileno()).st_size == 0:
            return
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
            stop = len(view)
            while (at := view.rfind(needle, 0, stop)) >= 0:
                start, end = view.rfind(b"\n", 0, at) + 1, view.find(b"\n", at)
                yield view[start:end if end >= 0 else len(view)]
                stop = start
    except OSError:
        return


def _settle(futures: Sequence[asyncio.Future[None]], error: BaseException | None) -> None:
    """In the event loop: the pushes the appender journaled (or could not) are answered."""
    for future in futures:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)


class Spool:
    """A pushed body being received, hashed and its lines counted as it comes: held in
    memory up to `MEMORY_BODY` bytes (a game's push, tens of kilobytes: no file to make,
    write and delete), past it written to a temporary file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.tmp: Path | None = None
        self._file: IO[bytes] | None = None
        self._chunks: list[bytes] = []
        self._hash = hashlib.sha256()
        self.size = 0
        self.lines = 0
        self._last = b"\n"

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self._file is None and self.size + len(data) > MEMORY_BODY:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.tmp = self.folder / f".{secrets.token_hex(8)}.tmp"
            self._file = open(self.tmp, "wb")  # noqa: SIM115 - closed by close/discard
            self._file.writelines(self._chunks)
            self._chunks = []
        if self._file is not None:
            self._file.write(data)
        else:
            self._chunks.append(data)
        self._hash.update(data)
        self.size += len(data)
        self.lines += data.count(b"\n")
        self._last = data[-1:]

    def close(self) -> str:
        """Close it: the body's sha256 (a last line without its newline is counted)."""
        if self._file is not None:
            self._file.close()
        if self._last != b"\n":
            self.lines += 1
        return self._hash.hexdigest()

    @property
    def body(self) -> bytes | Path:
        """The body: its bytes, or the file holding them."""
        return self.tmp if self.tmp is not None else b"".join(self._chunks)

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
        self._chunks = []


@dataclass
class QueueStats:
    """What `GET /v1/health` and `/metrics` show of the queue."""

    waiting: int = 0  # pushes
    waiting_lines: int = 0
    waiting_bytes: int = 0
    oldest_age: float = 0.0  # seconds the oldest waiting push has waited
    committing: int = 0  # pushes in the group being committed
    batches: int = 0  # groups committed since the start
    pushes_committed: int = 0
    last_batch: int | None = None
    last_commit_seconds: float | None = None
    last_commit_lines: int = 0
    lines_per_second: float | None = None  # the recent commit rate
    failures: int = 0
    compactions: int = 0
    last_compact_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class CommitEvent:
    """A group committed: the batch, its figures, and each game it added or changed
    (`ingest.live.committed_games`), for whoever watches (the live feed, alerts, metrics)."""

    batch: int
    pushes: int
    lines: int
    seconds: float  # from taking the group to its commit
    quarantined: int
    games: tuple[dict[str, Any], ...]
    #: each push's seconds from its acceptance (its `202`) to this commit, in journal order
    waited: tuple[float, ...] = ()


@dataclass
class _Waiting:
    receipt: Receipt
    record: Record
    since: float  # monotonic


@dataclass
class _Append:
    """An accepted body waiting for the journal's appender, and who waits for it."""

    receipt: Receipt
    header: dict[str, Any]
    spool: Spool
    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[None]


@dataclass
class _Group:
    items: list[_Waiting]
    files: list[str] = field(default_factory=list)


class IngestQueue:
    """The journal, the receipts, and the committer thread."""

    def __init__(self, location: Location, *, workers: int = 1, state: Path | None = None,
                 on_commit: Callable[[CommitEvent], None] = lambda event: None,
                 policy: CommitPolicy | None = None) -> None:
        self.location = location
        self.state = state if state is not None else state_folder(location)
        self.incoming = self.state / "incoming"
        # the folder a pushed body's name is in (`_name`: no file is made, its bytes are
        # read from the journal; earlier versions wrote each body out there)
        self.groups = self.state / "groups"
        self.policy = policy or CommitPolicy()
        self.workers = workers
        self.journal = Journal(self.state / "journal")
        self._on_commit = on_commit
        self._lock = threading.Lock()
        self._log_search = threading.Lock()  # one search of commits.log at a time
        self._wake = threading.Condition(self._lock)
        self._waiting: list[_Waiting] = []
        self._queued_by_sha: dict[str, _Waiting] = {}  # a waiting push not yet being committed
        self._waiting_lines = 0  # of `_waiting`, kept as it changes
        self._waiting_bytes = 0
        self._receipts: dict[str, Receipt] = {}  # in flight: accepted, not finished
        self._finished = FinishedReceipts(RECENT_RECEIPTS)
        self._stats = QueueStats()
        self._last_commit = 0.0  # monotonic
        self._committing = 0  # pushes at the head of `_waiting` taken into groups not finished
        self._taken_lines = 0  # their lines
        self._since_compact = 0  # groups committed since the last compaction
        self._stopping = False
        self._pool: ProcessPoolExecutor | None = None
        self._thread = threading.Thread(target=self._run, name="haftkhabis-commit", daemon=True)
        # a committed group's readers refreshed and receipts finished while the next commits
        self._committed: queue.Queue[tuple[_Group, dict[str, Any]] | None] = queue.Queue(maxsize=1)
        self._publisher = threading.Thread(target=self._publish_run, name="haftkhabis-publish", daemon=True)
        # the journal's appender: the bodies accepted while it wrote and synced the last
        # ones, appended and synced together, their pushes answered together
        self._appending: list[_Append] = []
        self._appending_by_sha: dict[str, _Append] = {}
        self._append_wake = threading.Condition(self._lock)
        self._appender = threading.Thread(target=self._append_run, name="haftkhabis-journal", daemon=True)

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        self.incoming.mkdir(parents=True, exist_ok=True)
        for tmp in self.incoming.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)  # a body whose upload was cut off: never answered
        shutil.rmtree(self.groups, ignore_errors=True)
        self._load_commits_log()
        committed = self.journal.committed()
        pending = list(self.journal.records(committed))
        done = self._committed_in_warehouse({r.id for r in pending})
        found: list[Receipt] = []
        head = True  # the records so far are all committed: the journal's position moves past them
        for record in pending:
            receipt = self._receipt_of(record)
            if record.id in done:  # committed, but the journal was not told (a kill between)
                receipt.status, receipt.batch, receipt.finished_at = "committed", done[record.id], _now()
                self._file(receipt)
                found.append(receipt)
                if head:
                    committed = record.end
                continue
            head = False
            self._remember(receipt)
            self._enqueue(_Waiting(receipt, record, time.monotonic()))
        if found:  # their receipts outlive the journal's records, as any committed one's
            self._log_group(found)
            self.journal.mark_committed(committed)
        self._pool = self._writer()
        self._thread.start()
        self._publisher.start()
        self._appender.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
            self._append_wake.notify_all()
        if self._appender.is_alive():
            self._appender.join(timeout=10)  # the bodies it holds are answered first
        pool, self._pool = self._pool, None
        if pool is not None:
            # a group cut short leaves no trace (ingest recovers it), and stays in the
            # journal: it is committed at the next start; waiting for it could take a while
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
        self._thread.join(timeout=10)
        self._publisher.join(timeout=10)  # the groups committed are finished first
        self.journal.close()

    def _writer(self) -> ProcessPoolExecutor:
        from ingest.live import writer_started

        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=writer_started)
        pool.submit(int)  # start it now: the first group does not wait for it
        return pool

    # ------------------------------------------------------------------ pushes

    def spool(self) -> Spool:
        return Spool(self.incoming)

    async def accept(self, spool: Spool) -> tuple[Receipt, bool]:
        """Accept the received body: journal it (on disk before this returns), queue it.
        Its receipt, and whether it is new (False: the same body is already waiting, or
        being journaled, and that receipt stands). The body is appended by the journal's
        thread with the others that came meanwhile, under one sync (`_append_run`), which
        then discards the spool: it is this queue's from the call on."""
        try:
            sha = spool.close()
        except BaseException:
            spool.discard()
            raise
        with self._lock:
            same = self._queued_by_sha.get(sha)
            if same is not None:
                spool.discard()
                return replace(same.receipt), False
            item = self._appending_by_sha.get(sha)
            new = item is None
            if item is None:
                receipt = Receipt(id=new_receipt_id(), status="queued", sha256=sha,
                                  size=spool.size, lines=spool.lines, received_at=_now())
                header = {"id": receipt.id, "sha256": sha, "size": spool.size, "lines": spool.lines,
                          "received_at": receipt.received_at}
                loop = asyncio.get_running_loop()
                item = _Append(receipt, header, spool, loop, loop.create_future())
                self._appending.append(item)
                self._appending_by_sha[sha] = item
                self._append_wake.notify()
            else:
                spool.discard()
        # shielded: a client that leaves does not cancel what others may wait for too
        await asyncio.shield(item.done)
        return replace(item.receipt), new

    def _append_run(self) -> None:
        """The journal's appender: take every body waiting, append them with one sync,
        queue them for the committer, answer their pushes (one call into each event loop
        for all of them)."""
        while True:
            with self._lock:
                while not self._appending and not self._stopping:
                    self._append_wake.wait()
                if not self._appending:
                    return
                items, self._appending = self._appending, []
            error: BaseException | None = None
            try:
                records = self.journal.append_many([(item.header, item.spool.body) for item in items])
            except BaseException as exc:  # the pushes are answered with it (500), never a 202
                error, records = exc, []
            finally:
                for item in items:
                    item.spool.discard()
            now = time.monotonic()
            with self._wake:
                for item in items:
                    if self._appending_by_sha.get(item.receipt.sha256) is item:
                        del self._appending_by_sha[item.receipt.sha256]
                for item, record in zip(items, records, strict=False):
                    self._remember(item.receipt)
                    self._enqueue(_Waiting(item.receipt, record, now))
                if records:
                    self._wake.notify_all()
            by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
            for item in items:
                by_loop.setdefault(item.loop, []).append(item.done)
            for loop, futures in by_loop.items():
                with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits
                    loop.call_soon_threadsafe(_settle, futures, error)

    def _enqueue(self, item: _Waiting) -> None:
        self._waiting.append(item)
        self._queued_by_sha.setdefault(item.receipt.sha256, item)
        self._waiting_lines += item.record.lines
        self._waiting_bytes += item.record.size

    def get(self, receipt_id: str) -> Receipt | None:
        """A copy of the receipt as it stands (a recent one from memory, an older one
        from commits.log), None when no push has that id."""
        with self._lock:
            receipt = self._receipts.get(receipt_id)
            if receipt is not None:
                return replace(receipt)
            receipt = self._finished.get(receipt_id)
            if receipt is not None:
                return receipt  # made for this call
        return self._find_in_commits_log(receipt_id)

    def stats(self) -> QueueStats:
        with self._lock:
            stats = replace(self._stats)
            stats.committing = self._committing
            stats.waiting = len(self._waiting) - self._committing
            stats.waiting_lines = self._waiting_lines
            stats.waiting_bytes = self._waiting_bytes
            stats.oldest_age = time.monotonic() - self._waiting[0].since if self._waiting else 0.0
        return stats

    def back_pressure(self) -> float | None:
        """Seconds a new push should wait before it is sent (None: send it now): the
        queue's lag or size is past the policy's bounds, and this is how long the recent
        commit rate takes to work through what waits."""
        with self._lock:  # each push asks: the two figures, not a copy of all the stats
            oldest_age = time.monotonic() - self._waiting[0].since if self._waiting else 0.0
            if oldest_age <= self.policy.max_lag and self._waiting_bytes <= self.policy.max_waiting:
                return None
            rate = self._stats.lines_per_second or 1_000.0
            return max(1.0, min(300.0, self._waiting_lines / rate))

    # ------------------------------------------------------------------ receipts

    def _receipt_of(self, record: Record) -> Receipt:
        h = record.header
        return Receipt(id=record.id, status="queued", sha256=str(h.get("sha256", "")),
                       size=record.size, lines=record.lines, received_at=str(h.get("received_at", "")))

    def _remember(self, receipt: Receipt) -> None:
        """Keep a receipt in flight (changed by the committer as its push goes)."""
        self._receipts[receipt.id] = receipt

    def _file(self, receipt: Receipt) -> None:
        """A finished receipt: no longer in flight, kept among the recent finished ones."""
        self._receipts.pop(receipt.id, None)
        self._finished.add(receipt)

    def _commits_log(self) -> Path:
        return self.state / "commits.log"

    def _log_group(self, receipts: Sequence[Receipt]) -> None:
        path = self._commits_log()
        with contextlib.suppress(OSError):
            if path.stat().st_size > COMMITS_LOG_BYTES:
                os.replace(path, path.with_name("commits.log.1"))
        with open(path, "ab") as out:
            out.write(b"".join(r.to_json() + b"\n" for r in receipts))

    def _load_commits_log(self) -> None:
        """The last receipts of commits.log (and of the one before it) kept as recent."""
        last: deque[bytes] = deque(maxlen=RECENT_RECEIPTS)
        for path in (self._commits_log().with_name("commits.log.1"), self._commits_log()):
            with contextlib.suppress(OSError), open(path, "rb") as lines:
                last.extend(lines)
        for line in last:
            with contextlib.suppress(ValueError, TypeError):
                self._finished.add(Receipt(**orjson.loads(line)))

    def _find_in_commits_log(self, receipt_id: str) -> Receipt | None:
        """An older receipt, as commits.log last wrote it (the current file, then the one
        before it). Only an id of a receipt's form is looked for (a batch number asked at
        `/v1/batches` is not), one look-up at a time, each file searched from its end by
        `mmap.rfind`: a miss reads both files whole (up to twice `COMMITS_LOG_BYTES`) at
        the speed of memory, not line by line in Python."""
        if not is_id(receipt_id):
            return None
        needle = orjson.dumps(receipt_id)
        with self._log_search, contextlib.ExitStack() as files:
            opened = []  # both opened first: a file started again meanwhile is still read
            for path in (self._commits_log(), self._commits_log().with_name("commits.log.1")):
                with contextlib.suppress(OSError):
                    opened.append(files.enter_context(open(path, "rb")))
            for file in opened:
                for line in _lines_with(file, needle):  # a line cut short by a crash: the one before
                    with contextlib.suppress(ValueError, TypeError):
                        return Receipt(**orjson.loads(line))
        return None

    def _committed_in_warehouse(self, ids: set[str]) -> dict[str, int]:
        """Which of the receipts `ids` a warehouse batch holds (its files are named by
        their receipts): receipt → batch."""
        if not ids:
            return {}
        from ingest.store import Warehouse, WarehouseError

        try:
            store = Warehouse(self.location)
            version = store.snapshot().versions["batches"]
            rows = store.dataset("batches", version).to_table(columns=["id", "files"]).to_pylist()
        except (WarehouseError, OSError, KeyError):
            return {}
        found: dict[str, int] = {}
        for row in rows:
            for item in row["files"] or ():
                name = Path(item["path"] or "").stem
                if name in ids and item["status"] != "failed":
                    found[name] = int(row["id"])
        return found

    # ------------------------------------------------------------------ the committer

    def _take(self) -> _Group | None:
        """Wait for a group to be due; take it (None: stopping)."""
        with self._wake:
            while not self._stopping:
                if len(self._waiting) <= self._committing:  # all taken
                    self._wake.wait()
                    continue
                due = self._last_commit + self.policy.interval
                now = time.monotonic()
                if self._waiting_lines - self._taken_lines >= self.policy.lines or now >= due:
                    break
                self._wake.wait(min(due - now, threading.TIMEOUT_MAX))
            if self._stopping:
                return None
            taken: list[_Waiting] = []
            lines = 0
            for item in itertools.islice(self._waiting, self._committing, None):
                if taken and lines + item.record.lines > self.policy.max_lines:
                    break
                taken.append(item)
                lines += item.record.lines
            self._last_commit = time.monotonic()  # the interval runs from a commit's start
            started = _now()
            for item in taken:
                item.receipt.status, item.receipt.started_at = "running", started
                if self._queued_by_sha.get(item.receipt.sha256) is item:
                    del self._queued_by_sha[item.receipt.sha256]
            self._committing += len(taken)
            self._taken_lines += lines
        return _Group(taken)

    def _run(self) -> None:
        try:
            while True:
                group = self._take()
                if group is None:
                    return
                try:
                    group.files.extend(self._name(item) for item in group.items)
                    outcome = self._commit(group)
                except Exception as exc:  # the group could not be read back: say so, go on
                    log.error("a group of %d pushes failed", len(group.items), exc_info=exc)
                    outcome = {"error": f"{type(exc).__name__}: {exc}"[:500]}
                if outcome.get("batch") is not None:
                    self._since_compact += 1
                # the next group is taken at once; this one's readers and receipts follow
                # in order (a group waits here while the one before is still published)
                self._committed.put((group, outcome))
                if self.policy.compact_every and self._since_compact >= self.policy.compact_every:
                    self._compact()
        finally:
            self._committed.put(None)

    def _publish_run(self) -> None:
        """Each committed group in turn: the listener told (readers see the batch), then
        its receipts finished: a receipt never says committed before readers see it."""
        while (committed := self._committed.get()) is not None:
            group, outcome = committed
            if outcome.get("batch") is not None:
                now = time.monotonic()
                event = CommitEvent(int(outcome["batch"]), len(group.items), int(outcome.get("lines") or 0),
                                    float(outcome.get("wall") or 0.0), int(outcome.get("quarantined") or 0),
                                    tuple(outcome.get("games_committed") or ()),
                                    tuple(now - item.since for item in group.items))
                try:
                    self._on_commit(event)
                except Exception as exc:
                    log.warning("a commit's listener failed", exc_info=exc)
            try:
                self._finish(group, outcome)
            except Exception as exc:  # (the journal's position, say): found again at a restart
                log.error("finishing batch %s's receipts failed", outcome.get("batch"), exc_info=exc)

    def _compact(self) -> None:
        """Merge the parts due (in the writer: pushes are still taken meanwhile, and
        committed right after)."""
        from ingest.live import merge_small_parts

        self._since_compact = 0
        clock = time.monotonic()
        try:
            pool = self._pool or self._writer()
            self._pool = pool
            merged = pool.submit(merge_small_parts, self.location.uri, self.location.delta_options()).result()
        except Exception as exc:  # a merge that fails is tried again after the next groups
            log.warning("merging parts after %d groups failed", self.policy.compact_every, exc_info=exc)
            return
        for skipped in merged["skipped"]:
            log.warning("parts not merged: %s", skipped)
        if merged["batch"] is None:
            return
        with self._lock:
            self._stats.compactions += 1
            self._stats.last_compact_seconds = time.monotonic() - clock
        log.info("merged: %s parts into %s (batch %s, %.1f MB) in %.2fs", merged["removed"],
                 merged["added"], merged["batch"], merged["bytes"] / 1e6, time.monotonic() - clock)

    def _name(self, item: _Waiting) -> str:
        """The name a pushed body has in the warehouse's batch (its receipt's: the API
        shows a receipt its own file by it). No file is made: the writer reads the body
        where the journal holds it (`_commit`'s ranges; making a file a body cost the
        server 0.05-0.3 ms of CPU on this project's machine, `bench/bench_group_commit.py
        --file-costs`)."""
        return os.path.abspath(self.groups / f"{item.receipt.id}.jsonl")  # as `ingest` records a path

    def _commit(self, group: _Group) -> dict[str, Any]:
        """Commit the group as one batch, waiting while the warehouse is busy with another
        writer and retrying a transient failure; the writer's outcome, or its error."""
        from ingest.live import commit_files

        delay, tries = 0.5, 0
        while True:
            clock = time.monotonic()
            try:
                pool = self._pool or self._writer()
                self._pool = pool
                digests = {path: (item.receipt.size, item.receipt.sha256)
                           for path, item in zip(group.files, group.items, strict=True)}
                ranges = {path: self.journal.range_of(item.record)
                          for path, item in zip(group.files, group.items, strict=True)}
                result: dict[str, Any] = pool.submit(
                    commit_files, group.files, self.location.uri, self.location.delta_options(),
                    digests, max_line_bytes=self.policy.max_line_bytes, ranges=ranges).result()
                result["wall"] = time.monotonic() - clock
                return result
            except BrokenProcessPool as exc:
                codes = [p.exitcode for p in getattr(self._pool, "_processes", {}).values()]
                log.error("the writer process died (exit codes %s)", codes, exc_info=exc)
                self._pool = None
                error = "the writer process died; the warehouse is as it was before"
            except Exception as exc:
                error = " ".join(str(exc).split("\n", 1)[0].split()) or type(exc).__name__
                if "is busy" in error and not self._stopping:
                    log.info("a group waits: %s", error)
                    with self._wake:
                        self._wake.wait(delay)
                    delay = min(delay * 2, 5.0)
                    continue
                error = f"{type(exc).__name__}: {error}"[:500]
            tries += 1
            if tries >= 3 or self._stopping:
                return {"error": error}
            log.warning("a group of %d pushes failed (%s); trying again", len(group.items), error)
            with self._wake:
                self._wake.wait(delay)
            delay = min(delay * 2, 5.0)

    def _finish(self, group: _Group, outcome: Mapping[str, Any]) -> None:
        batch = outcome.get("batch")
        files = outcome.get("files") or {}
        finished = _now()
        done: list[Receipt] = []
        with self._wake:
            paths = group.files + [""] * (len(group.items) - len(group.files))
            for item, path in zip(group.items, paths, strict=True):
                receipt = item.receipt
                report = files.get(path) or {}
                if batch is None or report.get("status") == "failed":
                    receipt.status = "failed"
                    receipt.error = outcome.get("error") or report.get("error") or "not committed"
                else:
                    receipt.status, receipt.batch = "committed", int(batch)
                receipt.finished_at = finished
                self._file(receipt)
                done.append(receipt)
            del self._waiting[:len(group.items)]  # the group is the queue's head
            self._committing -= len(group.items)
            lines = sum(i.record.lines for i in group.items)
            self._taken_lines -= lines
            self._waiting_lines -= lines
            self._waiting_bytes -= sum(i.record.size for i in group.items)
            stats = self._stats
            if batch is not None:
                stats.batches += 1
                stats.last_batch = int(batch)
                stats.last_commit_seconds = float(outcome.get("wall") or 0.0)
                stats.last_commit_lines = int(outcome.get("lines") or 0)
                rate = stats.last_commit_lines / max(stats.last_commit_seconds, 1e-3)
                stats.lines_per_second = rate if stats.lines_per_second is None else \
                    0.8 * stats.lines_per_second + 0.2 * rate
            else:
                stats.failures += 1
            stats.pushes_committed += sum(1 for r in done if r.status == "committed")
        self._log_group(done)
        self.journal.mark_committed(group.items[-1].record.end)


