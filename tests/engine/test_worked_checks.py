"""The worked checks of rules.md, asked of the engine (the native core, through
`engine._core.GameRun`) one log line at a time; the scenario logs in tests/cases/ check them
again through the validator, and engine/core/haftkhabis-core/tests/worked_checks.rs asks
them of the Rust state machine directly."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from engine import _core

BAZITO_PLAYERS = ("sara", "omid", "lale", "reza")

FILLER = {
    "omid": ("3C", "4C", "5C", "6C", "QC", "KC", "AC"),
    "lale": ("3D", "4D", "5D", "6D", "QD", "KD", "AD"),
    "reza": ("3S", "4S", "5S", "6S", "QS", "KS", "AS"),
}


class _Game:
    """One game of the worked checks, fed line by line (each line's seq is the next one)."""

    def __init__(self, ruleset: str, players: tuple[str, ...], **header: Any) -> None:
        self.run = _core.GameRun("wc")
        self.seq = 0
        assert self.line("game", format="haftkhabis/1", ruleset=ruleset, players=list(players),
                         **header) == []
        assert not self.run.invalid

    def line(self, type_: str, **fields: Any) -> list[_core.ViolationInfo]:
        """Feed one line: the violations found on it."""
        raw = orjson.dumps({"game": "wc", "seq": self.seq, "type": type_, **fields})
        self.seq += 1
        return self.run.feed(raw, self.seq)

    def deal(self, hands: Mapping[str, tuple[str, ...]], starter: str | None, dealer: str) -> None:
        fields: dict[str, Any] = {"hand": 1, "dealer": dealer,
                                  "hands": {p: list(cards) for p, cards in hands.items()}}
        if starter is not None:
            fields["starter"] = starter
        assert self.line("deal", **fields) == []

    def play(self, player: str, card: str, **fields: Any) -> list[_core.ViolationInfo]:
        return self.line("play", player=player, card=card, **fields)

    def draw(self, player: str, *cards: str) -> list[_core.ViolationInfo]:
        return self.line("draw", player=player, cards=list(cards))

    def options(self) -> dict[str, Any]:
        options = self.run.options()
        assert options is not None, "nobody is to move"
        return options

    def state(self) -> dict[str, Any]:
        state = self.run.snapshot()
        assert state is not None, "no hand dealt"
        return state


def _profile(name: str) -> _core.RulesetInfo:
    (profile,) = [r for r in _core.rulesets() if r["name"] == name]
    return profile


def _points(ruleset: str, cards: tuple[str, ...]) -> int:
    """What `cards` left in hand count, by the core's profile of `ruleset`."""
    table: dict[str, int] = {str(rank): n for rank, n in _profile(ruleset)["points"].items()}
    return sum(table[card[0]] for card in cards)


def _multiplier(ruleset: str, rank: str) -> int:
    """The winning card's multiplier for a hand won on `rank`, by the core's profile."""
    table: dict[str, int] = {str(rank): n for rank, n in _profile(ruleset)["multipliers"].items()}
    return table.get(rank, 1)


def test_1_only_the_match_is_legal() -> None:
    game = _Game("bazito", BAZITO_PLAYERS)
    hands = {"sara": ("9H", "3H", "2C", "4H", "5H", "6H", "KH"), **FILLER}
    game.deal(hands, "9S", dealer="reza")
    options = game.options()
    assert options["player"] == "sara" == game.run.expected_actor()
    assert options["play"] == ["9H"]


def test_2_two_sevens_then_a_draw_of_four_and_the_next_moves() -> None:
    game = _Game("bazito", BAZITO_PLAYERS)
    hands = {
        "sara": ("7C", "2H", "3H", "4H", "5H", "6H", "KH"),
        "omid": ("7D", "4C", "5C", "6C", "QC", "KC", "AC"),
        "lale": FILLER["lale"], "reza": FILLER["reza"],
    }
    game.deal(hands, "9C", dealer="reza")
    assert game.play("sara", "7C") == []
    assert game.play("omid", "7D") == []
    options = game.options()
    assert options["player"] == "lale"
    assert options["phase"] == "seven" and options["draw"] == 4
    assert game.draw("lale", "8H", "9H", "TH", "JH") == []
    assert game.run.expected_actor() == "reza"
    assert game.state()["hands"]["lale"][-4:] == ["8H", "9H", "TH", "JH"]


def test_3_after_8d_jd_follows_jh_does_not() -> None:
    game = _Game("bazito", BAZITO_PLAYERS)
    hands = {"sara": ("8D", "JD", "JH", "2S", "7S", "8S", "KH"), **FILLER}
    hands["lale"] = ("3H", "4H", "5H", "6H", "QH", "TH", "9H")
    game.deal(hands, "9D", dealer="reza")
    assert game.play("sara", "8D") == []
    options = game.options()
    assert options["player"] == "sara" and options["phase"] == "follow"
    assert "JD" in options["play"] and "JH" not in options["play"]
    assert game.play("sara", "JD", suit="S") == []
    assert game.state()["current_suit"] == "S"


def test_4_a_two_targets_the_fourth_seat_and_the_second_still_moves() -> None:
    game = _Game("bazito", BAZITO_PLAYERS)
    hands = {"sara": ("2C", "3H", "4H", "5H", "6H", "KH", "QH"), **FILLER}
    game.deal(hands, "9C", dealer="reza")
    assert game.play("sara", "2C", target="reza") == []
    assert game.run.expected_actor() == "reza"
    options = game.options()
    assert options["gift"] and options["draw"] == 1
    assert game.draw("reza", "8H") == []
    assert game.run.expected_actor() == "omid"


def test_5_points_left_in_hand_and_the_jack_multiplier() -> None:
    left = ("5H", "QS", "7D")
    assert _points("bazito", left) == 8
    assert _points("bazito", left) * _multiplier("bazito", "J") == 16


def test_6_persian_settlement_lays_the_seven_aside() -> None:
    kept = ("KD", "3S", "9H")  # 7C laid aside, 3S 9H drawn for it
    assert _points("persian", kept) == 25


def test_7_pis_yedili_out_on_a_seven() -> None:
    assert _points("pis-yedili", ("JS", "4D")) * _multiplier("pis-yedili", "7") == 87
