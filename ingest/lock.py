"""The warehouse's writer lock: one `ingest` or `compact` at a time.

On a local folder it is `flock` on `_ingest.lock`: the kernel drops it when the process
dies, however it dies. On S3 it is an object, `_ingest.lock`, created with a conditional
put (`If-None-Match: *`, which fails when the object exists) and holding its owner and an
expiry. The owner renews the expiry from a background thread (a put conditional on the
object's ETag, so a lock another writer took over is never overwritten). A writer that
finds the lock taken over it when the expiry has passed (a writer that crashed without
releasing it), or when the owner is a process of this same host that no longer exists;
the takeover is again a put conditional on the ETag it read, so of two writers racing for
a stale lock exactly one wins.

Either lock carries a **fencing token**: a number larger than any earlier holder's
(`token`, microseconds, and past the previous holder's), written into the lock with its
owner. Before each commit the holder checks that the lock still names it (`check`): a
local lock file deleted or replaced under it (another writer then took a lock of its
own), or an S3 lock that expired and was taken over, raises `LockLost`, and the writer
commits nothing more. (The check narrows the window; the commits themselves are fenced
too, each one landing only on the table version its writer read: `ingest.store`.)
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

from ingest.storage import Location

LOCK_NAME = "_ingest.lock"
#: seconds an S3 lock holds without renewal (renewed every third of it)
LOCK_TTL = 60.0
#: seconds between looks at a taken lock while waiting for it
WAIT_POLL = 0.5


class LockBusy(Exception):
    """Another writer holds the lock."""


class LockLost(Exception):
    """The lock expired and another writer took it over: this writer must not commit."""


def _next_token(previous: Any) -> int:
    """A fencing token past `previous` (an earlier holder's, when it is a number)."""
    now = time.time_ns() // 1000
    return max(now, previous + 1) if isinstance(previous, int) else now


def _pid_namespace() -> int | None:
    """This process's PID namespace (the inode of `/proc/self/ns/pid`), None where there is
    no such file: a PID means this process only to a reader in the same namespace."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


def _record(owner: str, token: int, expires: float | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"owner": owner, "token": token, "host": socket.gethostname(),
                              "pid": os.getpid(), "pid_namespace": _pid_namespace()}
    if expires is not None:
        record["expires"] = expires
    return record


class FileLock:
    """`flock` on a local file, which holds its owner's record and fencing token."""

    def __init__(self, location: Location) -> None:
        self.path = location.join(LOCK_NAME)
        self.handle: Any = None
        self.owner = uuid.uuid4().hex
        self.token: int | None = None

    def acquire(self, wait: float = 0.0) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        deadline = time.monotonic() + wait
        while True:
            handle = open(self.path, "a+")  # noqa: SIM115 - held until release
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                if time.monotonic() >= deadline:
                    raise LockBusy(f"another ingest or compact holds {LOCK_NAME}") from None
                time.sleep(WAIT_POLL)
                continue
            if _same_file(self.path, handle):
                break
            handle.close()  # deleted between our open and our flock: lock the new one
        try:
            handle.seek(0)
            previous = _parse(handle.read()).get("token")
            self.token = _next_token(previous)
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps(_record(self.owner, self.token)))
            handle.flush()
        except BaseException:
            handle.close()
            raise
        self.handle = handle

    def check(self) -> None:
        """Raise `LockLost` unless the file at the lock's path is still the one this
        writer locked and names it (someone deleted it, and another writer may have
        locked a new one)."""
        if self.handle is None:
            raise LockLost(f"the warehouse lock {LOCK_NAME} is not held")
        try:
            with open(self.path, encoding="utf-8", errors="replace") as current:
                holder = _parse(current.read())
        except FileNotFoundError:
            holder = {}
        if not _same_file(self.path, self.handle):
            raise LockLost(f"the warehouse lock {LOCK_NAME} was deleted under this writer"
                           + (f" (another writer, host {holder.get('host')}, pid "
                              f"{holder.get('pid')}, locked a new one)" if holder else ""))
        if holder.get("owner") != self.owner:
            raise LockLost(f"the warehouse lock {LOCK_NAME} was replaced under this writer "
                           f"and is held by host {holder.get('host')}, pid {holder.get('pid')}")

    def release(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


class ObjectLock:
    """A lock object on S3, with an expiry renewed while it is held."""

    def __init__(self, location: Location, ttl: float = LOCK_TTL) -> None:
        self.location = location
        self.bucket, self.key = location.bucket_key(location.join(LOCK_NAME))
        self.ttl = ttl
        self.client = location.s3_client()
        self.owner = uuid.uuid4().hex
        self.token: int | None = None
        self.etag: str | None = None
        self.lost = False
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._mutex = threading.Lock()

    def _body(self) -> bytes:
        assert self.token is not None
        return json.dumps(_record(self.owner, self.token, time.time() + self.ttl)).encode()

    def _precondition_failed(self, exc: Exception) -> bool:
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
        return code in ("PreconditionFailed", "ConditionalRequestConflict", "412", "409")

    def acquire(self, wait: float = 0.0) -> None:
        deadline = time.monotonic() + wait
        while True:
            holder = self._try_take()
            if holder is None:
                break
            if time.monotonic() >= deadline:
                expires = holder.get("expires")
                left = f", expires in {expires - time.time():.0f}s" if isinstance(
                    expires, int | float) else ""
                raise LockBusy(f"another ingest or compact holds {LOCK_NAME} (host "
                               f"{holder.get('host')}, pid {holder.get('pid')}{left})")
            time.sleep(WAIT_POLL)
        self._renewer = threading.Thread(target=self._renew, name="haftkhabis-lock", daemon=True)
        self._renewer.start()

    def _try_take(self) -> dict[str, Any] | None:
        """Take the lock if it is free or stale; else the holder's record."""
        self.token = _next_token(None)
        try:
            reply = self.client.put_object(Bucket=self.bucket, Key=self.key, Body=self._body(),
                                           IfNoneMatch="*")
            self.etag = reply["ETag"]
            return None
        except Exception as exc:
            if not self._precondition_failed(exc):
                raise
        try:
            current = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except self.client.exceptions.NoSuchKey:
            return {}  # released meanwhile: try again
        etag = current["ETag"]
        holder = _parse(current["Body"].read())
        if not _stale(holder):
            return holder
        self.token = _next_token(holder.get("token"))
        try:  # take over the stale lock, unless someone else just did
            reply = self.client.put_object(Bucket=self.bucket, Key=self.key, Body=self._body(),
                                           IfMatch=etag)
        except Exception as exc:
            if not self._precondition_failed(exc):
                raise
            return holder
        self.etag = reply["ETag"]
        return None

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            with self._mutex:
                try:
                    reply = self.client.put_object(Bucket=self.bucket, Key=self.key,
                                                   Body=self._body(), IfMatch=self.etag)
                    self.etag = reply["ETag"]
                except Exception as exc:
                    if self._precondition_failed(exc) or "NoSuchKey" in str(exc):
                        self.lost = True
                        return
                    # a transient error: try again at the next tick, the expiry still runs

    def check(self) -> None:
        """Raise `LockLost` unless the lock object still names this writer (read afresh:
        a renewal that has not failed yet proves nothing)."""
        if not self.lost:
            try:
                current = self.client.get_object(Bucket=self.bucket, Key=self.key)
                holder = _parse(current["Body"].read())
            except self.client.exceptions.NoSuchKey:
                holder = {}
            if holder.get("owner") != self.owner or holder.get("token") != self.token:
                self.lost = True
        if self.lost:
            raise LockLost(f"the warehouse lock {LOCK_NAME} expired or was deleted, and was "
                           "taken over")

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        with self._mutex, contextlib.suppress(Exception):
            if self.etag is not None and not self.lost:
                self.client.delete_object(Bucket=self.bucket, Key=self.key, IfMatch=self.etag)
        self.etag = None


def _same_file(path: str, handle: Any) -> bool:
    """Whether `path` still names the file `handle` has open."""
    try:
        return os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        return False


def _parse(data: bytes | str) -> dict[str, Any]:
    """A lock's record (empty when unreadable: an older build's, or half written)."""
    try:
        record = json.loads(data)
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def _stale(holder: dict[str, Any]) -> bool:
    expires = holder.get("expires")
    if not isinstance(expires, int | float) or expires < time.time():
        return True
    # A dead holder's lock is taken before it expires only when its PID can be checked:
    # the same host *and* the same PID namespace. Containers sharing a host name (host
    # networking) but not PIDs cannot see each other's processes; there, only expiry counts.
    same_pids = holder.get("pid_namespace") is not None \
        and holder.get("pid_namespace") == _pid_namespace()
    if holder.get("host") == socket.gethostname() and same_pids \
            and isinstance(holder.get("pid"), int):
        return not _alive(holder["pid"])
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def writer_lock(location: Location, ttl: float = LOCK_TTL) -> FileLock | ObjectLock:
    return FileLock(location) if location.local else ObjectLock(location, ttl)


@contextlib.contextmanager
def held(location: Location, *, wait: float = 0.0, ttl: float = LOCK_TTL
         ) -> Iterator[FileLock | ObjectLock]:
    """The warehouse's writer lock, held for the block (waiting up to `wait` seconds for
    another writer to let go; `LockBusy` past that)."""
    lock = writer_lock(location, ttl)
    lock.acquire(wait)
    try:
        yield lock
    finally:
        lock.release()
