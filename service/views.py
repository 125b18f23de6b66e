"""What each read endpoint answers, built from the dashboard's data layer and the replay,
and what a player-scoped token may see of it.

A player's view hides every card another player holds: their hands in the state, the
dealt hands and the stock of a `deal` line, another's drawn and penalty cards, the order
of a reshuffled stock, the legal moves of someone else's turn (they are cards in that
hand), the messages of violations about someone else (they can name those cards) and their
cards left at a hand's end. Producer extensions (`x_…` fields) are dropped from a player's
view too. The dashboard's player view hides the same (`public_text` is its own).

Why a move happened is the replay's own text (`ReplayStep.why`, written by the engine's
`engine.narrate.MoveReasons` from its facts of the line): the API says what the dashboard
and the dispute report say, and withholds it where they do (another player's draw).
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
from engine.violations import EXPLANATIONS, Code, Violation
from service import models
from service.warehouse import Replayed

#: the lines that record a player's decision (and so have a decision to explain)
MOVES = ("play", "draw", "pass")

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


def with_query(path: str, **params: object) -> str:
    """`path` with the parameters that are not None (`?seq=3&player=ali`)."""
    given = {k: str(v) for k, v in params.items() if v is not None}
    return f"{path}?{urlencode(given)}" if given else path


def game_view(reader: data.Reader, game: str, viewer: str | None, dashboard: str,
              row: Mapping[str, Any] | None = None) -> models.GameView | None:
    """The game as the warehouse holds it (None: no such game); `row` is its `games` row
    when the caller has read it already. Its hands, players and violations are read from
    the game's partition only (the row names it)."""
    row = row if row is not None else data.game_row(reader, game)
    if row is None:
        return None
    partition = (row["ruleset"], row["month"])
    hand_players: dict[int, list[models.HandPlayerView]] = {}
    for p in data.game_hand_players(reader, game, partition).to_dicts():
        if viewer is not None and p["player"] != viewer:
            p["left_cards"] = None
        hand_players.setdefault(p["hand"], []).append(models.HandPlayerView.model_validate(p))
    hands = [models.HandView.model_validate({**h, "players": hand_players.get(h["hand"], [])})
             for h in data.game_hands(reader, game, partition).to_dicts()]
    violations = []
    for v in data.game_violations(reader, game, partition).to_dicts():
        violation = Violation(v["seq"], Code(v["code"]), v["player"], v["message"], v["file"], v["line"])
        violations.append(violation_view(violation, viewer, hand=v["hand"]))
    links = {"self": game_path(game), "dashboard": dashboard_link(dashboard, game, viewer=viewer),
             "steps": with_query(game_path(game) + "/steps/{seq}", player=viewer),
             "report": with_query(game_path(game) + "/hands/{hand}/report", player=viewer)}
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


def forced(legal: models.Options | None) -> bool | None:
    """Whether the legal moves left one kind of move (a play obliged, a gift's draw, only a
    draw or only a pass); None when the viewer may not see them."""
    if legal is None:
        return None
    if legal.gift or legal.obliged:
        return True
    if legal.play:
        return False
    return (legal.draw is not None) != legal.may_pass


def decision(step: ReplayStep, viewer: str | None, *, hidden: bool) -> models.Decision | None:
    """The decision a move line records. Its `why` is the replay's (`ReplayStep.why`, from
    the engine's facts by `engine.narrate.MoveReasons`): the words the dashboard and the
    dispute report show, withheld where they withhold it (another's draw in a player's view)."""
    if step.kind not in MOVES or step.before is None or step.before.get("hand") is None:
        return None
    legal_before: Mapping[str, Any] = step.before.get("legal") or {}
    expected = legal_before.get("player")
    shown = options(legal_before, viewer) if expected is not None else None
    draw_kind = (step.fact or {}).get("draw_kind") if step.kind == "draw" else None
    return models.Decision(expected=expected, actor=step.actor, options=shown,
                           forced=forced(shown) if expected is not None else False,
                           why=None if hidden else step.why, draw_kind=draw_kind)


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
        "game": with_query(game_path(replay.game), player=viewer),
        "dashboard": dashboard_link(dashboard, replay.game, hand=step.hand, step=step.number, viewer=viewer),
    }
    previous, following = replay.neighbours(step)  # in the whole game, across hands
    if previous is not None:
        links["previous"] = with_query(f"{game_path(replay.game)}/steps/{previous}", player=viewer)
    if following is not None:
        links["next"] = with_query(f"{game_path(replay.game)}/steps/{following}", player=viewer)
    if step.hand:  # the dispute report about this line, in the same view
        links["report"] = with_query(f"{game_path(replay.game)}/hands/{step.hand}/report",
                                     seq=step.seq, player=viewer)
    to_move = None
    if after and after.get("hand") is not None and not after.get("outcome"):
        to_move = options(after.get("legal"), viewer)
    return models.StepView(
        game=replay.game, seq=step.seq, hand=step.hand, step=step.number,
        steps_in_hand=replay.hand_size(step.hand),
        file=step.file if viewer is None else None, line=step.line if viewer is None else None,
        kind=step.kind, actor=step.actor,
        text=public_text(step.kind, step.raw, step.text, viewer) if viewer else step.text,
        event=public_event(step.raw, viewer),
        violations=[violation_view(v, viewer, hidden=hidden, hand=step.hand) for v in step.violations],
        decision=decision(step, viewer, hidden=hidden), table=table_state(after, viewer),
        to_move=to_move,
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
