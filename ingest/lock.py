"""The warehouse's writer lock: one `ingest` or `compact` at a time.

On a local folder it is `flock` on `_ingest.lock`: the kernel drops it when the process
dies, however it dies. On S3 it is an object, `_ingest.lock`, created with a conditional
put (`If-None-Match: *`, which fails when the object exists) and holding its owner and an
expiry. The owner renews the expiry from a background thread (a put conditional on the
object's ETag, so a lock another writer took over is never overwritten). A writer that
finds the lock taken over it when the expiry has passed (a writer that crashed without
releasing it), or when the owner is a process of this same host that no longer exists;
the takeover is again a put conditional on the ETag it read, so of two writers racing for
a stale lock exactly one wins. Before each commit the holder checks it still holds it.
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


class FileLock:
    """`flock` on a local file."""

    def __init__(self, location: Location) -> None:
        self.path = location.join(LOCK_NAME)
        self.handle: Any = None

    def acquire(self, wait: float = 0.0) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        handle = open(self.path, "a+")  # noqa: SIM115 - held until release
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.handle = handle
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.close()
                    raise LockBusy(f"another ingest or compact holds {LOCK_NAME}") from None
                time.sleep(WAIT_POLL)

    def check(self) -> None:
        """Held for the process's life: nothing can take it over."""

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
        self.etag: str | None = None
        self.lost = False
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._mutex = threading.Lock()

    def _body(self) -> bytes:
        return json.dumps({"owner": self.owner, "host": socket.gethostname(), "pid": os.getpid(),
                           "expires": time.time() + self.ttl}).encode()

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
        try:
            holder = json.loads(current["Body"].read())
        except ValueError:
            holder = {}
        if not _stale(holder):
            return holder
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
        if self.lost:
            raise LockLost(f"the warehouse lock {LOCK_NAME} expired and was taken over")

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        with self._mutex, contextlib.suppress(Exception):
            if self.etag is not None and not self.lost:
                self.client.delete_object(Bucket=self.bucket, Key=self.key, IfMatch=self.etag)
        self.etag = None


def _stale(holder: dict[str, Any]) -> bool:
    expires = holder.get("expires")
    if not isinstance(expires, int | float) or expires < time.time():
        return True
    if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int):
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
    lock = writer_lock(location, ttl)
    lock.acquire(wait)
    try:
        yield lock
    finally:
        lock.release()
