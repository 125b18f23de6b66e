"""`POST /v1/ingest`: pushed batches of log lines, committed to the warehouse one after the
other by the warehouse's own ingest (`ingest.pipeline.ingest`), in a separate process so a
batch's CPU and memory never slow the API or take it down.

A pushed body is stored, decompressed, as `<state>/incoming/<sha256>.jsonl` — named by its
content, so a retry of the same body is the same file: the ingest's own guarantees then
hold as for files (an identical file already read whole is skipped, a game is replaced
when more of it arrives, unusable lines are quarantined verbatim), and the warehouse
records the same path for it however often it is pushed. The receipt
(`<state>/receipts/<id>.json`, written atomically) follows the batch: queued, running,
then committed with the warehouse's batch number, or failed with the reason. Receipts
left queued or running by a stopped server are run again when it restarts (an
interrupted batch left no trace; ingest recovers it).

`<state>` is a local folder, since ingest reads local files: `<warehouse>/_api` for a
warehouse on this disk, and for one on S3 a folder of the user's state directory named
after the bucket and prefix (`state_folder`), unless `serve --state` names one.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import multiprocessing
import os
import secrets
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from ingest.storage import Location

log = logging.getLogger("haftkhabis.service")

STATE_DIR = "_api"


def run_ingest(path: str, warehouse: str, workers: int,
               storage_options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One pushed body through the warehouse's ingest (in the ingest process)."""
    from ingest.pipeline import ingest

    summary = ingest([path], warehouse, workers=workers, storage_options=storage_options)
    return {"batch": int(summary.batch)}


def state_folder(location: Location) -> Path:
    """Where the API keeps pushed bodies and receipts for the warehouse at `location`:
    `<warehouse>/_api` on this disk; for S3, `$XDG_STATE_HOME/haftkhabis/api/<bucket>/<prefix>`
    (default `~/.local/state/...`)."""
    if location.local:
        return Path(location.uri) / STATE_DIR
    home = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    bucket, prefix = location.bucket_key(location.uri)
    return Path(home, "haftkhabis", "api", bucket, *[p for p in prefix.split("/") if p])


@dataclass
class Receipt:
    id: str
    status: str  # queued · running · committed · failed
    sha256: str
    size: int
    received_at: str
    started_at: str | None = None
    finished_at: str | None = None
    batch: int | None = None
    error: str | None = None

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self), option=orjson.OPT_INDENT_2)


def _now() -> str:
    return datetime.now(UTC).isoformat()


class Spool:
    """A pushed body being written: to a temporary file beside its final place, hashed as
    it goes."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._folder = folder
        self.tmp = folder / f".{secrets.token_hex(8)}.tmp"
        self._file: IO[bytes] = open(self.tmp, "wb")  # noqa: SIM115 - closed by finish/discard
        self._hash = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> None:
        self._file.write(data)
        self._hash.update(data)
        self.size += len(data)

    def finish(self) -> tuple[Path, str]:
        """Close it and move it to its content's name: (path, sha256)."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        sha = self._hash.hexdigest()
        final = self._folder / f"{sha}.jsonl"
        os.replace(self.tmp, final)
        return final, sha

    def discard(self) -> None:
        self._file.close()
        self.tmp.unlink(missing_ok=True)


class IngestQueue:
    """Receipts, and the one thread that commits their batches in order."""

    def __init__(self, location: Location, *, workers: int, state: Path | None = None,
                 on_commit: Callable[[], None] = lambda: None) -> None:
        self.location = location
        self.state = state if state is not None else state_folder(location)
        self.incoming = self.state / "incoming"
        self.receipts = self.state / "receipts"
        self.workers = workers
        self._on_commit = on_commit
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: list[str] = []
        self._by_id: dict[str, Receipt] = {}
        self._stopping = False
        self._pool: ProcessPoolExecutor | None = None
        self._thread = threading.Thread(target=self._run, name="haftkhabis-ingest", daemon=True)

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        self.receipts.mkdir(parents=True, exist_ok=True)
        self.incoming.mkdir(parents=True, exist_ok=True)
        for tmp in self.incoming.glob(".*.tmp"):
            tmp.unlink(missing_ok=True)  # a body whose upload was cut off
        pending = []
        for path in self.receipts.glob("*.json"):
            try:
                receipt = Receipt(**orjson.loads(path.read_bytes()))
            except (OSError, ValueError, TypeError) as exc:
                log.warning("ignoring the unreadable receipt %s: %s", path, exc)
                continue
            self._by_id[receipt.id] = receipt
            if receipt.status in ("queued", "running"):
                pending.append(receipt)
        for receipt in sorted(pending, key=lambda r: r.received_at):
            if (self.incoming / f"{receipt.sha256}.jsonl").exists():
                receipt.status = "queued"
                self._queue.append(receipt.id)
            else:
                self._finish(receipt, "failed", error="the body was lost before it was ingested; push it again")
        self._thread.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        pool, self._pool = self._pool, None
        if pool is not None:
            # a batch cut short leaves no trace (ingest recovers it) and its receipt, still
            # `running`, is run again at the next start; waiting for it could take minutes
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
        self._thread.join(timeout=5)

    # ------------------------------------------------------------------ receipts

    def spool(self) -> Spool:
        return Spool(self.incoming)

    def submit(self, spool: Spool) -> tuple[Receipt, bool]:
        """Queue the written body: its receipt, and whether it is new (False: the same body
        is already queued or running, and that receipt stands)."""
        path, sha = spool.finish()
        with self._wake:
            for receipt_id in self._queue + [r.id for r in self._by_id.values() if r.status == "running"]:
                existing = self._by_id[receipt_id]
                if existing.sha256 == sha and existing.status in ("queued", "running"):
                    return replace(existing), False
            receipt = Receipt(id=f"ing_{secrets.token_hex(8)}", status="queued", sha256=sha,
                              size=path.stat().st_size, received_at=_now())
            self._save(receipt)
            self._by_id[receipt.id] = receipt
            self._queue.append(receipt.id)
            self._wake.notify_all()
            return replace(receipt), True

    def get(self, receipt_id: str) -> Receipt | None:
        """A copy of the receipt as it stands."""
        with self._lock:
            receipt = self._by_id.get(receipt_id)
            return replace(receipt) if receipt is not None else None

    def _save(self, receipt: Receipt) -> None:
        path = self.receipts / f"{receipt.id}.json"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(receipt.to_json())
        os.replace(tmp, path)

    def _finish(self, receipt: Receipt, status: str, *, batch: int | None = None,
                error: str | None = None) -> None:
        receipt.status, receipt.batch, receipt.error = status, batch, error
        receipt.finished_at = _now()
        self._save(receipt)

    # ------------------------------------------------------------------ the worker

    def _pool_for_job(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._stopping:
                    self._wake.wait()
                if self._stopping:
                    return
                receipt = self._by_id[self._queue[0]]
                receipt.status, receipt.started_at = "running", _now()
                self._save(receipt)
            path = self.incoming / f"{receipt.sha256}.jsonl"
            outcome = self._ingest(receipt, path)
            if outcome[0] == "committed":
                with contextlib.suppress(Exception):
                    self._on_commit()  # readers see the batch before its receipt says so
            with self._wake:
                self._queue.pop(0)
                self._finish(receipt, outcome[0], batch=outcome[1], error=outcome[2])
                still_needed = any(self._by_id[i].sha256 == receipt.sha256 for i in self._queue)
            if not still_needed:
                path.unlink(missing_ok=True)

    def _ingest(self, receipt: Receipt, path: Path) -> tuple[str, int | None, str | None]:
        """Run one batch: (status, warehouse batch, error). A warehouse busy with another
        writer (a `haftkhabis ingest` or `compact`) is waited for."""
        delay = 0.5
        while True:
            try:
                future = self._pool_for_job().submit(run_ingest, str(path), self.location.uri,
                                                     self.workers, self.location.delta_options())
                result = future.result()
            except BrokenProcessPool:
                self._pool = None
                return "failed", None, "the ingest process died; the warehouse is as it was before"
            except Exception as exc:
                message = " ".join(str(exc).split("\n", 1)[0].split()) or type(exc).__name__
                if "is busy" in message and not self._stopping:
                    log.info("batch %s waits: %s", receipt.id, message)
                    with self._wake:
                        self._wake.wait(delay)
                    delay = min(delay * 2, 10.0)
                    continue
                log.warning("batch %s failed", receipt.id, exc_info=exc)
                return "failed", None, f"{type(exc).__name__}: {message}"[:500]
            return "committed", int(result["batch"]), None
