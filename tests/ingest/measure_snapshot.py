"""How long opening a warehouse of many small batches takes: `Warehouse.snapshot()` and
`ingest.queries.open_warehouse()`, the median of several runs (a measurement, not a test).

    .venv/bin/python -m tests.ingest.measure_snapshot W 2000       # build W if missing, time it

Building writes `count` batch rows the way an ingest commits its row (the data tables stay
empty: opening reads `batches` first, and its size is what grows with every batch).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime

from ingest.queries import open_warehouse
from ingest.schema import SNAPSHOT_TABLES
from ingest.store import Warehouse, new_attempt


def build(root: str, count: int) -> float:
    """`count` batch rows in a new warehouse at `root`; the seconds it took."""
    store = Warehouse(root)
    store.ensure()
    started = time.monotonic()
    for batch in range(1, count + 1):
        now = datetime.now(UTC)
        store.commit_batch({
            "id": batch, "kind": "ingest", "started": now, "ended": now, "files": [],
            "lines": 0, "games_new": 0, "games_updated": 0, "games_unchanged": 0,
            "violations": 0, "errors": 0, "workers": 1, "engine_version": "measure",
        }, dict.fromkeys(SNAPSHOT_TABLES, 0), new_attempt())
    return time.monotonic() - started


def median_ms(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("warehouse")
    parser.add_argument("batches", type=int, nargs="?", default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not Warehouse(args.warehouse).exists():
        print(f"built {args.batches} batches in {build(args.warehouse, args.batches):.0f}s")

    def reader() -> None:
        with open_warehouse(args.warehouse):
            pass

    snapshot = Warehouse(args.warehouse).snapshot()
    print(f"batch {snapshot.batch}: snapshot() "
          f"{median_ms(lambda: Warehouse(args.warehouse).snapshot(), args.runs):.1f} ms, "
          f"open_warehouse() {median_ms(reader, args.runs):.1f} ms "
          f"(medians of {args.runs})")


if __name__ == "__main__":
    main()
