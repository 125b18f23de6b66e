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
    recent = state.get("pile_recent") or []
    if len(recent) > 1:
        extras.append("last played: " + pretty_cards(recent[-6:]))
    if state.get("laid_aside"):
        extras.append("7s laid aside: " + pretty_cards(state["laid_aside"]))
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


# ---------------------------------------------------------------------------- why a move happened


def _who_played(plays: list[tuple[str, str]]) -> str:
    """ "neda's 7♦ and parisa's 7♠" """
    named = [f"{player}'s {pretty(card)}" for player, card in plays]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def _next_seat(active: list[str], player: str, direction: str | None) -> int | None:
    if player not in active:
        return None
    step = -1 if direction == "counter-clockwise" else 1
    return (active.index(player) + step) % len(active)


class MoveReasons:
    """Says why each recorded line happened, from what the engine knew of it: the line's
    fact (`draw_kind`, the phase before it, whose turn it was, a 2's target) and the
    states before and after it (the pending total, the follow-up card, the next mover).

    Feed it a game's recorded steps in order (`Verdict.steps()`); `effects` is the
    ruleset's rank → effect table (`_core.rulesets()`), which names the skip card. The
    only memory it keeps is who played what: which plays raised the pending total (the
    7s a forced draw pays for), who gave a 2 to whom, and a skip card's victims.

    Of a line it reads only the raw line's `type`, `player`, `card`, `cards` and `reason`;
    the fact's `phase`, `draw_kind`, `expected` and `gift_to`; and of the states around it
    the pending total, the follow-up card, the next mover, the players still in, the
    direction and the legal moves' `player`, `play` and `pass`. So the lines before one
    being explained may be fed as just that (`Verdict.narration`), and only from the last
    deal before it (`resets`).
    """

    #: the lines it explains; any other line's reason is None, whatever came before it
    EXPLAINED = ("play", "draw", "pass", "penalty")

    @staticmethod
    def explains(raw: dict[str, Any] | None) -> bool:
        """Whether a line of this kind can have a reason (`why` reads the lines before it)."""
        return bool(raw) and raw is not None and raw.get("type") in MoveReasons.EXPLAINED

    @staticmethod
    def resets(raw: dict[str, Any] | None) -> bool:
        """Whether the line makes it forget everything (a `deal`): the reasons of the lines
        after it are the same whatever came before it, so a caller explaining one line
        need feed it only the lines from the last deal before that line."""
        return bool(raw) and raw is not None and raw.get("type") == "deal"

    def __init__(self, effects: dict[str, str] | None = None) -> None:
        self.effects = effects or {}
        self.stack: list[tuple[str, str]] = []  # (player, card) of the plays behind the total
        self.gifts: dict[str, tuple[str, str]] = {}  # target -> (giver, 2)
        self.skipped: dict[str, tuple[str, str, list[str]]] = {}  # next mover -> (by, card, skipped)
        self.last_play: dict[str, str] = {}  # card -> the player who last played it

    def why(
        self,
        fact: dict[str, Any] | None,
        raw: dict[str, Any] | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
    ) -> str | None:
        """The reason for one line, or None when there is nothing to explain."""
        kind = raw.get("type") if raw else None
        if kind == "deal":  # `resets`
            self.stack.clear()
            self.gifts.clear()
            self.skipped.clear()
            self.last_play.clear()
        if fact is None or raw is None or kind not in self.EXPLAINED:  # `explains`
            return None
        player = raw.get("player")
        if not isinstance(player, str):
            return None
        parts: list[str] = []
        expected = fact.get("expected")
        if expected and expected != player:
            parts.append(f"it was {expected}'s turn")
        skip = self.skipped.pop(player, None)
        if skip is not None and expected == player:
            by, card, victims = skip
            parts.append(f"{', '.join(victims)} {'was' if len(victims) == 1 else 'were'} skipped by "
                         f"{by}'s {pretty(card)}")
        if kind == "play":
            parts.extend(self._play(fact, raw, player, before, after))
        elif kind in ("draw", "penalty"):
            parts.extend(self._draw(fact, raw, player, before, after))
        elif kind == "pass":
            legal = (before or {}).get("legal") or {}
            if legal.get("player") == player and legal.get("pass") and not legal.get("play"):
                parts.append("nothing to play after drawing: passing was the only move")
        if after is not None and not after.get("pending_total"):
            self.stack.clear()
        return "; ".join(parts) or None

    def _play(self, fact: dict[str, Any], raw: dict[str, Any], player: str,
              before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
        card = raw.get("card")
        if not isinstance(card, str):
            return []
        out: list[str] = []
        phase = fact.get("phase")
        follow = (before or {}).get("follow_card")
        if phase in ("follow", "follow_drawn") and isinstance(follow, str):
            by = self.last_play.get(follow, player)
            out.append(f"follows {'their own' if by == player else by + chr(39) + 's'} {pretty(follow)}")
        elif phase in ("seven", "deflect") and self.stack:
            out.append(f"answers {_who_played(self.stack[-1:])}")
        pending_before = int((before or {}).get("pending_total") or 0)
        pending_after = int((after or {}).get("pending_total") or 0)
        if pending_after > pending_before:
            self.stack.append((player, card))
            out.append(f"the pending total is now {pending_after}")
        target = fact.get("gift_to")
        if isinstance(target, str):
            self.gifts[target] = (player, card)
            out.append(f"its gift goes to {target}")
        if self.effects.get(card[0]) == "skip" and after is not None:
            victims = self._skipped(player, after)
            if victims:
                self.skipped[after["mover"]] = (player, card, victims)
                out.append(f"skips {', '.join(victims)}")
        self.last_play[card] = player
        return out

    @staticmethod
    def _skipped(player: str, after: dict[str, Any]) -> list[str]:
        """The players between `player` and the next mover, in the direction of play."""
        active = list(after.get("active") or [])
        mover = after.get("mover")
        if not mover or mover == player or player not in active or mover not in active:
            return []
        victims: list[str] = []
        seat = _next_seat(active, player, after.get("direction"))
        while seat is not None and active[seat] not in (mover, player) and len(victims) < len(active):
            victims.append(active[seat])
            seat = _next_seat(active, active[seat], after.get("direction"))
        return victims

    def _draw(self, fact: dict[str, Any], raw: dict[str, Any], player: str,
              before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
        cards = raw.get("cards")
        n = len(cards) if isinstance(cards, list) else 1
        drawn = f"draws {n}"
        match fact.get("draw_kind"):
            case "seven_total":
                total = (before or {}).get("pending_total")
                if self.stack:
                    text = f"{drawn}: the total of {_who_played(self.stack)}"
                else:
                    text = f"{drawn}: the pending 7 total"
                if total and total != n:
                    text += f" (the total was {total})"
                return [text]
            case "gift":
                giver = self.gifts.pop(player, None)
                return [f"{drawn}: {giver[0]}'s {pretty(giver[1])} gift" if giver else f"{drawn}: a 2's gift"]
            case "failed_follow":
                follow = (before or {}).get("follow_card")
                if isinstance(follow, str):
                    by = self.last_play.get(follow, player)
                    whose = "their own" if by == player else f"{by}'s"
                    return [f"{drawn}: could not follow {whose} {pretty(follow)}"]
                return [f"{drawn}: could not make the follow-up"]
            case "settlement":
                return [f"{drawn} in the settlement"]
            case "penalty":
                reason = raw.get("reason")
                return [f"a penalty{' for ' + str(reason) if reason else ''}"]
            case "voluntary":
                legal = (before or {}).get("legal") or {}
                playable = legal.get("play") if legal.get("player") == player else None
                if playable:
                    return [f"chose to draw while holding a playable card ({pretty_cards(playable)})"]
                return ["nothing to play: drawing was the only move"]
            case "opening":
                return ["the opening draw"]
            case "not_allowed":
                return ["a draw the rules do not allow here"]
        return []
