"""The service's read side: one read-only connection to the warehouse's committed snapshot
(`ingest.read.connect`, as the dashboard's), reopened when a new batch commits; the games
it replays for the step views, kept per snapshot; and the game index that finds a game's
lines without scanning for them.

The warehouse is a folder or an `s3://bucket/prefix` (an `ingest.storage.Location`). A
commit is noticed by the `batches` table changing: every ingest and compact ends by
committing a `batches` row, and readers open the versions the latest row records, so a
reopened reader sees whole batches only. On a folder that is one `stat` of its log per
request; on S3, which has no folder times, the table's version is asked for at most every
`poll` seconds (and at once after a batch this process committed).

Why an index: `events` is partitioned by ruleset and month, and a game's rows lie together
in one part, but game ids are not ordered within a part, so the row groups' statistics
prune nothing: finding one game's lines by a filter reads the `game_id` column of its
whole partition (hundreds of milliseconds a step at a million hands). The index maps each
game to the part and row groups that hold its lines; a step reads those row groups only,
whatever the warehouse's size. Parts never change once written, so the index is kept per
part and follows the snapshot incrementally (new parts indexed, removed parts dropped); it
is built in the background, and until it covers the snapshot served, lines are found by
the partition scan.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.replay import GameReplay, RecordedGame, ReplayStep, record_lines
from ingest import read
from ingest.storage import Location
from ingest.store import PartFile, Warehouse
from service.footers import FooterMap, FooterUnreadable, footer_bytes, map_footer
from service.places import GamePlaces, Place

log = logging.getLogger("haftkhabis.service")

#: a game's lines as the replay takes them: (raw line, file, line number)
Lines = list[tuple[bytes, str | None, int | None]]

#: the whole games' replays kept (a report's): each holds every state of its game
WHOLE_REPLAYS = 16

#: the columns a step reads of its game's rows
LINE_COLUMNS = ["game_id", "ordinal", "raw", "file", "line"]



class WarehouseUnavailable(Exception):
    """No readable warehouse (not ingested yet, or written by another schema)."""


@dataclass(frozen=True, slots=True)
class Replayed:
    """A game replayed from the warehouse, with its steps by seq."""

    replay: GameReplay
    by_seq: dict[int, ReplayStep] = field(default_factory=dict)

    @classmethod
    def of(cls, replay: GameReplay) -> Replayed:
        by_seq: dict[int, ReplayStep] = {}
        for step in replay.steps:
            # a set-aside line may share a seq with the line that was replayed: keep the first
            # in input order, which is the one the validator applied
            by_seq.setdefault(step.seq, step)
        return cls(replay, by_seq)


@dataclass(frozen=True, slots=True)
class _Generation:
    """The index at one version of `events` (never changed once built: swapped whole)."""

    version: int
    parts: dict[int, PartFile]  # number → part
    numbers: dict[str, int]  # part path → number
    places: GamePlaces  # game → its places (part number, first and last row group)
    footers: dict[int, FooterMap | None]  # number → its footer's map (None: read it whole)


class GameIndex:
    """Where each game's lines lie in `events` at one version: the part and the row groups
    holding them. `lines(game, version)` reads them (None while the index is at another
    version); `follow(version)` brings it to a version in the background."""

    def __init__(self, store: Warehouse) -> None:
        self.store = store
        self._current: _Generation | None = None
        self._wanted: int | None = None
        self._next_number = 0
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self.failure: str | None = None  # the last build's error, if it failed

    @property
    def version(self) -> int | None:
        current = self._current
        return current.version if current is not None else None

    @property
    def mapped(self) -> tuple[int, int]:
        """(parts whose footer is mapped, parts indexed): the others' row groups are read
        with their whole footer."""
        current = self._current
        if current is None:
            return 0, 0
        return sum(f is not None for f in current.footers.values()), len(current.parts)

    def follow(self, version: int) -> None:
        """Index `events` at `version` (in a background thread; returns at once)."""
        with self._lock:
            self._wanted = version
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="haftkhabis-game-index",
                                                daemon=True)
                self._worker.start()

    def wait(self, version: int, timeout: float) -> bool:
        """Block until the index is at `version` (tests and benchmarks); whether it is."""
        deadline = time.monotonic() + timeout
        while self.version != version and time.monotonic() < deadline:
            time.sleep(0.02)  # a short poll: the build takes seconds on a large warehouse
        return self.version == version

    def _run(self) -> None:
        while True:
            with self._lock:
                wanted = self._wanted
                if wanted is None or wanted == self.version:
                    self._worker = None
                    return
            try:
                self._current = self._build(wanted)
                self.failure = None
            except Exception as exc:  # the store unreachable, a part unreadable: scan instead
                self.failure = f"{type(exc).__name__}: {exc}"
                log.warning("the game index could not follow events version %s: %s", wanted,
                            self.failure)
                with self._lock:
                    if self._wanted == wanted:
                        self._worker = None
                        return

    def _build(self, version: int) -> _Generation:
        started = time.monotonic()
        old = self._current
        parts = self.store.committed_files("events", version)
        numbers = dict(old.numbers) if old is not None else {}
        by_number = dict(old.parts) if old is not None else {}
        footers = dict(old.footers) if old is not None else {}
        present = {p.path for p in parts}
        removed = [numbers.pop(path) for path in [p for p in numbers if p not in present]]
        for number in removed:
            del by_number[number], footers[number]
        added = [p for p in parts if p.path not in numbers]
        places = (old.places if old is not None else GamePlaces()).changed(removed, ())
        for part in added:  # a part at a time: the games kept as read fold as they pass FOLD_AT
            number = self._next_number
            self._next_number += 1
            games, footers[number] = self._index_part(part, number)
            places = places.changed((), games)
            numbers[part.path], by_number[number] = number, part
        log.info("game index at events version %s: %s places in %s parts (%s indexed; %s footers "
                 "mapped) in %.1fs", version, len(places), len(numbers), len(added),
                 sum(f is not None for f in footers.values()), time.monotonic() - started)
        return _Generation(version, by_number, numbers, places, footers)

    def _index_part(self, part: PartFile, number: int) -> tuple[list[tuple[str, Place]], FooterMap | None]:
        """Index one part: which row groups hold each game, and the map of its footer
        (`service.footers`: None when it cannot be mapped)."""
        seen: dict[str, tuple[int, int]] = {}
        with self.store.location.filesystem.open_input_file(self.store.part_fs_path("events", part)) as handle:
            # ids read as a dictionary: each row group's distinct ids without decoding every row's
            parquet = pq.ParquetFile(handle, read_dictionary=["game_id"])
            try:
                footer: FooterMap | None = map_footer(*footer_bytes(handle), parquet.metadata)
            except FooterUnreadable as exc:
                log.info("events part %s is read with its whole footer: %s", part.path, exc)
                footer = None
            for group in range(parquet.num_row_groups):
                ids = parquet.read_row_group(group, columns=["game_id"], use_threads=False).column(0)
                for game in _distinct(ids):
                    first = seen.get(game, (group, group))[0]
                    seen[game] = (first, group)
        return [(game, (number, first, last)) for game, (first, last) in seen.items()], footer

    def partition(self, game: str, version: int) -> tuple[str, str] | None:
        """`game`'s partition, (ruleset, month), as its `events` part has it; None when the
        index is not at `version`, or has no such game."""
        current = self._current
        if current is None or current.version != version:
            return None
        places = current.places.get(game)
        if not places:
            return None
        number = places[0][0]
        values = dict(current.parts[number].partition)
        ruleset, month = values.get("ruleset"), values.get("month")
        return (ruleset, month) if ruleset is not None and month is not None else None

    def lines(self, game: str, version: int) -> Lines | None:
        """`game`'s lines in input order (`ordinal`), read from the row groups that hold
        them; [] when `events` at `version` has none; None when the index is not at
        `version` (the caller scans instead)."""
        current = self._current
        if current is None or current.version != version:
            return None
        places = current.places.get(game)
        if not places:
            return []
        pieces = []
        for number, first, last in places:
            part = current.parts[number]
            with self.store.location.filesystem.open_input_file(
                    self.store.part_fs_path("events", part)) as handle:
                rows = _read_groups(handle, current.footers.get(number), range(first, last + 1))
            pieces.append(rows.filter(pc.equal(rows["game_id"], game)))
        rows = pa.concat_tables(pieces).sort_by("ordinal")
        raws = rows["raw"].cast(pa.binary())  # the lines as bytes, without decoding them
        return list(zip(raws.to_pylist(), rows["file"].to_pylist(), rows["line"].to_pylist(),
                        strict=True))


def _distinct(ids: pa.ChunkedArray) -> list[str]:
    """The distinct values of a dictionary-encoded column's chunks."""
    found: dict[str, None] = {}
    for chunk in ids.chunks:
        if isinstance(chunk, pa.DictionaryArray):
            values = chunk.dictionary.take(pc.unique(chunk.indices))
        else:
            values = pc.unique(chunk)
        found.update(dict.fromkeys(values.to_pylist()))
    return list(found)


def _read_groups(handle: pa.NativeFile, footer: FooterMap | None, groups: range) -> pa.Table:
    """The line columns of a part's row groups `groups`: through its footer's map (only
    those row groups' part of the footer parsed), else with its whole footer."""
    if footer is not None:
        try:
            metadata = footer.metadata(handle, groups.start, groups.stop - 1)
        except FooterUnreadable as exc:  # not what the index mapped: read as before
            log.warning("the footer map of an events part failed (%s): reading its whole footer", exc)
        else:
            return pq.ParquetFile(handle, metadata=metadata).read_row_groups(
                list(range(len(groups))), columns=LINE_COLUMNS, use_threads=False)
    return pq.ParquetFile(handle).read_row_groups(list(groups), columns=LINE_COLUMNS,
                                                  use_threads=False)


class Gateway:
    """The warehouse at `location`, as the API reads it."""

    def __init__(self, location: Location, *, replays: int = 256, poll: float = 2.0,
                 index: bool = True) -> None:
        self.location = location
        self.root = location.uri
        self.store = Warehouse(location)
        self.index = GameIndex(self.store) if index else None
        self._poll = poll
        self._polled: tuple[float, int | None] | None = None  # (when, what) on S3
        self._reader: read.Reader | None = None
        self._problem: str | None = None
        self._seen: int | None = None  # the commit signal when the reader was opened
        self._lock = threading.Lock()
        # per snapshot: games replayed in the core (their states held by the core, a few
        # Python objects each), and whole games' replays built of them (for reports: every
        # state as Python objects, which each full garbage collection walks, so only a few)
        self._recorded: OrderedDict[tuple[int, str], RecordedGame | None] = OrderedDict()
        self._replays: OrderedDict[tuple[int, str], Replayed] = OrderedDict()
        self._recorded_limit, self._replay_limit = replays, min(replays, WHOLE_REPLAYS)
        self._replay_lock = threading.Lock()

    def _signal(self, *, fresh: bool = False) -> int | None:
        """Changes whenever `batches` commits: its log folder's mtime, or on S3 its version
        (asked at most every `poll` seconds unless `fresh`)."""
        if self.location.local:
            return read.commit_marker(self.location)
        now = time.monotonic()
        polled = self._polled
        if not fresh and polled is not None and now - polled[0] < self._poll:
            return polled[1]
        try:
            signal: int | None = self.store.table("batches").version()
        except Exception:  # no warehouse there yet, or the store is unreachable right now
            signal = None
        self._polled = (now, signal)
        return signal

    def reader(self) -> read.Reader:
        """The reader of the latest committed snapshot (reopened if a batch committed since)."""
        signal = self._signal()
        current = self._reader
        if current is not None and signal == self._seen:
            return current
        with self._lock:
            if self._reader is None or signal != self._seen:
                self._open(signal)
            if self._reader is None:
                raise WarehouseUnavailable(self._problem or f"no warehouse at {self.root}")
            return self._reader

    def refresh(self) -> None:
        """Reopen now (after this process committed a batch)."""
        with self._lock:
            self._open(self._signal(fresh=True))

    def _open(self, signal: int | None) -> None:
        try:
            reader = read.connect(self.location)
        except read.WarehouseMissing as exc:
            # an old reader stays usable; only a missing one makes the warehouse unavailable
            self._problem = (f"{exc}; push logs with POST /v1/ingest or run "
                             f"`haftkhabis ingest PATH --warehouse {self.root}`")
            self._seen = signal
            return
        # the previous connection is not closed here: a request may still be reading it,
        # and DuckDB closes it when the last reference goes
        self._reader, self._seen, self._problem = reader, signal, None
        if self.index is not None:
            self.index.follow(reader.snapshot.versions["events"])

    @property
    def batch(self) -> int | None:
        try:
            return self.reader().batch
        except WarehouseUnavailable:
            return None

    @property
    def indexed(self) -> bool:
        """Whether steps find their lines by the game index at the snapshot served."""
        try:
            reader = self.reader()
        except WarehouseUnavailable:
            return False
        return self.index is not None and self.index.version == reader.snapshot.versions["events"]

    def problem(self) -> str | None:
        try:
            self.reader()
        except WarehouseUnavailable as exc:
            return str(exc)
        return None

    def partition_of(self, reader: read.Reader, game: str) -> read.Partition | None:
        """`game`'s partition (ruleset, month), when the game index at `reader`'s snapshot
        knows it (None: not indexed yet, or no such game)."""
        return self.index.partition(game, reader.snapshot.versions["events"]) if self.index else None

    def game_lines(self, reader: read.Reader, game: str) -> Lines:
        """`game`'s stored lines at `reader`'s snapshot: by the index when it is there, else
        by a scan of the game's partition."""
        if self.index is not None:
            found = self.index.lines(game, reader.snapshot.versions["events"])
            if found is not None:
                return found
        return read.game_lines(reader, game)

    def _cached(self, cache: OrderedDict, limit: int, key: object, make: Callable[[], Any]) -> Any:
        with self._replay_lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        found = make()
        evicted = []
        with self._replay_lock:
            cache[key] = found
            cache.move_to_end(key)
            while len(cache) > limit:
                evicted.append(cache.popitem(last=False))
        # freed outside the lock: a long game's recorded steps take milliseconds to free
        del evicted
        return found

    def recorded(self, game: str) -> tuple[int, RecordedGame | None]:
        """`game` replayed in the core from its stored lines at the current snapshot, and
        the version of `events` it was read at (None: no such game). Kept by that version:
        a batch that wrote no line (a case, a compaction of other tables) keeps it. No
        state is kept per step: a step view replays the steps for the two states it shows
        (`record_lines(states=False)`; keeping 2,000 states of a long game cost more than
        its whole replay)."""
        reader = self.reader()
        version = reader.snapshot.versions["events"]
        found = self._cached(self._recorded, self._recorded_limit, (version, game),
                             lambda: record_lines(self.game_lines(reader, game), game,
                                                  states=False))
        return version, found

    def replayed(self, game: str) -> Replayed | None:
        """`game` replayed from its stored lines at the current snapshot, every step built
        (None: no such game)."""
        batch, recorded = self.recorded(game)
        if recorded is None:
            return None
        return self._cached(self._replays, self._replay_limit, (batch, game),
                            lambda: Replayed.of(recorded.build()))

    def replayed_step(self, game: str, seq: int) -> Replayed | None:
        """The line `seq` of `game`, its step alone built (`RecordedGame.step`: a step on a
        long game converts that line's states, not a hand's). None: no such game or line.
        Not kept: building it again costs less than keeping what it holds."""
        _, recorded = self.recorded(game)
        if recorded is None:
            return None
        found = recorded.step(seq)
        return Replayed.of(found) if found is not None else None

