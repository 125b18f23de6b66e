"""The live writer's memory over many groups: does it keep growing, or settle?

The writer process (`ingest.live.commit_files`, the service's and the follower's)
commits `--groups` groups of `--games` simulated games each (new ids every group) into a
scratch warehouse, in this process, merging the parts due every 8 groups as the service
does (`merge_small_parts`), and prints every 25 groups this process's resident memory
and what pyarrow's memory pool holds. Nothing is asserted.

    .venv/bin/python bench/bench_writer_memory.py                # 200 groups of 300 games
    .venv/bin/python bench/bench_writer_memory.py --groups 400 --release

`--release` gives pyarrow's pool back to the system after every group
(`MemoryPool.release_unused`), to tell what the pool keeps from the rest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import pyarrow as pa  # noqa: E402
from bench_live import body_of, pool_of_games, rss_of  # noqa: E402

from ingest.live import commit_files, merge_small_parts  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--games", type=int, default=300, help="games a group")
    parser.add_argument("--release", action="store_true", help="release pyarrow's pool after each group")
    args = parser.parse_args()
    pool = pool_of_games(args.games, 7)
    work = Path(tempfile.mkdtemp(prefix="haftkhabis-writer-memory-"))
    warehouse = str(work / "wh")
    memory = pa.default_memory_pool()
    began = time.monotonic()
    try:
        for group in range(args.groups):
            folder = work / f"g{group}"
            folder.mkdir()
            paths = []
            for k, game in enumerate(pool):
                path = folder / f"{k}.jsonl"
                path.write_bytes(body_of(game, group)[1])
                paths.append(str(path))
            commit_files(paths, warehouse)
            if (group + 1) % 8 == 0:
                merge_small_parts(warehouse)
            if args.release:
                memory.release_unused()
            shutil.rmtree(folder)
            if group % 25 == 0 or group == args.groups - 1:
                print(f"group {group + 1:4d}: {len(pool) * (group + 1):7,} games, "
                      f"RSS {rss_of(os.getpid()) / 2**20:5.0f} MiB, pyarrow's pool "
                      f"{memory.bytes_allocated() / 2**20:.1f} MiB (its peak {memory.max_memory() / 2**20:.0f}, "
                      f"{memory.backend_name}), {time.monotonic() - began:.0f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
