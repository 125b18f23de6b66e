"""Typed stubs of `engine._core`, the compiled engine (engine/core/haftkhabis-py)."""

from typing import Literal, TypedDict, type_check_only

__all__ = ["ENGINE_VERSION", "rulesets"]

ENGINE_VERSION: str

_Rank = Literal["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"]
_Effect = Literal[
    "plain", "stack", "follow", "skip", "reverse", "gift", "declare", "optional_follow"
]

@type_check_only
class RulesetInfo(TypedDict):
    """One profile's parameters, as `haftkhabis_core::ruleset::Ruleset` holds them."""

    name: str
    min_players: int
    max_players: int
    two_decks_above: int | None
    has_starter: bool
    forbidden_starter_ranks: str
    opening_suit: str | None
    seven_total: int
    seven_answer_compulsory: bool
    must_play: Literal["any_legal", "match", "never"]
    jack: Literal["always", "no_match_held", "not_on_jack"]
    jack_suit_must_differ: bool
    after_draw: Literal["may_play_fit", "must_play_match", "free"]
    failed_follow_ends_turn: bool
    reshuffles: bool
    last_card_call: bool
    table_penalties: bool
    settlement_sevens: bool
    first_player_previous_winner: bool
    default_hands: int | None
    points: dict[_Rank, int]
    multipliers: dict[_Rank, int]
    effects: dict[_Rank, _Effect]
    option_names: list[str]
    options: dict[str, bool]
    modes: list[Literal["points", "elimination"]]

def rulesets() -> list[RulesetInfo]:
    """Every ruleset profile's parameters, in the contract's order (bazito, persian,
    pis-yedili)."""
