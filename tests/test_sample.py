"""The bundled sample in data/sample/ is what the demo shows: every injected fault in its
manifests is reported where the manifest says, and every other game is compliant."""

from __future__ import annotations

import json
from pathlib import Path

from engine import _core

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


def test_sample_faults_are_found_and_the_rest_is_compliant() -> None:
    manifests = sorted(SAMPLE.glob("*.faults.json"))
    assert len(manifests) >= 4
    faults = []
    for manifest in manifests:
        log = manifest.name.removesuffix(".faults.json")
        if not (SAMPLE / log).exists():
            log += ".gz"
        faults += [dict(f, log=log) for f in json.loads(manifest.read_text())]
    validator = _core.Validator()
    validator.feed_paths([str(SAMPLE)])
    verdicts = validator.finish()
    errors = validator.take_errors()
    by_game = {v.game: v for v in verdicts}
    assert {v.ruleset for v in verdicts} == {"bazito", "persian", "pis-yedili"}
    faulty_games = set()
    error_lines = {(Path(e["file"]).name, e["line"]) for e in errors}
    for fault in faults:
        faulty_games.add(fault["game"])
        if fault["record"] == "error":
            assert (fault["log"], fault["file_line"]) in error_lines, fault
            continue
        verdict = by_game[fault["game"]]
        found = {v["code"] for v in verdict.violations if v["seq"] == fault["seq"]}
        assert set(fault["expected_codes"]) <= found, (fault, found)
    for verdict in verdicts:
        if verdict.game not in faulty_games:
            assert verdict.status == "compliant", (verdict.game, verdict.status)
