"""Warehouse reads benchmark: the project's reader against DuckDB on the same Parquet files.

    .venv/bin/python bench/bench_reads.py                       # the newest bench/out warehouse
    .venv/bin/python bench/bench_reads.py --warehouse W --repeat 5

Three ways to ask the same questions of one committed snapshot, each best of `--repeat`
with warm caches:

1. **ours**: `ingest.queries.open_warehouse` (what `haftkhabis query` and `stats` use; the
   dashboard's and the API's `ingest.read.connect` builds the same views), sandbox included;
2. **pyarrow datasets**: the snapshot's tables registered with DuckDB as pyarrow datasets,
   as the reader did before it named the files to DuckDB (kept here as the baseline);
3. **DuckDB on the files**: a plain DuckDB connection, `read_parquet` of the same part
   files with hive partitioning, no sandbox: the yardstick.

The questions: a full scan of `events` (an aggregate over several of its columns, the
`raw` line included), and a filter from a subquery (the events of the games a subquery
picks, which only a join filter can push into the scan). Warehouses come from
`bench/bench_ingest.py` (it keeps each run's warehouse under `bench/out/run-*/`).
Results go to `bench/out/reads-*.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from ingest.queries import open_warehouse  # noqa: E402
from ingest.schema import TABLES  # noqa: E402
from ingest.store import Warehouse  # noqa: E402

OUT = ROOT / "bench" / "out"

QUESTIONS = {
    "full scan of events": """
        SELECT count(*), sum(seq), max(ts), count(player), count(card),
               count(DISTINCT type), sum(length(raw))
        FROM events
    """,
    "filter from a subquery": """
        SELECT count(*), sum(length(raw))
        FROM events
        WHERE game_id IN (SELECT game_id FROM violations WHERE code = 'not_your_turn')
    """,
}


def _best(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, answer = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        answer = run()
        best = min(best, time.perf_counter() - started)
    return best, answer


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _plain_duckdb(store: Warehouse, versions: dict[str, int]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for name in ("events", "games", "violations"):
        files = [u.removeprefix("file://") for u in store.table(name, versions[name]).file_uris()]
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet("
                    f"[{', '.join(map(_quote, files))}], hive_partitioning = true)")
    return con


def _datasets(store: Warehouse, versions: dict[str, int]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for name in TABLES:
        con.register(name, store.dataset(name, versions[name]))
    return con


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warehouse", type=Path, default=None,
                        help="a warehouse folder (default: the newest bench/out/run-*/warehouse)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = args.warehouse
    if root is None:
        runs = sorted(OUT.glob("run-*/warehouse"), key=lambda p: p.stat().st_mtime)
        if not runs:
            sys.exit("no warehouse under bench/out: run bench/bench_ingest.py first, "
                     "or pass --warehouse")
        root = runs[-1]
    store = Warehouse(str(root))
    reader = open_warehouse(str(root))
    versions = dict(reader.snapshot.versions)
    events = reader.sql("SELECT count(*) FROM events").fetchall()[0][0]
    ways: dict[str, Callable[[str], Any]] = {
        "ours (open_warehouse)": lambda q: reader.sql(q).fetchall(),
    }
    datasets = _datasets(store, versions)
    ways["pyarrow datasets (before)"] = lambda q: datasets.sql(q).fetchall()
    plain = _plain_duckdb(store, versions)
    ways["DuckDB on the files"] = lambda q: plain.sql(q).fetchall()

    print(f"warehouse: {root} ({events:,} events, batch {reader.snapshot.batch}); "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; best of {args.repeat}")
    results: dict[str, Any] = {"warehouse": str(root), "events": events,
                               "load_average_1m": os.getloadavg()[0], "questions": {}}
    for question, sql in QUESTIONS.items():
        timings: dict[str, float] = {}
        answers = {}
        for way, run in ways.items():
            timings[way], answers[way] = _best(partial(run, sql), args.repeat)
        if len({json.dumps(a, default=str) for a in answers.values()}) != 1:
            sys.exit(f"{question}: the readers disagree: {answers}")
        yardstick = timings["DuckDB on the files"]
        print(f"\n{question}")
        for way, seconds in timings.items():
            print(f"  {way:<28} {seconds:8.3f} s   {seconds / yardstick:5.2f}× DuckDB's time")
        results["questions"][question] = {"sql": " ".join(sql.split()), "seconds": timings}
    reader.close()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"reads-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nresults: {path}")


if __name__ == "__main__":
    main()
