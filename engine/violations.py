"""The closed list of violation codes, and the value a breach is recorded as."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Code(StrEnum):
    MALFORMED_JSON = "malformed_json"
    SCHEMA = "schema"
    SEQUENCE = "sequence"
    NO_HEADER = "no_header"
    UNKNOWN_RULESET = "unknown_ruleset"
    BAD_DEAL = "bad_deal"
    UNEXPECTED_EVENT = "unexpected_event"
    NOT_YOUR_TURN = "not_your_turn"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    ILLEGAL_CARD = "illegal_card"
    MUST_PLAY = "must_play"
    ILLEGAL_DRAW = "illegal_draw"
    STOCK_MISMATCH = "stock_mismatch"
    ILLEGAL_PASS = "illegal_pass"
    BAD_SUIT = "bad_suit"
    BAD_TARGET = "bad_target"
    UNJUSTIFIED_PENALTY = "unjustified_penalty"
    MISSED_CALL = "missed_call"
    SCORE_MISMATCH = "score_mismatch"
    WINNER_MISMATCH = "winner_mismatch"

    def __str__(self) -> str:
        return self.value


#: a player's own fouls, which justify a persian `misplay` penalty (rules.md)
FOULS = frozenset(
    {
        Code.NOT_YOUR_TURN, Code.CARD_NOT_IN_HAND, Code.ILLEGAL_CARD, Code.MUST_PLAY,
        Code.ILLEGAL_DRAW, Code.ILLEGAL_PASS, Code.BAD_SUIT, Code.BAD_TARGET, Code.MISSED_CALL,
    }
)

#: one line of explanation per code, for people (the dashboard, the HTML report)
EXPLANATIONS: dict[Code, str] = {
    Code.MALFORMED_JSON: "The line is not a JSON object (or not UTF-8).",
    Code.SCHEMA: "A field is missing, unknown, or of the wrong type or spelling.",
    Code.SEQUENCE: "A seq number is missing, or two different lines share one.",
    Code.NO_HEADER: "The game has no `game` header line at seq 0.",
    Code.UNKNOWN_RULESET: "The header names a ruleset, option or mode the engine does not know.",
    Code.BAD_DEAL: "The deal is wrong: hand sizes, cards, starter or stock.",
    Code.UNEXPECTED_EVENT: "This event cannot come at this point of the game.",
    Code.NOT_YOUR_TURN: "Someone other than the player the rules expect acted.",
    Code.CARD_NOT_IN_HAND: "The player played a card they did not hold.",
    Code.ILLEGAL_CARD: "The card may not be played here.",
    Code.MUST_PLAY: "The player drew or passed while the rules oblige them to play.",
    Code.ILLEGAL_DRAW: "A draw not allowed now, or of the wrong number of cards.",
    Code.STOCK_MISMATCH: "The drawn cards are not the stock's top (or not unseen cards).",
    Code.ILLEGAL_PASS: "A pass where the rules give no choice.",
    Code.BAD_SUIT: "A J without the suit it must declare, or a suit the ruleset forbids.",
    Code.BAD_TARGET: "A 2 without a valid target, or a target on a card that takes none.",
    Code.UNJUSTIFIED_PENALTY: "A table penalty whose reason does not hold.",
    Code.MISSED_CALL: "A player left with one card did not announce it.",
    Code.SCORE_MISMATCH: "The claimed scores or totals differ from the computed ones.",
    Code.WINNER_MISMATCH: "The claimed winners or order differ from the computed ones.",
}


@dataclass(frozen=True, slots=True)
class Violation:
    """One breach found on one line. `file`/`line` are filled in by the reader."""

    seq: int | None
    code: Code
    player: str | None
    message: str | None  # None: withheld in a player view (`engine.player_view`)
    file: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "seq": self.seq,
            "code": self.code.value,
            "player": self.player,
            "message": self.message,
            "file": self.file,
            "line": self.line,
        }
