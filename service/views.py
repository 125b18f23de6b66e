"""What each read endpoint answers, built from the dashboard's data layer and the replay,
and what a player-scoped token may see of it.

A player's view hides every card another player holds: their hands in the state, the
dealt hands and the stock of a `deal` line, another's drawn and penalty cards, the order
of a reshuffled stock, the legal moves of someone else's turn (they are cards in that
hand), the messages of violations about someone else (they can name those cards) and their
cards left at a hand's end. Producer extensions (`x_…` fields) are dropped from a player's
view too. The dashboard's player view hides the same (`public_text` is its own).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from dashboards import data
from dashboards.components import public_text
from dashboards.game_replay import ReplayStep
from engine.cards import pretty_cards
from engine.violations import EXPLANATIONS, Code, Violation
from service import models
from service.warehouse import Replayed

#: the lines that record a player's decision (and so have a decision to explain)
MOVES = ("play", "draw", "pass")

DRAW_KINDS = {
    "seven_total": "the draw of a pending 7 total",
    "gift": "a 2's gift",
    "failed_follow": "the draw after an 8 without a follow",
    "settlement": "a settlement draw for laid-aside 7s",
    "penalty": "a table penalty's card",
    "voluntary": "a draw in a normal turn",
    "opening": "an opening draw (until a club)",
    "not_allowed": "a draw where none is allowed",
}


class BadCursor(ValueError):
    """A `cursor` this service did not hand out (or one of another listing)."""


# ---------------------------------------------------------------------------- cursors


def encode_cursor(kind: str, key: Sequence[Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps([kind, *key])).decode().rstrip("=")


def decode_cursor(cursor: str, kind: str, types: Sequence[type]) -> tuple[Any, ...]:
    """The key a cursor holds, checked against the listing's key types."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = orjson.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeEncodeError):
        raise BadCursor("the cursor is not one this API handed out") from None
    if (not isinstance(value, list) or len(value) != len(types) + 1 or value[0] != kind
            or not all(isinstance(v, t) and not isinstance(v, bool)
                       for v, t in zip(value[1:], types, strict=True))):
        raise BadCursor(f"the cursor is not one of this listing ({kind})")
    return tuple(value[1:])


# ---------------------------------------------------------------------------- redaction


def public_event(raw: Mapping[str, Any] | None, viewer: str | None) -> dict[str, Any] | None:
    """The logged line as `viewer` may see it (None: support, the line as logged)."""
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


def options(legal: Mapping[str, Any] | None, viewer: str | None) -> models.Options | None:
    """The legality view, when `viewer` may see it (their own turn, or support)."""
    if not legal or (viewer is not None and legal.get("player") != viewer):
        return None
    return models.Options.model_validate(legal)


def table_state(state: Mapping[str, Any] | None, viewer: str | None) -> models.TableState | None:
    if not state:
        return None
    hands: dict[str, list[str]] = state.get("hands") or {}
    fields = dict(state)
    fields["hand_sizes"] = {p: len(cards) for p, cards in hands.items()}
    fields["hands"] = {p: (list(cards) if viewer is None or p == viewer else None)
                       for p, cards in hands.items()}
    return models.TableState.model_validate(fields)


def violation_view(v: Violation, viewer: str | None, *, hidden: bool = False,
                   hand: int | None = None) -> models.ViolationView:
    private = viewer is not None and (hidden or v.player != viewer)
    return models.ViolationView(
        seq=v.seq, hand=hand, code=v.code, player=v.player,
        message=None if private else v.message,
        file=None if viewer is not None else v.file,
        line=None if viewer is not None else v.line,
        explanation=EXPLANATIONS.get(v.code, ""),
    )


# ---------------------------------------------------------------------------- a game


def dashboard_link(base: str, game: str, *, hand: int | None = None, step: int | None = None,
                   viewer: str | None = None) -> str:
    """The dashboard's deep link (`/replay?game=…&hand=…&step=…`, plus the player view)."""
    params = {"game": game}
    if hand is not None:
        params["hand"] = str(hand)
    if step is not None:
        params["step"] = str(step)
    if viewer is not None:
        params |= {"view": "player", "player": viewer}
    return f"{base.rstrip('/')}/replay?{urlencode(params)}"


def game_path(game: str) -> str:
    return f"/v1/games/{quote(game, safe='')}"


def game_view(reader: data.Reader, game: str, viewer: str | None, dashboard: str,
              row: Mapping[str, Any] | None = None) -> models.GameView | None:
    """The game as the warehouse holds it (None: no such game); `row` is its `games` row
    when the caller has read it already."""
    row = row if row is not None else data.game_row(reader, game)
    if row is None:
        return None
    hand_players: dict[int, list[models.HandPlayerView]] = {}
    for p in data.game_hand_players(reader, game).to_dicts():
        if viewer is not None and p["player"] != viewer:
            p["left_cards"] = None
        hand_players.setdefault(p["hand"], []).append(models.HandPlayerView.model_validate(p))
    hands = [models.HandView.model_validate({**h, "players": hand_players.get(h["hand"], [])})
             for h in data.game_hands(reader, game).to_dicts()]
    violations = []
    for v in data.game_violations(reader, game).to_dicts():
        violation = Violation(v["seq"], Code(v["code"]), v["player"], v["message"], v["file"], v["line"])
        violations.append(violation_view(violation, viewer, hand=v["hand"]))
    links = {"self": game_path(game), "dashboard": dashboard_link(dashboard, game, viewer=viewer),
             "steps": game_path(game) + "/steps/{seq}"}
    if viewer is None:
        links["report"] = game_path(game) + "/hands/{hand}/report"
    return models.GameView(
        game=row["game_id"], ruleset=row["ruleset"], ruleset_declared=row["ruleset_declared"],
        mode=row["mode"], decks=row["decks"], players=list(row["players"] or []),
        options=orjson.loads(row["options"]) if row["options"] else None,
        server_build=row["server_build"], start_time=row["start_time"], end_time=row["end_time"],
        hands_dealt=row["hands"], hands_decided=row["hands_decided"], lines=row["lines"],
        ingest_batch=row["ingest_batch"],
        source_files=list(row["source_files"] or []) if viewer is None else None,
        verdict=models.GameVerdict(
            status=row["status"], complete=row["complete"], winners=row["winners"],
            totals=dict(row["totals"]) if row["totals"] is not None else None,
            violations=row["violations"] or 0),
        hands=hands, violations=violations, viewer=viewer, links=links,
    )


def _why(expected: str | None, actor: str | None, before: Mapping[str, Any] | None,
         legal: models.Options | None, kind: str) -> tuple[bool | None, str]:
    """Whether the move was forced, and why (or what the player was free to do); None
    when the viewer may not know (another player's options)."""
    if expected is None:
        return False, "no move was owed at this point (the hand is not in play)"
    if legal is None:
        return None, f"it was {expected}'s move (their options are theirs to see)"
    cards = pretty_cards(legal.play) if legal.play else ""
    pending = (before or {}).get("pending_total") or 0
    forced: bool
    if legal.gift:
        forced, why = True, f"{expected} owed the 2's gift: a draw of 1 card was the only move"
    elif legal.phase == "seven" and legal.obliged:
        forced, why = True, f"{expected} faced a 7 total of {pending} and had to answer with a 7 ({cards})"
    elif legal.phase == "seven":
        forced = not legal.play
        why = (f"{expected} faced a 7 total of {pending}: "
               + (f"play a 7 ({cards}) or draw {legal.draw}" if legal.play else f"draw {legal.draw}, with no 7 to answer"))
    elif legal.obliged:
        forced, why = True, (f"{expected} held a card they could play ({cards}): the ruleset obliges a "
                             "play, so drawing or passing was must_play")
    elif not legal.play and legal.draw is not None and not legal.may_pass:
        forced, why = True, f"{expected} had nothing to play: drawing {legal.draw} was the only move"
    elif not legal.play and legal.draw is None and legal.may_pass:
        forced, why = True, f"{expected} had nothing to play and could only pass"
    else:
        forced, why = False, f"{expected} was free to choose: {legal.text}"
    if actor is not None and actor != expected and kind in MOVES:
        why += f"; {actor} acted instead"
    return forced, why


def decision(step: ReplayStep, viewer: str | None) -> models.Decision | None:
    if step.kind not in MOVES or step.before is None or step.before.get("hand") is None:
        return None
    legal_before: Mapping[str, Any] = step.before.get("legal") or {}
    expected = legal_before.get("player")
    shown = options(legal_before, viewer) if expected is not None else None
    forced, why = _why(expected, step.actor, step.before, shown, step.kind)
    draw_kind = (step.fact or {}).get("draw_kind") if step.kind == "draw" else None
    if draw_kind in DRAW_KINDS and (viewer is None or viewer in (step.actor, expected)):
        why += f" (the engine reads the draw as {DRAW_KINDS[draw_kind]})"
    return models.Decision(expected=expected, actor=step.actor, options=shown, forced=forced,
                           why=why, draw_kind=draw_kind)


def step_view(replayed: Replayed, seq: int, viewer: str | None, dashboard: str) -> models.StepView | None:
    """The line `seq` of the game, replayed (None: the game has no such line)."""
    step = replayed.by_seq.get(seq)
    if step is None:
        return None
    replay = replayed.replay
    hidden = viewer is not None and step.kind in ("draw", "penalty", "deal", "reshuffle") \
        and step.actor != viewer
    after = step.after
    links = {
        "game": game_path(replay.game),
        "dashboard": dashboard_link(dashboard, replay.game, hand=step.hand, step=step.number, viewer=viewer),
    }
    if step.index > 0:
        links["previous"] = f"{game_path(replay.game)}/steps/{replay.steps[step.index - 1].seq}"
    if step.index + 1 < len(replay.steps):
        links["next"] = f"{game_path(replay.game)}/steps/{replay.steps[step.index + 1].seq}"
    if viewer is None and step.hand:
        links["report"] = f"{game_path(replay.game)}/hands/{step.hand}/report"
    to_move = None
    if after and after.get("hand") is not None and not after.get("outcome"):
        to_move = options(after.get("legal"), viewer)
    return models.StepView(
        game=replay.game, seq=step.seq, hand=step.hand, step=step.number,
        steps_in_hand=len(replay.hand_steps(step.hand)),
        file=step.file if viewer is None else None, line=step.line if viewer is None else None,
        kind=step.kind, actor=step.actor,
        text=public_text(step.kind, step.raw, step.text, viewer) if viewer else step.text,
        event=public_event(step.raw, viewer),
        violations=[violation_view(v, viewer, hidden=hidden, hand=step.hand) for v in step.violations],
        decision=decision(step, viewer), table=table_state(after, viewer), to_move=to_move,
        viewer=viewer, links=links,
    )


# ---------------------------------------------------------------------------- aggregates


def player_view(reader: data.Reader, player: str, dashboard: str) -> models.PlayerView | None:
    rankings = data.player_rankings(reader, player).to_dicts()
    if not rankings:
        return None
    violations = sorted(data.player_violations(reader, player).to_dicts(),
                        key=lambda v: (-v["violations"], v["ruleset"], v["code"]))
    return models.PlayerView(
        player=player,
        rulesets=[models.PlayerRanking.model_validate(r) for r in rankings],
        violations=[models.PlayerViolations.model_validate(v) for v in violations],
        links={"dashboard": f"{dashboard.rstrip('/')}/players?{urlencode({'player': player})}"},
    )


def leaderboard(reader: data.Reader, rulesets: Sequence[str], min_hands: int, cursor: str | None,
                limit: int) -> models.Page[models.LeaderboardRow]:
    after = decode_cursor(cursor, "leaderboard", (str, int)) if cursor else None
    rows = data.leaderboard_page(reader, rulesets, min_hands, after, limit + 1).to_dicts()
    items = [models.LeaderboardRow.model_validate(r) for r in rows[:limit]]
    more = len(rows) > limit
    last = items[-1] if items else None
    return models.Page[models.LeaderboardRow](
        items=items, batch=reader.batch,
        next_cursor=encode_cursor("leaderboard", [last.ruleset, last.rank]) if more and last else None)


def compliance(reader: data.Reader, flt: data.GameFilter, codes: Sequence[str], period: str | None,
               cursor: str | None, limit: int) -> models.Page[models.ComplianceRow]:
    kind = f"compliance:{period or 'all'}"
    after = decode_cursor(cursor, kind, (str, str, str, str)) if cursor else None
    rows = data.compliance_page(reader, flt, codes, period, after, limit + 1).to_dicts()
    more = len(rows) > limit
    rows = rows[:limit]
    items = [models.ComplianceRow.model_validate({**r, "period": r["period"] or None}) for r in rows]
    last = rows[-1] if rows else None
    return models.Page[models.ComplianceRow](
        items=items, batch=reader.batch,
        next_cursor=encode_cursor(kind, [last["code"], last["ruleset"], last["server_build"], last["period"]])
        if more and last else None)


def builds(reader: data.Reader, flt: data.GameFilter) -> list[models.BuildRow]:
    return [models.BuildRow.model_validate(r) for r in data.builds(reader, flt).to_dicts()]


def violations(reader: data.Reader, flt: data.GameFilter, codes: Sequence[str], cursor: str | None,
               limit: int) -> models.Page[models.ViolationRow]:
    after = decode_cursor(cursor, "violations", (str, str, int)) if cursor else None
    rows = data.violation_page(reader, flt, codes, after, limit + 1).to_dicts()
    more = len(rows) > limit
    rows = rows[:limit]
    items = [models.ViolationRow.model_validate(
        {**r, "game": r["game_id"], "explanation": EXPLANATIONS.get(Code(r["code"]), "")}) for r in rows]
    last = rows[-1] if rows else None
    return models.Page[models.ViolationRow](
        items=items, batch=reader.batch,
        next_cursor=encode_cursor("violations", [last["started"].isoformat(), last["game_id"], last["n"]])
        if more and last else None)


def batch_outcome(row: Mapping[str, Any]) -> models.BatchOutcome:
    return models.BatchOutcome.model_validate({**row, "batch": row["id"], "files": row["files"] or []})
