"""Ruleset profiles, as the engine holds them: a typed, read-only view for Python.

The profiles are data, defined once: `engine/core/haftkhabis-core/profiles/*.toml`, read
and checked by the core (`ruleset.rs`). This module only presents them to the simulator
and the views (`_core.rulesets()`), so no parameter has a second home here; adding a house
ruleset means adding a profile there. Names follow `shared/rules.md`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from types import MappingProxyType

from engine import _core


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


class AfterDraw(Enum):
    """What a normal-turn draw leads to."""

    MAY_PLAY_FIT = "may_play_fit"  # bazito: a drawn card that fits may be played, or pass
    MUST_PLAY_MATCH = "must_play_match"  # persian: a drawn match must be played
    FREE = "free"  # pis-yedili: draw again, play, or pass


class EightRule(Enum):
    """What an 8 does (the profile's effect for rank 8)."""

    FOLLOW = "follow"  # the same player follows with the 8's suit or another 8
    SKIP = "skip"  # the next player is skipped


class Mode(Enum):
    POINTS = "points"
    ELIMINATION = "elimination"


@dataclass(frozen=True, slots=True)
class Ruleset:
    """One table's rules as parameters (the core's profile, read-only)."""

    name: str
    min_players: int
    max_players: int
    #: players above which two decks are used by default (None: always one deck)
    two_decks_above: int | None
    has_starter: bool
    forbidden_starter_ranks: frozenset[str]
    opening_suit: str | None  # pis-yedili: the opener must lay a club onto the empty pile
    seven_total: int
    seven_answer_compulsory: bool
    must_play: MustPlay
    jack: JackRule
    jack_suit_must_differ: bool
    after_draw: AfterDraw
    failed_follow_ends_turn: bool
    reshuffles: bool  # False: the hand is blocked when the stock runs dry
    last_card_call: bool
    table_penalties: bool
    settlement_sevens: bool
    first_player_previous_winner: bool
    default_hands: int | None  # None: open-ended
    points: Mapping[str, int]
    multipliers: Mapping[str, int]
    #: what each rank does: plain, stack, follow, skip, reverse, gift, declare, optional_follow
    effects: Mapping[str, str]
    options: Mapping[str, bool]
    modes: frozenset[Mode]

    @property
    def eight(self) -> EightRule:
        return EightRule.FOLLOW if self.effects["8"] == "follow" else EightRule.SKIP

    @property
    def two_gives_gift(self) -> bool:
        return self.effects["2"] == "gift"

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


def _from_core(info: _core.RulesetInfo) -> Ruleset:
    return Ruleset(
        name=info["name"],
        min_players=info["min_players"],
        max_players=info["max_players"],
        two_decks_above=info["two_decks_above"],
        has_starter=info["has_starter"],
        forbidden_starter_ranks=frozenset(info["forbidden_starter_ranks"]),
        opening_suit=info["opening_suit"],
        seven_total=info["seven_total"],
        seven_answer_compulsory=info["seven_answer_compulsory"],
        must_play=MustPlay(info["must_play"]),
        jack=JackRule(info["jack"]),
        jack_suit_must_differ=info["jack_suit_must_differ"],
        after_draw=AfterDraw(info["after_draw"]),
        failed_follow_ends_turn=info["failed_follow_ends_turn"],
        reshuffles=info["reshuffles"],
        last_card_call=info["last_card_call"],
        table_penalties=info["table_penalties"],
        settlement_sevens=info["settlement_sevens"],
        first_player_previous_winner=info["first_player_previous_winner"],
        default_hands=info["default_hands"],
        points=MappingProxyType({str(r): v for r, v in info["points"].items()}),
        multipliers=MappingProxyType(
            {str(r): m for r, m in info["multipliers"].items() if m != 1}),
        effects=MappingProxyType({str(r): str(e) for r, e in info["effects"].items()}),
        options=MappingProxyType(dict(info["options"])),
        modes=frozenset(Mode(m) for m in info["modes"]),
    )


#: every profile the engine knows, in the contract's order (bazito, persian, pis-yedili)
RULESETS: Mapping[str, Ruleset] = MappingProxyType(
    {info["name"]: _from_core(info) for info in _core.rulesets()})

#: persian's sub-rule options and their defaults (rules.md: "each `true` unless the header
#: says `false`", `eight_bonus_optional` aside)
PERSIAN_OPTIONS: Mapping[str, bool] = RULESETS["persian"].options


def load(name: str) -> Ruleset:
    """The profile named `name`; KeyError for a ruleset the engine does not know."""
    return RULESETS[name]
