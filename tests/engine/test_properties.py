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

from engine import _core
from engine.cards import pack
from engine.reader import LineError, is_log_name, read_lines
from engine.simulate import SimConfig, simulate
from tests.corekit import drain, validate_lines

PACK = pack(1)

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("fx-*.jsonl"))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _verdict(objs: list[Any]) -> dict[str, Any]:
    raws = [obj if isinstance(obj, bytes) else orjson.dumps(obj) for obj in objs]
    found, errors = validate_lines(raws, "mutated.jsonl")
    verdicts = [v.to_json() for v in found]
    assert len(verdicts) <= 1 + len(objs)
    return {"verdicts": verdicts, "errors": errors}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=12))
def test_arbitrary_bytes_never_crash(lines: list[bytes]) -> None:
    verdicts, _ = validate_lines(lines, "fuzz.jsonl")
    for verdict in verdicts:
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


# ----------------------------------------------------------------- card accounting
# decisions.md (card accounting): a card played that its player does not hold, or drawn that
# the stock does not hold, is taken from where the table has a copy, so no card is ever
# made twice or lost: from its deal on, a hand holds the same number of cards (hands + pile
# + stock + laid-aside 7s): the whole pack, unless the deal gave out too many copies.

CASE_LOGS = sorted(p for p in (Path(__file__).parents[1] / "cases").rglob("*")
                   if p.is_file() and is_log_name(p.name))


def _feed_checking_cards(raws: list[bytes], name: str) -> int:
    """Validate `raws` with every game's steps recorded, checking that after each line the
    validator replayed, every running hand keeps its cards (from the state the core
    records: hands + pile + stock + laid-aside 7s). Returns how many states were checked."""
    games = set()
    for raw in raws:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("game"), str):
            games.add(obj["game"])
    validator = _core.Validator(record=games)
    for number, raw in enumerate(raws, 1):
        validator.feed_line(raw, name, number)
    verdicts, _ = drain(validator)
    checked = 0
    for verdict in verdicts:
        settings = verdict.settings()
        if settings is None:
            continue
        whole = 52 * settings["decks"]
        over = False  # the deal gave out too many copies (so far)
        dealt: tuple[int, int, bool] | None = None  # (hand, count at its deal, exact)
        for step in verdict.steps():
            over = over or any(v["code"] == "bad_deal" and "too many" in v["message"]
                               for v in step["violations"])
            state = step["state"]
            if state is None:
                continue
            count = (sum(len(cards) for cards in state["hands"].values()) + state["pile_size"]
                     + state["stock_size"] + len(state["laid_aside"]))
            if dealt is None or dealt[0] != state["hand"]:
                dealt = (state["hand"], count, not over)
            _, first, exact = dealt
            where = f"{name} line {step['line']} ({verdict.game} seq {step['seq']})"
            assert count == first, f"{where}: {count} cards, {first} at the deal"
            if exact:
                assert count == whole, f"{where}: {count} cards, not the pack of {whole}"
            checked += 1
    return checked


@pytest.mark.parametrize("path", CASE_LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_scenario_logs_keep_every_card(path: Path) -> None:
    raws = [raw for item in read_lines(str(path)) if not isinstance(item, LineError)
            for raw in [item[1]]]
    _feed_checking_cards(raws, path.name)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_logs_keep_every_card(fixture: Path, data: st.DataObject) -> None:
    objs = _lines(fixture)
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        index = data.draw(st.integers(1, len(objs) - 1), label="line")
        line = objs[index]
        kind = data.draw(st.sampled_from(["card", "cards", "player", "swap"]), label="kind")
        if kind == "card" and "card" in line:
            line["card"] = data.draw(st.sampled_from(sorted(PACK)), label="card")
        elif kind == "cards" and "cards" in line:
            line["cards"] = data.draw(st.lists(st.sampled_from(sorted(PACK)), min_size=1, max_size=3),
                                      label="cards")
        elif kind == "player" and "player" in line:
            line["player"] = data.draw(st.sampled_from(list(objs[0]["players"])), label="player")
        elif kind == "swap" and index + 1 < len(objs):
            objs[index], objs[index + 1] = objs[index + 1], objs[index]
            objs[index]["seq"], objs[index + 1]["seq"] = objs[index + 1]["seq"], objs[index]["seq"]
    _feed_checking_cards([orjson.dumps(o) for o in objs], "mutated.jsonl")


@pytest.mark.parametrize("ruleset", ["bazito", "persian", "pis-yedili"])
def test_faulty_simulations_keep_every_card(ruleset: str) -> None:
    config = SimConfig(ruleset, games=120, seed=77, fault_rate=1.0,
                       players=(2, 8) if ruleset == "persian" else None)
    raws = [raw for game in simulate(config) for raw in game.lines]
    assert _feed_checking_cards(raws, f"{ruleset}.jsonl") > len(raws) // 2
