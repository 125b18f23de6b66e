"""The service's read side: one read-only connection to the warehouse's committed snapshot
(the dashboard's `dashboards.data.connect`), reopened when a new batch commits, and the
games it replays for the step views, kept per snapshot.

A commit is noticed by the `batches` table's transaction log changing (one `stat` per
request): every ingest and compact ends by committing a `batches` row, and readers open
the versions the latest row records, so a reopened reader sees whole batches only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from dashboards import data
from dashboards.game_replay import GameReplay, ReplayStep, replay_lines


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


class Gateway:
    """The warehouse at `root`, as the API reads it."""

    def __init__(self, root: Path, *, replays: int = 256) -> None:
        self.root = root
        self._log = root / "batches" / "_delta_log"
        self._reader: data.Reader | None = None
        self._problem: str | None = None
        self._seen: int | None = None  # the batches log's mtime when the reader was opened
        self._lock = threading.Lock()
        self._replays: OrderedDict[tuple[int, str], Replayed | None] = OrderedDict()
        self._replay_limit = replays
        self._replay_lock = threading.Lock()

    def _signal(self) -> int | None:
        try:
            return self._log.stat().st_mtime_ns
        except OSError:
            return None

    def reader(self) -> data.Reader:
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
            self._open(self._signal())

    def _open(self, signal: int | None) -> None:
        try:
            reader = data.connect(self.root)
        except data.WarehouseMissing as exc:
            # an old reader stays usable; only a missing one makes the warehouse unavailable
            self._problem = (f"{exc}; push logs with POST /v1/ingest or run "
                             f"`haftkhabis ingest PATH --warehouse {self.root}`")
            self._seen = signal
            return
        # the previous connection is not closed here: a request may still be reading it,
        # and DuckDB closes it when the last reference goes
        self._reader, self._seen, self._problem = reader, signal, None

    @property
    def batch(self) -> int | None:
        try:
            return self.reader().batch
        except WarehouseUnavailable:
            return None

    def problem(self) -> str | None:
        try:
            self.reader()
        except WarehouseUnavailable as exc:
            return str(exc)
        return None

    def replayed(self, game: str) -> Replayed | None:
        """`game` replayed from its stored lines at the current snapshot (None: no such game)."""
        reader = self.reader()
        key = (reader.batch, game)
        with self._replay_lock:
            if key in self._replays:
                self._replays.move_to_end(key)
                return self._replays[key]
        replay = replay_lines(data.game_lines(reader, game), game)
        found = Replayed.of(replay) if replay is not None else None
        with self._replay_lock:
            self._replays[key] = found
            self._replays.move_to_end(key)
            while len(self._replays) > self._replay_limit:
                self._replays.popitem(last=False)
        return found
