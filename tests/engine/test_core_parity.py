"""The native core gives the reference engine's verdicts: on every scenario case, and on
simulated games of every ruleset, option and mode, clean, with injected faults, and
mutated line by line (a lost line, a swap, a retry, a changed card, player, type or seq).

`bench/parity_run.py` runs the same comparison over 100,000+ games.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from engine.simulate import SimConfig, simulate
from tests.engine.parity import compare_paths, mutate, write_games
from tests.test_cases import _case_inputs

CASES = _case_inputs()


def _renamed(lines: list[bytes], game: str, new: str) -> list[bytes]:
    old, fresh = f'"game":"{game}"'.encode(), f'"game":"{new}"'.encode()
    return [line.replace(old, fresh) for line in lines]


@pytest.mark.parametrize(("name", "inputs"), [(c[0], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_scenario_case(name: str, inputs: list[str]) -> None:
    assert compare_paths(inputs) == []


def _persian_configs() -> list[SimConfig]:
    names = ("extra_fouls", "last_eight_draws", "tarkesh", "ace_deflect", "eight_bonus_optional")
    configs = []
    for index, values in enumerate(itertools.product((False, True), repeat=len(names))):
        for mode in ("points", "elimination"):
            configs.append(SimConfig("persian", games=3, seed=1000 + 2 * index + (mode == "points"),
                                     options=dict(zip(names, values, strict=True)), mode=mode,
                                     fault_rate=0.25, players=(2, 7)))
    return configs


CONFIGS = [
    SimConfig("bazito", games=120, seed=11, fault_rate=0.25),
    SimConfig("pis-yedili", games=60, seed=12, fault_rate=0.25, players=(2, 7)),
    SimConfig("persian", games=60, seed=13, fault_rate=0.25, players=(2, 14)),
    *_persian_configs(),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.ruleset}-{c.seed}")
def test_simulated_and_mutated(config: SimConfig, tmp_path: Path) -> None:
    rng = random.Random(config.seed)
    simulated = list(simulate(config))
    games = [game.lines for game in simulated]
    mutated = [
        mutate(_renamed(game.lines, game.game, f"{game.game}-m{k}"), rng)
        for game in simulated for k in range(2)
    ]
    path = tmp_path / "games.jsonl"
    write_games(path, games + mutated)
    assert compare_paths([str(path)]) == []
