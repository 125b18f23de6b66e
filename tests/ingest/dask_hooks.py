"""A Dask worker preload for the cluster tests: while the file `hold` exists in the folder
`HAFTKHABIS_TEST_CONTROL` names, a shard task stops after its pass over the spool (its
parts written, nothing returned), marks itself with `held-PID`, and waits for the file to
go. Production code has no such hook; only the tests' workers load this module."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ingest import pipeline

_original = pipeline.ShardWorker._reconcile


def _held_reconcile(self: pipeline.ShardWorker, base: Any) -> pipeline.WorkerResult:
    control = os.environ.get("HAFTKHABIS_TEST_CONTROL")
    if control:
        hold = Path(control) / "hold"
        if hold.exists():
            marker = Path(control) / f"held-{os.getpid()}"
            marker.touch()
            deadline = time.monotonic() + 300
            while hold.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            marker.unlink(missing_ok=True)
    return _original(self, base)


def dask_setup(worker: Any) -> None:
    pipeline.ShardWorker._reconcile = _held_reconcile  # type: ignore[method-assign]
