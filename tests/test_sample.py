"""The bundled sample in data/sample/ is what the demo shows: every injected fault in its
manifests is reported where the manifest says (and nothing else in its game), every other
game is compliant, and the files are what `make sample` (data/make_sample.py) writes."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import pytest

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
    # no fault cascades into violations the manifest does not name
    named: dict[str, set[tuple[int, str]]] = {}
    for fault in faults:
        named.setdefault(fault["game"], set()).update((fault["seq"], c) for c in fault["expected_codes"])
    for game, expected in named.items():
        if game in by_game:
            assert {(v["seq"], v["code"]) for v in by_game[game].violations} <= expected, game
    for verdict in verdicts:
        if verdict.game not in faulty_games:
            assert verdict.status == "compliant", (verdict.game, verdict.status)


def test_the_sample_is_what_make_sample_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("make_sample", SAMPLE.parent / "make_sample.py")
    assert spec is not None and spec.loader is not None
    make_sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_sample)

    def digests(folder: Path) -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}

    for bundled, runs in ((make_sample.SAMPLE, make_sample.RUNS), (make_sample.FAIRPLAY, make_sample.FAIRPLAY_RUNS)):
        made = tmp_path / bundled.name
        make_sample.write(made, runs)
        assert digests(made) == digests(bundled), f"run `make sample` and commit {bundled.name}"
