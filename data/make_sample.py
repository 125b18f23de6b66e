"""Regenerate the bundled sample logs in data/sample/ (deterministic: fixed seeds).

    .venv/bin/python data/make_sample.py      # or: make sample

A few hundred simulated games of every ruleset, some with injected faults (each file's
manifest of faults beside it as FILE.faults.json), one file gzip'd, for the demo and tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.simulate import SimConfig, manifest_bytes, open_output, write_simulation  # noqa: E402

SAMPLE = ROOT / "data" / "sample"

RUNS: list[tuple[str, SimConfig]] = [
    ("bazito.jsonl", SimConfig("bazito", games=240, seed=101, fault_rate=0.15)),
    ("persian-points.jsonl.gz", SimConfig("persian", games=50, seed=202, players=(2, 8),
                                           match={"hands": 3}, fault_rate=0.2)),
    ("persian-elimination.jsonl", SimConfig("persian", games=30, seed=303, players=(3, 6),
                                             mode="elimination", match={"hands": 2}, fault_rate=0.2)),
    ("pis-yedili.jsonl", SimConfig("pis-yedili", games=60, seed=404, players=(2, 7), fault_rate=0.2)),
]


def main() -> None:
    SAMPLE.mkdir(parents=True, exist_ok=True)
    for name, config in RUNS:
        path = SAMPLE / name
        out = open_output(str(path))
        try:
            summary = write_simulation(config, out)
        finally:
            out.close()
        manifest = SAMPLE / (name.removesuffix(".gz") + ".faults.json")
        manifest.write_bytes(manifest_bytes(summary.faults))
        print(f"{path.relative_to(ROOT)}: {summary.games} games, {summary.hands} hands, "
              f"{summary.lines} lines, {len(summary.faults)} faults")


if __name__ == "__main__":
    main()
