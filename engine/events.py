"""The haftkhabis/1 events as immutable values, and the codec between them and log lines.

`decode_line` turns one parsed JSON object into an event plus the notation problems found
on it (`schema` issues, with the repair applied where notation.md allows one); `encode`
turns an event back into the JSON object a producer would write. Judging an event against
the rules is the native core's job (`engine._core`), not this module's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from engine.cards import CARD_SET, SUITS, CardSpellingError, repair_card, repair_suit

FORMAT = "haftkhabis/1"
GAME_ID_RE = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
TS_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)
PENALTY_REASONS = frozenset({"misplay", "missed_call", "out_of_turn", "delay", "other"})
CALLS = frozenset({"last_card"})


@dataclass(frozen=True, slots=True)
class Event:
    """Fields every line carries."""

    game: str
    seq: int
    ts: str | None
    type: ClassVar[str] = "?"
    #: turn events move the turn; others (announce, penalty, …) do not
    is_turn_event: ClassVar[bool] = False


@dataclass(frozen=True, slots=True)
class Header(Event):
    format: str
    ruleset: str
    players: tuple[str, ...]
    options: Mapping[str, Any] | None = None
    mode: str | None = None
    decks: Any = None
    match: Any = None
    meta: Any = None
    type: ClassVar[str] = "game"


@dataclass(frozen=True, slots=True)
class Deal(Event):
    hand: int
    dealer: str
    hands: Mapping[str, tuple[str, ...]]
    starter: str | None = None
    #: the starter field was present but could not be read as a card
    starter_unreadable: bool = False
    stock: tuple[str, ...] | None = None
    type: ClassVar[str] = "deal"


@dataclass(frozen=True, slots=True)
class Play(Event):
    player: str
    card: str
    suit: str | None = None
    #: a `suit` field was present but unreadable (judged as bad_suit by the rules)
    suit_unreadable: bool = False
    target: str | None = None
    #: a `target` field was present (possibly not a string: then `target` is None)
    target_given: bool = False
    type: ClassVar[str] = "play"
    is_turn_event: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Draw(Event):
    player: str
    cards: tuple[str, ...]
    type: ClassVar[str] = "draw"
    is_turn_event: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Pass(Event):
    player: str
    type: ClassVar[str] = "pass"
    is_turn_event: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Announce(Event):
    player: str
    call: str
    type: ClassVar[str] = "announce"


@dataclass(frozen=True, slots=True)
class Penalty(Event):
    player: str
    cards: tuple[str, ...]
    reason: str
    type: ClassVar[str] = "penalty"


@dataclass(frozen=True, slots=True)
class Reshuffle(Event):
    stock: tuple[str, ...] | None = None
    type: ClassVar[str] = "reshuffle"


@dataclass(frozen=True, slots=True)
class End(Event):
    hand: int
    winners: tuple[str, ...] | None = None
    scores: Mapping[str, Any] | None = None
    order: tuple[str, ...] | None = None
    type: ClassVar[str] = "end"


@dataclass(frozen=True, slots=True)
class Result(Event):
    totals: Mapping[str, Any] | None = None
    winners: tuple[str, ...] | None = None
    type: ClassVar[str] = "result"


@dataclass(frozen=True, slots=True)
class Abort(Event):
    reason: str | None = None
    type: ClassVar[str] = "abort"


AnyEvent = Header | Deal | Play | Draw | Pass | Announce | Penalty | Reshuffle | End | Result | Abort


_COMMON = frozenset({"game", "seq", "type", "ts"})
_FIELDS: dict[str, frozenset[str]] = {
    "game": frozenset({"format", "ruleset", "players", "options", "mode", "decks", "match", "meta"}),
    "deal": frozenset({"hand", "dealer", "hands", "starter", "stock"}),
    "play": frozenset({"player", "card", "suit", "target"}),
    "draw": frozenset({"player", "cards"}),
    "pass": frozenset({"player"}),
    "announce": frozenset({"player", "call"}),
    "penalty": frozenset({"player", "cards", "reason"}),
    "reshuffle": frozenset({"stock"}),
    "end": frozenset({"hand", "winners", "scores", "order"}),
    "result": frozenset({"totals", "winners"}),
    "abort": frozenset({"reason"}),
}
_ALLOWED = {t: f | _COMMON for t, f in _FIELDS.items()}


class SetAside(Exception):
    """The line cannot be replayed (a required field missing or unreadable)."""


@dataclass(slots=True)
class Decoded:
    """One decoded line: the event (None when set aside) and its notation problems."""

    event: AnyEvent | None
    issues: list[str] = field(default_factory=list)


def valid_game_id(value: object) -> bool:
    return isinstance(value, str) and GAME_ID_RE.fullmatch(value) is not None


def valid_seq(value: object) -> bool:
    return type(value) is int and value >= 0


def valid_player_id(value: object) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= 64


class _Reader:
    """Reads the fields of one line, collecting schema issues as it goes."""

    __slots__ = ("issues", "obj", "type")

    def __init__(self, obj: Mapping[str, Any], type_: str) -> None:
        self.obj = obj
        self.type = type_
        self.issues: list[str] = []

    def required(self, name: str) -> Any:
        value = self.obj.get(name)
        if value is None:
            self.issues.append(f"{self.type}: the required field '{name}' is missing")
            raise SetAside
        return value

    def player(self, name: str = "player") -> str:
        value = self.required(name)
        if not valid_player_id(value):
            self.issues.append(f"{self.type}: '{name}' must be a player id (1-64 characters), got {value!r}")
            raise SetAside
        return str(value)

    def card(self, value: Any, where: str) -> str:
        if isinstance(value, str) and value in CARD_SET:
            return value
        try:
            repaired = repair_card(value)
        except CardSpellingError as exc:
            self.issues.append(f"{self.type}: {where}: {exc}")
            raise SetAside from None
        self.issues.append(f"{self.type}: {where}: {value!r} is not notation; write {repaired!r}")
        return repaired

    def cards(self, name: str, *, required: bool = True) -> tuple[str, ...] | None:
        value = self.obj.get(name)
        if value is None:
            if required:
                self.required(name)
            return None
        if not isinstance(value, list) or (required and not value):
            self.issues.append(f"{self.type}: '{name}' must be a non-empty list of cards, got {value!r}")
            raise SetAside
        return tuple(self.card(v, f"{name}[{i}]") for i, v in enumerate(value))

    def positive_int(self, name: str) -> int:
        value = self.required(name)
        if type(value) is not int or value < 1:
            self.issues.append(f"{self.type}: '{name}' must be a whole number 1 or more, got {value!r}")
            raise SetAside
        return value

    def player_list(self, name: str) -> tuple[str, ...] | None:
        value = self.obj.get(name)
        if value is None:
            return None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        self.issues.append(f"{self.type}: claim '{name}' must be a list of player ids; ignored")
        return None

    def points_map(self, name: str) -> Mapping[str, Any] | None:
        value = self.obj.get(name)
        if value is None:
            return None
        if isinstance(value, dict) and all(
            type(v) in (int, float) for v in value.values()
        ):
            return value
        self.issues.append(f"{self.type}: claim '{name}' must map player ids to points; ignored")
        return None


def decode_line(obj: Mapping[str, Any], game: str, seq: int) -> Decoded:
    """Decode a JSON object whose `game` and `seq` are already known to be usable."""
    type_ = obj.get("type")
    if not isinstance(type_, str) or type_ not in _ALLOWED:
        return Decoded(None, [f"unknown event type {type_!r} (expected one of {', '.join(_FIELDS)})"])
    reader = _Reader(obj, type_)
    allowed = _ALLOWED[type_]
    if not allowed.issuperset(obj):
        for key in obj:
            if key not in allowed and not key.startswith("x_"):
                reader.issues.append(f"{type_}: unknown field '{key}' (producer extensions start with 'x_')")
    ts = obj.get("ts")
    if ts is not None and not (isinstance(ts, str) and TS_RE.fullmatch(ts)):
        reader.issues.append(f"{type_}: 'ts' must be an RFC 3339 timestamp with offset, got {ts!r}")
        ts = None
    try:
        event = _DECODERS[type_](reader, game, seq, ts)
    except SetAside:
        return Decoded(None, reader.issues)
    return Decoded(event, reader.issues)


def _decode_header(r: _Reader, game: str, seq: int, ts: str | None) -> Header:
    obj = r.obj
    players = obj.get("players")
    return Header(
        game, seq, ts,
        format=obj.get("format"),  # type: ignore[arg-type]  # judged by the validator
        ruleset=obj.get("ruleset"),  # type: ignore[arg-type]
        players=tuple(players) if isinstance(players, list) else players,  # type: ignore[arg-type]
        options=obj.get("options"),
        mode=obj.get("mode"),
        decks=obj.get("decks"),
        match=obj.get("match"),
        meta=obj.get("meta"),
    )


def _decode_deal(r: _Reader, game: str, seq: int, ts: str | None) -> Deal:
    hand = r.positive_int("hand")
    dealer = r.player("dealer")
    raw_hands = r.required("hands")
    if not isinstance(raw_hands, dict):
        r.issues.append(f"deal: 'hands' must map player ids to lists of cards, got {raw_hands!r}")
        raise SetAside
    hands: dict[str, tuple[str, ...]] = {}
    for player, cards in raw_hands.items():
        if not isinstance(cards, list):
            r.issues.append(f"deal: hands[{player!r}] must be a list of cards, got {cards!r}")
            raise SetAside
        hands[player] = tuple(r.card(c, f"hands[{player!r}][{i}]") for i, c in enumerate(cards))
    starter: str | None = None
    starter_unreadable = False
    raw_starter = r.obj.get("starter")
    if raw_starter is not None:
        if isinstance(raw_starter, str) and raw_starter in CARD_SET:
            starter = raw_starter
        else:
            try:
                starter = repair_card(raw_starter)
                r.issues.append(f"deal: starter {raw_starter!r} is not notation; write {starter!r}")
            except CardSpellingError:
                starter_unreadable = True
    stock = r.cards("stock", required=False)
    return Deal(game, seq, ts, hand, dealer, hands, starter, starter_unreadable, stock)


def _decode_play(r: _Reader, game: str, seq: int, ts: str | None) -> Play:
    player = r.player()
    card = r.card(r.required("card"), "card")
    suit: str | None = None
    suit_unreadable = False
    raw_suit = r.obj.get("suit")
    if raw_suit is not None:
        if isinstance(raw_suit, str) and len(raw_suit) == 1 and raw_suit in SUITS:
            suit = raw_suit
        else:
            try:
                suit = repair_suit(raw_suit)
                r.issues.append(f"play: suit {raw_suit!r} is not notation; write {suit!r}")
            except CardSpellingError:
                suit_unreadable = True
    raw_target = r.obj.get("target")
    target = raw_target if isinstance(raw_target, str) else None
    return Play(game, seq, ts, player, card, suit, suit_unreadable, target, raw_target is not None)


def _decode_draw(r: _Reader, game: str, seq: int, ts: str | None) -> Draw:
    player = r.player()
    cards = r.cards("cards")
    assert cards is not None
    return Draw(game, seq, ts, player, cards)


def _decode_pass(r: _Reader, game: str, seq: int, ts: str | None) -> Pass:
    return Pass(game, seq, ts, r.player())


def _decode_announce(r: _Reader, game: str, seq: int, ts: str | None) -> Announce:
    player = r.player()
    call = r.required("call")
    if not isinstance(call, str) or call not in CALLS:
        r.issues.append(f"announce: 'call' must be \"last_card\", got {call!r}")
        call = str(call)
    return Announce(game, seq, ts, player, call)


def _decode_penalty(r: _Reader, game: str, seq: int, ts: str | None) -> Penalty:
    player = r.player()
    raw_cards = r.required("cards")
    if not isinstance(raw_cards, list):
        r.issues.append(f"penalty: 'cards' must be a list of one card, got {raw_cards!r}")
        raise SetAside
    cards = tuple(r.card(v, f"cards[{i}]") for i, v in enumerate(raw_cards))
    if len(cards) != 1:
        r.issues.append(f"penalty: 'cards' must hold exactly one card, got {len(cards)}")
    reason = r.required("reason")
    if not isinstance(reason, str) or reason not in PENALTY_REASONS:
        r.issues.append(
            f"penalty: unknown reason {reason!r} (expected one of {', '.join(sorted(PENALTY_REASONS))})"
        )
        raise SetAside
    return Penalty(game, seq, ts, player, cards, reason)


def _decode_reshuffle(r: _Reader, game: str, seq: int, ts: str | None) -> Reshuffle:
    raw = r.obj.get("stock")
    stock: tuple[str, ...] | None = None
    if raw is not None:
        if not isinstance(raw, list):
            r.issues.append(f"reshuffle: 'stock' must be a list of cards, got {raw!r}")
            raise SetAside
        stock = tuple(r.card(v, f"stock[{i}]") for i, v in enumerate(raw))
    return Reshuffle(game, seq, ts, stock)


def _decode_end(r: _Reader, game: str, seq: int, ts: str | None) -> End:
    hand = r.positive_int("hand")
    return End(game, seq, ts, hand, r.player_list("winners"), r.points_map("scores"), r.player_list("order"))


def _decode_result(r: _Reader, game: str, seq: int, ts: str | None) -> Result:
    return Result(game, seq, ts, r.points_map("totals"), r.player_list("winners"))


def _decode_abort(r: _Reader, game: str, seq: int, ts: str | None) -> Abort:
    reason = r.obj.get("reason")
    if reason is not None and not isinstance(reason, str):
        r.issues.append(f"abort: 'reason' must be text, got {reason!r}")
        reason = str(reason)
    return Abort(game, seq, ts, reason)


_DECODERS: dict[str, Any] = {
    "game": _decode_header,
    "deal": _decode_deal,
    "play": _decode_play,
    "draw": _decode_draw,
    "pass": _decode_pass,
    "announce": _decode_announce,
    "penalty": _decode_penalty,
    "reshuffle": _decode_reshuffle,
    "end": _decode_end,
    "result": _decode_result,
    "abort": _decode_abort,
}


def encode(event: Event) -> dict[str, Any]:
    """The JSON object for `event`, as a producer writes it (absent optionals omitted)."""
    out: dict[str, Any] = {"game": event.game, "seq": event.seq, "type": event.type}
    if event.ts is not None:
        out["ts"] = event.ts
    match event:
        case Header():
            out.update(format=event.format, ruleset=event.ruleset, players=list(event.players))
            for name in ("options", "mode", "decks", "match", "meta"):
                value = getattr(event, name)
                if value is not None:
                    out[name] = value
        case Deal():
            out.update(hand=event.hand, dealer=event.dealer)
            out["hands"] = {p: list(cs) for p, cs in event.hands.items()}
            if event.starter is not None:
                out["starter"] = event.starter
            if event.stock is not None:
                out["stock"] = list(event.stock)
        case Play():
            out.update(player=event.player, card=event.card)
            if event.suit is not None:
                out["suit"] = event.suit
            if event.target is not None:
                out["target"] = event.target
        case Draw():
            out.update(player=event.player, cards=list(event.cards))
        case Pass():
            out["player"] = event.player
        case Announce():
            out.update(player=event.player, call=event.call)
        case Penalty():
            out.update(player=event.player, cards=list(event.cards), reason=event.reason)
        case Reshuffle():
            if event.stock is not None:
                out["stock"] = list(event.stock)
        case End():
            out["hand"] = event.hand
            if event.winners is not None:
                out["winners"] = list(event.winners)
            if event.scores is not None:
                out["scores"] = dict(event.scores)
            if event.order is not None:
                out["order"] = list(event.order)
        case Result():
            if event.totals is not None:
                out["totals"] = dict(event.totals)
            if event.winners is not None:
                out["winners"] = list(event.winners)
        case Abort():
            if event.reason is not None:
                out["reason"] = event.reason
    return out
