"""Property tests: whatever the input, the validator answers with a verdict, never a crash;
mutating one line of a compliant log yields a violation or the very same outcome."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.validate import Validator

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("fx-*.jsonl"))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _verdict(objs: list[Any]) -> dict[str, Any]:
    validator = Validator()
    for number, obj in enumerate(objs, 1):
        raw = obj if isinstance(obj, bytes) else orjson.dumps(obj)
        validator.feed_line(raw, "mutated.jsonl", number)
    verdicts = [v.to_json() for v in validator.finish()]
    assert len(verdicts) <= 1 + len(objs)
    return {"verdicts": verdicts, "errors": [e.to_json() for e in validator.errors]}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=12))
def test_arbitrary_bytes_never_crash(lines: list[bytes]) -> None:
    validator = Validator()
    for number, raw in enumerate(lines, 1):
        validator.feed_line(raw, "fuzz.jsonl", number)
    for verdict in validator.finish():
        assert verdict.status in {"compliant", "violations", "incomplete", "aborted", "invalid"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(
    st.sampled_from(["game", "seq", "type", "player", "card", "cards", "suit", "target", "hand",
                     "dealer", "hands", "starter", "stock", "format", "ruleset", "players", "reason",
                     "winners", "scores", "order", "totals", "ts", "call", "options", "mode", "match"]),
    json_values, max_size=8), max_size=10))
def test_arbitrary_objects_never_crash(objs: list[dict[str, Any]]) -> None:
    for obj in objs:
        obj.setdefault("game", "fuzz")
    _verdict(objs)


FIELD_MUTATIONS: list[Any] = [
    None, 0, 1, 2, 7, -1, "", "XX", "7C", "JS", "2D", "10H", "p0", "p1", "nobody", [], ["7C"],
    ["AS", "KD"], {}, {"p0": 3}, True, 3.5, "H", "clubs", "misplay", "points",
]


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_one_mutation_is_caught_or_harmless(fixture: Path, data: st.DataObject) -> None:
    original = _lines(fixture)
    baseline = _verdict(original)["verdicts"][0]
    assert baseline["status"] == "compliant"
    objs = copy.deepcopy(original)
    index = data.draw(st.integers(0, len(objs) - 1), label="line")
    kind = data.draw(st.sampled_from(["set", "delete", "drop", "swap", "duplicate"]), label="kind")
    if kind == "drop":
        del objs[index]
    elif kind == "swap" and index + 1 < len(objs):
        objs[index], objs[index + 1] = objs[index + 1], objs[index]
    elif kind == "duplicate":
        objs.insert(index, copy.deepcopy(objs[index]))
    else:
        key = data.draw(st.sampled_from(sorted(objs[index])), label="field")
        if kind == "delete":
            del objs[index][key]
        else:
            objs[index][key] = data.draw(st.sampled_from(FIELD_MUTATIONS), label="value")
    result = _verdict(objs)
    games = {v["game"]: v for v in result["verdicts"]}
    mutated = games.get(baseline["game"])
    if mutated is None or result["errors"] or len(games) > 1:
        return  # the game id itself was broken: the lines were reported elsewhere
    if mutated["status"] == "compliant":
        assert mutated["hands"] == baseline["hands"]
        assert mutated["totals"] == baseline["totals"]
