"""Every hand-written scenario in tests/cases/ gets exactly its expected verdict from the
engine (the native core; tests/engine/test_core_parity.py holds the reference to it)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine import _core

CASES = Path(__file__).parent / "cases"


def _case_inputs() -> list[tuple[str, Path, list[str]]]:
    found = []
    for expect in sorted(CASES.rglob("*.expect.json")):
        stem = expect.name.removesuffix(".expect.json")
        folder = expect.parent / stem
        if folder.is_dir():
            inputs = [str(folder)]
        else:
            inputs = [str(p) for p in sorted(expect.parent.glob(stem + ".jsonl*"))]
            inputs += [str(p) for p in sorted(expect.parent.glob(stem + ".ndjson*"))]
            inputs += [str(p) for p in sorted(expect.parent.glob(stem + ".log*"))]
        found.append((f"{expect.parent.name}/{stem}", expect, inputs))
    return found


def _violation_key(item: list[Any], with_player: bool) -> tuple[Any, ...]:
    return tuple(item[:3]) if with_player else tuple(item[:2])


@pytest.mark.parametrize(("name", "expect_path", "inputs"), _case_inputs(), ids=lambda x: x if isinstance(x, str) else "")
def test_case(name: str, expect_path: Path, inputs: list[str]) -> None:
    assert inputs, f"{name}: no log beside {expect_path.name}"
    expect = json.loads(expect_path.read_text())
    validator = _core.Validator()
    validator.feed_paths(inputs)
    by_game = {v.game: v.to_json() for v in validator.finish()}
    errors = validator.take_errors()
    assert set(by_game) == set(expect.get("games", {})), f"{name}: games differ"
    for game, wanted in expect["games"].items():
        got = by_game[game]
        got_violations = [[v["seq"], v["code"], v["player"]] for v in got["violations"]]
        detail = json.dumps(got["violations"], indent=1, ensure_ascii=False)
        assert got["status"] == wanted["status"], f"{name} {game}: status; violations: {detail}"
        wanted_v = wanted.get("violations", [])
        with_player = [len(w) >= 3 for w in wanted_v]
        got_keys = Counter(_violation_key(g, True) for g in got_violations)
        got_keys2 = Counter(_violation_key(g, False) for g in got_violations)
        want_keys = Counter(_violation_key(w, True) for w, p in zip(wanted_v, with_player, strict=True) if p)
        want_keys2 = Counter(_violation_key(w, False) for w in wanted_v)
        assert got_keys2 == want_keys2, f"{name} {game}: violations differ; got: {detail}"
        assert not (want_keys - got_keys), f"{name} {game}: violation players differ; got: {detail}"
        if "hands" in wanted:
            assert got["hands"] == wanted["hands"], f"{name} {game}: hands"
        if "totals" in wanted:
            assert got["totals"] == wanted["totals"], f"{name} {game}: totals"
    got_errors = sorted([e["line"], e["code"]] for e in errors)
    want_errors = sorted(expect.get("errors", []))
    assert got_errors == want_errors, f"{name}: line errors {errors}"
