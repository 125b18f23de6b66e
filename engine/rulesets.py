"""Ruleset profiles: each ruleset is data, one frozen `Ruleset`, never a fork of the engine.

The state machine (`engine.machine`) reads these parameters; adding a house ruleset means
adding a profile here, not a branch there. Names follow `shared/rules.md`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType


class MustPlay(Enum):
    """What obliges a player to play rather than draw."""

    ANY_LEGAL = "any_legal"  # bazito: any legal card held, a J included
    MATCH = "match"  # persian: a card of the current suit or the top's rank
    NEVER = "never"  # pis-yedili: drawing is always allowed


class JackRule(Enum):
    """When a J that does not match may be played."""

    ALWAYS = "always"  # bazito: on anything in a normal turn
    NO_MATCH_HELD = "no_match_held"  # persian: only when its player holds no match
    NOT_ON_JACK = "not_on_jack"  # pis-yedili: on anything but a J


class EightRule(Enum):
    FOLLOW = "follow"  # the same player follows with the 8's suit or another 8
    SKIP = "skip"  # the next player is skipped


class AceRule(Enum):
    SKIP = "skip"
    FOLLOW = "follow"  # pis-yedili: an optional extra card of the A's suit or rank


class AfterDraw(Enum):
    """What a normal-turn draw leads to."""

    MAY_PLAY_FIT = "may_play_fit"  # bazito: a drawn card that fits may be played, or pass
    MUST_PLAY_MATCH = "must_play_match"  # persian: a drawn match must be played
    FREE = "free"  # pis-yedili: draw again, play, or pass


class Mode(Enum):
    POINTS = "points"
    ELIMINATION = "elimination"


PERSIAN_OPTIONS: Mapping[str, bool] = MappingProxyType(
    {
        "extra_fouls": True,
        "last_eight_draws": True,
        "tarkesh": True,
        "ace_deflect": True,
        "eight_bonus_optional": False,
    }
)


@dataclass(frozen=True, slots=True)
class Ruleset:
    """One table's rules as parameters. Instances validate themselves on creation."""

    name: str
    min_players: int
    max_players: int
    #: players above which two decks are used by default (None: always one deck)
    two_decks_above: int | None
    has_starter: bool
    forbidden_starter_ranks: frozenset[str]
    opening_suit: str | None  # pis-yedili: the opener must lay a club onto the empty pile
    seven_total: int
    seven_answer_compulsory: bool  # persian: a player facing a total who holds a 7 must play it
    must_play: MustPlay
    jack: JackRule
    jack_suit_must_differ: bool
    eight: EightRule
    ace: AceRule
    two_gives_gift: bool
    after_draw: AfterDraw
    failed_follow_ends_turn: bool  # bazito: the failed-follow draw ends the turn
    reshuffles: bool  # False: the hand is blocked when the stock runs dry
    last_card_call: bool
    table_penalties: bool
    settlement_sevens: bool  # persian points play: 7s laid aside, two cards drawn for each
    first_player_previous_winner: bool
    points: Mapping[str, int]
    multipliers: Mapping[str, int]
    default_hands: int | None  # None: open-ended
    options: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))
    modes: frozenset[Mode] = frozenset({Mode.POINTS})

    def __post_init__(self) -> None:
        if not 2 <= self.min_players <= self.max_players:
            raise ValueError(f"{self.name}: bad player range")
        if set(self.points) != set("A23456789TJQK"):
            raise ValueError(f"{self.name}: the points table must name every rank")
        if not self.has_starter and self.opening_suit is None:
            raise ValueError(f"{self.name}: without a starter an opening suit is needed")
        if self.seven_total < 1:
            raise ValueError(f"{self.name}: a 7 must put at least one card on the next player")

    def decks_for(self, players: int) -> int:
        if self.two_decks_above is not None and players > self.two_decks_above:
            return 2
        return 1

    def with_options(self, overrides: Mapping[str, bool]) -> Ruleset:
        merged = dict(self.options)
        merged.update(overrides)
        return replace(self, options=MappingProxyType(merged))

    def option(self, name: str) -> bool:
        return self.options.get(name, False)


def _points(**by_rank: int) -> Mapping[str, int]:
    table = {"A": 0, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10}
    table.update({"J": 0, "Q": 0, "K": 0})
    for key, value in by_rank.items():
        table[key.removeprefix("r")] = value
    return MappingProxyType(table)


BAZITO = Ruleset(
    name="bazito",
    min_players=4,
    max_players=4,
    two_decks_above=None,
    has_starter=True,
    forbidden_starter_ranks=frozenset("J278TA"),
    opening_suit=None,
    seven_total=2,
    seven_answer_compulsory=False,
    must_play=MustPlay.ANY_LEGAL,
    jack=JackRule.ALWAYS,
    jack_suit_must_differ=False,
    eight=EightRule.FOLLOW,
    ace=AceRule.SKIP,
    two_gives_gift=True,
    after_draw=AfterDraw.MAY_PLAY_FIT,
    failed_follow_ends_turn=True,
    reshuffles=True,
    last_card_call=False,
    table_penalties=False,
    settlement_sevens=False,
    first_player_previous_winner=False,
    points=_points(r7=0, J=20, A=11, K=4, Q=3),
    multipliers=MappingProxyType({"J": 2}),
    default_hands=1,
)

PERSIAN = Ruleset(
    name="persian",
    min_players=2,
    max_players=14,
    two_decks_above=5,
    has_starter=True,
    forbidden_starter_ranks=frozenset(),
    opening_suit=None,
    seven_total=2,
    seven_answer_compulsory=True,
    must_play=MustPlay.MATCH,
    jack=JackRule.NO_MATCH_HELD,
    jack_suit_must_differ=False,
    eight=EightRule.FOLLOW,
    ace=AceRule.SKIP,
    two_gives_gift=True,
    after_draw=AfterDraw.MUST_PLAY_MATCH,
    failed_follow_ends_turn=False,
    reshuffles=True,
    last_card_call=True,
    table_penalties=True,
    settlement_sevens=True,
    first_player_previous_winner=True,
    points=_points(r7=0, J=20, A=14, K=13, Q=12),
    multipliers=MappingProxyType({"J": 2}),
    default_hands=None,
    options=PERSIAN_OPTIONS,
    modes=frozenset({Mode.POINTS, Mode.ELIMINATION}),
)

PIS_YEDILI = Ruleset(
    name="pis-yedili",
    min_players=2,
    max_players=7,
    two_decks_above=None,
    has_starter=False,
    forbidden_starter_ranks=frozenset(),
    opening_suit="C",
    seven_total=3,
    seven_answer_compulsory=False,
    must_play=MustPlay.NEVER,
    jack=JackRule.NOT_ON_JACK,
    jack_suit_must_differ=True,
    eight=EightRule.SKIP,
    ace=AceRule.FOLLOW,
    two_gives_gift=False,
    after_draw=AfterDraw.FREE,
    failed_follow_ends_turn=False,
    reshuffles=False,
    last_card_call=False,
    table_penalties=False,
    settlement_sevens=False,
    first_player_previous_winner=False,
    points=_points(J=25, r7=20, A=15, K=10, Q=10),
    multipliers=MappingProxyType({"7": 3, "J": 2}),
    default_hands=4,
)

RULESETS: Mapping[str, Ruleset] = MappingProxyType(
    {r.name: r for r in (BAZITO, PERSIAN, PIS_YEDILI)}
)


def load(name: str) -> Ruleset:
    """The profile named `name`; KeyError for a ruleset the engine does not know."""
    return RULESETS[name]
