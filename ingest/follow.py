"""Following a directory of game-server logs: new lines committed to the warehouse as they
are written, in group commits, and never a line twice or lost across rotations and restarts.

A `Follower` scans the directory (on a change `watchfiles` reports, and every `rescan`
seconds whether or not one came: a file system without inotify is followed all the
same), copies each file's new whole lines into a *segment* of the open group, and commits
the group as one warehouse batch through `ingest.live.commit_files` at most every
`interval` seconds, or at once when it holds `lines` lines.

A segment is named after what it holds: `<group>/<path in the directory>@<start>-<end>#L<n>`,
the bytes `start`–`end` of that file (of its decompressed content for gzip), whose first
line is the file's line `n`; the warehouse records that name as the lines' `file`
(`segment_source` reads it back: docs/cli.md, "Following a directory").

Each file is known by its identity (device and inode) and the hash of its first bytes, so
a rename is the same file, an inode reused or a file truncated in place is new content,
and a copy of known content (`copytruncate`'s copy, a rotated file compressed) goes on
from where that content was read rather than from its start.

Restarts: `checkpoint.json` holds every file's committed offset. Before a group is
committed, the checkpoint it will lead to is written as `pending.json`, naming the group's
segments; after the commit, it becomes the checkpoint. A follower stopped in between finds
at its next start whether the warehouse's `batches` table names those segments, and takes
the pending checkpoint if it does, so nothing is committed twice and nothing is skipped.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import logging
import os
import re
import secrets
import shutil
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG
from typing import Any

import orjson

from engine.reader import GZIP_MAGIC, is_log_name
from ingest.storage import Location

log = logging.getLogger("haftkhabis.follow")

STATE_DIR = "_follow"
CHECKPOINT_VERSION = 1
#: bytes of a file's start that identify its content (a copy has the same; a file
#: truncated and written again, or a reused inode, has others)
HEAD_BYTES = 4096
#: bytes read at a time: memory stays flat however large a file or a line
CHUNK = 1 << 20
#: a group is committed at once when its segments hold this many bytes (besides `lines`)
GROUP_BYTES = 256 << 20
#: files gone (deleted, rotated away) remembered, for a copy of their content to go on
#: from where they were read (the most recent ones)
GONE_KEEP = 256
#: open files kept, so a file deleted or renamed away is read to its end
OPEN_FILES = 64
#: seconds between tries of a group whose commit failed, doubling up to this
RETRY_MAX = 30.0

#: a rotated log's suffix: `server.log.1`, `server.log-20261203`, `server.log.2026-12-03`
_ROTATED = re.compile(r"[.-][0-9][0-9-]*$")
#: a segment's name, as the warehouse records it (`segment_source`)
_SEGMENT = re.compile(r"/segments/[^/]+/(?P<source>.+)@(?P<start>[0-9]+)-(?P<end>[0-9]+)#L(?P<line>[0-9]+)$")


class FollowError(Exception):
    """The directory cannot be followed as asked (its state is another's, or unreadable;
    another follower holds it; a group's fate cannot be told)."""


@dataclass(frozen=True, slots=True)
class FollowPolicy:
    """When groups are committed, and how changes are noticed."""

    interval: float = 1.0  # seconds: a group is committed at most this often
    lines: int = 100_000  # a group is committed at once when it holds this many lines
    rescan: float = 5.0  # seconds: the directory is scanned at least this often
    watch: bool = True  # wake up on changes (watchfiles); False: rescans only
    #: after this many groups the parts due are merged (`ingest.merge`), so the Delta
    #: costs of every commit stay bounded (0: never)
    compact_every: int = 8


@dataclass(frozen=True, slots=True)
class FollowBatch:
    """One group committed: its batch and figures, for whoever prints or watches."""

    batch: int
    files: int  # source files with lines in the group
    lines: int  # lines the batch read
    games: int  # games new or changed
    quarantined: int
    seconds: float  # the commit's wall time
    segments: tuple[str, ...]


@dataclass(slots=True)
class FollowedFile:
    """What the follower knows of one file's content.

    `offset` and `lines` are what a committed batch holds (bytes and lines from the
    start; for gzip, of the decompressed content); `read` and `read_lines` include the
    lines copied into the open group. `order` is the age of the content: a copy of a
    file's content keeps its order, so within a group its lines come before newer ones."""

    path: str  # relative to the followed directory, as last seen
    device: int
    inode: int
    gzip: bool
    head: str  # sha256 of the first `head_bytes` bytes
    head_bytes: int
    offset: int
    lines: int
    order: int
    #: the file's (size, mtime_ns) when it was last read to its end: unchanged, nothing new
    eof_at: tuple[int, int] | None = None
    read: int = 0
    read_lines: int = 0
    serial: int = 0  # this process's own number for it (groups key their pieces by it)

    @property
    def identity(self) -> tuple[int, int]:
        return self.device, self.inode

    def to_json(self) -> dict[str, Any]:
        """The checkpoint's entry: what the next batch will have committed."""
        return {"path": self.path, "device": self.device, "inode": self.inode,
                "gzip": self.gzip, "head": self.head, "head_bytes": self.head_bytes,
                "offset": self.read, "lines": self.read_lines, "order": self.order,
                "eof_at": list(self.eof_at) if self.eof_at is not None else None}

    @classmethod
    def from_json(cls, item: Mapping[str, Any], serial: int) -> FollowedFile:
        eof = item.get("eof_at")
        offset, lines = int(item["offset"]), int(item["lines"])
        return cls(str(item["path"]), int(item["device"]), int(item["inode"]),
                   bool(item["gzip"]), str(item["head"]), int(item["head_bytes"]), offset,
                   lines, int(item["order"]),
                   (int(eof[0]), int(eof[1])) if eof is not None else None,
                   offset, lines, serial)


def is_followed_name(name: str) -> bool:
    """A file name a followed directory contributes: a log name (`.jsonl`, `.ndjson`,
    `.log`, optionally `.gz`, as `ingest` reads a directory) or a rotated one
    (`server.log.1`, `server.log-20261203.gz`)."""
    if is_log_name(name):
        return True
    base = name.removesuffix(".gz")
    return is_log_name(_ROTATED.sub("", base)) and base != _ROTATED.sub("", base)


def segment_source(file: str, line: int) -> tuple[str, int] | None:
    """Where a line the warehouse holds (`events.file`, `events.line`) was written, when
    a follower read it: the file's path in the followed directory and its line there.
    None for a line of any other file."""
    found = _SEGMENT.search(file.replace(os.sep, "/"))
    if found is None:
        return None
    return found["source"], int(found["line"]) + line - 1


def state_folder(location: Location, directory: str) -> Path:
    """Where a follower of `directory` keeps its checkpoint and segments:
    `<warehouse>/_follow/<name>-<hash>` for a warehouse on this disk; for S3,
    `$XDG_STATE_HOME/haftkhabis/follow/<bucket>/<prefix>/<name>-<hash>` (default
    `~/.local/state/...`)."""
    directory = os.path.abspath(directory)
    key = f"{os.path.basename(directory) or 'root'}-{hashlib.sha256(directory.encode()).hexdigest()[:12]}"
    if location.local:
        return Path(location.uri) / STATE_DIR / key
    home = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    bucket, prefix = location.bucket_key(location.uri)
    return Path(home, "haftkhabis", "follow", bucket, *[p for p in prefix.split("/") if p], key)


def _atomic_write(path: Path, data: bytes) -> None:
    """`data` as `path`, whole or not at all, on disk when this returns."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _after_newline(chunk: bytes, count: int) -> int:
    """The position just after the `count`-th newline of `chunk` (it has that many)."""
    at = -1
    for _ in range(count):
        at = chunk.index(b"\n", at + 1)
    return at + 1


@dataclass(slots=True)
class _Piece:
    """One file's lines in the open group: a segment being written."""

    record: FollowedFile
    tmp: Path
    start: int
    first_line: int
    end: int = 0
    lines: int = 0
    size: int = 0  # bytes of whole lines in the segment
    path: Path | None = None  # its final name, once the group is committed


@dataclass(slots=True)
class _Group:
    """Lines read, not yet committed: a folder of segments."""

    id: str
    folder: Path
    pieces: dict[int, _Piece] = field(default_factory=dict)  # by the record's serial
    lines: int = 0
    bytes: int = 0
    #: a commit was tried and failed: nothing more is read into it until it commits
    frozen: bool = False


class _GzipCursor:
    """A gzip file's decompressed content, read forward from a position (`read`); kept
    between groups so a large compressed file is not decompressed again for each."""

    def __init__(self, serial: int, fd: int, stat: tuple[int, int]) -> None:
        self.serial, self.stat = serial, stat
        os.lseek(fd, 0, os.SEEK_SET)
        self._raw = open(fd, "rb", closefd=False)  # noqa: SIM115 - closed by close()
        self._stream = gzip.GzipFile(fileobj=self._raw, mode="rb")
        self.position = 0
        self._held = b""  # read from the stream, not yet taken

    def read(self, size: int) -> bytes:
        """Up to `size` bytes (b"": the end). Raises EOFError, gzip.BadGzipFile,
        zlib.error or OSError where the stream breaks off."""
        if self._held:
            data, self._held = self._held[:size], self._held[size:]
        else:
            data = self._stream.read(size)
        self.position += len(data)
        return data

    def unread(self, data: bytes) -> None:
        """Give back the last bytes read (the rest of a chunk the group had no room for)."""
        self._held = data + self._held
        self.position -= len(data)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._stream.close()
        with contextlib.suppress(Exception):
            self._raw.close()


@dataclass(slots=True)
class _Seen:
    """A file found by a scan."""

    path: str  # relative
    identity: tuple[int, int]
    size: int
    mtime_ns: int


class Follower:
    """Follows `directory` into `warehouse`, group-committing what is written to it.

    `step()` scans once and commits what it read (a test drives it line by line);
    `run()` follows until `stop()`. Use it as a context manager, or call `close()`."""

    def __init__(self, directory: str | os.PathLike[str], warehouse: str, *,
                 storage_options: Mapping[str, str] | None = None,
                 state: str | os.PathLike[str] | None = None,
                 policy: FollowPolicy | None = None,
                 on_batch: Callable[[FollowBatch], None] | None = None,
                 on_note: Callable[[str], None] | None = None) -> None:
        self.directory = os.path.abspath(os.fspath(directory))
        self.location = Location.of(warehouse, storage_options)
        self.warehouse = warehouse
        self.storage_options = dict(storage_options or {})
        self.state = Path(os.path.abspath(os.fspath(state))) if state is not None else \
            state_folder(self.location, self.directory)
        self.policy = policy or FollowPolicy()
        self._on_batch = on_batch or (lambda batch: None)
        self._on_note = on_note or log.warning
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._opened = False
        self._lock_fd: int | None = None
        self._files: dict[int, FollowedFile] = {}  # the files present, by serial
        self._gone: list[FollowedFile] = []  # oldest first
        self._serials = 0
        self._next_order = 0
        self._batch = 0  # the batch that committed the last group
        self._since_merge = 0  # groups committed since the last merge pass
        self._group: _Group | None = None
        self._handles: OrderedDict[int, int] = OrderedDict()  # serial → fd
        self._cursor: _GzipCursor | None = None
        self._last_commit = 0.0  # monotonic
        self._noted: set[str] = set()
        self._watcher: threading.Thread | None = None

    # ------------------------------------------------------------------ life cycle

    def __enter__(self) -> Follower:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Take the state folder (one follower at a time), load the checkpoint, settle a
        group whose commit was cut short, and clear what it left."""
        if self._opened:
            return
        if not os.path.isdir(self.directory):
            raise FollowError(f"cannot follow {self.directory}: expected a directory, found "
                              f"{'a file' if os.path.exists(self.directory) else 'nothing'} there")
        self.state.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.state / "follow.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise FollowError(f"{self.state} is in use by another follower (pid {holder}); "
                              "one follower at a time follows a directory into a warehouse") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd
        self._stopping.clear()
        try:
            self._load()
        except BaseException:
            self.close()
            raise
        self._opened = True

    def close(self) -> None:
        """Let go of the state folder and every open file. A group read but not
        committed is dropped: its lines are read again by the next follower."""
        self._stopping.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
            self._watcher = None
        if self._cursor is not None:
            self._cursor.close()
            self._cursor = None
        for fd in self._handles.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._handles.clear()
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)  # the flock goes with it
            self._lock_fd = None
        self._opened = False

    def stop(self) -> None:
        """Ask `run()` to end: a commit under way finishes, the group read so far is
        committed, then `run()` returns. Safe from a signal handler or another thread."""
        self._stopping.set()
        self._wake.set()

    # ------------------------------------------------------------------ following

    def step(self) -> FollowBatch | None:
        """Scan once, read every whole line written since, and commit them (up to
        `policy.lines`; the next step goes on). None when there was nothing to commit."""
        self.open()
        group = self._open_group()
        if not group.frozen:
            self._scan_and_read()
        if not group.lines:
            return None
        return self._commit()

    def run(self) -> None:
        """Follow until `stop()`: read on every change and rescan, commit groups as the
        policy says, retry a commit that failed (the lines wait in their group)."""
        self.open()
        self._start_watcher()
        failures = 0
        retry_at = 0.0
        try:
            while not self._stopping.is_set():
                self._wake.clear()
                group = self._open_group()
                try:
                    if not group.frozen:
                        self._scan_and_read()
                    now = time.monotonic()
                    full = group.lines >= self.policy.lines or group.bytes >= GROUP_BYTES
                    due = max(self._last_commit + self.policy.interval, retry_at)
                    if group.lines and now >= retry_at and (full or now >= due):
                        self._commit()
                        failures, retry_at = 0, 0.0
                        continue  # more may wait (the group was full)
                except Exception as exc:
                    if not _expected(exc):
                        raise
                    failures += 1
                    pause = min(RETRY_MAX, max(0.5, self.policy.interval) * 2 ** (failures - 1))
                    retry_at = time.monotonic() + pause
                    self._on_note(f"{_one_line(exc)}; trying again in {pause:.1f} s")
                    due = retry_at
                wait = self.policy.rescan
                if group.lines:
                    wait = min(wait, max(0.0, due - time.monotonic()))
                self._wake.wait(wait)
            last = self._group
            if last is not None and last.lines:
                try:
                    self._commit()  # the group in flight is finished, not left half-read
                except Exception as exc:
                    if not _expected(exc):
                        raise
                    self._on_note(f"{_one_line(exc)}; the group in flight was not committed "
                                  "(its lines are read again at the next start)")
        finally:
            self.close()

    def _start_watcher(self) -> None:
        if not self.policy.watch:
            return
        try:
            import watchfiles
        except ImportError:
            self._on_note("watchfiles is not installed: changes are found by rescans only")
            return
        skip = (str(self.state) + os.sep, self.location.uri.rstrip(os.sep) + os.sep)

        def wanted(change: Any, path: str) -> bool:
            return not path.startswith(skip) and is_followed_name(os.path.basename(path))

        debounce = max(50, min(1600, int(self.policy.interval * 1000)))

        def watch() -> None:
            try:
                for _changes in watchfiles.watch(self.directory, watch_filter=wanted,
                                                 debounce=debounce, step=50,
                                                 stop_event=self._stopping,
                                                 raise_interrupt=False,
                                                 ignore_permission_denied=True):
                    self._wake.set()
            except Exception as exc:  # no inotify here, its limits reached: rescans go on
                if not self._stopping.is_set():
                    self._on_note(f"watching {self.directory} failed ({_one_line(exc)}); "
                                  f"changes are found by rescans every {self.policy.rescan:g} s")

        self._watcher = threading.Thread(target=watch, name="haftkhabis-follow-watch", daemon=True)
        self._watcher.start()

    # ------------------------------------------------------------------ the checkpoint

    def _checkpoint(self) -> Path:
        return self.state / "checkpoint.json"

    def _pending(self) -> Path:
        return self.state / "pending.json"

    def _segments(self) -> Path:
        return self.state / "segments"

    def _read_state(self, path: Path) -> dict[str, Any] | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            state = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise FollowError(f"{path}: expected the follower's JSON state, found unreadable "
                              f"JSON ({exc})") from None
        if not isinstance(state, dict) or state.get("version") != CHECKPOINT_VERSION:
            found = state.get("version") if isinstance(state, dict) else type(state).__name__
            raise FollowError(f"{path}: expected a follower state of version "
                              f"{CHECKPOINT_VERSION}, found {found!r}")
        for key, mine in (("directory", self.directory), ("warehouse", self.location.uri)):
            if state.get(key) != mine:
                raise FollowError(f"{path} is the state of a follower of the {key} "
                                  f"{state.get(key)!r}; this follower was asked for the {key} "
                                  f"{mine!r} (give it a --state of its own)")
        return state

    def _load(self) -> None:
        # what a previous opening knew is the checkpoint's now, or is read again
        self._files, self._gone, self._group = {}, [], None
        self._batch = self._next_order = 0
        checkpoint = self._read_state(self._checkpoint())
        pending = self._read_state(self._pending())
        if pending is not None:
            if checkpoint is not None and checkpoint.get("group") == pending.get("group"):
                pass  # it became the checkpoint; only its removal was cut short
            else:
                after = int(checkpoint["batch"]) if checkpoint is not None else 0
                batch = self._committed_in_warehouse(pending.get("segments") or [], after)
                if batch is not None:  # committed, then stopped before the checkpoint
                    checkpoint = {**_without_segments(pending), "batch": batch}
                    self._save_checkpoint(checkpoint)
            self._pending().unlink(missing_ok=True)
        shutil.rmtree(self._segments(), ignore_errors=True)
        if checkpoint is None:
            return
        self._batch = int(checkpoint.get("batch") or 0)
        self._next_order = int(checkpoint.get("next_order") or 0)
        try:
            for item in checkpoint.get("files") or ():
                record = FollowedFile.from_json(item, self._serial())
                self._files[record.serial] = record
            self._gone = [FollowedFile.from_json(item, self._serial())
                          for item in checkpoint.get("gone") or ()]
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise FollowError(f"{self._checkpoint()}: expected each file's path, identity, "
                              f"head and offset, found {type(exc).__name__}: {exc}") from None

    def _state(self, group: _Group, segments: Sequence[str]) -> dict[str, Any]:
        """The checkpoint the group leads to once committed."""
        return {"version": CHECKPOINT_VERSION, "directory": self.directory,
                "warehouse": self.location.uri, "batch": self._batch, "group": group.id,
                "next_order": self._next_order,
                "files": [r.to_json() for r in self._files.values()],
                "gone": [r.to_json() for r in self._gone[-GONE_KEEP:]],
                "segments": list(segments)}

    def _save_pending(self, state: Mapping[str, Any]) -> None:
        _atomic_write(self._pending(), orjson.dumps(state))

    def _save_checkpoint(self, state: Mapping[str, Any]) -> None:
        """The checkpoint, written once the batch holding its lines has committed."""
        _atomic_write(self._checkpoint(), orjson.dumps(state))
        self._pending().unlink(missing_ok=True)

    def _committed_in_warehouse(self, segments: Sequence[str], after: int) -> int | None:
        """The batch (numbered past `after`) that committed any of `segments`, from the
        warehouse's own record of the files each batch read; None when none did."""
        if not segments:
            return None
        import pyarrow.compute as pc

        from ingest.store import Warehouse, WarehouseError

        store = Warehouse(self.location)
        if not store.exists():
            return None
        try:
            snapshot = store.snapshot()
            if snapshot.batch <= after:
                return None
            rows = store.dataset("batches", snapshot.versions["batches"]).to_table(
                columns=["id", "files"], filter=pc.field("id") > after).to_pylist()
        except (WarehouseError, OSError) as exc:
            raise FollowError(f"cannot tell whether the group naming {segments[0]} was committed "
                              f"to {self.location.uri}: {_one_line(exc)}") from exc
        wanted = {os.path.abspath(s) for s in segments}
        for row in sorted(rows, key=lambda r: r["id"]):
            for item in row["files"] or ():
                if item["path"] in wanted and item["status"] != "failed":
                    return int(row["id"])
        return None

    # ------------------------------------------------------------------ scanning

    def _serial(self) -> int:
        self._serials += 1
        return self._serials

    def _note_once(self, key: str, message: str) -> None:
        if key not in self._noted:
            self._noted.add(key)
            self._on_note(message)

    def _list(self) -> dict[tuple[int, int], _Seen]:
        """The followed files in the directory now, by identity (the first path of a
        file that has several: hard links, symbolic links)."""
        found: dict[tuple[int, int], _Seen] = {}
        skip = {str(self.state)}
        if self.location.local:
            skip.add(self.location.uri)
        for root, folders, names in os.walk(self.directory):
            folders[:] = sorted(f for f in folders if os.path.join(root, f) not in skip)
            for name in sorted(names):
                if not is_followed_name(name):
                    continue
                path = os.path.join(root, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue  # gone between the listing and the stat
                if not S_ISREG(st.st_mode):
                    continue
                identity = (st.st_dev, st.st_ino)
                if identity not in found:
                    relative = os.path.relpath(path, self.directory).replace(os.sep, "/")
                    found[identity] = _Seen(relative, identity, st.st_size, st.st_mtime_ns)
        return found

    def _handle(self, record: FollowedFile) -> int | None:
        """The record's open file (opened by its path, and only if that is still its
        content's identity); None when it cannot be opened."""
        fd = self._handles.get(record.serial)
        if fd is not None:
            self._handles.move_to_end(record.serial)
            return fd
        try:
            fd = os.open(os.path.join(self.directory, record.path), os.O_RDONLY)
        except OSError as exc:
            self._note_once(f"open:{record.path}",
                            f"cannot read {os.path.join(self.directory, record.path)}: "
                            f"{exc.strerror or exc}; it is tried again when it changes")
            return None
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != record.identity:
            os.close(fd)  # renamed or replaced between the scan and now: the next scan sees it
            return None
        self._keep_handle(record, fd)
        return fd

    def _keep_handle(self, record: FollowedFile, fd: int) -> None:
        self._handles[record.serial] = fd
        while len(self._handles) > OPEN_FILES:
            serial, oldest = self._handles.popitem(last=False)
            if self._cursor is not None and self._cursor.serial == serial:
                self._cursor.close()
                self._cursor = None
            os.close(oldest)

    def _forget(self, record: FollowedFile) -> None:
        fd = self._handles.pop(record.serial, None)
        if fd is not None:
            os.close(fd)
        if self._cursor is not None and self._cursor.serial == record.serial:
            self._cursor.close()
            self._cursor = None

    def _head(self, fd: int, compressed: bool) -> tuple[bytes, bool]:
        """The first `HEAD_BYTES` bytes of the content (fewer if it has fewer), and whether
        they are all it will show for now: False for a gzip stream that breaks off before
        (being written, most likely)."""
        if not compressed:
            return os.pread(fd, HEAD_BYTES, 0), True
        os.lseek(fd, 0, os.SEEK_SET)
        head = b""
        with open(fd, "rb", closefd=False) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as stream:
            try:
                while len(head) < HEAD_BYTES:
                    more = stream.read(HEAD_BYTES - len(head))
                    if not more:
                        break
                    head += more
            except (EOFError, OSError, zlib.error):
                return head, False
        return head, True

    def _same_head(self, record: FollowedFile, head: bytes) -> bool:
        return len(head) >= record.head_bytes and _sha(head[:record.head_bytes]) == record.head

    def _retire(self, record: FollowedFile) -> None:
        self._forget(record)
        self._files.pop(record.serial, None)
        self._gone.append(record)
        del self._gone[:-GONE_KEEP]

    def _scan_and_read(self) -> None:
        """One scan: match what is there to what is known, then copy every file's new
        whole lines into the open group, oldest content first, while it has room."""
        seen = self._list()
        by_identity = {r.identity: r for r in self._files.values()}
        # a file deleted or renamed away is read to its end through its open descriptor,
        # then remembered as gone (until then, a copy of it waits: see `_adopt`)
        for record in sorted((r for r in self._files.values() if r.identity not in seen),
                             key=lambda r: (r.order, r.serial)):
            if record.gzip or record.serial not in self._handles or self._read(record, None):
                self._retire(record)
        changed: list[FollowedFile] = []
        candidates: list[_Seen] = []
        for identity, item in seen.items():
            known = by_identity.get(identity)
            if known is None:
                candidates.append(item)
                continue
            record = known
            record.path = item.path
            if record.eof_at == (item.size, item.mtime_ns):
                continue  # nothing new since it was read to its end
            fd = self._handle(record)
            if fd is None:
                continue
            head, _ = self._head(fd, record.gzip)
            if (not record.gzip and item.size < record.read) or not self._same_head(record, head):
                # truncated in place (copytruncate) or a reused inode: new content in it
                self._retire(record)
                candidates.append(item)
                continue
            if len(head) > record.head_bytes:
                record.head, record.head_bytes = _sha(head), len(head)
            changed.append(record)
        for item in sorted(candidates, key=lambda c: c.path):
            adopted = self._adopt(item)
            if adopted is not None:
                changed.append(adopted)
        for record in sorted(changed, key=lambda r: (r.order, r.serial)):
            group = self._group
            if group is None or group.lines >= self.policy.lines or group.bytes >= GROUP_BYTES:
                break
            item = seen[record.identity]
            self._read(record, (item.size, item.mtime_ns))

    def _adopt(self, item: _Seen) -> FollowedFile | None:
        """A file whose content is not known by its identity: new content (read from its
        start), or a copy of content already read (read on from where that was), or not
        decided yet: empty, compressed and still being written, or a copy of a file still
        there, whose lines are read from that file (decided once it is truncated or gone)."""
        path = os.path.join(self.directory, item.path)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            compressed = os.pread(fd, 2, 0) == GZIP_MAGIC
            head, complete = self._head(fd, compressed)
            if (st.st_dev, st.st_ino) != item.identity or not head or \
                    (len(head) < HEAD_BYTES and not complete):
                os.close(fd)
                return None
        except BaseException:
            os.close(fd)
            raise
        known = [r for r in (*self._gone, *self._files.values())
                 if r.head_bytes and self._same_head(r, head)]
        source = max(known, key=lambda r: (r.read, r.serial), default=None)
        if source is not None and source.serial in self._files:
            os.close(fd)
            return None
        record = FollowedFile(item.path, *item.identity, compressed, _sha(head), len(head), 0, 0,
                              0, serial=self._serial())
        if source is None:
            record.order = self._next_order
            self._next_order += 1
        else:
            # a copy of content read up to `source.read`: it goes on from there
            record.order = source.order
            record.offset = record.read = source.read
            record.lines = record.read_lines = source.read_lines
            if not compressed and st.st_size < source.read:
                # an older copy, shorter than what was read: every line in it was read
                record.offset = record.read = st.st_size
                record.lines = record.read_lines = _count_lines(fd, st.st_size)
        self._files[record.serial] = record
        self._keep_handle(record, fd)
        return record

    # ------------------------------------------------------------------ reading

    def _open_group(self) -> _Group:
        if self._group is None:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
            group_id = f"{stamp}-{secrets.token_hex(3)}"
            self._group = _Group(group_id, self._segments() / group_id)
        return self._group

    def _read(self, record: FollowedFile, stat: tuple[int, int] | None) -> bool:
        """Copy the record's new whole lines into its piece of the open group, as many as
        the group has room for. `stat`: the file's size and mtime before the read (None
        for a file that is gone: read through its open descriptor). Whether it was read
        to its end (or to where its content breaks off)."""
        group = self._group
        fd = self._handles.get(record.serial) if stat is None else self._handle(record)
        if group is None or fd is None:
            return fd is None
        room = self.policy.lines - group.lines
        if room <= 0 or group.bytes >= GROUP_BYTES:
            return False
        source: Callable[[int], bytes]
        if record.gzip:
            cursor = self._gzip_at(record, fd, stat)
            if cursor is None:  # its stream breaks off before what was read: wait for more
                record.eof_at = stat
                return True
            source = cursor.read
        else:
            position = record.read

            def source(size: int) -> bytes:
                nonlocal position
                data = os.pread(fd, size, position)
                position += len(data)
                return data

        piece = group.pieces.get(record.serial) or _Piece(
            record, group.folder / f".piece-{record.serial}", record.read, record.read_lines + 1,
            end=record.read)
        group.folder.mkdir(parents=True, exist_ok=True)
        at = kept = record.read  # the next byte of the content; just past the last whole line
        lines = 0
        ended = False
        broken: str | None = None
        with open(piece.tmp, "r+b" if piece.tmp.exists() else "wb") as out:
            # the segment's bytes after `piece.size` are a partial line of the last read
            out.seek(piece.size)
            out.truncate()
            while True:
                try:
                    chunk = source(CHUNK)
                except (EOFError, OSError, zlib.error) as exc:
                    broken = _one_line(exc)
                    break
                if not chunk:
                    ended = True
                    break
                newlines = chunk.count(b"\n")
                if newlines >= room:  # the group is full: up to its last line, no further
                    cut = _after_newline(chunk, room)
                    out.write(chunk[:cut])
                    if record.gzip and self._cursor is not None:
                        self._cursor.unread(chunk[cut:])
                    lines += room
                    at = kept = at + cut
                    break
                out.write(chunk)
                if newlines:
                    lines += newlines
                    room -= newlines
                    kept = at + chunk.rindex(b"\n") + 1
                at += len(chunk)
                if group.bytes + (kept - record.read) >= GROUP_BYTES:
                    break
            whole = piece.size + (kept - record.read)
            if record.gzip and ended and at > kept:
                # a complete compressed file: its last line is whole without a newline
                out.seek(piece.size + (at - record.read))
                out.truncate()
                out.write(b"\n")
                lines += 1
                whole += at - kept + 1
                kept = at
            else:
                out.truncate(whole)
        if broken is not None:
            self._note_once(f"broken:{record.serial}:{stat}",
                            f"{os.path.join(self.directory, record.path)}: its content breaks "
                            f"off at byte {at} ({broken}); the lines before that are read")
            if self._cursor is not None and self._cursor.serial == record.serial:
                self._cursor.close()
                self._cursor = None
        done = ended or broken is not None
        # read to its end as it stood before the read: nothing new until it changes
        record.eof_at = stat if done else None
        if lines:
            piece.size, piece.end = whole, kept
            piece.lines += lines
            group.pieces[record.serial] = piece
            group.lines += lines
            group.bytes += kept - record.read
            record.read = kept
            record.read_lines += lines
        elif not piece.lines:
            piece.tmp.unlink(missing_ok=True)
        return done

    def _gzip_at(self, record: FollowedFile, fd: int,
                 stat: tuple[int, int] | None) -> _GzipCursor | None:
        """A cursor on the record's decompressed content at `record.read` (the one kept
        from the previous read, when it is there); None when the stream breaks off before."""
        current = stat or _stat_of(fd)
        cursor = self._cursor
        if cursor is not None and cursor.serial == record.serial and \
                cursor.position == record.read and cursor.stat == current:
            return cursor
        if cursor is not None:
            cursor.close()
        cursor = self._cursor = _GzipCursor(record.serial, fd, current)
        lines = 0
        try:
            while cursor.position < record.read:
                data = cursor.read(min(CHUNK, record.read - cursor.position))
                if not data:
                    break
                lines += data.count(b"\n")
        except (EOFError, OSError, zlib.error):
            cursor.close()
            self._cursor = None
            return None
        if cursor.position < record.read:
            # it ends before what was read of this content: an older copy, all of it read
            record.offset = record.read = cursor.position
            record.lines = record.read_lines = lines
        return cursor

    # ------------------------------------------------------------------ committing

    def _commit(self) -> FollowBatch:
        """Commit the open group as one batch; then its lines are the checkpoint's."""
        from ingest.live import commit_files

        group = self._group
        assert group is not None and group.lines
        segments = self._name_segments(group)
        state = self._state(group, segments)
        self._save_pending(state)
        group.frozen = True  # tried: it commits as it is, or not at all
        clock = time.monotonic()
        try:
            outcome = commit_files(segments, self.warehouse, self.storage_options or None)
        except Exception:
            # committed, then failed after (reading back what it wrote)? the record says
            batch = self._committed_in_warehouse(segments, self._batch)
            if batch is None:
                raise
            outcome = {"batch": batch, "lines": group.lines, "games": 0, "quarantined": 0,
                       "files": {}}
        seconds = time.monotonic() - clock
        failed = [path for path, report in (outcome.get("files") or {}).items()
                  if report.get("status") == "failed"]
        if failed:
            report = outcome["files"][failed[0]]
            raise FollowError(f"batch {outcome['batch']} could not read the segment {failed[0]}: "
                              f"{report.get('error')}; the group is committed again")
        batch = int(outcome["batch"])
        self._save_checkpoint({**_without_segments(state), "batch": batch})
        self._batch = batch
        for record in [*self._files.values(), *self._gone]:
            record.offset, record.lines = record.read, record.read_lines
        self._group = None
        self._last_commit = clock  # the interval runs from a commit's start
        for folder in self._segments().glob(f"{group.id}*"):  # and its `+N` folders
            shutil.rmtree(folder, ignore_errors=True)
        done = FollowBatch(batch, len(segments), int(outcome.get("lines") or 0),
                           int(outcome.get("games") or 0), int(outcome.get("quarantined") or 0),
                           seconds, tuple(segments))
        self._on_batch(done)
        self._since_merge += 1
        if self.policy.compact_every and self._since_merge >= self.policy.compact_every:
            self._merge()
        return done

    def _merge(self) -> None:
        """A merge pass over the warehouse (`ingest.merge`); one that fails is noted and
        tried again after the next groups (the lines are committed either way)."""
        from ingest.live import merge_small_parts

        self._since_merge = 0
        try:
            merged = merge_small_parts(self.warehouse, self.storage_options or None)
        except Exception as exc:
            self._on_note(f"merging the warehouse's small parts failed ({type(exc).__name__}: "
                          f"{exc}); tried again after the next groups")
            return
        for skipped in merged["skipped"]:
            self._on_note(f"parts not merged: {skipped}")

    def _name_segments(self, group: _Group) -> list[str]:
        """Each piece under its final name (source path, byte range, first line), in the
        order their lines are fed: oldest content first."""
        names: list[str] = []
        taken: set[Path] = set()
        pieces = sorted((p for p in group.pieces.values() if p.lines),
                        key=lambda p: (p.record.order, p.record.serial))
        for piece in pieces:
            if piece.path is None:
                name = f"{piece.record.path}@{piece.start}-{piece.end}#L{piece.first_line}"
                path = group.folder / name
                copy = 1
                while path in taken or path.exists():
                    # the same range of two contents of one name (a file truncated and
                    # written again within the group): a folder beside the group's
                    copy += 1
                    path = group.folder.with_name(f"{group.folder.name}+{copy}") / name
                path.parent.mkdir(parents=True, exist_ok=True)
                os.replace(piece.tmp, path)
                piece.path = path
            taken.add(piece.path)
            names.append(str(piece.path))
        return names


def _without_segments(state: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in state.items() if key != "segments"}


def _stat_of(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_size, st.st_mtime_ns


def _count_lines(fd: int, size: int) -> int:
    lines = position = 0
    while position < size:
        chunk = os.pread(fd, min(CHUNK, size - position), position)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        position += len(chunk)
    return lines


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n", 1)[0].split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _expected(exc: BaseException) -> bool:
    """A failure that is not a bug: the warehouse busy or unreachable, the storage
    refusing a write, a file that could not be read. The group waits and is tried again."""
    from deltalake.exceptions import DeltaError

    from ingest.pipeline import IngestError
    from ingest.storage import StorageError
    from ingest.store import WarehouseError

    if isinstance(exc, IngestError):
        return not exc.bug
    return isinstance(exc, WarehouseError | StorageError | OSError | DeltaError | FollowError)

