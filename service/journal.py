"""The pushed bodies' journal: what makes a `202` durable.

`POST /v1/ingest` receives a body (in memory up to 256 KiB, past it in a temporary
file), then has it appended to the journal — a folder of append-only segment files
(`<state>/journal/00000001.log`, …) — and answers only once the journal is on disk up to
the end of that record (`fdatasync`). Syncs are shared: the service's appender takes
every body that arrived while the last sync ran and appends them under one sync
(`append_many`), and appends from other threads that land while one sync runs wait for
the next, which covers them all (a group commit of the disk, as databases do), so a
thousand pushes a second cost a few hundred syncs, not a thousand. A server killed with SIGKILL (or the machine losing
power) after a `202` has the body in the journal.

A record is a header line, the body, a newline:

    {"id": "ing_…", "sha256": "…", "size": 1234, "lines": 12, "received_at": "…"}\\n
    <size bytes>\\n

The committer reads records in journal order from its committed position (`committed`, a
small file rewritten atomically after each warehouse batch), so bodies are committed in
the order they were accepted; a record cut short by a crash during its append (never
answered `202`) is where the journal ends, and the next append starts a new segment.
Segments wholly committed are deleted.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

#: a segment is closed and a new one started past this size
SEGMENT_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class Position:
    """A place in the journal: a segment's number and a byte offset in it."""

    segment: int
    offset: int

    def __lt__(self, other: Position) -> bool:
        return (self.segment, self.offset) < (other.segment, other.offset)

    def __le__(self, other: Position) -> bool:
        return (self.segment, self.offset) <= (other.segment, other.offset)


@dataclass(frozen=True, slots=True)
class Record:
    """One accepted body: its header, and where its body and its record's end lie."""

    header: dict[str, Any]
    segment: int
    body_offset: int
    end: Position
    id: str
    size: int
    lines: int

    @classmethod
    def of(cls, header: dict[str, Any], segment: int, body_offset: int, end: Position) -> Record:
        return cls(header, segment, body_offset, end, str(header["id"]), int(header["size"]),
                   int(header.get("lines") or 0))


class Journal:
    """Append bodies durably; read them back in order; remember what is committed."""

    def __init__(self, folder: Path, *, segment_bytes: int = SEGMENT_BYTES) -> None:
        self.folder = folder
        self.segment_bytes = segment_bytes
        folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # the appends
        self._synced = threading.Condition()
        self._synced_to = Position(0, 0)  # everything before this is on disk
        self._syncing = False
        self._file: IO[bytes] | None = None
        self._segment = 0
        self._offset = 0

    # ------------------------------------------------------------------ segments

    def _path(self, segment: int) -> Path:
        return self.folder / f"{segment:08d}.log"

    def segments(self) -> list[int]:
        return sorted(int(p.stem) for p in self.folder.glob("*.log") if p.stem.isdigit())

    def _open_next(self) -> None:
        """Start a new segment after the last one (a crash may have left a torn record
        at the end of the last: it is never appended to)."""
        if self._file is not None:
            # a record appended to it may still wait for its sync, which will sync the
            # new segment: this one is synced now, before it is left
            os.fdatasync(self._file.fileno())
            self._file.close()
        existing = self.segments()
        self._segment = (existing[-1] if existing else 0) + 1
        self._file = open(self._path(self._segment), "ab")  # noqa: SIM115 - closed on roll/close
        self._offset = 0
        dir_fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # the new segment's name is durable too
        finally:
            os.close(dir_fd)

    # ------------------------------------------------------------------ appending

    def append(self, header: dict[str, Any], body: bytes | Path) -> Record:
        """Append `body` (its bytes, or the file holding them) with `header`; return once
        it is on disk."""
        return self.append_many([(header, body)])[0]

    def append_many(self, items: Sequence[tuple[dict[str, Any], bytes | Path]]) -> list[Record]:
        """Append each body with its header, in order; return once all are on disk (one
        sync for them all: the pushes a server takes while the last sync ran)."""
        records = []
        with self._lock:
            if self._file is None or self._offset >= self.segment_bytes:
                self._open_next()
            assert self._file is not None
            for header, body in items:
                head = orjson.dumps(header) + b"\n"
                size = int(header["size"])
                start = self._offset
                self._file.write(head)
                if isinstance(body, Path):
                    with open(body, "rb") as source:
                        while chunk := source.read(1 << 20):
                            self._file.write(chunk)
                else:
                    self._file.write(body)
                self._file.write(b"\n")
                self._offset = start + len(head) + size + 1
                records.append(Record.of(header, self._segment, start + len(head),
                                         Position(self._segment, self._offset)))
            self._file.flush()
        if records:
            self._sync(records[-1].end)
        return records

    def _sync(self, upto: Position) -> None:
        """Wait until the journal is on disk up to `upto`: the first waiter syncs for all."""
        with self._synced:
            while self._synced_to < upto:
                if self._syncing:
                    self._synced.wait()
                    continue
                self._syncing = True
                covered = self._synced_to
                self._synced.release()
                try:
                    with self._lock:  # what is written by now is what this sync covers
                        file, covered = self._file, Position(self._segment, self._offset)
                        fd = os.dup(file.fileno()) if file is not None else None
                    if fd is not None:
                        try:
                            os.fdatasync(fd)
                        finally:
                            os.close(fd)
                finally:
                    self._synced.acquire()
                    self._syncing = False
                if self._synced_to < covered:
                    self._synced_to = covered
                self._synced.notify_all()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    # ------------------------------------------------------------------ reading

    def records(self, after: Position) -> Iterator[Record]:
        """Every whole record after `after`, in journal order (a torn tail is skipped)."""
        for segment in self.segments():
            if segment < after.segment:
                continue
            path = self._path(segment)
            with open(path, "rb") as handle:
                offset = after.offset if segment == after.segment else 0
                handle.seek(offset)
                while True:
                    head = handle.readline()
                    if not head.endswith(b"\n"):
                        break  # the end (or a header cut short)
                    try:
                        header = orjson.loads(head)
                        size = int(header["size"])
                    except (ValueError, KeyError, TypeError):
                        break  # a torn record: nothing after it in this segment was answered
                    body_offset = offset + len(head)
                    handle.seek(body_offset + size)
                    if handle.read(1) != b"\n":
                        break  # its body cut short
                    offset = body_offset + size + 1
                    yield Record.of(header, segment, body_offset, Position(segment, offset))

    def range_of(self, record: Record) -> tuple[str, int, int]:
        """Where the record's body lies: `(segment file, offset, size)`. The service's
        writer reads it there (`Ingestor.feed_files`'s ranges), no copy made."""
        return str(self._path(record.segment)), record.body_offset, record.size

    # ------------------------------------------------------------------ committed

    def committed(self) -> Position:
        """Where the committed records end (the start of the journal if none is)."""
        try:
            data = orjson.loads((self.folder / "committed").read_bytes())
            return Position(int(data["segment"]), int(data["offset"]))
        except (OSError, ValueError, KeyError, TypeError):
            return Position(0, 0)

    def mark_committed(self, upto: Position) -> None:
        """Record that everything before `upto` is in the warehouse; drop whole segments
        before it (never the one being appended to)."""
        path = self.folder / "committed"
        tmp = self.folder / ".committed.tmp"
        with open(tmp, "wb") as out:
            out.write(orjson.dumps({"segment": upto.segment, "offset": upto.offset}))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        with self._lock:
            current = self._segment
        for segment in self.segments():
            if segment < upto.segment and segment != current:
                self._path(segment).unlink(missing_ok=True)
