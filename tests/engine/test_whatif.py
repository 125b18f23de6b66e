"""What-if at a step (issue 13): branches played to the hand's end on simulated logs whose
deals carry the stock, refused moves, and a log without the stock."""

from __future__ import annotations

import random
from collections import Counter

import orjson
import pytest

from engine.profiles import Profile, parse_profile
from engine.whatif import Move, WhatIfError, what_if
from tests.engine.inferkit import as_lines, simulated


def _turn_steps(lines: list[bytes]) -> list[int]:
    """Seqs of the first hand's plays and draws (a move the player chose), before the
    first reshuffle (whose new stock order the log may not tell)."""
    out = []
    for raw in lines:
        obj = orjson.loads(raw)
        if obj["type"] in ("end", "reshuffle"):
            break
        if obj["type"] in ("play", "draw"):
            out.append(obj["seq"])
    return out


def _conserved(state: dict[str, object], total: int) -> bool:
    hands = state["hands"]
    assert isinstance(hands, dict)
    held = sum(len(cards) for cards in hands.values())
    pile, laid = state["pile"], state["laid_aside"]
    assert isinstance(pile, list) and isinstance(laid, list)
    stock = state["stock_size"]
    assert isinstance(stock, int)
    return held + len(pile) + len(laid) + stock == total


@pytest.mark.parametrize("profile", ["bazito", "persian", "persian:mode=elimination", "pis-yedili"])
def test_a_branch_played_to_the_hands_end_conserves_cards(profile: str) -> None:
    rules = parse_profile(profile)
    games = simulated(rules, 6, seed=11, stock=1.0)
    rng = random.Random(3)
    decided = 0
    for lines in games:
        log = as_lines([lines])
        game = orjson.loads(lines[0])["game"]
        steps = _turn_steps(lines)
        for seq in rng.sample(steps, min(3, len(steps))):
            moves: list[Move] = []
            result = what_if(log, game, seq)
            assert result.stock_known
            for _ in range(400):
                assert result.refused is None, result.refused
                for step in result.steps:
                    assert step.card_count == result.expected_cards
                    assert _conserved(step.state, result.expected_cards or 0)
                if not result.next_moves:
                    break
                moves.append(rng.choice(result.next_moves))
                result = what_if(log, game, seq, moves)
            assert result.stopped is not None
            if result.outcome is not None:
                decided += 1
                assert result.recorded_outcome is not None
                assert result.outcome["hand"] == result.recorded_outcome["hand"]
    assert decided >= 6


def test_the_recorded_moves_replayed_as_a_branch_give_the_recorded_outcome() -> None:
    (lines,) = simulated(Profile.default("bazito"), 1, seed=4, stock=1.0)
    log = as_lines([lines])
    game = orjson.loads(lines[0])["game"]
    start = _turn_steps(lines)[0]
    moves = []
    for raw in lines:
        obj = orjson.loads(raw)
        if obj["type"] == "end":
            break
        if obj["seq"] >= start and obj["type"] in ("play", "draw", "pass"):
            moves.append(Move("draw") if obj["type"] == "draw" else Move("pass") if obj["type"] == "pass"
                         else Move("play", obj["card"], obj.get("suit"), obj.get("target")))
    result = what_if(log, game, start, moves)
    assert result.refused is None
    assert result.outcome is not None and result.outcome == result.recorded_outcome


def test_an_illegal_choice_is_refused_with_the_rule() -> None:
    (lines,) = simulated(Profile.default("bazito"), 1, seed=8, stock=1.0)
    log = as_lines([lines])
    game = orjson.loads(lines[0])["game"]
    for seq in _turn_steps(lines):
        before = what_if(log, game, seq)
        assert before.before is not None
        legal = before.before["legal"]
        held = before.before["hands"][legal["player"]]
        illegal = [c for c in held if c not in legal["play"] and c[0] not in "J"]
        if illegal and legal["phase"] == "turn":
            break
    else:
        pytest.fail("no step with an unplayable card in hand")
    result = what_if(log, game, seq, [Move("play", illegal[0])])
    assert result.refused is not None and not result.steps
    assert {v["code"] for v in result.refused.violations} == {"illegal_card"}
    assert result.refused.player == legal["player"]
    assert result.next_moves == ()  # the branch stops before the refused move
    # a legal move, then a pass where bazito gives no choice: the first step stays
    first = next(m for m in before.alternatives if m.kind == "play")
    later = what_if(log, game, seq, [first, Move("pass")])
    assert later.refused is not None and later.refused.move == Move("pass")
    assert len(later.steps) == 1 and later.steps[0].move == first
    assert {v["code"] for v in later.refused.violations} <= {"illegal_pass", "must_play"}


def test_without_stock_the_unknown_cards_are_named() -> None:
    (lines,) = simulated(parse_profile("persian"), 1, seed=2, stock=0.0)
    log = as_lines([lines])
    game = orjson.loads(lines[0])["game"]
    for seq in _turn_steps(lines):
        result = what_if(log, game, seq)
        if Move("draw") in result.alternatives:
            break
    else:
        pytest.fail("no step where a draw was allowed")
    assert not result.stock_known
    state = result.before
    assert state is not None
    drawn = what_if(log, game, seq, ["draw"])
    assert drawn.steps == () and drawn.stopped and "stock" in drawn.stopped
    assert len(drawn.unknown_cards) == state["stock_size"]
    held = Counter(c for cards in state["hands"].values() for c in cards)
    assert not set(drawn.unknown_cards) & {c for c, n in held.items() if n >= 2}


def test_bad_requests_are_errors() -> None:
    (lines,) = simulated(Profile.default("bazito"), 1, seed=1)
    log = as_lines([lines])
    game = orjson.loads(lines[0])["game"]
    with pytest.raises(WhatIfError, match="no line"):
        what_if(log, "nope", 2)
    with pytest.raises(WhatIfError, match="no step"):
        what_if(log, game, 10_000)
    with pytest.raises(WhatIfError, match="a move is"):
        what_if(log, game, 2, ["7X"])
    assert str(Move.parse("js/h")) == "JS/H" and str(Move.parse("2D>lale")) == "2D>lale"


def test_a_copied_run_goes_on_alone_and_steps_read_from_a_place() -> None:
    """What a what-if branches from: `GameRun.copy()` is the run at the same point, and
    feeding the copy leaves the original as it was (and the other way round); `steps(start=)`
    are the steps from that place in feed order, as the whole list has them."""
    from engine import _core

    (lines,) = simulated(Profile.default("persian"), 1, seed=12)
    game = orjson.loads(lines[0])["game"]
    half = len(lines) // 2
    original = _core.GameRun(game, record=True)
    for number, raw in enumerate(lines[:half], 1):
        original.feed(raw, number)
    before = (original.snapshot(), original.steps(), original.violations)
    copy = original.copy()
    assert (copy.snapshot(), copy.steps(), copy.violations) == before
    for number, raw in enumerate(lines[half:], half + 1):
        copy.feed(raw, number)
    assert (original.snapshot(), original.steps(), original.violations) == before
    # the original, fed a line the copy was not (a repeat of an earlier seq): the copy
    # does not see it
    whole = copy.steps()
    assert original.feed(lines[1], 2) and not copy.violations
    assert copy.steps() == whole and len(whole) == len(lines)
    assert copy.steps(start=half) == whole[half:] and copy.steps(start=len(whole)) == []
    assert [s["seq"] for s in copy.steps(states=False, start=half)] == [s["seq"] for s in whole[half:]]
