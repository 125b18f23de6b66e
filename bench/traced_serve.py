"""`haftkhabis serve` under tracemalloc, for `bench_live.py --trace-memory`: what the
server's Python objects hold, and where they were made.

Run as `python bench/traced_serve.py serve …` (the arguments of `haftkhabis`). Each
SIGUSR2 writes a snapshot of the traced allocations to `$HAFTKHABIS_TRACE_DIR/N.snapshot`
(N = 1, 2, …); the bench compares them. Tracing slows the server's allocations, so a
traced run says where memory goes, not how fast the service is. Memory allocated outside
Python's allocator (DuckDB's, Arrow's, the Rust core's) is not traced.
"""

from __future__ import annotations

import itertools
import os
import runpy
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parents[1]

#: frames kept for each traced allocation (more frames, more overhead)
FRAMES = 12


def main() -> None:
    folder = Path(os.environ["HAFTKHABIS_TRACE_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    numbers = itertools.count(1)

    def dump(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        number = next(numbers)
        partial = folder / f"{number}.snapshot.part"
        tracemalloc.take_snapshot().dump(str(partial))
        partial.rename(folder / f"{number}.snapshot")  # whole, or not there

    tracemalloc.start(FRAMES)
    signal.signal(signal.SIGUSR2, dump)
    sys.path.insert(0, str(ROOT))
    sys.argv = ["haftkhabis", *sys.argv[1:]]
    runpy.run_module("cli.app", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
