"""The haftkhabis/1 events as immutable values for Python code: the simulator writes
them, the replay, the narration and the dashboard read them.

Reading a log line (JSON, the notation's field checks and repairs) and judging it against
the rules are the native core's job (`engine._core`), done once there. `from_encoded`
builds an event from the core's encoding of a line it has read; `encode` gives the JSON
object a producer writes for an event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

FORMAT = "haftkhabis/1"


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
    stock: tuple[str, ...] | None = None
    type: ClassVar[str] = "deal"


@dataclass(frozen=True, slots=True)
class Play(Event):
    player: str
    card: str
    suit: str | None = None
    target: str | None = None
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


def from_encoded(obj: Mapping[str, Any]) -> AnyEvent:
    """The event for one line as the native core encodes it (`step["event"]` of
    `engine._core` replays: every field already checked, repaired and in notation).

    Checking a line is the core's job (notation.md's field checks live in
    `engine/core/haftkhabis-core/src/notation.rs`, once); this only builds the value, so
    it trusts its input and raises `ValueError` for anything but the core's encoding."""
    try:
        return _FROM_ENCODED[obj["type"]](obj, obj["game"], obj["seq"], obj.get("ts"))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not an event as the core encodes it: {obj!r}") from exc


def _cards(value: Any) -> tuple[str, ...]:
    return tuple(value)


def _optional_cards(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


_FROM_ENCODED: dict[str, Callable[[Mapping[str, Any], str, int, str | None], AnyEvent]] = {
    "game": lambda o, g, s, t: Header(
        g, s, t, o["format"], o["ruleset"],
        tuple(o["players"]) if isinstance(o["players"], list) else o["players"],
        o.get("options"), o.get("mode"), o.get("decks"), o.get("match"), o.get("meta")),
    "deal": lambda o, g, s, t: Deal(
        g, s, t, o["hand"], o["dealer"], {p: _cards(cs) for p, cs in o["hands"].items()},
        o.get("starter"), _optional_cards(o.get("stock"))),
    "play": lambda o, g, s, t: Play(g, s, t, o["player"], o["card"], o.get("suit"), o.get("target")),
    "draw": lambda o, g, s, t: Draw(g, s, t, o["player"], _cards(o["cards"])),
    "pass": lambda o, g, s, t: Pass(g, s, t, o["player"]),
    "announce": lambda o, g, s, t: Announce(g, s, t, o["player"], o["call"]),
    "penalty": lambda o, g, s, t: Penalty(g, s, t, o["player"], _cards(o["cards"]), o["reason"]),
    "reshuffle": lambda o, g, s, t: Reshuffle(g, s, t, _optional_cards(o.get("stock"))),
    "end": lambda o, g, s, t: End(
        g, s, t, o["hand"], _optional_cards(o.get("winners")), o.get("scores"),
        _optional_cards(o.get("order"))),
    "result": lambda o, g, s, t: Result(g, s, t, o.get("totals"), _optional_cards(o.get("winners"))),
    "abort": lambda o, g, s, t: Abort(g, s, t, o.get("reason")),
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
