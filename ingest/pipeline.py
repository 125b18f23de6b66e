"""The ingest pipeline: log files in, one committed batch of warehouse rows out.

Shape of a batch (docs/warehouse.md tells the same story for users):

1. The coordinator takes the writer lock, recovers from any killed batch, lists and
   hashes the input files (size, sha256), and skips files already ingested whole
   (unless `force`).
2. N workers (processes) each read every file but keep only their shard of the games
   (crc32 of the game id modulo N), so every game is replayed whole by one engine
   `Validator`. A worker holds only its open games: a game is flushed (replayed rows
   written as Parquet parts into the table folders, uncommitted) once it is closed by a
   `result` or `abort`, or once its match is over and a window of further lines has passed
   without more of it, or once it has been idle for a longer window (a log with a gap
   never closes), and at the end of the input. Lines that belong to no game go to
   `quarantine` (worker 0 writes those, so each is written once).
3. Each worker then reconciles its games with the committed warehouse: a game whose
   content hash is already there is unchanged (its new rows are dropped); a game that was
   there with other lines, or that got more lines after it was flushed, is replayed again
   from the union of its lines, the earlier ones read back from `events.raw`.
4. The coordinator commits each data table in one Delta transaction (new parts added;
   parts holding the replaced versions of updated games rewritten without them), then
   appends the batch's row to `batches`, which records every table's new version. Readers
   open the tables at the versions of the latest `batches` row, so they see the whole
   batch or none of it; a batch killed before that row is undone by the next writer.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import multiprocessing as mp
import os
import queue as queue_module
import signal
import time
import traceback
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from engine import ENGINE_VERSION
from engine.events import valid_game_id
from engine.reader import LineError, expand_paths, read_lines
from engine.validate import ErrorRecord, Validator, _Pending
from engine.violations import Code
from ingest import summaries
from ingest.rows import RawLine, fingerprint, game_rows
from ingest.schema import DATA_TABLES, GAME_TABLES, SUMMARY_TABLES
from ingest.store import PartFile, PartWriter, Snapshot, Warehouse, new_token, rewrite_without

#: lines a worker reads after a game's match is over before it flushes the game
CLOSE_WINDOW = 20_000
#: lines a worker reads without a line of an open game before it flushes the game as it
#: stands (a log with a gap never closes); should more of it come, it is merged at the end
IDLE_WINDOW = 250_000
#: seconds between progress messages from a worker
PROGRESS_EVERY = 0.2
#: test hooks: the point where the ingest SIGKILLs itself ("after-pass", "after-commit:TABLE",
#: "before-batches"), and seconds to pause after each table's commit
KILL_ENV = "HAFTKHABIS_INGEST_KILL_AT"
PAUSE_ENV = "HAFTKHABIS_INGEST_COMMIT_PAUSE"

_GAME_PREFIX = b'{"game":"'
_GAME_KEY = b'"game":'
_ID_BYTES = bytes(sorted(set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-")))


@dataclass(frozen=True, slots=True)
class InputFile:
    """One input file as the batch sees it."""

    path: str  # absolute; what the warehouse records
    size: int | None
    sha256: str | None
    skip: bool = False
    error: str | None = None


@dataclass(slots=True)
class FileReport:
    """What worker 0 found reading one file."""

    lines: int = 0
    status: str = "ok"
    error: str | None = None


@dataclass(slots=True)
class Counts:
    files: int = 0
    lines: int = 0
    games: int = 0
    violations: int = 0
    quarantined: int = 0


@dataclass(slots=True)
class WorkerResult:
    shard: int
    parts: dict[str, list[PartFile]]
    replaced: dict[str, tuple[str, str]]  # game → (ruleset, month) of its committed version
    new: int
    updated: int
    unchanged: int
    violations: int
    quarantined: int
    files: dict[str, FileReport]
    lines: int
    peak_open: int = 0  # the most games this worker held open at once


@dataclass(frozen=True, slots=True)
class WorkerTask:
    warehouse: str
    files: tuple[InputFile, ...]
    shard: int
    shards: int
    batch: int
    prefix: str
    versions: dict[str, int]
    has_games: bool


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
    """The batch could not be committed; the warehouse is as it was before it."""


# ---------------------------------------------------------------------------- routing


def fast_game_id(raw: bytes) -> str | None:
    """The game id of a line written `{"game":"ID",...` (the common producer layout),
    without parsing the JSON; None when the line needs a real parse."""
    if not raw.startswith(_GAME_PREFIX):
        return None
    end = raw.find(b'"', 9)
    if end < 10 or end > 9 + 128:
        return None
    ident = raw[9:end]
    if ident.translate(None, _ID_BYTES) or raw.count(_GAME_KEY) != 1:
        return None
    return ident.decode("ascii")


def _is_object(raw: bytes) -> bool:
    try:
        return isinstance(orjson.loads(raw), dict)
    except orjson.JSONDecodeError:
        return False


def shard_of(game: str, shards: int) -> int:
    return zlib.crc32(game.encode()) % shards if shards > 1 else 0


def _closed(pending: _Pending) -> str | None:
    """'closed' when nothing may follow (result/abort); 'over' when the match is over
    but a `result` may still come; None while the game is open."""
    if pending.waiting:
        return None
    table = pending.run.table
    if table is None:
        return None
    if table.closed_by is not None:
        return "closed"
    if table.match_over and not table.hand_open:
        return "over"
    return None


# ---------------------------------------------------------------------------- a worker


class ShardWorker:
    """Replays one shard of the games of a batch and writes their rows as parts."""

    def __init__(self, task: WorkerTask, report: Callable[[Counts, bool], None] | None = None) -> None:
        self.task = task
        self.warehouse = Warehouse(task.warehouse)
        self.report = report
        self.validator = Validator(facts=True)
        self.open: dict[str, list[RawLine]] = {}
        self.flushed: set[str] = set()
        self.late: dict[str, list[RawLine]] = defaultdict(list)
        self.over: dict[str, int] = {}  # game → lines read when its match was over
        self.touched: dict[str, int] = {}  # open game → lines read at its latest line
        self.writers = {name: PartWriter(self.warehouse, name, task.prefix) for name in DATA_TABLES}
        self.counts = Counts()
        self.files: dict[str, FileReport] = {}
        self.seen_quarantine: set[tuple[str | None, int | None, str]] = set()
        self.redo_writers: dict[str, PartWriter] | None = None
        self.peak_open = 0
        self._last_report = 0.0
        self._next_check = 0
        self._next_idle_check = 0

    # -- the pass over the input

    def run(self) -> WorkerResult:
        try:
            self._load_quarantine_keys()
            for item in self.task.files:
                self._read_file(item)
                self.counts.files += 1
                self._progress()
            for game in list(self.open):
                self._flush(game)
            base = {name: writer.close() for name, writer in self.writers.items()}
            self._progress(force=True)
            if self.task.shard == 0:
                _fault("after-pass")
            return self._reconcile(base)
        except BaseException:
            for writer in self.writers.values():
                writer.abort()
            raise

    def _progress(self, force: bool = False) -> None:
        if self.report is None:
            return
        now = time.monotonic()
        if force or now - self._last_report >= PROGRESS_EVERY:
            self._last_report = now
            self.report(self.counts, force)

    def _read_file(self, item: InputFile) -> None:
        task = self.task
        shard, shards, primary = task.shard, task.shards, task.shard == 0
        report = self.files.setdefault(item.path, FileReport())
        validator = self.validator
        errors = validator.errors
        games = validator.games
        opened = self.open
        flushed = self.flushed
        touched = self.touched
        counts = self.counts
        name = item.path
        lines_here = 0
        for entry in read_lines(item.path):
            if isinstance(entry, LineError):
                report.status = "failed" if entry.line is None else "truncated"
                report.error = entry.message
                if primary:
                    self._quarantine(item, entry.line, Code.MALFORMED_JSON.value, entry.message, None)
                continue
            number, raw = entry
            lines_here += 1
            counts.lines += 1
            game = fast_game_id(raw)
            obj: Any = None
            if game is None:
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    obj = None
                candidate = obj.get("game") if isinstance(obj, dict) else None
                if not valid_game_id(candidate):
                    if primary:
                        self._quarantine_line(item, raw, number)
                    continue
                assert isinstance(candidate, str)
                game = candidate
            if shards > 1 and shard_of(game, shards) != shard:
                continue
            if game in flushed:
                if obj is None and not _is_object(raw):  # not checked by a validator yet
                    self._quarantine_line(item, raw, number)
                    continue
                self.late[game].append((raw, name, number))
                continue
            before = len(errors)
            validator.feed_line(raw, name, number)
            if len(errors) != before:  # the fast path took a broken line for a game line
                error = errors.pop()
                self._quarantine(item, error.line, error.code.value, error.message, raw)
                continue
            buffered = opened.get(game)
            if buffered is None:
                buffered = opened[game] = []
                if len(opened) > self.peak_open:
                    self.peak_open = len(opened)
            buffered.append((raw, name, number))
            touched[game] = counts.lines
            state = _closed(games[game])
            if state == "closed":
                self._flush(game)
            elif state == "over" and game not in self.over:
                self.over[game] = counts.lines
            if counts.lines >= self._next_check:
                self._next_check = counts.lines + 1024
                if self.over:
                    self._flush_quiet()
                if counts.lines >= self._next_idle_check:
                    self._next_idle_check = counts.lines + 16_384
                    self._flush_idle()
                self._progress()
        report.lines = lines_here

    def _flush_quiet(self) -> None:
        """Flush games whose match has been over for a window of lines."""
        horizon = self.counts.lines - CLOSE_WINDOW
        for game, since in list(self.over.items()):
            if since <= horizon:
                self._flush(game)

    def _flush_idle(self) -> None:
        """Flush games that got no line for a long window of the input."""
        horizon = self.counts.lines - IDLE_WINDOW
        for game in [g for g, last in self.touched.items() if last <= horizon]:
            self._flush(game)

    def _flush(self, game: str) -> None:
        lines = self.open.pop(game)
        self.over.pop(game, None)
        self.touched.pop(game, None)
        pending = self.validator.games[game]
        verdict = self.validator.finish_game(game)
        rows = game_rows(game, lines, pending.run, verdict, self.task.batch)
        self._write(rows, self.writers)
        self.flushed.add(game)
        self.counts.games += 1
        self.counts.violations += rows.violations

    @staticmethod
    def _write(rows: Any, writers: dict[str, PartWriter]) -> None:
        partition = (rows.ruleset, rows.month)
        for name, table_rows in rows.rows.items():
            if table_rows:
                writers[name].add(partition, table_rows)

    # -- quarantine

    def _load_quarantine_keys(self) -> None:
        """Keys of lines already quarantined from these files (a re-ingest adds none)."""
        if not self.task.versions.get("quarantine"):
            return
        shas = [f.sha256 for f in self.task.files if f.sha256]
        if not shas:
            return
        data = self.warehouse.dataset("quarantine", self.task.versions["quarantine"]).to_table(
            columns=["file_sha256", "line", "code"],
            filter=pc.field("file_sha256").isin(shas))
        self.seen_quarantine.update(
            (r["file_sha256"], r["line"], r["code"]) for r in data.to_pylist())

    def _quarantine_line(self, item: InputFile, raw: bytes, number: int) -> None:
        scratch = Validator()
        scratch.feed_line(raw, item.path, number)
        error: ErrorRecord = scratch.errors[0]
        self._quarantine(item, number, error.code.value, error.message, raw)

    def _quarantine(self, item: InputFile, line: int | None, code: str, message: str,
                    raw: bytes | None) -> None:
        key = (item.sha256, line, code)
        if item.sha256 is not None:
            if key in self.seen_quarantine:
                return
            self.seen_quarantine.add(key)
        self.counts.quarantined += 1
        self.writers["quarantine"].add(
            (), [(item.path, item.sha256, line, code, message, raw, self.task.batch)])

    # -- reconciling with the committed warehouse

    def _reconcile(self, base: dict[str, list[PartFile]]) -> WorkerResult:
        task = self.task
        batch_games = sorted(self.flushed)
        existing: dict[str, tuple[str, str, str]] = {}  # game → (hash, ruleset, month)
        if task.has_games and batch_games:
            data = self.warehouse.dataset("games", task.versions["games"]).to_table(
                columns=["game_id", "content_hash", "ruleset", "month"],
                filter=pc.field("game_id").isin(batch_games))
            for row in data.to_pylist():
                existing[row["game_id"]] = (row["content_hash"], row["ruleset"], row["month"])
        staged_hash: dict[str, str] = {}
        if existing:
            for part in base["games"]:
                table = self._read_base("games", part, ["game_id", "content_hash"])
                for gid, hash_ in zip(table["game_id"].to_pylist(),
                                      table["content_hash"].to_pylist(), strict=True):
                    if gid in existing:
                        staged_hash[gid] = hash_
        unchanged: set[str] = set()
        merge: set[str] = set(self.late)
        for gid, (hash_, _, _) in existing.items():
            if gid in self.late:
                continue
            if staged_hash.get(gid) == hash_:
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
                    (self.warehouse.table_path(name) / part.path).unlink(missing_ok=True)
                gone = {p.path for p in replaced}
                written = [p for p in written if p.path not in gone] + fresh
            parts[name] = written
        if self.redo_writers is not None:
            for name, writer in self.redo_writers.items():
                parts[name] = parts.get(name, []) + writer.close()
        updated = {g for g in existing if g not in unchanged}
        new = len(self.flushed) - len(existing)
        violations = self._count_violations(parts["games"])
        return WorkerResult(
            task.shard, parts, {g: (existing[g][1], existing[g][2]) for g in updated},
            new, len(updated), len(unchanged), violations, self.counts.quarantined,
            self.files, self.counts.lines, self.peak_open)

    def _count_violations(self, parts: Sequence[PartFile]) -> int:
        total = 0
        for part in parts:
            total += pc.sum(self._read_base("games", part, ["violations"])["violations"]).as_py() or 0
        return total

    def _read_base(self, name: str, part: PartFile, columns: list[str]) -> pa.Table:
        return pads.dataset(str(self.warehouse.table_path(name) / part.path)).to_table(columns=columns)

    def _merge(self, games: set[str], existing: dict[str, tuple[str, str, str]],
               staged_events: Sequence[PartFile]) -> tuple[set[str], set[str]]:
        """Games to replay from the union of their committed, staged and late lines.
        Returns (unchanged, redone). Only fingerprints are read for all of them; the raw
        lines only for the games that are replayed."""
        ids = sorted(games)
        in_warehouse = [g for g in ids if g in existing]
        committed_events = (self.warehouse.dataset("events", self.task.versions["events"])
                            if in_warehouse else None)
        staged_paths = [str(self.warehouse.table_path("events") / p.path) for p in staged_events]
        staged_dataset = pads.dataset(staged_paths) if staged_paths else None

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
            late = {fingerprint(orjson.loads(raw)) for raw, _, _ in self.late.get(gid, ())}
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
        for gid in replay:
            self._replay(gid, [*lines[gid], *self.late.get(gid, ())])
        return unchanged, set(replay)

    def _replay(self, game: str, lines: Iterable[RawLine]) -> None:
        if self.redo_writers is None:
            self.redo_writers = {
                name: PartWriter(self.warehouse, name, f"{self.task.prefix}-m")
                for name in GAME_TABLES
            }
        validator = Validator(facts=True)
        kept: list[RawLine] = []
        for raw, file, line in lines:
            validator.feed_line(raw, file, line)
            kept.append((raw, file, line))
        pending = validator.games[game]
        verdict = validator.finish_game(game)
        rows = game_rows(game, kept, pending.run, verdict, self.task.batch)
        self._write(rows, self.redo_writers)


def _scan(dataset: pads.Dataset, columns: list[str], games: list[str]) -> pa.Table:
    """The rows of `games`, read a batch at a time (no read-ahead: memory stays flat)."""
    scanner = dataset.scanner(columns=columns, filter=pc.field("game_id").isin(games),
                              batch_readahead=1, fragment_readahead=1)
    return scanner.to_table()


def _set_parent_death_signal() -> None:
    """Ask Linux to kill this worker when the coordinator dies (a SIGKILLed ingest must
    not leave workers writing behind it)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _worker_main(task: WorkerTask, messages: Any) -> None:
    _set_parent_death_signal()

    def report(counts: Counts, final: bool) -> None:
        messages.put(("progress", task.shard, (counts.files, counts.lines, counts.games,
                                               counts.violations)))

    try:
        result = ShardWorker(task, report).run()
    except BaseException:
        messages.put(("error", task.shard, traceback.format_exc()))
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


def _fault(point: str) -> None:
    """Test hook: SIGKILL the whole ingest (the coordinator) at `point` when asked to."""
    if os.environ.get(KILL_ENV) == point:
        coordinator = os.getpid() if mp.parent_process() is None else os.getppid()
        os.kill(coordinator, signal.SIGKILL)
        time.sleep(10)  # a worker: dies with its coordinator (parent-death signal)


def _pause() -> None:
    delay = os.environ.get(PAUSE_ENV)
    if delay:
        time.sleep(float(delay))


def _now() -> datetime:
    return datetime.now(UTC)


def ingest(
    paths: Sequence[str],
    warehouse: str,
    *,
    workers: int | None = None,
    force: bool = False,
    progress: Callable[[Progress], None] | None = None,
) -> BatchSummary:
    """Ingest `paths` (files and directories) into `warehouse` as one batch."""
    started = _now()
    clock = time.monotonic()
    workers = max(1, workers or os.cpu_count() or 1)
    files = [os.path.abspath(f) for f in expand_paths(list(paths))]
    store = Warehouse(warehouse)
    with store.lock():
        restored = store.recover()
        snapshot = store.snapshot()
        known = set() if force else _known_files(store, snapshot)
        inputs: list[InputFile] = []
        for path in dict.fromkeys(files):
            size, sha, error = _hash_file(path)
            inputs.append(InputFile(path, size, sha, skip=sha is not None and sha in known,
                                    error=error))
        batch = snapshot.batch + 1
        prefix = f"b{batch:06d}-{new_token()}"
        to_read = tuple(f for f in inputs if not f.skip and f.error is None)
        state = Progress(files_total=len(to_read))
        if progress is not None:
            progress(state)
        results = (_run_workers(store, snapshot, to_read, batch, prefix, workers, state, progress)
                   if to_read else [])
        try:
            state.phase = "committing"
            if progress is not None:
                progress(state)
            summary = _commit(store, snapshot, inputs, results, batch, prefix, started, workers)
        except BaseException:
            with contextlib.suppress(Exception):
                store.recover()
            raise
    summary.seconds = time.monotonic() - clock
    summary.restored = restored
    return summary


def _known_files(store: Warehouse, snapshot: Snapshot) -> set[str]:
    """sha256 of every file an earlier batch read whole."""
    data = store.table("batches", snapshot.versions["batches"]).to_pyarrow_table(columns=["files"])
    known = set()
    for files in data["files"].to_pylist():
        for item in files or ():
            if item["status"] in ("ok", "skipped") and item["sha256"]:
                known.add(item["sha256"])
    return known


def _run_workers(store: Warehouse, snapshot: Snapshot, files: tuple[InputFile, ...], batch: int,
                 prefix: str, workers: int, state: Progress,
                 progress: Callable[[Progress], None] | None) -> list[WorkerResult]:
    has_games = snapshot.versions.get("games", 0) > 0
    tasks = [WorkerTask(str(store.root), files, k, workers, batch, f"{prefix}-w{k}",
                        dict(snapshot.versions), has_games) for k in range(workers)]
    per_worker: dict[int, tuple[int, int, int, int]] = {}

    def update(shard: int, figures: tuple[int, int, int, int]) -> None:
        per_worker[shard] = figures
        state.files = min(f[0] for f in per_worker.values()) if len(per_worker) == workers else 0
        state.lines = max(f[1] for f in per_worker.values())
        state.games = sum(f[2] for f in per_worker.values())
        state.violations = sum(f[3] for f in per_worker.values())
        if progress is not None:
            progress(state)

    if workers == 1:
        def report(counts: Counts, final: bool) -> None:
            update(0, (counts.files, counts.lines, counts.games, counts.violations))
        return [ShardWorker(tasks[0], report).run()]

    context = mp.get_context("spawn")
    messages = context.Queue()
    processes = [context.Process(target=_worker_main, args=(task, messages), daemon=True,
                                 name=f"haftkhabis-ingest-{task.shard}") for task in tasks]
    for process in processes:
        process.start()
    results: dict[int, WorkerResult] = {}
    try:
        while len(results) < workers:
            try:
                kind, shard, payload = messages.get(timeout=0.5)
            except queue_module.Empty:
                dead = [p for p in processes if p.exitcode not in (None, 0)]
                if dead:
                    raise IngestError(
                        f"worker {dead[0].name} died (exit code {dead[0].exitcode})") from None
                continue
            if kind == "progress":
                update(shard, payload)
            elif kind == "error":
                raise IngestError(f"worker {shard} failed:\n{payload}")
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


def _commit(store: Warehouse, snapshot: Snapshot, inputs: list[InputFile],
            results: list[WorkerResult], batch: int, prefix: str, started: datetime,
            workers: int) -> BatchSummary:
    replaced: dict[str, tuple[str, str]] = {}
    for result in results:
        replaced.update(result.replaced)
    partitions = set(replaced.values())
    versions: dict[str, int] = {}
    changed = False
    for name in DATA_TABLES:
        adds = [p for r in results for p in r.parts.get(name, [])]
        removes: list[PartFile] = []
        if replaced and name in GAME_TABLES:
            candidates = [p for p in store.committed_files(name, snapshot.versions[name])
                          if tuple(v for _, v in p.partition) in partitions]
            fresh, removes = rewrite_without(store, name, candidates, set(replaced),
                                             f"{prefix}-x")
            adds += fresh
        versions[name] = store.commit(name, adds, removes, batch, "ingest")
        if versions[name] != snapshot.versions[name]:
            changed = True
        _fault(f"after-commit:{name}")
        _pause()
    if changed or any(snapshot.versions.get(n, 0) == 0 for n in SUMMARY_TABLES):
        versions.update(summaries.refresh(store, versions, batch, prefix))
    else:
        versions.update({n: snapshot.versions[n] for n in SUMMARY_TABLES})
    _fault("after-summaries")
    _fault("before-batches")
    reports: dict[str, FileReport] = results[0].files if results else {}
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
    lines = results[0].lines if results else 0
    new = sum(r.new for r in results)
    updated = sum(r.updated for r in results)
    unchanged = sum(r.unchanged for r in results)
    violations = sum(r.violations for r in results)
    quarantined = sum(r.quarantined for r in results)
    failed = sum(1 for f in file_rows if f["status"] in ("failed", "truncated"))
    row = {
        "id": batch, "kind": "ingest", "started": started, "ended": _now(), "files": file_rows,
        "lines": lines, "games_new": new, "games_updated": updated,
        "games_unchanged": unchanged, "violations": violations,
        "errors": quarantined + failed, "workers": workers, "engine_version": ENGINE_VERSION,
    }
    versions["batches"] = store.commit_batch(row, versions)
    return BatchSummary(batch, file_rows, lines, new, updated, unchanged, violations,
                        quarantined, 0.0, versions, workers,
                        peak_open_games=max((r.peak_open for r in results), default=0))
