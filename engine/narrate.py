"""Events and states in words, for people: the replay CLI, the dashboard and reports."""

from __future__ import annotations

from typing import Any

from engine.cards import SUIT_NAMES, pretty, pretty_cards
from engine.events import (
    Abort,
    Announce,
    Deal,
    Draw,
    End,
    Event,
    Header,
    Pass,
    Penalty,
    Play,
    Reshuffle,
    Result,
)


def describe_event(event: Event | None, raw: dict[str, Any] | None = None) -> str:
    """One line saying what the event records."""
    match event:
        case None:
            kind = raw.get("type") if raw else None
            return f"unreadable {kind or 'line'} (set aside)"
        case Header():
            players = ", ".join(event.players) if isinstance(event.players, tuple) else "?"
            return f"game {event.game}: {event.ruleset} for {players}"
        case Deal():
            starter = f", starter {pretty(event.starter)}" if event.starter else ""
            return f"hand {event.hand} dealt by {event.dealer}{starter}"
        case Play():
            text = f"{event.player} plays {pretty(event.card)}"
            if event.suit:
                text += f" and declares {SUIT_NAMES[event.suit]}"
            if event.target:
                text += f", targeting {event.target}"
            return text
        case Draw():
            n = len(event.cards)
            return f"{event.player} draws {n} card{'s' if n != 1 else ''} ({pretty_cards(event.cards)})"
        case Pass():
            return f"{event.player} passes"
        case Announce():
            return f"{event.player} calls last card"
        case Penalty():
            return f"{event.player} takes a {event.reason} penalty ({pretty_cards(event.cards)})"
        case Reshuffle():
            return "the discard pile is turned into a new stock"
        case End():
            return f"hand {event.hand} ends"
        case Result():
            return "the match result"
        case Abort():
            return "the game is aborted" + (f": {event.reason}" if event.reason else "")
    return event.type if event is not None else "?"


def describe_state(state: dict[str, Any] | None) -> list[str]:
    """The state after a step, as a few lines of text."""
    if not state or state.get("hand") is None:
        return ["(no hand dealt yet)"]
    lines = []
    top = state["pile_top"]
    suit = state["current_suit"]
    lines.append(
        f"pile: {pretty(top) if top else '(empty)'}  suit: {SUIT_NAMES.get(suit or '', '-')}  "
        f"direction: {state['direction']}  stock: {state['stock_size']}"
    )
    extras = []
    if state["pending_total"]:
        extras.append(f"pending 7 total: {state['pending_total']}")
    if state["follow_card"]:
        extras.append(f"follow-up on {pretty(state['follow_card'])}")
    if state["gift_target"]:
        extras.append(f"gift owed by {state['gift_target']}")
    if state["call_due"]:
        extras.append("last-card call due: " + ", ".join(state["call_due"]))
    if state["waiting_sevens"]:
        extras.append("tarkesh waiting: " + ", ".join(state["waiting_sevens"]))
    if state["finished"]:
        extras.append("finished: " + ", ".join(state["finished"]))
    if extras:
        lines.append("; ".join(extras))
    for player, cards in state["hands"].items():
        marker = "▶ " if player == state["mover"] else "  "
        lines.append(f"{marker}{player:<12} {pretty_cards(cards) or '(no cards)'}")
    legal = state.get("legal")
    if state.get("outcome"):
        outcome = state["outcome"]
        lines.append(f"decided: winners {', '.join(outcome['winners'])} ({outcome['reason']})")
    elif legal:
        lines.append(f"to move: {legal['text']}")
    return lines
