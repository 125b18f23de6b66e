"""How the validator routes lines: repeats, conflicts and far-off seqs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.corekit import validate_lines

BAZITO = Path(__file__).parent / "fixtures" / "fx-bazito-points.jsonl"


def _run(lines: list[bytes]) -> dict[str, Any]:
    verdicts, errors = validate_lines(lines)
    assert errors == []
    (verdict,) = verdicts
    return verdict.to_json()


def test_repeats_with_other_key_order_are_dropped_and_conflicts_set_aside() -> None:
    lines = BAZITO.read_bytes().splitlines()
    third = orjson.loads(lines[3])
    reordered = orjson.dumps(dict(reversed(list(third.items()))))
    conflicting = orjson.dumps({**third, "x_note": "retry with a difference"})
    verdict = _run([*lines[:4], reordered, conflicting, *lines[4:]])
    assert verdict["status"] == "violations"
    assert [(v["seq"], v["code"], v["line"]) for v in verdict["violations"]] == [(3, "sequence", 6)]


def test_a_far_off_seq_is_one_gap_not_a_crash() -> None:
    lines = BAZITO.read_bytes().splitlines()
    far = orjson.loads(lines[-1])
    far["seq"] = 10**12
    verdict = _run([*lines, orjson.dumps(far)])
    codes = [(v["seq"], v["code"]) for v in verdict["violations"]]
    assert (10**12, "sequence") in codes


def test_lines_in_reverse_order_replay_the_same() -> None:
    lines = BAZITO.read_bytes().splitlines()
    forward = _run(lines)
    assert forward["status"] == "compliant"
    assert _run(list(reversed(lines))) == forward
