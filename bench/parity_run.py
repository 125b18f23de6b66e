"""The native core against the reference engine at scale: prints figures, asserts nothing.

Simulates games of every ruleset (persian in every combination of its five options, in
both modes), with injected faults, plus mutated copies of each (a lost line, a swap, a
retry, a changed card, player, type or seq; see tests/engine/parity.py), validates them
with both engines and prints how many games were compared and every difference.

    .venv/bin/python bench/parity_run.py                     # ~100,000 simulated games
    .venv/bin/python bench/parity_run.py --games 2000 --per-combination 40
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.simulate import SimConfig, simulate  # noqa: E402
from tests.engine.parity import compare_paths, mutate, write_games  # noqa: E402

OPTIONS = ("extra_fouls", "last_eight_draws", "tarkesh", "ace_deflect", "eight_bonus_optional")


def _configs(games: int, per_combination: int) -> list[SimConfig]:
    configs = [
        SimConfig("bazito", games=games, seed=21, fault_rate=0.3),
        SimConfig("pis-yedili", games=games, seed=22, fault_rate=0.3, players=(2, 7)),
        SimConfig("persian", games=games, seed=23, fault_rate=0.3, players=(2, 14)),
    ]
    for index, values in enumerate(itertools.product((False, True), repeat=len(OPTIONS))):
        for mode in ("points", "elimination"):
            configs.append(SimConfig(
                "persian", games=per_combination, seed=500 + 2 * index + (mode == "points"),
                options=dict(zip(OPTIONS, values, strict=True)), mode=mode, fault_rate=0.3,
                players=(2, 8)))
    return configs


def _renamed(lines: list[bytes], game: str, new: str) -> list[bytes]:
    old, fresh = f'"game":"{game}"'.encode(), f'"game":"{new}"'.encode()
    return [line.replace(old, fresh) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000,
                        help="games for bazito, pis-yedili and persian at random options")
    parser.add_argument("--per-combination", type=int, default=640,
                        help="persian games per option combination and mode (64 of them)")
    parser.add_argument("--mutations", type=int, default=2, help="mutated copies per game")
    args = parser.parse_args()
    started = time.perf_counter()
    simulated = mutated = lines = 0
    differences: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        for config in _configs(args.games, args.per_combination):
            rng = random.Random(config.seed)
            games = list(simulate(config))
            copies = [
                mutate(_renamed(g.lines, g.game, f"{g.game}-m{k}"), rng)
                for g in games for k in range(args.mutations)
            ]
            path = Path(scratch) / f"{config.ruleset}-{config.seed}.jsonl"
            write_games(path, [g.lines for g in games] + copies)
            simulated += len(games)
            mutated += len(copies)
            lines += sum(len(g.lines) for g in games) + sum(len(c) for c in copies)
            found = compare_paths([str(path)])
            print(f"{config.ruleset} seed {config.seed}: {len(games):,} games, "
                  f"{len(copies):,} mutated, {len(found)} differences", flush=True)
            for line in found:
                differences.append(f"{config.ruleset} seed {config.seed} {config.mode} "
                                   f"{dict(config.options or {})}: {line}")
    print(f"compared {simulated:,} simulated and {mutated:,} mutated games "
          f"({lines:,} lines) in {time.perf_counter() - started:.0f} s")
    print(f"differences: {len(differences)}")
    for line in differences:
        print("  " + line)


if __name__ == "__main__":
    main()
