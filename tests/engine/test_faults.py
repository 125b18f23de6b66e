"""Every fault the simulator injects is found by the validator: the right code at the
right seq (a garbled line: an error record at the right line), and nothing else."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest

from engine import _core
from engine.simulate import (
    FAULT_KINDS,
    InjectedFault,
    SimConfig,
    manifest_bytes,
    open_output,
    write_simulation,
)
from tests.corekit import drain

RUNS = {
    # ruleset: (games, players, file name); persian keeps to smaller tables to stay fast
    "bazito": (400, None, "bazito.jsonl"),
    "persian": (240, (2, 8), "persian.jsonl.gz"),
    "pis-yedili": (300, None, "pis.jsonl"),
}


def simulate_to_file(tmp_path: Path, ruleset: str, seed: int) -> tuple[Path, list[InjectedFault]]:
    games, players, name = RUNS[ruleset]
    config = SimConfig(ruleset, games=games, seed=seed, players=players, fault_rate=1.0)
    path = tmp_path / name
    stream = open_output(str(path))
    try:
        summary = write_simulation(config, stream)
    finally:
        stream.close()
    (tmp_path / (name + ".faults.json")).write_bytes(manifest_bytes(summary.faults))
    assert summary.games == games
    return path, summary.faults


@pytest.mark.parametrize("ruleset", sorted(RUNS))
def test_every_injected_fault_is_reported(tmp_path: Path, ruleset: str) -> None:
    path, _ = simulate_to_file(tmp_path, ruleset, seed=2026)
    manifest = orjson.loads((tmp_path / (path.name + ".faults.json")).read_bytes())
    validator = _core.Validator()
    validator.feed_paths([str(path)])
    finished, line_errors = drain(validator)
    verdicts = {v.game: v for v in finished}
    assert len(verdicts) == len(finished) == RUNS[ruleset][0]

    # at most one fault per game; most games carry one at rate 1.0
    per_game = Counter(f["game"] for f in manifest)
    assert max(per_game.values()) == 1
    assert len(manifest) >= RUNS[ruleset][0] // 2

    # a game's violations are exactly its fault's codes at its seq
    expected: dict[str, list[tuple[int, str]]] = {game: [] for game in verdicts}
    for fault in manifest:
        if fault["record"] == "violation":
            expected[fault["game"]] += [(fault["seq"], code) for code in fault["expected_codes"]]
    for game, verdict in verdicts.items():
        found = sorted((v["seq"], v["code"]) for v in verdict.violations)
        assert found == sorted(expected[game]), (game, verdict.violations)
        if not expected[game]:
            assert verdict.status in ("compliant", "aborted"), game

    # a garbled line is an error record (no game's violation) at its physical line
    errors = sorted((e["line"], e["code"]) for e in line_errors)
    wanted = sorted((f["file_line"], code) for f in manifest if f["record"] == "error"
                    for code in f["expected_codes"])
    assert wanted and errors == wanted

    # every kind of fault the ruleset knows went in at least once
    kinds = {f["kind"] for f in manifest}
    assert kinds == set(FAULT_KINDS[ruleset]), set(FAULT_KINDS[ruleset]) - kinds


def test_manifest_lines_point_at_the_faulty_lines(tmp_path: Path) -> None:
    path, faults = simulate_to_file(tmp_path, "bazito", seed=7)
    lines = path.read_bytes().splitlines()
    for fault in faults:
        assert fault.file_line is not None
        raw = lines[fault.file_line - 1]
        if fault.record == "error":
            with pytest.raises(orjson.JSONDecodeError):
                orjson.loads(raw)
            continue
        obj = orjson.loads(raw)
        assert obj["game"] == fault.game and obj["seq"] == fault.seq, fault
        if fault.kind == "spelling_10":
            assert b'"10' in raw
