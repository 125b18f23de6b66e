"""One live group's commit, alone: N simulated games (every ruleset) as the service's
writer takes them — bodies lying in one journal segment, read as ranges, digests known —
committed by `ingest.live.commit_files` into a fresh warehouse, several times; prints
each commit's wall and CPU seconds (this process: the replay, the Parquet writes in their
thread, the Delta commits, the summaries). Figures printed, never asserted.

    .venv/bin/python bench/bench_group_commit.py                 # 2,000 games, 4 commits
    .venv/bin/python bench/bench_group_commit.py --games 500 --commits 6
    .venv/bin/python bench/bench_group_commit.py --files         # each body a file of its own

A second part, `--file-costs`, times what a body as a file of its own costs this machine's
disk: creating, writing and closing N files of a game's size, against reading the same
bytes as ranges of one file (the service used to make a file a push).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.simulate import SimConfig, simulate  # noqa: E402


def bodies_of(games: int, seed: int) -> list[bytes]:
    out: list[bytes] = []
    for ruleset in ("bazito", "persian", "pis-yedili"):
        for game in simulate(SimConfig(ruleset, games=games // 3 + 1, seed=seed)):
            out.append(b"".join(line + b"\n" for line in game.lines))
    return out[:games]


def file_costs(bodies: list[bytes], work: Path) -> None:
    folder = work / "files"
    folder.mkdir()
    cpu, wall = time.process_time(), time.perf_counter()
    for n, body in enumerate(bodies):
        with open(folder / f"ing_{n:08x}.jsonl", "wb") as out:
            out.write(body)
    made = (time.process_time() - cpu, time.perf_counter() - wall)
    segment = work / "segment.log"
    segment.write_bytes(b"".join(bodies))
    cpu, wall = time.process_time(), time.perf_counter()
    fd = os.open(segment, os.O_RDONLY)
    offset = 0
    for body in bodies:
        os.pread(fd, len(body), offset)
        offset += len(body)
    os.close(fd)
    read = (time.process_time() - cpu, time.perf_counter() - wall)
    n = len(bodies)
    print(f"  a file made, written and closed a body: {1000 * made[0] / n:.3f} ms CPU, "
          f"{1000 * made[1] / n:.3f} ms wall; a range of one file read: "
          f"{1000 * read[0] / n:.3f} ms CPU, {1000 * read[1] / n:.3f} ms wall ({n} bodies)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--files", action="store_true", help="each body a file of its own, not a range")
    parser.add_argument("--file-costs", action="store_true", help="time a file a body against a range a body")
    args = parser.parse_args()

    from ingest.live import commit_files, writer_started

    print(f"simulating {args.games} games …", flush=True)
    bodies = bodies_of(args.games, args.seed)
    work = Path(tempfile.mkdtemp(prefix="haftkhabis-group-"))
    try:
        if args.file_costs:
            file_costs(bodies, work)
            return
        segment = work / "segment.log"
        names, ranges, digests = [], {}, {}
        with open(segment, "wb") as out:
            for n, body in enumerate(bodies):
                name = str(work / "bodies" / f"ing_{n:08x}.jsonl")
                if args.files:
                    Path(name).parent.mkdir(exist_ok=True)
                    Path(name).write_bytes(body)
                ranges[name] = (str(segment), out.tell(), len(body))
                digests[name] = (len(body), hashlib.sha256(body).hexdigest())
                out.write(body)
                names.append(name)
        writer_started()
        for k in range(args.commits):
            warehouse = str(work / f"wh{k}")
            cpu, wall = time.process_time(), time.perf_counter()
            # (with --files, called as builds before the ranges were: an A/B runs it on both)
            if args.files:
                outcome = commit_files(names, warehouse, digests=digests)
            else:
                outcome = commit_files(names, warehouse, digests=digests, ranges=ranges)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            print(f"  commit {k}: {len(names)} games, {outcome['lines']} lines: wall {wall:.3f} s, "
                  f"CPU {cpu:.3f} s = {1000 * cpu / len(names):.3f} ms a game; load "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
            shutil.rmtree(warehouse, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
