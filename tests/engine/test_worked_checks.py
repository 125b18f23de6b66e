"""The worked checks of rules.md, asked of the engine directly (the scenario logs in
tests/cases/ check them again through the validator)."""

from __future__ import annotations

from engine.events import Deal, Draw, Header, Play
from engine.machine import Phase, Table, read_header
from engine.rulesets import RULESETS

BAZITO_PLAYERS = ("sara", "omid", "lale", "reza")


def _table(ruleset: str, players: tuple[str, ...], **header: object) -> Table:
    reading = read_header(
        Header("wc", 0, None, "haftkhabis/1", ruleset, players, **header),  # type: ignore[arg-type]
        RULESETS,
    )
    assert reading.settings is not None
    return Table(reading.settings, "wc")


def _deal(table: Table, hands: dict[str, tuple[str, ...]], starter: str | None, dealer: str) -> None:
    assert table.apply(Deal("wc", 1, None, 1, dealer, hands, starter)) == []


FILLER = {
    "omid": ("3C", "4C", "5C", "6C", "QC", "KC", "AC"),
    "lale": ("3D", "4D", "5D", "6D", "QD", "KD", "AD"),
    "reza": ("3S", "4S", "5S", "6S", "QS", "KS", "AS"),
}


def test_1_only_the_match_is_legal() -> None:
    table = _table("bazito", BAZITO_PLAYERS)
    hands = {"sara": ("9H", "3H", "2C", "4H", "5H", "6H", "KH"), **FILLER}
    _deal(table, hands, "9S", dealer="reza")
    options = table.options()
    assert options is not None and options.player == "sara"
    assert options.playable == ("9H",)


def test_2_two_sevens_then_a_draw_of_four_and_the_next_moves() -> None:
    table = _table("bazito", BAZITO_PLAYERS)
    hands = {
        "sara": ("7C", "2H", "3H", "4H", "5H", "6H", "KH"),
        "omid": ("7D", "4C", "5C", "6C", "QC", "KC", "AC"),
        "lale": FILLER["lale"], "reza": FILLER["reza"],
    }
    _deal(table, hands, "9C", dealer="reza")
    assert table.apply(Play("wc", 2, None, "sara", "7C")) == []
    assert table.apply(Play("wc", 3, None, "omid", "7D")) == []
    options = table.options()
    assert options is not None and options.phase is Phase.SEVEN and options.draw == 4
    assert table.apply(Draw("wc", 4, None, "lale", ("8H", "9H", "TH", "JH"))) == []
    assert table.expected_actor() == "reza"


def test_3_after_8d_jd_follows_jh_does_not() -> None:
    table = _table("bazito", BAZITO_PLAYERS)
    hands = {"sara": ("8D", "JD", "JH", "2S", "7S", "8S", "KH"), **FILLER}
    hands["lale"] = ("3H", "4H", "5H", "6H", "QH", "TH", "9H")
    _deal(table, hands, "9D", dealer="reza")
    assert table.apply(Play("wc", 2, None, "sara", "8D")) == []
    options = table.options()
    assert options is not None and options.phase is Phase.FOLLOW
    assert "JD" in options.playable and "JH" not in options.playable
    assert table.apply(Play("wc", 3, None, "sara", "JD", suit="S")) == []
    assert table.hand is not None and table.hand.current_suit == "S"


def test_4_a_two_targets_the_fourth_seat_and_the_second_still_moves() -> None:
    table = _table("bazito", BAZITO_PLAYERS)
    hands = {"sara": ("2C", "3H", "4H", "5H", "6H", "KH", "QH"), **FILLER}
    _deal(table, hands, "9C", dealer="reza")
    assert table.apply(Play("wc", 2, None, "sara", "2C", target="reza", target_given=True)) == []
    assert table.expected_actor() == "reza"
    assert table.apply(Draw("wc", 3, None, "reza", ("8H",))) == []
    assert table.expected_actor() == "omid"


def test_5_points_left_in_hand_and_the_jack_multiplier() -> None:
    rules = RULESETS["bazito"]
    left = ("5H", "QS", "7D")
    assert sum(rules.points[c[0]] for c in left) == 8
    assert sum(rules.points[c[0]] for c in left) * rules.multipliers["J"] == 16


def test_6_persian_settlement_lays_the_seven_aside() -> None:
    rules = RULESETS["persian"]
    kept = ("KD", "3S", "9H")  # 7C laid aside, 3S 9H drawn for it
    assert sum(rules.points[c[0]] for c in kept) == 25


def test_7_pis_yedili_out_on_a_seven() -> None:
    rules = RULESETS["pis-yedili"]
    assert sum(rules.points[c[0]] for c in ("JS", "4D")) * rules.multipliers["7"] == 87
