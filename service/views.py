"""What each read endpoint answers, built from the warehouse's read model (`ingest.read`) and the replay.

A player-scoped token (or `player=`) gets that player's view, which
`engine.player_view` computes — the one place that decides it, for the dashboard and the
dispute report too: their own cards, the others' as counts, no stock, no other player's
legal moves or messages, no server paths. These functions lay out what it returns.

Why a move happened is the replay's own text (`ReplayStep.why`, written by the engine's
`engine.narrate.MoveReasons` from its facts of the line): the API says what the dashboard
and the dispute report say, and withholds it where they do (another player's draw).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote, urlencode

import orjson

from engine.player_view import public_left_cards, public_state, public_step, public_violation
from engine.replay import ReplayStep
from engine.violations import EXPLANATIONS, Code, Violation
from engine.whatif import WhatIf
from ingest import read
from service import models
from service.warehouse import Replayed

#: the lines that record a player's decision (and so have a decision to explain)
MOVES = ("play", "draw", "pass")

# ---------------------------------------------------------------------------- cursors
#
# A cursor is the last row's key of the page before, in plain text: its parts
# percent-encoded and joined by `~`. Its format is declared in the OpenAPI document (a
# pattern per listing), and every string of that format is a key the listing can page
# after: a cursor is never "not one this API handed out". Filters are bound parameters, so
# a key made up by hand only moves where the page starts.

#: one part of a cursor: percent-encoded text (`~` is the separator, so it is encoded too)
CURSOR_PART = r"(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2}){0,512}"
#: a count or rank in a cursor
CURSOR_NUMBER = r"[0-9]{1,9}"
#: a moment in a cursor: microseconds since 1970 (negative before)
CURSOR_MOMENT = r"-?[0-9]{1,17}"
#: each listing's cursor format
CURSOR_FORMATS = {
    "leaderboard": rf"^{CURSOR_PART}~{CURSOR_NUMBER}$",
    "compliance": rf"^{CURSOR_PART}(?:~{CURSOR_PART}){{3}}$",
    "violations": rf"^{CURSOR_MOMENT}~{CURSOR_PART}~{CURSOR_NUMBER}$",
    "cases": rf"^{CURSOR_MOMENT}~{CURSOR_PART}$",
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def encode_cursor(key: Sequence[str | int | datetime]) -> str:
    """The cursor of a row's key (its moments as microseconds since 1970)."""
    parts = []
    for part in key:
        if isinstance(part, datetime):
            moment = part if part.tzinfo is not None else part.replace(tzinfo=UTC)
            part = (moment - _EPOCH) // timedelta(microseconds=1)
        parts.append(quote(str(part), safe="").replace("~", "%7E"))
    return "~".join(parts)


def cursor_parts(cursor: str) -> list[str]:
    """A cursor's parts as text (the route has checked its format)."""
    return [unquote(part, errors="replace") for part in cursor.split("~")]


def cursor_moment(text: str) -> datetime:
    """A cursor's moment, clamped to the years a timestamp holds."""
    try:
        return _EPOCH + timedelta(microseconds=int(text))
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC) if text.startswith("-") else datetime.max.replace(tzinfo=UTC)


# ---------------------------------------------------------------------------- views of a line


def options(legal: Mapping[str, Any] | None) -> models.Options | None:
    """The legality view, when the state shown holds it (a player view holds only the
    viewer's own)."""
    if not legal:
        return None
    return models.Options.model_validate(legal)


def table_state(state: Mapping[str, Any] | None) -> models.TableState | None:
    if not state:
        return None
    return models.TableState.model_validate(public_state(state, None))


def violation_view(v: Violation, *, hand: int | None = None) -> models.ViolationView:
    """A violation as the view holds it (`engine.player_view.public_violation`)."""
    return models.ViolationView(
        seq=v.seq, hand=hand, code=v.code, player=v.player, message=v.message,
        file=v.file, line=v.line, explanation=EXPLANATIONS.get(v.code, ""),
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


def game_view(reader: read.Reader, game: str, viewer: str | None, dashboard: str,
              row: Mapping[str, Any] | None = None) -> models.GameView | None:
    """The game as the warehouse holds it (None: no such game); `row` is its `games` row
    when the caller has read it already. Its hands, players and violations are read from
    the game's partition only (the row names it)."""
    row = row if row is not None else read.game_row(reader, game)
    if row is None:
        return None
    partition = (row["ruleset"], row["month"])
    hand_players: dict[int, list[models.HandPlayerView]] = {}
    for p in read.game_hand_players(reader, game, partition).to_dicts():
        p["left_cards"] = public_left_cards(p["player"], p["left_cards"], viewer)
        hand_players.setdefault(p["hand"], []).append(models.HandPlayerView.model_validate(p))
    hands = [models.HandView.model_validate({**h, "players": hand_players.get(h["hand"], [])})
             for h in read.game_hands(reader, game, partition).to_dicts()]
    violations = []
    for v in read.game_violations(reader, game, partition).to_dicts():
        violation = Violation(v["seq"], Code(v["code"]), v["player"], v["message"], v["file"], v["line"])
        violations.append(violation_view(public_violation(violation, viewer), hand=v["hand"]))
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


def decision(step: ReplayStep) -> models.Decision | None:
    """The decision a move line records, as the step's view holds it: the options of the
    player whose turn it was (a player view holds only the viewer's own) and why the move
    happened (`ReplayStep.why`, from the engine's facts by `engine.narrate.MoveReasons`: the
    words the dashboard and the dispute report show, withheld where they withhold it)."""
    if step.kind not in MOVES or step.before is None or step.before.get("hand") is None:
        return None
    legal_before: Mapping[str, Any] = step.before.get("legal") or {}
    expected = legal_before.get("player") or (step.fact or {}).get("expected")
    shown = options(legal_before) if legal_before.get("player") is not None else None
    draw_kind = (step.fact or {}).get("draw_kind") if step.kind == "draw" else None
    return models.Decision(expected=expected, actor=step.actor, options=shown,
                           forced=forced(shown) if expected is not None else False,
                           why=step.why, draw_kind=draw_kind)


def step_view(replayed: Replayed, seq: int, viewer: str | None, dashboard: str) -> models.StepView | None:
    """The line `seq` of the game, replayed, in `viewer`'s view (None: support; the game
    has no such line)."""
    found = replayed.by_seq.get(seq)
    if found is None:
        return None
    step = public_step(found, viewer)
    replay = replayed.replay
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
    if step.kind in MOVES:
        links["whatif"] = with_query(f"{game_path(replay.game)}/steps/{step.seq}/whatif", player=viewer)
    to_move = None
    if after and after.get("hand") is not None and not after.get("outcome"):
        to_move = options(after.get("legal"))
    return models.StepView(
        game=replay.game, seq=step.seq, hand=step.hand, step=step.number,
        steps_in_hand=replay.hand_size(step.hand),
        file=step.file, line=step.line, kind=step.kind, actor=step.actor, text=step.text,
        event=step.raw,
        violations=[violation_view(v, hand=step.hand) for v in step.violations],
        decision=decision(step), table=table_state(after), to_move=to_move,
        viewer=viewer, links=links,
    )


def _info_view(info: Mapping[str, Any], hand: int | None) -> models.ViolationView:
    """A violation as the core reports it (`ViolationInfo`, already in the view's terms)."""
    return models.ViolationView(seq=info["seq"], hand=hand, code=Code(info["code"]), player=info["player"],
                                message=info["message"], file=info["file"], line=info["line"],
                                explanation=EXPLANATIONS.get(Code(info["code"]), ""))


def _outcome(outcome: Mapping[str, Any] | None) -> models.Outcome | None:
    return None if outcome is None else models.Outcome.model_validate(outcome)


def whatif_view(result: WhatIf, moves: Sequence[str]) -> models.WhatIfView:
    """A what-if (`engine.whatif.what_if`, computed in the viewer's view) as the API's model."""
    game, viewer = result.game, result.viewer
    refused = None
    if result.refused is not None:
        refused = models.Refusal(move=str(result.refused.move), player=result.refused.player,
                                 violations=[_info_view(v, result.hand) for v in result.refused.violations],
                                 reason=result.refused.reason())
    return models.WhatIfView(
        game=game, seq=result.seq, hand=result.hand, moves=list(moves), recorded=result.recorded,
        recorded_violations=[_info_view(v, result.hand) for v in result.recorded_violations],
        before=table_state(result.before),
        alternatives=[str(m) for m in result.alternatives],
        steps=[models.BranchStep(seq=s.seq, player=s.player, move=str(s.move), line=s.line,
                                 drawn=list(s.drawn), table=models.TableState.model_validate(public_state(s.state, None)),
                                 card_count=s.card_count) for s in result.steps],
        refused=refused, next_moves=[str(m) for m in result.next_moves], stopped=result.stopped,
        unknown_cards=list(result.unknown_cards), stock_known=result.stock_known,
        outcome=_outcome(result.outcome), recorded_outcome=_outcome(result.recorded_outcome), viewer=viewer,
        links={"step": with_query(f"{game_path(game)}/steps/{result.seq}", player=viewer),
               "game": with_query(game_path(game), player=viewer)},
    )


# ---------------------------------------------------------------------------- aggregates


def player_view(reader: read.Reader, player: str, dashboard: str) -> models.PlayerView | None:
    """A player's figures per ruleset and their violations by code (None: no such player).
    (Not a game's player view: that is `engine.player_view`.)"""
    rankings = read.player_rankings(reader, player).to_dicts()
    if not rankings:
        return None
    violations = sorted(read.player_violations(reader, player).to_dicts(),
                        key=lambda v: (-v["violations"], v["ruleset"], v["code"]))
    return models.PlayerView(
        player=player,
        rulesets=[models.PlayerRanking.model_validate(r) for r in rankings],
        violations=[models.PlayerViolations.model_validate(v) for v in violations],
        links={"dashboard": f"{dashboard.rstrip('/')}/players?{urlencode({'player': player})}"},
    )


def leaderboard(reader: read.Reader, rulesets: Sequence[str], min_hands: int, cursor: str | None,
                limit: int) -> models.Page[models.LeaderboardRow]:
    """One page of the leaderboard, after the row `cursor` names."""
    after = None
    if cursor:
        ruleset, rank = cursor_parts(cursor)
        after = (ruleset, int(rank))
    rows = read.leaderboard_page(reader, rulesets, min_hands, after, limit + 1).to_dicts()
    items = [models.LeaderboardRow.model_validate(r) for r in rows[:limit]]
    more = len(rows) > limit
    last = items[-1] if items else None
    return models.Page[models.LeaderboardRow](
        items=items, batch=reader.batch,
        next_cursor=encode_cursor([last.ruleset, last.rank]) if more and last else None)


def compliance(reader: read.Reader, flt: read.GameFilter, codes: Sequence[str], period: str | None,
               cursor: str | None, limit: int) -> models.Page[models.ComplianceRow]:
    """One page of violations per code, ruleset, build (and period), after `cursor`."""
    after = None
    if cursor:
        code, ruleset, build, period_of = cursor_parts(cursor)
        after = (code, ruleset, build, period_of)
    rows = read.compliance_page(reader, flt, codes, period, after, limit + 1).to_dicts()
    more = len(rows) > limit
    rows = rows[:limit]
    items = [models.ComplianceRow.model_validate({**r, "period": r["period"] or None}) for r in rows]
    last = rows[-1] if rows else None
    return models.Page[models.ComplianceRow](
        items=items, batch=reader.batch,
        next_cursor=encode_cursor([last["code"], last["ruleset"], last["server_build"], last["period"]])
        if more and last else None)


def builds(reader: read.Reader, flt: read.GameFilter) -> list[models.BuildRow]:
    """Every server build's compliance (`ingest.read.builds`)."""
    return [models.BuildRow.model_validate(r) for r in read.builds(reader, flt).to_dicts()]


def violations(reader: read.Reader, flt: read.GameFilter, codes: Sequence[str], cursor: str | None,
               limit: int) -> models.Page[models.ViolationRow]:
    """One page of the violations themselves, newest games first, after `cursor`."""
    after = None
    if cursor:
        started, game, place = cursor_parts(cursor)
        after = (cursor_moment(started), game, int(place))
    rows = read.violation_page(reader, flt, codes, after, limit + 1).to_dicts()
    more = len(rows) > limit
    rows = rows[:limit]
    items = [models.ViolationRow.model_validate(
        {**r, "game": r["game_id"], "explanation": EXPLANATIONS.get(Code(r["code"]), "")}) for r in rows]
    last = rows[-1] if rows else None
    return models.Page[models.ViolationRow](
        items=items, batch=reader.batch,
        next_cursor=encode_cursor([last["started"], last["game_id"], last["n"]])
        if more and last else None)


def batch_outcome(row: Mapping[str, Any], receipt: str | None = None) -> models.BatchOutcome:
    """A `batches` row as the API shows it: each file by its name, never the server's path
    to it (a pushed body's name is its receipt); for a receipt, its own file only (a
    batch commits many pushes)."""
    files = []
    for item in row["files"] or []:
        # a batch names hundreds of pushed files, and each push's receipt shows its own:
        # the name and its stem by string (PurePath's, a few microseconds a file)
        name = (item["path"] or "").rstrip("/").rpartition("/")[2]
        stem = name.rpartition(".")[0] if name.rfind(".") > 0 else name
        if receipt is not None and stem != receipt:
            continue
        files.append({**item, "path": name})
    return models.BatchOutcome.model_validate({**row, "batch": row["id"], "files": files})
