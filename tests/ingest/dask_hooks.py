"""A Dask worker preload for the cluster tests. In the folder `HAFTKHABIS_TEST_CONTROL`
names:

- while the file `hold` exists, a shard task stops after its pass over the spool (its
  parts written, nothing returned), marks itself with `held-PID` (holding its part
  prefix), and waits for the file to go;
- while the file `fail` exists, a shard task raises after its pass (its parts written), as
  a worker whose storage failed would, every time it is retried;
- when a held task ends, however it ends, it writes `done-PID`.

Production code has no such hook; only the tests' workers load this module."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ingest import pipeline

_original = pipeline.ShardWorker._reconcile


def _held_reconcile(self: pipeline.ShardWorker, base: Any) -> pipeline.WorkerResult:
    control = os.environ.get("HAFTKHABIS_TEST_CONTROL")
    if not control:
        return _original(self, base)
    hold, fail = Path(control) / "hold", Path(control) / "fail"
    held = hold.exists()
    try:
        if held:
            marker = Path(control) / f"held-{os.getpid()}"
            marker.write_text(self.task.prefix, encoding="utf-8")
            deadline = time.monotonic() + 300
            while hold.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            marker.unlink(missing_ok=True)
        if fail.exists():
            raise OSError("injected: the shard's storage failed after its pass")
        return _original(self, base)
    finally:
        if held:
            (Path(control) / f"done-{os.getpid()}").touch()


def dask_setup(worker: Any) -> None:
    pipeline.ShardWorker._reconcile = _held_reconcile  # type: ignore[method-assign]
