"""Regenerate the bundled sample logs in data/sample/ (deterministic: fixed seeds).

    .venv/bin/python data/make_sample.py      # or: make sample

A few hundred simulated games of every ruleset, some with injected faults (each file's
manifest of faults beside it as FILE.faults.json), one file gzip'd, for the demo and tests.

data/sample-fairplay/ holds the fair-play demo (docs/fairplay.md): fault-free bazito games
of a server build, `hk-server/2.5.0-beta`, whose shuffle gives the player in seat 0 one
extra special card in half the deals (the simulator's `ShuffleBias`), beside games of the
same season dealt fairly by `hk-server/2.4.0`, and a club of six regulars among whom sara
and omid play as partners (the simulator's colluding pair: 2s and 7 totals spared, J suits
that suit the other, soft play). Kept apart from data/sample so that the sample's figures
(README, tests) stay as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.simulate import (  # noqa: E402
    ShuffleBias,
    SimConfig,
    manifest_bytes,
    open_output,
    write_simulation,
)

SAMPLE = ROOT / "data" / "sample"
FAIRPLAY = ROOT / "data" / "sample-fairplay"

RUNS: list[tuple[str, SimConfig]] = [
    ("bazito.jsonl", SimConfig("bazito", games=240, seed=101, fault_rate=0.15)),
    ("persian-points.jsonl.gz", SimConfig("persian", games=50, seed=202, players=(2, 8),
                                           match={"hands": 3}, fault_rate=0.2)),
    ("persian-elimination.jsonl", SimConfig("persian", games=30, seed=303, players=(3, 6),
                                             mode="elimination", match={"hands": 2}, fault_rate=0.2)),
    ("pis-yedili.jsonl", SimConfig("pis-yedili", games=60, seed=404, players=(2, 7), fault_rate=0.2)),
]

FAIRPLAY_RUNS: list[tuple[str, SimConfig]] = [
    ("bazito-rigged.jsonl.gz", SimConfig("bazito", games=80, seed=505, match={"hands": 5},
                                         build="hk-server/2.5.0-beta",
                                         shuffle=ShuffleBias("extra_special", rate=0.5, seat=0))),
    ("bazito-fair.jsonl.gz", SimConfig("bazito", games=80, seed=506, match={"hands": 5},
                                       build="hk-server/2.4.0")),
    # a fair shuffle, but a club of six regulars of whom sara and omid do each other the
    # simulator's favours four times in five (2s and 7 totals spared, the other's suit
    # declared, an attack held back when the other could go out)
    ("bazito-club.jsonl.gz", SimConfig("bazito", games=150, seed=507, match={"hands": 3},
                                       build="hk-server/2.4.0",
                                       names=("sara", "omid", "lale", "reza", "neda", "kian"),
                                       colluders=("sara", "omid"), collusion=0.8)),
]


def main() -> None:
    for folder, runs in ((SAMPLE, RUNS), (FAIRPLAY, FAIRPLAY_RUNS)):
        write(folder, runs)


def write(folder: Path, runs: list[tuple[str, SimConfig]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, config in runs:
        path = folder / name
        out = open_output(str(path))
        try:
            summary = write_simulation(config, out)
        finally:
            out.close()
        if summary.faults or folder == SAMPLE:
            manifest = folder / (name.removesuffix(".gz") + ".faults.json")
            manifest.write_bytes(manifest_bytes(summary.faults))
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"{shown}: {summary.games} games, {summary.hands} hands, "
              f"{summary.lines} lines, {len(summary.faults)} faults")


if __name__ == "__main__":
    main()
