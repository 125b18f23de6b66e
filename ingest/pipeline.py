"""The ingest pipeline: log files in, one committed batch of warehouse rows out.

Shape of a batch (docs/warehouse.md tells the same story for users):

1. The coordinator takes the writer lock, recovers from any killed batch, lists and
   hashes the input files (size, sha256), and skips files already ingested whole
   (unless `force`).
2. The coordinator reads the files once and routes each line by its game to one of N
   spools (`engine._core.route_files`: the core parses the line and hashes its game id),
   so no game is split and each worker reads only its own lines. Lines that belong to no
   game go to `quarantine` (the coordinator writes those, once each).
3. N workers (processes, or tasks on a Dask cluster: `cluster`) each replay their spool with the engine (`engine._core.Ingestor`),
   which judges each game and builds its rows as Arrow columns; the worker writes them as
   Parquet parts into the table folders, uncommitted. The engine holds only open games:
   a game is judged once it is closed by a `result` or `abort`, or once its match is over
   and a window of further lines has passed without more of it, or once it has been idle
   for a longer window (a log with a gap never closes), and at the end of the input.
4. Each worker then reconciles its games with the committed warehouse: a game whose
   content hash is already there is unchanged (its new rows are dropped); a game that was
   there with other lines, or that got more lines after it was flushed, is replayed again
   from the union of its lines, the earlier ones read back from `events.raw`.
5. The coordinator commits each data table in one Delta transaction (new parts added;
   parts holding the replaced versions of updated games rewritten without them), then
   appends the batch's row to `batches`, which records every table's new version. Readers
   open the tables at the versions of the latest `batches` row, so they see the whole
   batch or none of it; a batch killed before that row is undone by the next writer.

On a cluster the spools are put in the warehouse's staging prefix (on S3 when the
warehouse is there), each task fetches its own, writes its parts straight to the store and
returns only their metadata (`WorkerResult`); the driver commits as above. A task whose
worker dies is run again elsewhere by the scheduler under a fresh part prefix (parts of the
dead attempt are never committed); a batch whose tasks keep failing raises `IngestError`
with nothing committed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import multiprocessing as mp
import os
import queue as queue_module
import shutil
import time
import traceback
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from engine import ENGINE_VERSION, _core
from engine.reader import InputPathError
from ingest import summaries
from ingest.columns import to_table
from ingest.lifetime import die_with_parent
from ingest.schema import CASE_TABLES, DATA_TABLES, GAME_TABLES, SUMMARY_TABLES
from ingest.spools import spool_folder, sweep_once
from ingest.store import (
    OpenBudget,
    PartFile,
    PartWriter,
    Snapshot,
    Warehouse,
    WriterFenced,
    new_attempt,
    new_token,
    read_part,
    rewrite_without,
)

if TYPE_CHECKING:  # a worker that reads nothing back never imports it (nor pandas)
    import pyarrow.dataset as pads

#: lines a worker reads after a game's match is over before the engine judges the game
CLOSE_WINDOW = 20_000
#: lines a worker reads without a line of an open game before the engine judges the game
#: as it stands (a log with a gap never closes); should more of it come, it is merged
IDLE_WINDOW = 250_000
#: rows (of every game table, all partitions together) the engine holds in its column
#: builders; past it, it hands over the partition holding the most (`Ingestor`)
FLUSH_ROWS = 65_536
#: the wide tables, whose batches a worker writes as row groups as they come (the engine
#: gathered them, per partition); the narrow ones' batches are small, and their writers
#: gather them into row groups of `store.ROW_BUFFER` rows
WRITTEN_AS_HANDED = frozenset({"events"})
#: a window that never passes (a merge replays one whole game)
_NEVER = 2**64 - 1
#: seconds between progress messages from a worker
PROGRESS_EVERY = 0.2
#: the name ending of a spool put in the store for a cluster's workers (zstd-compressed)
STAGED_SPOOL = ".zst"
#: times a cluster task that raised is run again (a task whose worker died is rescheduled
#: by the scheduler itself, up to its `allowed-failures`)
TASK_RETRIES = 2
#: seconds a failed cluster batch waits for its other tasks to end before it cleans up
TASK_DRAIN = 300.0


@dataclass(frozen=True, slots=True)
class InputFile:
    """One input file as the batch sees it."""

    path: str  # absolute; what the warehouse records
    size: int | None
    sha256: str | None
    skip: bool = False
    error: str | None = None
    #: its bytes are a range of a larger file, `(source, offset, size)` (a pushed body in
    #: the live service's journal): no file `path` exists
    range: tuple[str, int, int] | None = None


@dataclass(slots=True)
class FileReport:
    """What the router found reading one file."""

    lines: int = 0
    status: str = "ok"
    error: str | None = None


@dataclass(slots=True)
class Counts:
    """What one worker read and judged."""

    files: int = 0
    lines: int = 0
    games: int = 0
    violations: int = 0
    quarantined: int = 0


@dataclass(slots=True)
class WorkerResult:
    """One shard's pass: the parts it wrote, and the games it added, replaced or left."""

    shard: int
    parts: dict[str, list[PartFile]]
    replaced: dict[str, tuple[str, str]]  # game → (ruleset, month) of its committed version
    new: int
    updated: int
    unchanged: int
    violations: int
    quarantined: int
    lines: int
    peak_open: int = 0  # the most games this worker held open at once
    #: table → the folders this worker wrote parts to (committed or not): where a dead
    #: earlier attempt of the same shard may have left some
    folders: dict[str, list[str]] = field(default_factory=dict)
    #: what this worker's routing pass found (when the workers route: `RouteJob`)
    routed: Routed | None = None


#: a quarantine key: file sha256, line, code (a line quarantined once per file content)
QuarantineKey = tuple[str | None, int | None, str]


@dataclass(frozen=True, slots=True)
class RouteJob:
    """A worker's share of the routing pass, before it replays: a run of consecutive
    input files, routed to one spool per shard (`spools[k]` for worker k)."""

    files: tuple[InputFile, ...]
    spools: tuple[str, ...]
    #: quarantine keys of these files already in the warehouse (not written again)
    seen: frozenset[QuarantineKey]
    #: files whose content an earlier file of the batch has: their quarantine rows are
    #: that file's, written once (as one routing pass over every file would)
    suppressed: frozenset[str]
    prefix: str  # of the quarantine parts this job writes
    #: a longer line is quarantined as `line_too_long`, read past unheld
    max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES


@dataclass(frozen=True, slots=True)
class WorkerTask:
    warehouse: str
    files: tuple[InputFile, ...]
    spool: str
    shard: int
    shards: int
    batch: int
    prefix: str
    versions: dict[str, int]
    has_games: bool
    storage_options: dict[str, str] = field(default_factory=dict)
    #: the spools to replay, in order, each with the files its records name; none: just
    #: `spool`, naming `files`
    sources: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: routing this worker does first (worker processes route in parallel)
    route: RouteJob | None = None
    #: the files this worker reads itself, with no routing pass and no spool (the one
    #: shard of a batch: every game is its own); `spool` and `sources` are then unused
    read_files: RouteJob | None = None


@dataclass(slots=True)
class Progress:
    """Totals so far, for a progress bar."""

    files_total: int
    files: int = 0
    lines: int = 0
    games: int = 0
    violations: int = 0
    phase: str = "reading"


@dataclass(slots=True)
class BatchSummary:
    batch: int
    files: list[dict[str, Any]]
    lines: int
    games_new: int
    games_updated: int
    games_unchanged: int
    violations: int
    quarantined: int
    seconds: float
    versions: dict[str, int]
    workers: int
    restored: list[str] = field(default_factory=list)
    peak_open_games: int = 0  # per worker: what the memory of a batch grows with
    #: the parts holding the batch's own rows (its new and changed games), by table
    written: dict[str, list[PartFile]] = field(default_factory=dict)

    @property
    def files_read(self) -> int:
        return sum(1 for f in self.files if f["status"] in ("ok", "truncated"))

    @property
    def files_skipped(self) -> int:
        return sum(1 for f in self.files if f["status"] == "skipped")

    @property
    def files_failed(self) -> list[dict[str, Any]]:
        return [f for f in self.files if f["status"] in ("failed", "truncated")]


class IngestError(Exception):
    """The batch could not be committed; the warehouse is as it was before it.

    One line, for people. `errno` is set when the storage refused a write (a read-only
    file system, a full disk); `bug` when a worker raised something no input or storage
    explains (its traceback is this error's `__cause__`)."""

    def __init__(self, message: str, *, errno: int | None = None, bug: bool = False) -> None:
        super().__init__(message)
        self.errno = errno
        self.bug = bug


class WorkerTraceback(Exception):
    """A worker's traceback, carried to the coordinator as text (the `__cause__` of the
    `IngestError` raised there, so a crash report shows where the worker failed)."""

    def __str__(self) -> str:
        return f"\n{self.args[0]}" if self.args else ""


@dataclass(frozen=True, slots=True)
class WorkerFailure:
    """What a worker process sends when its shard fails: the exception's type and first
    line, its errno (an OSError's), whether it was the input's or the storage's doing
    rather than a bug, and the traceback."""

    kind: str
    message: str
    errno: int | None
    expected: bool
    details: str

    @classmethod
    def of(cls, exc: BaseException) -> WorkerFailure:
        from deltalake.exceptions import DeltaError

        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        errno = exc.errno if isinstance(exc, OSError) else None
        return cls(type(exc).__name__, first, errno, isinstance(exc, OSError | DeltaError),
                   traceback.format_exc())

    def error(self, worker: str) -> IngestError:
        what = f"{self.kind}: {self.message}" if self.message else self.kind
        error = IngestError(f"{worker} failed: {what}; nothing was committed",
                            errno=self.errno, bug=not self.expected)
        error.__cause__ = WorkerTraceback(self.details)
        return error


# ---------------------------------------------------------------------------- a worker

#: a line as received: raw bytes (no line ending), file, physical line number
RawLine = tuple[bytes, str, int]
#: a late line (its game was already judged in this pass): raw, file, line, fingerprint
LateLine = tuple[bytes, str, int, int]


#: which of some games the warehouse holds: game → (content hash, ruleset, month)
GameLookup = Callable[[list[str]], dict[str, tuple[str, str, str]]]


class GamesIndex(Protocol):
    """The committed games, kept by a long-lived writer between batches (`ingest.live`),
    so a batch finds which of its games are stored without scanning `games`."""

    def at(self, store: Warehouse, version: int) -> GameLookup:
        """The lookup as of `games` at `version` (brought there first)."""
        ...


class _InOrder:
    """Calls run in order by one thread of their own, at most `depth` of them waiting:
    a shard's Parquet writes, while the engine replays the next lines (each lets the GIL
    go for its work: the core while it replays, pyarrow while it encodes and compresses).
    An error is raised by the next `submit` or by `wait`; `stop` waits for the call
    running and drops those waiting."""

    def __init__(self, depth: int = 2) -> None:
        self.depth = depth
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="haftkhabis-parts")
        self._pending: deque[Future[None]] = deque()

    def submit(self, call: Callable[..., None], *args: Any) -> None:
        while len(self._pending) >= self.depth:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(call, *args))

    def wait(self) -> None:
        while self._pending:
            self._pending.popleft().result()

    def stop(self) -> None:
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)


class ShardWorker:
    """Replays one shard of the games of a batch (its spool) and writes their rows as
    parts. The engine judges each game and builds its rows; this class only writes them
    (in a thread of their own while the engine goes on: `_InOrder`) and reconciles them
    with the committed warehouse."""

    def __init__(self, task: WorkerTask, report: Callable[[Counts, bool], None] | None = None,
                 lookup: GameLookup | None = None) -> None:
        self.task = task
        #: which of these games the warehouse holds (hash, ruleset, month); None: scan `games`
        self.lookup = lookup
        self.warehouse = Warehouse(task.warehouse, task.storage_options)
        self.report = report
        self.ingestor = _core.Ingestor(batch=task.batch, hold_lines=CLOSE_WINDOW,
                                       idle_lines=IDLE_WINDOW, flush_rows=FLUSH_ROWS)
        #: the writers' open parts share one bound on their Parquet metadata
        self.budget = OpenBudget()
        self.writers = {name: PartWriter(self.warehouse, name, task.prefix, budget=self.budget)
                        for name in DATA_TABLES}
        self.counts = Counts()
        self.peak_open = 0
        self.late: dict[str, list[LateLine]] = defaultdict(list)
        self.redo_writers: dict[str, PartWriter] | None = None
        self._last_report = 0.0
        self._writes = _InOrder()

    # -- the pass over the spool

    def run(self) -> WorkerResult:
        try:
            return self._run()
        finally:
            self._writes.stop()

    def _run(self) -> WorkerResult:
        try:
            task = self.task
            routed = None
            if task.read_files is not None:
                routed = self._read_files(task.read_files)
            else:
                sources = task.sources or ((task.spool, tuple(f.path for f in task.files)),)
                for spool, files in sources:
                    # the spools of consecutive runs of files, in order: the same lines in
                    # the same order as one routing pass would give
                    if task.sources and not os.path.exists(spool):
                        continue  # no router had a line for this shard
                    self.ingestor.feed_spool(spool, list(files), self._sink, self._progress)
            self.ingestor.finish(self._sink)
            self._writes.wait()  # every row handed over is written: the writers are this thread's again
            # the games judged are read back from the `games` parts written (`_judged`):
            # the engine's own list of them would come as Python objects, 400 bytes a game
            # (90 MiB a worker at a million hands, with the written rows still buffered)
            for game, raw, file, line, fp in self.ingestor.take_late():
                self.late[game].append((raw, file, line, fp))
            # the router sent only game lines here; should the engine still refuse one,
            # it is quarantined like any other, never dropped
            for error in self.ingestor.take_errors():
                self._quarantine(error)
            self.counts.lines = self.ingestor.lines_read
            self.counts.games = self.ingestor.games
            self.counts.violations = self.ingestor.violations
            self.peak_open = self.ingestor.peak_open_games
            del self.ingestor  # and with it the engine's state of the pass
            base = {name: writer.close() for name, writer in self.writers.items()}
            self._report(force=True)
            result = self._reconcile(base)
            if routed is not None:
                result.routed = routed
            self.warehouse.location.synced()  # what it reports is on disk
            return result
        except BaseException:
            self._writes.stop()  # no write runs while the parts are taken away
            for writer in self.writers.values():
                writer.abort()
            raise

    def _read_files(self, job: RouteJob) -> Routed:
        """The batch's files read and replayed in one pass, each line parsed once (a
        routing pass would parse it, spool it, and this worker parse it again: about a
        sixth of a small batch's time); what the router would have found."""
        reads = _FileReads(self.warehouse, job.files, job.seen, job.suppressed, self.task.batch,
                           job.prefix, self._file_read)
        try:
            ranges = [f.range for f in job.files if f.range is not None]
            self.ingestor.feed_files([f.path for f in job.files], reads, self._sink, self._progress,
                                     max_line_bytes=job.max_line_bytes,
                                     ranges=ranges if ranges else None)
            return reads.close(())
        except BaseException:
            reads.writer.abort()
            raise

    def _file_read(self, files: int, lines: int) -> None:
        self.counts.files = files
        self._report()

    def _sink(self, ruleset: str, month: str, tables: dict[str, Any]) -> None:
        # the tables' buffers are theirs (the core hands its columns over, not lent)
        self._writes.submit(self._write, ruleset, month, tables, self.writers)

    @staticmethod
    def _write(ruleset: str, month: str, tables: dict[str, Any],
               writers: dict[str, PartWriter]) -> None:
        for name, columns in tables.items():
            writer, table = writers[name], to_table(name, columns)
            if name in WRITTEN_AS_HANDED:
                writer.add_group((ruleset, month), table)
            else:
                writer.add_table((ruleset, month), table)

    def _progress(self, lines: int, games: int, violations: int) -> None:
        self.counts.lines, self.counts.games, self.counts.violations = lines, games, violations
        self._report()

    def _report(self, force: bool = False) -> None:
        if self.report is None:
            return
        now = time.monotonic()
        if force or now - self._last_report >= PROGRESS_EVERY:
            self._last_report = now
            self.report(self.counts, force)

    def _quarantine(self, error: Mapping[str, Any]) -> None:
        item = next((f for f in self.task.files if f.path == error["file"]), None)
        self.counts.quarantined += 1
        self.writers["quarantine"].add((), [quarantine_row(error, item, self.task.batch)])

    # -- reconciling with the committed warehouse

    def _reconcile(self, base: dict[str, list[PartFile]]) -> WorkerResult:
        task = self.task
        judged = self._judged(base["games"])
        existing: dict[str, tuple[str, str, str]] = {}  # game → (hash, ruleset, month)
        if task.has_games and judged.num_rows and self.lookup is not None:
            existing = self.lookup(judged["game_id"].to_pylist())
        elif task.has_games and judged.num_rows:
            data = self.warehouse.dataset("games", task.versions["games"]).to_table(
                columns=["game_id", "content_hash", "ruleset", "month"],
                filter=pc.field("game_id").isin(judged["game_id"]))
            for row in data.to_pylist():
                existing[row["game_id"]] = (row["content_hash"], row["ruleset"], row["month"])
        # this pass's hash of the games already stored
        hashes: dict[str, str] = {}
        if existing:
            stored = judged.filter(pc.is_in(judged["game_id"],
                                            value_set=pa.array(list(existing), pa.string())))
            hashes = dict(zip(stored["game_id"].to_pylist(),
                              stored["content_hash"].to_pylist(), strict=True))
        unchanged: set[str] = set()
        merge: set[str] = set(self.late)
        for gid, (hash_, _, _) in existing.items():
            if gid in self.late:
                continue
            if hashes[gid] == hash_:
                unchanged.add(gid)
            else:
                merge.add(gid)
        redone: set[str] = set()
        if merge:
            unchanged_more, redone = self._merge(merge, existing, base["events"])
            unchanged |= unchanged_more
        drop = unchanged | redone
        parts: dict[str, list[PartFile]] = {}
        for name, written in base.items():
            if drop and name in GAME_TABLES:
                fresh, replaced = rewrite_without(
                    self.warehouse, name, written, drop, f"{task.prefix}-r")
                for part in replaced:
                    self.warehouse.location.delete(self.warehouse.part_uri(name, part))
                gone = {p.path for p in replaced}
                written = [p for p in written if p.path not in gone] + fresh
            parts[name] = written
        if self.redo_writers is not None:
            for name, writer in self.redo_writers.items():
                parts[name] = parts.get(name, []) + writer.close()
        updated = {g for g in existing if g not in unchanged}
        new = judged.num_rows - len(existing)
        violations = self._count_violations(parts["games"])
        folders = {name: sorted({p.folder for p in [*base.get(name, []), *parts.get(name, [])]})
                   for name in parts}
        return WorkerResult(
            task.shard, parts, {g: (existing[g][1], existing[g][2]) for g in updated},
            new, len(updated), len(unchanged), violations, self.counts.quarantined,
            self.counts.lines, self.peak_open, folders)

    def _judged(self, parts: Sequence[PartFile]) -> pa.Table:
        """Every game judged in the pass (one `games` row each, in the parts its writer
        wrote): `game_id`, `content_hash`."""
        columns = ["game_id", "content_hash"]
        tables = [self._read_base("games", part, columns) for part in parts]
        if not tables:
            return pa.Table.from_pydict({c: pa.array([], pa.string()) for c in columns})
        return pa.concat_tables(tables).combine_chunks()

    def _count_violations(self, parts: Sequence[PartFile]) -> int:
        total = 0
        for part in parts:
            total += pc.sum(self._read_base("games", part, ["violations"])["violations"]).as_py() or 0
        return total

    def _read_base(self, name: str, part: PartFile, columns: list[str]) -> pa.Table:
        return read_part(self.warehouse, name, part, columns)

    def _merge(self, games: set[str], existing: dict[str, tuple[str, str, str]],
               staged_events: Sequence[PartFile]) -> tuple[set[str], set[str]]:
        """Games to replay from the union of their committed, staged and late lines.
        Returns (unchanged, redone). Only fingerprints are read for all of them; the raw
        lines only for the games that are replayed."""
        ids = sorted(games)
        in_warehouse = [g for g in ids if g in existing]
        committed_events = (self.warehouse.dataset("events", self.task.versions["events"])
                            if in_warehouse else None)
        staged_dataset = (self.warehouse.parts_dataset("events", staged_events)
                          if staged_events else None)

        def fingerprints(dataset: pads.Dataset | None, wanted: list[str]) -> dict[str, set[int]]:
            found: dict[str, set[int]] = defaultdict(set)
            if dataset is not None and wanted:
                data = _scan(dataset, ["game_id", "fingerprint"], wanted)
                for gid, fp in zip(data["game_id"].to_pylist(), data["fingerprint"].to_pylist(),
                                   strict=True):
                    found[gid].add(fp)
            return found

        old = fingerprints(committed_events, in_warehouse)
        mine = fingerprints(staged_dataset, ids)
        unchanged: set[str] = set()
        replay: list[str] = []
        for gid in ids:
            late = {fp for _, _, _, fp in self.late.get(gid, ())}
            union = old.get(gid, set()) | mine.get(gid, set()) | late
            if gid in existing and union == old.get(gid):
                unchanged.add(gid)
            elif union != mine.get(gid):  # else the staged version holds every line: it stands
                replay.append(gid)
        if not replay:
            return unchanged, set()
        columns = ["game_id", "ordinal", "raw", "file", "line"]
        lines: dict[str, list[RawLine]] = defaultdict(list)
        for dataset, wanted in ((committed_events, [g for g in replay if g in existing]),
                                (staged_dataset, replay)):
            if dataset is None or not wanted:
                continue
            data = _scan(dataset, columns, wanted).sort_by([("game_id", "ascending"),
                                                            ("ordinal", "ascending")])
            for gid, raw, file, line in zip(data["game_id"].to_pylist(), data["raw"].to_pylist(),
                                            data["file"].to_pylist(), data["line"].to_pylist(),
                                            strict=True):
                lines[gid].append((raw.encode(), file, line))
        if self.redo_writers is None:
            self.redo_writers = {
                name: PartWriter(self.warehouse, name, f"{self.task.prefix}-m")
                for name in GAME_TABLES
            }
        writers = self.redo_writers
        for gid in replay:
            arrived = [(raw, file, line) for raw, file, line, _ in self.late.get(gid, ())]
            replay_rows([*lines[gid], *arrived], self.task.batch,
                        lambda ruleset, month, tables: self._write(ruleset, month, tables,
                                                                   writers))
        return unchanged, set(replay)


def replay_rows(lines: Sequence[RawLine], batch: int,
                sink: Callable[[str, str, dict[str, Any]], None]) -> None:
    """Replay one game from all its lines (in input order) and hand its rows to `sink`."""
    ingestor = _core.Ingestor(batch=batch, hold_lines=_NEVER, idle_lines=_NEVER)
    ingestor.feed_lines(list(lines), sink)
    ingestor.finish(sink)


def quarantine_row(error: Mapping[str, Any], item: InputFile | None, batch: int) -> tuple[Any, ...]:
    """A quarantine row (`schema.QUARANTINE`) of a line or file the engine refused."""
    return (item.path if item is not None else error["file"],
            item.sha256 if item is not None else None, error["line"], error["code"],
            error["message"], error.get("raw"), batch)


def _scan(dataset: pads.Dataset, columns: list[str], games: list[str]) -> pa.Table:
    """The rows of `games`, read a batch at a time (no read-ahead: memory stays flat)."""
    scanner = dataset.scanner(columns=columns, filter=pc.field("game_id").isin(games),
                              batch_readahead=1, fragment_readahead=1)
    return scanner.to_table()


def run_shard(task: WorkerTask) -> WorkerResult:
    """A cluster task: one shard, its spool fetched from the store when it is there, its
    parts written under a prefix of this attempt's own (a task run again after its worker
    died never overwrites, or commits, what the dead attempt wrote)."""
    task = dataclasses.replace(task, prefix=f"{task.prefix}-{new_token()}")
    if not task.spool.startswith("s3://"):
        return ShardWorker(task).run()
    store = Warehouse(task.warehouse, task.storage_options)
    folder = spool_folder("shard")
    try:
        local = os.path.join(folder, f"shard-{task.shard}.spool")
        store.location.get_file(task.spool, local, decompress=task.spool.endswith(STAGED_SPOOL))
        return ShardWorker(dataclasses.replace(task, spool=local)).run()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _worker_main(task: WorkerTask, messages: Any, go: Any = None) -> None:
    """A worker process: its share of the routing (if any), then, once every worker has
    routed (`go` is set by the coordinator), the replay of its shard."""
    die_with_parent()

    def report(counts: Counts, final: bool) -> None:
        messages.put(("progress", task.shard, (counts.files, counts.lines, counts.games,
                                               counts.violations)))

    def routing(files: int, lines: int) -> None:
        messages.put(("routing", task.shard, (files, lines)))

    try:
        routed = None
        if task.route is not None:
            job = task.route
            store = Warehouse(task.warehouse, task.storage_options)
            routed = route_files(store, job.files, job.spools, job.seen, job.suppressed,
                                 task.batch, job.prefix, routing,
                                 max_line_bytes=job.max_line_bytes)
        if go is not None:
            messages.put(("routed", task.shard, routed))
            while not go.wait(1.0):
                pass  # the coordinator kills this process if the batch fails meanwhile
        result = ShardWorker(task, report).run()
        result.routed = routed
    except BaseException as exc:
        messages.put(("error", task.shard, WorkerFailure.of(exc)))
        raise SystemExit(1) from None
    messages.put(("done", task.shard, result))


# ---------------------------------------------------------------------------- the coordinator


def _hash_file(path: str) -> tuple[int | None, str | None, str | None]:
    try:
        digest = hashlib.sha256()
        size = 0
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
        return size, digest.hexdigest(), None
    except OSError as exc:
        return None, None, f"cannot open: {exc.strerror or exc}"


def _now() -> datetime:
    return datetime.now(UTC)


def ingest(
    paths: Sequence[str],
    warehouse: str,
    *,
    workers: int | None = None,
    force: bool = False,
    progress: Callable[[Progress], None] | None = None,
    storage_options: Mapping[str, str] | None = None,
    cluster: str | None = None,
    wait: float = 0.0,
    task_retries: int = TASK_RETRIES,
    digests: Mapping[str, tuple[int, str]] | None = None,
    games_index: GamesIndex | None = None,
    max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES,
    ranges: Mapping[str, tuple[str, int, int]] | None = None,
) -> BatchSummary:
    """Ingest `paths` (files and directories) into `warehouse` (a folder or
    `s3://bucket/prefix`) as one batch.

    `digests`: the size and sha256 of files the caller has hashed already (a pushed
    body's, taken as it arrived), by path as given: those are not read twice.
    `games_index`: the committed games, kept by the caller across batches (one worker
    only): a batch's cost then does not grow with the warehouse.

    `cluster`: run the shards as tasks on a Dask cluster, `tcp://HOST:PORT` of a running
    scheduler or `local:N` to start N local worker processes for this batch; `workers`
    is then the number of shards (default: the cluster's threads). `wait`: seconds to
    wait for another writer's lock before giving up. `max_line_bytes`: a longer line is
    quarantined as `line_too_long`, read past without being held.

    `ranges`: instead of files, every path (absolute, each with its `digests` entry) is
    a range of another file, `(source, offset, size)`: the live service's pushed bodies,
    read from its journal where they lie, under the names the batch records (one worker,
    no cluster)."""
    started = _now()
    clock = time.monotonic()
    sweep_once()  # spool folders a killed ingest left in $TMPDIR
    if ranges is not None:
        if cluster or (workers or 1) != 1:
            raise ValueError("ranges are read by one worker, without a cluster")
        if odd := [p for p in paths if p not in ranges or p not in (digests or {}) or not os.path.isabs(p)]:
            raise ValueError(f"with ranges every path is absolute, with its range and its digest: {odd[0]!r}")
        files = list(paths)
    else:
        try:
            files = [os.path.abspath(f) for f in _core.expand_paths(list(paths))]
        except FileNotFoundError as exc:
            raise InputPathError(str(exc)) from None
    store = Warehouse(warehouse, storage_options)
    with contextlib.ExitStack() as stack:
        client = stack.enter_context(_dask_client(cluster)) if cluster else None
        if client is not None:
            workers = max(1, workers or sum(client.nthreads().values()) or 1)
        else:
            workers = max(1, workers or os.cpu_count() or 1)
        stack.enter_context(store.lock(wait=wait))
        known = {os.path.abspath(p): d for p, d in (digests or {}).items()}
        summary = _ingest_locked(store, files, workers, force, progress, client, task_retries,
                                 started, known, games_index, max_line_bytes=max_line_bytes,
                                 ranges=ranges or {})
    summary.seconds = time.monotonic() - clock
    return summary


def _ingest_locked(store: Warehouse, files: list[str], workers: int, force: bool,
                   progress: Callable[[Progress], None] | None, client: Any,
                   task_retries: int, started: datetime,
                   digests: Mapping[str, tuple[int, str]],
                   games_index: GamesIndex | None = None, *,
                   max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES,
                   ranges: Mapping[str, tuple[str, int, int]] | None = None) -> BatchSummary:
    restored = store.recover()
    snapshot = store.snapshot()
    lookup = games_index.at(store, snapshot.versions["games"]) if games_index is not None else None
    known = set() if force else _known_files(store, snapshot)
    inputs: list[InputFile] = []
    paths = list(dict.fromkeys(files))
    # hashing reads every file: a thread per core (hashlib and reads release the GIL)
    threads = max(1, min(len(paths), workers, os.cpu_count() or 1))
    unhashed = [p for p in paths if p not in digests]
    with ThreadPoolExecutor(threads) as pool:
        fresh = dict(zip(unhashed, pool.map(_hash_file, unhashed), strict=True))
    hashed = [fresh[p] if p in fresh else (*digests[p], None) for p in paths]
    for path, (size, sha, error) in zip(paths, hashed, strict=True):
        inputs.append(InputFile(path, size, sha, skip=sha is not None and sha in known,
                                error=error, range=(ranges or {}).get(path)))
    batch = snapshot.batch + 1
    prefix = f"b{batch:06d}-{new_token()}"
    attempt = new_attempt()
    to_read = tuple(f for f in inputs if not f.skip and f.error is None)
    state = Progress(files_total=len(to_read))
    if progress is not None:
        progress(state)
    # in the staging prefix until the batch's row is committed: a writer killed anywhere
    # between (its spools already gone, no table moved yet) still leaves `recover` a sign
    # that parts numbered for this batch may be lying about
    open_batch = store.open_batch(prefix)
    try:
        results, routed = _replay(store, snapshot, to_read, workers, batch, prefix, state,
                                  progress, client, task_retries, lookup,
                                  max_line_bytes=max_line_bytes)
        state.phase = "committing"
        if progress is not None:
            progress(state)
        summary = _commit(store, snapshot, inputs, routed, results, batch, prefix, started,
                          workers, attempt)
    except BaseException as exc:
        _abandon(store, prefix, fenced=isinstance(exc, WriterFenced))
        raise
    store.location.delete(open_batch)
    if client is not None:
        # a task whose worker died, or that the scheduler ran twice, left parts named for
        # this batch that it did not commit: remove them now (best effort)
        folders: dict[str, set[str]] = defaultdict(set)
        for result in results:
            for name, written in result.folders.items():
                folders[name].update(written)
        with contextlib.suppress(Exception):
            store.sweep_batch(batch, folders)
    summary.restored = restored
    return summary


def _replay(store: Warehouse, snapshot: Snapshot, to_read: tuple[InputFile, ...],
            workers: int, batch: int, prefix: str, state: Progress,
            progress: Callable[[Progress], None] | None, client: Any,
            task_retries: int, lookup: GameLookup | None = None, *,
            max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES) -> tuple[list[WorkerResult], Routed]:
    """Route the input to spools and replay them (worker processes, or cluster tasks):
    the workers' results, and the routing pass's."""
    staged = store.staging(f"{prefix}-spool")
    # the router writes local files; an S3 warehouse's spools are routed to a local
    # folder, and put in its staging prefix only for a cluster's workers to fetch
    spool_dir = staged if store.location.local else spool_folder("spool")
    try:
        if client is None and workers > 1 and to_read:
            # the worker processes route the input themselves, all at once, then replay
            jobs = _route_jobs(store, snapshot, to_read, spool_dir, workers, prefix,
                               max_line_bytes=max_line_bytes)
            results = _run_workers(store, snapshot, to_read,
                                   [jobs[0].spools[k] for k in range(workers)], batch,
                                   prefix, state, progress, jobs)
            return results, _merge_routed([r.routed for r in results if r.routed is not None])
        if client is None and workers == 1 and to_read:
            # one shard: it reads the files itself, no routing pass, no spool
            state.phase = "replaying"
            job = RouteJob(to_read, (), frozenset(_quarantined_keys(store, snapshot, to_read)),
                           frozenset(), f"{prefix}-q", max_line_bytes)
            results = _run_workers(store, snapshot, to_read, [os.path.join(spool_dir, "unused.spool")],
                                   batch, prefix, state, progress, lookup=lookup, read_files=job)
            assert results[0].routed is not None
            return results, results[0].routed
        routed = _route(store, snapshot, to_read, spool_dir, workers, batch, prefix,
                        state, progress, max_line_bytes=max_line_bytes)
        if not to_read:
            return [], routed
        if client is None:
            return _run_workers(store, snapshot, to_read, routed.spools, batch, prefix,
                                state, progress, lookup=lookup if workers == 1 else None), routed
        spools = routed.spools
        if not store.location.local:
            # compressed: the workers fetch a seventh of the bytes (zstd, ~300 MB/s a core)
            spools = [f"{staged}/{os.path.basename(p)}{STAGED_SPOOL}" for p in routed.spools]
            store.location.put_files(list(zip(routed.spools, spools, strict=True)), compress=True)
            for local in routed.spools:
                os.unlink(local)
        return _run_cluster(client, store, snapshot, to_read, spools, batch, prefix, state,
                            progress, task_retries), routed
    finally:
        store.location.delete_tree(staged)
        if spool_dir != staged:
            shutil.rmtree(spool_dir, ignore_errors=True)


def _abandon(store: Warehouse, prefix: str, *, fenced: bool) -> None:
    """After a batch failed (an error, an interrupt): undo its commits and delete the parts
    it wrote, so the warehouse is as it was, raw latest versions included. A writer that
    was fenced (another took over) touches nothing but its own uncommitted parts: the
    tables are the other writer's now. Never raises (the batch's own error is what the
    user needs to see); what it cannot undo, the next writer's `recover` does."""
    with contextlib.suppress(Exception):
        if not fenced:
            store.check_lock()
            store.recover()
    with contextlib.suppress(Exception):
        store.remove_parts(prefix)


@contextlib.contextmanager
def _dask_client(cluster: str) -> Iterator[Any]:
    """A Dask client of `cluster`: `local:N` starts N worker processes on 127.0.0.1 for
    the batch (stopped after it), anything else is a scheduler's address."""
    from distributed import Client, LocalCluster

    if cluster.startswith("local:"):
        try:
            count = int(cluster.removeprefix("local:"))
        except ValueError:
            raise IngestError(f"--cluster local:N takes a number of workers, got {cluster!r}") from None
        if count < 1:
            raise IngestError(f"--cluster local:N takes at least one worker, got {cluster!r}")
        with LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                          host="127.0.0.1", scheduler_port=0, dashboard_address="127.0.0.1:0",
                          silence_logs=40) as local, Client(local) as client:
            yield client
        return
    try:
        client = Client(cluster, timeout=30)
    except (OSError, TimeoutError) as exc:
        raise IngestError(f"cannot reach the Dask scheduler at {cluster}: {exc}") from None
    with client:
        yield client


def _run_cluster(client: Any, store: Warehouse, snapshot: Snapshot,
                 files: tuple[InputFile, ...], spools: list[str], batch: int, prefix: str,
                 state: Progress, progress: Callable[[Progress], None] | None,
                 retries: int) -> list[WorkerResult]:
    """Run one task per shard on the cluster; their results, in shard order."""
    from distributed import as_completed, wait

    has_games = snapshot.versions.get("games", 0) > 0
    tasks = [WorkerTask(store.root, files, spool, k, len(spools), batch, f"{prefix}-w{k}",
                        dict(snapshot.versions), has_games, dict(store.location.options))
             for k, spool in enumerate(spools)]
    state.phase = "replaying"
    if progress is not None:
        progress(state)
    futures = client.map(run_shard, tasks, key=[f"haftkhabis-{prefix}-shard-{t.shard}"
                                                for t in tasks],
                         pure=False, retries=retries)
    results: dict[int, WorkerResult] = {}
    try:
        for future in as_completed(futures):
            result: WorkerResult = future.result()
            results[result.shard] = result
            state.games += result.new + result.updated + result.unchanged
            state.violations += result.violations
            if progress is not None:
                progress(state)
    except Exception as exc:
        # the batch cleans up after itself next (`_abandon`): every other task must have
        # ended first, or one still running would write its parts behind the cleanup
        with contextlib.suppress(Exception):
            wait(futures, timeout=TASK_DRAIN)
        client.cancel(futures)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        what = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        raise IngestError(f"a cluster task failed: {what}; nothing was committed",
                          errno=exc.errno if isinstance(exc, OSError) else None) from exc
    return [results[k] for k in range(len(spools))]


def _known_files(store: Warehouse, snapshot: Snapshot) -> set[str]:
    """sha256 of every file an earlier batch read whole."""
    known = set()
    # the parts read one by one (a Delta scan would import pyarrow.dataset and pandas into
    # the coordinator, which then holds them through the whole replay)
    for part in store.committed_files("batches", snapshot.versions["batches"]):
        for files in read_part(store, "batches", part, ["files"])["files"].to_pylist():
            for item in files or ():
                if item["status"] in ("ok", "skipped") and item["sha256"]:
                    known.add(item["sha256"])
    return known


@dataclass(slots=True)
class Routed:
    """The routing pass: each file's report, the quarantine it wrote, the spools."""

    spools: list[str]
    files: dict[str, FileReport]
    quarantine: list[PartFile]
    quarantined: int
    lines: int


def _route(store: Warehouse, snapshot: Snapshot, files: tuple[InputFile, ...], spool_dir: str,
           workers: int, batch: int, prefix: str, state: Progress,
           progress: Callable[[Progress], None] | None, *,
           max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES) -> Routed:
    """Read every file once: route game lines to the workers' spools, quarantine the rest
    (once: a line already quarantined from the same file content is not written again)."""
    spools = [os.path.join(spool_dir, f"shard-{k}.spool") for k in range(workers)]
    state.phase = "routing"

    def on_file(files_read: int, lines: int) -> None:
        state.files += 1
        state.lines = lines
        if progress is not None:
            progress(state)

    return route_files(store, files, spools, _quarantined_keys(store, snapshot, files),
                       frozenset(), batch, f"{prefix}-q", on_file, max_line_bytes=max_line_bytes)


class _FileReads:
    """What reading each file gave — its report, its lines that belong to no game — made
    into file reports and quarantine rows (parts of `quarantine` named by `prefix`),
    except the rows of keys `seen` (already quarantined from the same file content) and
    of `suppressed` files. Fed by the routing pass (`route_files`) or by a shard reading
    the files itself (`Ingestor.feed_files`): both read a line the same way."""

    def __init__(self, store: Warehouse, files: Sequence[InputFile],
                 seen: set[QuarantineKey] | frozenset[QuarantineKey], suppressed: frozenset[str],
                 batch: int, prefix: str, on_file: Callable[[int, int], None] | None) -> None:
        self.by_path = {f.path: f for f in files}
        self.seen = set(seen)
        self.suppressed = suppressed
        self.batch = batch
        self.on_file = on_file
        self.writer = PartWriter(store, "quarantine", prefix)
        self.reports: dict[str, FileReport] = {}
        self.quarantined = 0
        self.lines = 0

    def __call__(self, read: Mapping[str, Any], found: Sequence[Mapping[str, Any]]) -> None:
        item = self.by_path[read["file"]]
        report = self.reports[item.path] = FileReport(lines=read["lines"])
        problem = read["error"]
        if problem is not None:
            report.status = "failed" if problem["line"] is None else "truncated"
            report.error = problem["message"]
            found = [*found, {"file": item.path, "line": problem["line"],
                                "code": "malformed_json", "message": problem["message"],
                                "raw": None}]
        rows = []
        for error in found if item.path not in self.suppressed else ():
            key = (item.sha256, error["line"], error["code"])
            if item.sha256 is not None and key in self.seen:
                continue
            self.seen.add(key)
            rows.append(quarantine_row(error, item, self.batch))
        self.writer.add((), rows)
        self.quarantined += len(rows)
        self.lines += read["lines"]
        if self.on_file is not None:
            self.on_file(len(self.reports), self.lines)

    def close(self, spools: Sequence[str]) -> Routed:
        return Routed(list(spools), self.reports, self.writer.close(), self.quarantined, self.lines)


def route_files(store: Warehouse, files: Sequence[InputFile], spools: Sequence[str],
                seen: set[QuarantineKey] | frozenset[QuarantineKey],
                suppressed: frozenset[str], batch: int, prefix: str,
                on_file: Callable[[int, int], None] | None = None, *,
                max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES) -> Routed:
    """Route `files` (in order) to `spools` (one per shard), quarantining the lines that
    belong to no game as parts of `quarantine` named by `prefix`, except those `seen`
    (already quarantined from the same file content) and those of `suppressed` files.
    `on_file(files read, lines read)` after each file."""
    reads = _FileReads(store, files, seen, suppressed, batch, prefix, on_file)
    try:
        _core.route_files([f.path for f in files], list(spools), reads,
                          max_line_bytes=max_line_bytes)
        return reads.close(spools)
    except BaseException:
        reads.writer.abort()
        raise


def _merge_routed(parts: Sequence[Routed]) -> Routed:
    """The routing passes of consecutive runs of files as one."""
    return Routed([p for r in parts for p in r.spools],
                  {path: report for r in parts for path, report in r.files.items()},
                  [p for r in parts for p in r.quarantine],
                  sum(r.quarantined for r in parts), sum(r.lines for r in parts))


def _route_jobs(store: Warehouse, snapshot: Snapshot, files: tuple[InputFile, ...],
                spool_dir: str, workers: int, prefix: str, *,
                max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES) -> list[RouteJob]:
    """The routing pass split between the workers: runs of consecutive files of about
    equal size, one per worker (fewer when there are fewer files), each routed to a
    spool per shard. Worker k then replays the spools of shard k in the runs' order, so
    it meets every line of its games in the order one pass over the files gives."""
    runs = min(workers, len(files))
    sizes = [max(1, f.size or 0) for f in files]
    total = sum(sizes)
    groups: list[list[InputFile]] = []
    current: list[InputFile] = []
    done = 0  # bytes in the runs so far
    for index, (item, size) in enumerate(zip(files, sizes, strict=True)):
        if current and len(groups) < runs - 1 and (
                len(files) - index < runs - len(groups)  # each run left needs a file
                or done * runs >= total * (len(groups) + 1)):
            groups.append(current)
            current = []
        current.append(item)
        done += size
    groups.append(current)
    seen = _quarantined_keys(store, snapshot, files)
    first: dict[str | None, str] = {}
    suppressed = set()
    for item in files:
        if item.sha256 is not None and first.setdefault(item.sha256, item.path) != item.path:
            suppressed.add(item.path)
    jobs = []
    for j, group in enumerate(groups):
        shas = {f.sha256 for f in group}
        jobs.append(RouteJob(
            tuple(group),
            tuple(os.path.join(spool_dir, f"route-{j}-shard-{k}.spool") for k in range(workers)),
            frozenset(key for key in seen if key[0] in shas),
            frozenset(f.path for f in group if f.path in suppressed),
            f"{prefix}-q{j}", max_line_bytes))
    return jobs


def _quarantined_keys(store: Warehouse, snapshot: Snapshot,
                      files: Sequence[InputFile]) -> set[tuple[str | None, int | None, str]]:
    """Keys of lines already quarantined from these files (a re-ingest adds none)."""
    shas = [f.sha256 for f in files if f.sha256]
    if not snapshot.versions.get("quarantine") or not shas:
        return set()
    data = store.dataset("quarantine", snapshot.versions["quarantine"]).to_table(
        columns=["file_sha256", "line", "code"], filter=pc.field("file_sha256").isin(shas))
    return {(r["file_sha256"], r["line"], r["code"]) for r in data.to_pylist()}


def _run_workers(store: Warehouse, snapshot: Snapshot, files: tuple[InputFile, ...],
                 spools: list[str], batch: int, prefix: str, state: Progress,
                 progress: Callable[[Progress], None] | None,
                 jobs: Sequence[RouteJob] = (), lookup: GameLookup | None = None,
                 read_files: RouteJob | None = None) -> list[WorkerResult]:
    """Replay the spools, one worker each. With `jobs` (worker processes only), the
    workers first route the input themselves, job k by worker k, all at once; each
    replays once every job is done (the results then carry what their job routed). With
    `read_files` (one worker), it reads the files itself, with no routing pass before."""
    has_games = snapshot.versions.get("games", 0) > 0
    workers = len(spools)
    tasks = [WorkerTask(store.root, files, spool, k, workers, batch, f"{prefix}-w{k}",
                        dict(snapshot.versions), has_games, dict(store.location.options),
                        tuple((job.spools[k], tuple(f.path for f in job.files))
                              for job in jobs),
                        jobs[k] if k < len(jobs) else None, read_files)
             for k, spool in enumerate(spools)]
    per_worker: dict[int, tuple[int, int, int, int]] = {}
    routing: dict[int, tuple[int, int]] = {}
    state.phase = "routing" if jobs else "replaying"
    routed_lines = state.lines

    def update(shard: int, figures: tuple[int, int, int, int]) -> None:
        per_worker[shard] = figures
        state.lines = routed_lines if read_files is None else figures[1]
        if read_files is not None:
            state.files = figures[0]
        state.games = sum(f[2] for f in per_worker.values())
        state.violations = sum(f[3] for f in per_worker.values())
        if progress is not None:
            progress(state)

    if workers == 1:
        def report(counts: Counts, final: bool) -> None:
            update(0, (counts.files, counts.lines, counts.games, counts.violations))
        return [ShardWorker(tasks[0], report, lookup).run()]

    context = mp.get_context("spawn")
    messages = context.Queue()
    go = context.Event() if jobs else None
    processes = [context.Process(target=_worker_main, args=(task, messages, go), daemon=True,
                                 name=f"haftkhabis-ingest-{task.shard}") for task in tasks]
    for process in processes:
        process.start()
    results: dict[int, WorkerResult] = {}
    routed: set[int] = set()
    try:
        while len(results) < workers:
            try:
                kind, shard, payload = messages.get(timeout=0.5)
            except queue_module.Empty:
                dead = [p for p in processes if p.exitcode not in (None, 0)]
                if dead:
                    raise IngestError(
                        f"worker {dead[0].name} died (exit code {dead[0].exitcode}); "
                        "nothing was committed") from None
                continue
            if kind == "progress":
                update(shard, payload)
            elif kind == "routing":
                routing[shard] = payload
                state.files = sum(f for f, _ in routing.values())
                state.lines = sum(n for _, n in routing.values())
                if progress is not None:
                    progress(state)
            elif kind == "routed":
                routed.add(shard)
                if go is not None and len(routed) == workers:
                    # every spool is complete: the replay may start
                    state.phase = "replaying"
                    routed_lines = state.lines
                    go.set()
            elif kind == "error":
                raise payload.error(f"worker {shard}")
            else:
                results[shard] = payload
    except BaseException:
        for process in processes:
            if process.is_alive():
                process.kill()
        for process in processes:
            process.join()
        raise
    for process in processes:
        process.join()
    return [results[k] for k in range(workers)]


def _commit(store: Warehouse, snapshot: Snapshot, inputs: list[InputFile], routed: Routed,
            results: list[WorkerResult], batch: int, prefix: str, started: datetime,
            workers: int, attempt: int) -> BatchSummary:
    replaced: dict[str, tuple[str, str]] = {}
    for result in results:
        replaced.update(result.replaced)
    partitions = set(replaced.values())
    versions: dict[str, int] = {}
    changed = False
    written: dict[str, list[PartFile]] = {}  # the batch's own rows, by table
    rewritten: dict[str, list[PartFile]] = {}  # parts that held replaced games' rows
    for name in DATA_TABLES:
        adds = written[name] = [p for r in results for p in r.parts.get(name, [])]
        if name == "quarantine":
            adds = adds + routed.quarantine
        removes: list[PartFile] = []
        if replaced and name in GAME_TABLES:
            candidates = [p for p in store.committed_files(name, snapshot.versions[name])
                          if tuple(v for _, v in p.partition) in partitions]
            fresh, removes = rewrite_without(store, name, candidates, set(replaced),
                                             f"{prefix}-x")
            adds = adds + fresh
            rewritten[name] = removes
        versions[name] = store.commit(name, adds, removes, batch, "ingest", attempt)
        if adds or removes:
            changed = True
    versions.update({n: snapshot.versions.get(n, 0) for n in SUMMARY_TABLES})
    if changed or any(snapshot.versions.get(n, 0) == 0 for n in SUMMARY_TABLES):
        # kept, not recomputed: what the batch's rows add, less what the rows it replaced
        # had; a summary the warehouse has not got yet is made whole (ingest/summaries.py)
        made = summaries.refresh(store, snapshot.versions, versions, written, rewritten,
                                 set(replaced))
        for name, data in made.items():
            versions[name] = summaries.commit(store, name, data, batch, prefix, attempt)
    # the desk's cases are not the batch's: carried over as the snapshot had them
    versions.update({n: snapshot.versions[n] for n in CASE_TABLES})
    reports = routed.files
    file_rows = []
    for item in inputs:
        report = reports.get(item.path)
        if item.skip:
            status, error, lines = "skipped", None, None
        elif item.error is not None:
            status, error, lines = "failed", item.error, None
        elif report is None:
            status, error, lines = "failed", "not read", None
        else:
            status, error, lines = report.status, report.error, report.lines
        file_rows.append({"path": item.path, "size": item.size, "sha256": item.sha256,
                          "lines": lines, "status": status, "error": error})
    lines = routed.lines
    new = sum(r.new for r in results)
    updated = sum(r.updated for r in results)
    unchanged = sum(r.unchanged for r in results)
    violations = sum(r.violations for r in results)
    quarantined = routed.quarantined + sum(r.quarantined for r in results)
    failed = sum(1 for f in file_rows if f["status"] in ("failed", "truncated"))
    row = {
        "id": batch, "kind": "ingest", "started": started, "ended": _now(), "files": file_rows,
        "lines": lines, "games_new": new, "games_updated": updated,
        "games_unchanged": unchanged, "violations": violations,
        "errors": quarantined + failed, "workers": workers, "engine_version": ENGINE_VERSION,
    }
    versions["batches"] = store.commit_batch(row, versions, attempt, prefix)
    return BatchSummary(batch, file_rows, lines, new, updated, unchanged, violations,
                        quarantined, 0.0, versions, workers,
                        peak_open_games=max((r.peak_open for r in results), default=0),
                        written=written)
