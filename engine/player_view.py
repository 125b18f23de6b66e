"""What one player could see at the table: the one place a player view is computed.

Every surface that shows a game to a player takes its data through these functions and
renders what comes back — the dispute report (`haftkhabis report --player`, the dashboard's
download, the API's report), the API's game, step and what-if views, the dashboard's
replay, scores and what-if panels in player view. A renderer never decides what a player
may see: what is hidden here is not in the data it is given.

The rule (docs/api.md, "A player's view"; docs/decisions.md):

- their own cards, at every moment (dealt, drawn, a 2's gift, a penalty card);
- what the whole table sees: every card played (the discard pile), the starter, the 7s
  laid aside in a persian settlement, everyone's hand size, whose turn it is;
- not another player's cards: their hand, the cards they draw (a draw, a penalty, a 2's
  gift, a settlement draw) — those show as a count;
- never the stock: its order (a deal's or a reshuffle's `stock`) or what it holds;
- not another player's legal moves, nor why they drew or passed (both read their hand);
- of a violation, its code and the rule's explanation; the engine's message only for the
  viewer's own foul (another's message can name the cards they hold, a stock mismatch's
  the stock's top);
- at a hand's end, the others' points but not their cards;
- no server paths: file names and line numbers, set-aside lines as read, the lines no
  game could use, findings not tied to a line, producer extensions (`x_…` fields);
- a what-if branch plays only the viewer's own moves, and stops before a draw (what it
  would take is the stock's order);
- of a move-quality analysis, only their own decisions and their own deal's value (the
  rollouts of a decision read only its decider's information set).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from engine.replay import GameReplay, HandScore, ReplayStep, SetAsideLine
from engine.violations import FOULS, Violation

if TYPE_CHECKING:
    from engine.analysis import GameAnalysis
    from engine.whatif import WhatIf

#: lines whose cards only their own player sees (a deal and a reshuffle: nobody but the
#: dealer's deck; the player's own hand of a deal is put back by `public_event`)
PRIVATE_KINDS = frozenset({"draw", "penalty", "deal", "reshuffle"})
#: lines whose reason reads their player's hand (`engine.narrate.MoveReasons`)
HAND_READING_KINDS = frozenset({"draw", "penalty", "pass"})


def private(kind: str, actor: str | None, viewer: str | None) -> bool:
    """Whether a line of `kind` by `actor` holds cards `viewer` did not see (None: the
    support view, which sees everything)."""
    if viewer is None:
        return False
    if kind in ("deal", "reshuffle"):
        return True
    return kind in PRIVATE_KINDS and actor != viewer


def public_event(raw: Mapping[str, Any] | None, viewer: str | None) -> dict[str, Any] | None:
    """The logged line as `viewer` saw it: a deal with their own hand only and no stock,
    another's drawn or penalty cards `None`, a reshuffle without its order, no producer
    extensions. None: the support view, the line as logged."""
    if raw is None:
        return None
    if viewer is None:
        return dict(raw)
    event = {k: v for k, v in raw.items() if not k.startswith("x_")}
    kind = event.get("type")
    if kind == "deal":
        hands = event.get("hands")
        if isinstance(hands, dict):
            event["hands"] = {p: (cards if p == viewer else None) for p, cards in hands.items()}
        elif "hands" in event:
            event["hands"] = None
        if "stock" in event:
            event["stock"] = None
    elif kind in ("draw", "penalty") and event.get("player") != viewer:
        if "cards" in event:
            event["cards"] = None
    elif kind == "reshuffle" and "stock" in event:
        event["stock"] = None
    return event


def public_state(state: Mapping[str, Any] | None, viewer: str | None) -> dict[str, Any] | None:
    """The table as `viewer` saw it: their own hand, the others' as `None` (`hand_sizes`
    counts every hand), the legal moves only on their own turn. Everything else in a state
    (the pile, the suit, whose turn, the 7s laid aside, the outcome's points) is public."""
    if state is None:
        return None
    out = dict(state)
    hands: Mapping[str, Sequence[str] | None] = state.get("hands") or {}
    sizes: Mapping[str, int] = state.get("hand_sizes") or {}
    out["hand_sizes"] = {p: len(cards) if cards is not None else sizes.get(p, 0)
                         for p, cards in hands.items()}
    if viewer is None:
        return out
    out["hands"] = {p: (list(cards) if p == viewer and cards is not None else None)
                    for p, cards in hands.items()}
    legal = state.get("legal")
    if legal is not None and legal.get("player") != viewer:
        out["legal"] = None
    return out


def public_violation(violation: Violation, viewer: str | None) -> Violation:
    """A violation as `viewer` may read it: its message only when it is their own foul,
    no file or line."""
    if viewer is None:
        return violation
    own = violation.player == viewer and violation.code in FOULS
    return dataclasses.replace(violation, message=violation.message if own else None,
                               file=None, line=None)


def public_text(step: ReplayStep, viewer: str | None) -> str:
    """What the line records, in words, as `viewer` saw it: another's draw is a count."""
    if not private(step.kind, step.actor, viewer) or step.kind in ("deal", "reshuffle"):
        return step.text  # a deal's and a reshuffle's words name no card but the starter
    cards = step.raw.get("cards") if step.raw else None
    n = len(cards) if isinstance(cards, list) else 1
    noun = "a penalty card" if step.kind == "penalty" else f"{n} card{'s' if n != 1 else ''}"
    return f"{step.actor} draws {noun}"


def public_why(step: ReplayStep, viewer: str | None) -> str | None:
    """Why the move happened, unless the reason reads another player's hand."""
    if viewer is not None and step.actor != viewer and step.kind in HAND_READING_KINDS:
        return None
    return step.why


def public_step(step: ReplayStep, viewer: str | None) -> ReplayStep:
    """One replayed line as `viewer` saw it (see the module's rule)."""
    if viewer is None:
        return step
    hidden = private(step.kind, step.actor, viewer)
    return dataclasses.replace(
        step,
        file=None, line=None,
        event=None if hidden else step.event,
        raw=public_event(step.raw, viewer),
        text=public_text(step, viewer),
        violations=tuple(public_violation(v, viewer) for v in step.violations),
        before=public_state(step.before, viewer),
        after=public_state(step.after, viewer),
        why=public_why(step, viewer),
        set_aside=tuple(SetAsideLine(a.seq, None, None, None,
                                     tuple(public_violation(v, viewer) for v in a.violations))
                        for a in step.set_aside),
        viewer=viewer,
    )


def public_score(score: HandScore, viewer: str | None) -> HandScore:
    """A hand's scoring as `viewer` saw it: the others' points, not their cards."""
    if viewer is None:
        return score
    return dataclasses.replace(score, players=tuple(
        p if p.player == viewer else dataclasses.replace(p, cards=None) for p in score.players))


def public_left_cards(player: str, cards: Sequence[str] | None, viewer: str | None) -> list[str] | None:
    """A player's cards left at a hand's end (a warehouse row's `left_cards`), when
    `viewer` may see them."""
    if cards is None or (viewer is not None and player != viewer):
        return None
    return list(cards)


def public_replay(replay: GameReplay, viewer: str | None) -> GameReplay:
    """The whole game as `viewer` saw it: every step, every hand's scoring, the game's
    violations; no line errors, no findings outside a line, no file names. ValueError when
    `viewer` did not play the game, or `replay` is already another player's view."""
    if viewer is None or replay.viewer == viewer:
        return replay
    if replay.viewer is not None:
        raise ValueError(f"this replay is {replay.viewer}'s view, not {viewer}'s")
    if viewer not in replay.players:
        raise ValueError(f"{viewer!r} is not a player of game {replay.game} "
                         f"(players: {', '.join(replay.players)})")
    steps = [public_step(s, viewer) for s in replay.steps]
    by_hand: dict[int, list[ReplayStep]] = {}
    for step in steps:
        by_hand.setdefault(step.hand, []).append(step)
    return dataclasses.replace(
        replay,
        steps=steps,
        violations=[public_violation(v, viewer) for v in replay.violations],
        game_violations=[],
        scores=[public_score(s, viewer) for s in replay.scores],
        errors=[],
        outline=[(seq, hand, None, None) for seq, hand, _, _ in replay.outline],
        viewer=viewer,
        _by_hand=by_hand,
    )


# ---------------------------------------------------------------------------- what-if


def branch_stop(viewer: str | None, mover: str, kind: str, count: int) -> str | None:
    """Why a what-if branch in `viewer`'s view cannot play `mover`'s `kind` move (None:
    it can): another player's move reads their hand, a draw the stock's order."""
    if viewer is None:
        return None
    if mover != viewer:
        return f"{mover} is to move: their cards are not in {viewer}'s view"
    if kind == "draw":
        return (f"{viewer} would draw {count} card{'s' if count != 1 else ''}: which ones is the "
                "stock's order, not in a player's view")
    return None


def public_whatif(result: WhatIf, viewer: str | None) -> WhatIf:
    """A what-if as `viewer` may see it: the states at the branch's start and along it,
    the recorded line and its violations, and what was and is legal only on their own
    turn; the cards a draw could take not named (they are every card the player has not
    seen)."""
    if viewer is None:
        return result
    from engine.whatif import BranchStep

    before = public_state(result.before, viewer)
    own_turn = before is not None and (before.get("legal") or {}).get("player") == viewer
    steps = tuple(BranchStep(s.seq, s.player, s.move, public_event(s.line, viewer) or {},
                             s.drawn if s.player == viewer else (), public_state(s.state, viewer) or {},
                             s.card_count)
                  for s in result.steps)
    end = steps[-1].state if steps else before
    end_own_turn = end is not None and (end.get("legal") or {}).get("player") == viewer
    return dataclasses.replace(
        result,
        recorded=public_event(result.recorded, viewer),
        recorded_violations=tuple(_public_info(v, viewer) for v in result.recorded_violations),
        before=before,
        alternatives=result.alternatives if own_turn else (),
        steps=steps,
        refused=None if result.refused is None else dataclasses.replace(
            result.refused, violations=tuple(_public_info(v, viewer) for v in result.refused.violations)),
        next_moves=result.next_moves if end_own_turn else (),
        unknown_cards=(),  # in a player view, the cards they have not seen are not named
        viewer=viewer,
    )


def _public_info(info: Mapping[str, Any], viewer: str) -> Any:
    """A violation as the core reports it (`ViolationInfo`), for `viewer`."""
    own = info.get("player") == viewer and str(info.get("code")) in {c.value for c in FOULS}
    return {**info, "message": info.get("message") if own else None, "file": None, "line": None}


# ---------------------------------------------------------------------------- analysis


def public_analysis(result: GameAnalysis, viewer: str | None) -> dict[str, Any]:
    """A game's move-quality analysis (`engine.analysis`) as `viewer` may see it: only
    their own decisions (another's lists the cards that player held) and their own deal's
    value (another's tells how strong a hand they did not see was); no luck, which is
    measured against the table's deal values. Each decision's figures read only that
    decider's information set, so a player's own are theirs to see."""
    body = result.to_json()
    if viewer is None:
        return {**body, "viewer": None}
    if viewer not in result.players:
        raise ValueError(f"{viewer!r} is not a player of game {result.game} "
                         f"(players: {', '.join(result.players)})")
    return {
        **body,
        "decisions": [d for d in body["decisions"] if d["player"] == viewer],
        "deals": [d for d in body["deals"] if d["player"] == viewer],
        "luck": [],
        "viewer": viewer,
    }
