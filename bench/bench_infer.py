"""Ruleset inference throughput (issue 13): prints figures, asserts nothing.

Simulates N persian games (fault-free, 2-6 players, random options and modes; cached
under bench/out/), then times `engine.infer.infer_lines` over them against all 64 persian
profiles, and prints games/s, replays/s and the share of line feeds the early stops saved.

    .venv/bin/python bench/bench_infer.py                # 10,000 games
    .venv/bin/python bench/bench_infer.py --games 1000
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from engine.infer import collect_games, infer_game, read_paths
from engine.profiles import candidates
from engine.simulate import SimConfig, write_simulation

OUT = Path(__file__).parent / "out"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    log = OUT / f"infer-persian-{args.games}-{args.seed}.jsonl"
    if not log.exists():
        config = SimConfig("persian", games=args.games, seed=args.seed, players=(2, 6))
        with open(log, "wb") as out:
            write_simulation(config, out)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    started = time.perf_counter()
    logs = collect_games(read_paths([str(log)]))
    read = time.perf_counter() - started
    profiles = candidates("persian")
    lines = sum(len(g.entries) for g in logs.values())
    started = time.perf_counter()
    compliant = 0
    for game in logs.values():
        compliant += bool(infer_game(game, profiles).compliant)
    took = time.perf_counter() - started
    games = len(logs)
    print(f"{games} persian games, {lines} lines, {len(profiles)} profiles each")
    print(f"reading and routing: {read:.2f} s")
    print(f"inference: {took:.1f} s = {games / took:,.0f} games/s, "
          f"{games * len(profiles) / took:,.0f} profile replays/s "
          f"({lines * len(profiles) / took / 1e6:.1f} M line-profile pairs/s, early stops included)")
    print(f"games complying with at least one profile: {compliant}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
