"""The reads the summary tables answer (issue 33), cold: each timed as the first query of
a fresh process (`ingest.read.connect`, then the read), answered from the summaries and
from the game tables (the same reader told the warehouse has no summary: what a warehouse
written before them runs). Connecting is timed apart. Wall and CPU seconds are printed
with the load average; nothing is asserted.

    .venv/bin/python bench/bench_summary_reads.py bench/out/wh-1000000
    .venv/bin/python bench/bench_summary_reads.py bench/out/wh-1000000 --runs 5 --only first_seat

The warehouse needs the summaries (`haftkhabis compact --no-vacuum` makes those it lacks);
the `profile` read is the profile tab's queries for the player with the most hands, one
after the other, as the page asks them. Results go to `bench/out/summary-reads-*.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out"


def _profile(read: Any, reader: Any, player: str) -> None:
    read.player_by_ruleset(reader, player)
    read.player_by_seat(reader, player)
    read.player_points(reader, player)
    read.player_head_to_head(reader, player)
    read.special_cards(reader, player)
    read.special_cards(reader, None)
    read.player_violations(reader, player)
    read.player_rankings(reader, player)


def _reads(read: Any, player: str) -> dict[str, Callable[[Any], object]]:
    return {
        "first_seat": lambda r: read.first_seat(r, ()),
        "two_players": lambda r: read.two_players(r, ()),
        "two_targets": lambda r: read.two_targets(r, (), 25),
        "player_by_seat": lambda r: read.player_by_seat(r, player),
        "special_cards": lambda r: (read.special_cards(r, player), read.special_cards(r, None)),
        "profile": lambda r: _profile(read, r, player),
    }


def one(warehouse: str, name: str, summarised: bool, player: str) -> dict[str, float]:
    """In a fresh process: connect, then the read `name`, each timed (wall and CPU)."""
    from ingest import read

    wall, cpu = time.perf_counter(), time.process_time()
    reader = read.connect(warehouse)
    connect_wall, connect_cpu = time.perf_counter() - wall, time.process_time() - cpu
    if not summarised:
        reader = dataclasses.replace(reader, summaries=frozenset())
    wall, cpu = time.perf_counter(), time.process_time()
    _reads(read, player)[name](reader)
    return {"connect_s": connect_wall, "connect_cpu_s": connect_cpu,
            "read_s": time.perf_counter() - wall, "read_cpu_s": time.process_time() - cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("warehouse")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per read and source")
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--one", nargs=3, metavar=("READ", "SUMMARISED", "PLAYER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.warehouse, args.one[0], args.one[1] == "1", args.one[2])))
        return
    from ingest import read

    reader = read.connect(args.warehouse)
    missing = sorted({"two_gifts", "seat_results", "special_card_totals"} - reader.summaries)
    if missing:
        sys.exit(f"{args.warehouse} has no {', '.join(missing)}: run `haftkhabis compact --no-vacuum` first")
    player = reader.rows("SELECT player FROM player_stats ORDER BY hands_dealt DESC, player LIMIT 1")[0][0]
    reader.close()
    names = args.only or list(_reads(read, player))
    figures = []
    for name in names:
        for summarised in (False, True):
            runs = []
            for _ in range(args.runs):
                done = subprocess.run(
                    [sys.executable, __file__, args.warehouse, "--one", name, str(int(summarised)), player],
                    check=True, capture_output=True, text=True)
                runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            row = {"read": name, "from": "summaries" if summarised else "game tables", "player": player,
                   **{k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]},
                   "read_s_max": round(max(r["read_s"] for r in runs), 3),
                   "load_average_1m": round(os.getloadavg()[0], 2)}
            figures.append(row)
            print("  " + "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"summary-reads-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(figures, indent=2))
    print(f"kept in {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
