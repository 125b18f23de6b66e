"""Does a live batch's commit cost grow with the warehouse? A group of 1,000 new games
committed by the live writer (`ingest.live.commit_files`, the service's and the
follower's) into warehouses of 10 k, 100 k and 1 M hands: the seconds of each commit,
printed, never asserted.

    .venv/bin/python bench/bench_commit_scale.py                 # 10k, 100k, 1M hands
    .venv/bin/python bench/bench_commit_scale.py --hands 10000 100000 --commits 3

The warehouses are `bench/bench_dashboard.py build`'s (built here when missing, minutes
for a million hands: real games ingested, then tiled), copied to a scratch folder so the
benchmark leaves them as they were. In each, the writer's first commit also reads every
committed game into its index (`ingest.live.GamesIndex`), once a writer process: its time
is printed apart. Then `--commits` groups of 1,000 games each are committed, and their
median and spread printed: flat within noise is what the live path promises (a batch's
cost follows the batch, not the warehouse). The seconds of each commit spent on the
summaries (`ingest.summaries`: their counters kept, then committed) are printed apart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_dashboard import OUT, build_base, build_tiles  # noqa: E402
from bench_live import body_of, pool_of_games  # noqa: E402

from ingest import summaries  # noqa: E402
from ingest.live import GamesIndex, commit_files  # noqa: E402

#: seconds spent in the summaries' step of the commits timed
SUMMARY_SECONDS: list[float] = []


def _timed_summaries() -> None:
    """Count the seconds of a commit's summaries step: the pipeline's calls into
    `ingest.summaries` (what the batch's rows change, then their commit)."""
    for name in ("refresh" if hasattr(summaries, "refresh") else "update", "commit"):
        inner = getattr(summaries, name)

        def timed(*args: object, _inner: object = inner, **kwargs: object) -> object:
            clock = time.monotonic()
            try:
                return _inner(*args, **kwargs)  # type: ignore[operator]
            finally:
                SUMMARY_SECONDS.append(time.monotonic() - clock)

        setattr(summaries, name, timed)


def warehouse_of(hands: int) -> Path:
    target = OUT / f"wh-{hands}"
    if not (target / "batches").exists():
        print(f"building a {hands:,}-hand warehouse in {target} …", flush=True)
        base = build_base(OUT / "base")
        build_tiles(base, target, hands)
    return target


def group(pool: list[tuple[str, list[bytes]]], folder: Path, round_: int, games: int) -> list[str]:
    folder.mkdir(parents=True)
    files = []
    for i in range(games):
        game, lines = pool[i % len(pool)]
        _, body = body_of(game, lines, round_ * 1_000_000 + i)
        path = folder / f"ing_{round_:04d}_{i:05d}.jsonl"
        path.write_bytes(body)
        files.append(str(path))
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--games", type=int, default=1_000, help="games a commit")
    parser.add_argument("--commits", type=int, default=5)
    args = parser.parse_args()
    pool = pool_of_games(600, 17)
    _timed_summaries()
    figures = []
    for hands in args.hands:
        source = warehouse_of(hands)
        scratch = Path(tempfile.mkdtemp(prefix="haftkhabis-scale-"))
        try:
            root = scratch / "wh"
            shutil.copytree(source, root)
            import ingest.live as live

            live._INDEX = GamesIndex()  # a fresh writer
            first = group(pool, scratch / "g0", 0, args.games)
            clock = time.monotonic()
            commit_files(first, str(root))
            first_seconds = time.monotonic() - clock
            seconds = []
            in_summaries = []
            for k in range(1, args.commits + 1):
                files = group(pool, scratch / f"g{k}", k, args.games)
                SUMMARY_SECONDS.clear()
                clock = time.monotonic()
                result = commit_files(files, str(root))
                seconds.append(time.monotonic() - clock)
                in_summaries.append(sum(SUMMARY_SECONDS))
                assert result["games"] == args.games, result
            row = {"hands": hands, "games_indexed": len(live._INDEX.games),
                   "first_commit_s": round(first_seconds, 3),
                   "commit_s_median": round(statistics.median(seconds), 3),
                   "commit_s_min": round(min(seconds), 3), "commit_s_max": round(max(seconds), 3),
                   "summaries_s_median": round(statistics.median(in_summaries), 3),
                   "summaries_s_max": round(max(in_summaries), 3),
                   "load_average_1m": os.getloadavg()[0]}
            figures.append(row)
            print("  " + "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"commit-scale-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(figures, indent=2))
    print(f"kept in {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
