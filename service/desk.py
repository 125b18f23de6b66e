"""The support desk's routes: cases (`/v1/cases`) and their evidence bundles.

A case is opened on a game's line, annotated, tagged and decided by the desk (role
`support`; an auditor may read them). Each write is a warehouse batch of its own
(`ingest.cases`: the writer's lock and the commit protocol every batch follows), so a case
written while pushed logs are being committed loses neither. A player's token reaches
none of it: a case's notes are the desk's, and a bundle holds the game's lines, every
player's cards among them; the desk sends it (`GET /v1/cases/{id}/bundle`).
"""

# no `from __future__ import annotations`: FastAPI reads the routes' annotations
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

import polars as pl
from fastapi import Body, Depends, FastAPI, Query
from fastapi import Path as PathParam
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from engine.bundle import BundleCase, BundleError, make_bundle
from ingest import cases as desk
from ingest import read
from ingest.store import WarehouseError
from service import models, views
from service.app import READ_ERRORS, ApiError, Caller, Settings, _doc
from service.auth import Role
from service.warehouse import Gateway

CaseId = Annotated[str, PathParam(pattern=desk.CASE_ID.pattern, description="the case's id")]
CaseCursor = Annotated[str | None, Query(max_length=2000, pattern=views.CURSOR_FORMATS["cases"],
                                         description="`next_cursor` of the previous page")]
ZIP = "application/zip"


def case_view(row: dict[str, Any], dashboard: str,
              history: list[dict[str, Any]] | None = None) -> models.CaseView:
    """A `cases` row (its latest revision) as the API shows it, with its links."""
    case, game, seq, hand, player = row["case_id"], row["game_id"], row["seq"], row["hand"], row["player"]
    links = {"self": f"/v1/cases/{case}", "bundle": f"/v1/cases/{case}/bundle",
             "game": views.game_path(game)}
    if seq is not None:
        links["step"] = f"{views.game_path(game)}/steps/{seq}"
    if hand is not None:
        query = {k: v for k, v in (("seq", seq), ("player", player)) if v is not None}
        links["report"] = f"{views.game_path(game)}/hands/{hand}/report" + (f"?{urlencode(query)}" if query else "")
    params = {"game": game, **({"seq": str(seq)} if seq is not None else {}),
              **({"view": "player", "player": player} if player else {})}
    links["dashboard"] = f"{dashboard.rstrip('/')}/replay?{urlencode(params)}"
    revisions = None if history is None else [models.CaseRevision(
        revision=r["revision"], updated_by=r["updated_by"], updated_at=r["updated_at"],
        decision=r["decision"], tags=list(r["tags"] or []), notes=len(r["notes"] or []))
        for r in history]
    return models.CaseView(
        case=case, status="decided" if row["decision"] else "open", game=game, hand=hand, seq=seq,
        player=player, tags=list(row["tags"] or []),
        notes=[models.CaseNote(at=n["at"], by=n["by"] or "", text=n["text"] or "") for n in row["notes"] or []],
        decision=row["decision"], decided_by=row["decided_by"], decided_at=row["decided_at"],
        opened_by=row["opened_by"], opened_at=row["opened_at"], updated_by=row["updated_by"],
        updated_at=row["updated_at"], revision=row["revision"], batch=row["batch"],
        history=revisions, links=links)


def _row(case: desk.Case) -> dict[str, Any]:
    return {"case_id": case.case_id, "game_id": case.game, "hand": case.hand, "seq": case.seq,
            "player": case.player, "tags": list(case.tags),
            "notes": [{"at": n.at, "by": n.by, "text": n.text} for n in case.notes],
            "decision": case.decision, "decided_by": case.decided_by, "decided_at": case.decided_at,
            "opened_by": case.opened_by, "opened_at": case.opened_at, "updated_by": case.updated_by,
            "updated_at": case.updated_at, "revision": case.revision, "batch": case.batch}


def add_routes(app: FastAPI, settings: Settings, gateway: Gateway,
               caller: Callable[..., Callable[..., Awaitable[Caller]]]) -> None:
    """The desk's routes on `app` (`service.app.create_app` calls it)."""
    desk_only = caller(Role.support)
    readers = caller(Role.support, Role.auditor)

    def write_error(exc: Exception) -> ApiError:
        if isinstance(exc, desk.CaseNotFound):
            return ApiError(404, "not_found", str(exc))
        if isinstance(exc, desk.CaseError):
            return ApiError(422, "invalid_case", str(exc))
        if "is busy" in str(exc):
            return ApiError(503, "busy", f"{exc}; try again", {"Retry-After": "5"})
        return ApiError(503, "no_warehouse", str(exc))

    def found(case_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        history = read.case_revisions(gateway.reader(), case_id).to_dicts()
        if not history:
            raise ApiError(404, "not_found", f"no case {case_id!r} in the warehouse")
        return history[-1], history

    @app.post("/v1/cases", status_code=201, response_model=models.CaseView, tags=["desk"],
              responses=READ_ERRORS | {400: _doc("the body is not JSON"),
                                       404: _doc("no such game, no line with that seq, or a player "
                                                 "who did not play the game"),
                                       422: _doc("the case cannot be opened as asked (both `seq` and "
                                                 "`hand`, or a `hand` its `seq` is not in)")})
    def open_case(who: Annotated[Caller, Depends(desk_only)],
                  body: Annotated[models.CaseOpen, Body()]) -> models.CaseView:
        """Open a case on a game's line: the first note and tags, whose complaint it is. The
        line is `seq` (its hand found from it), else `hand`'s first flagged line, else the
        game's first violation; `player` defaults to the player that line's violation
        names. Written as a warehouse batch of its own (201 once committed)."""
        replayed = gateway.replayed(body.game)
        if replayed is None:
            raise ApiError(404, "not_found", f"no game {body.game!r} in the warehouse")
        replay = replayed.replay
        if body.seq is not None:
            step = replay.by_seq(body.seq)
            if step is None:
                raise ApiError(404, "not_found", f"game {body.game!r} has no line with seq {body.seq} "
                               f"(seqs: {replay.seq_span()})")
        elif body.hand is not None:
            if body.hand not in replay.hands:
                raise ApiError(404, "not_found", f"game {body.game!r} has no hand {body.hand} "
                               f"(hands: {', '.join(map(str, replay.hands))})")
            steps = replay.hand_steps(body.hand)
            step = next((s for s in steps if s.flagged), steps[0])
        else:
            step = replay.next_violation(None) or replay.hand_steps(replay.hands[0])[0]
        player = body.player or next((v.player for v in step.violations if v.player), None) or step.actor
        if player is not None and player not in replay.players:
            raise ApiError(404, "not_found", f"{player!r} did not play game {body.game!r} "
                           f"(players: {', '.join(replay.players)})")
        draft = desk.Draft(replay.game, step.hand, step.seq, player, body.tags, body.note)
        try:
            case = desk.open_case(gateway.location, draft, who.principal.name)
        except (desk.CaseError, WarehouseError, OSError) as exc:
            raise write_error(exc) from None
        gateway.refresh()
        return case_view(_row(case), settings.dashboard_url)

    @app.get("/v1/cases", response_model=models.Page[models.CaseView], tags=["desk"], responses=READ_ERRORS)
    def list_cases(who: Annotated[Caller, Depends(readers)],
                   game: Annotated[str | None, Query(max_length=256, description="the cases of this game")] = None,
                   tag: Annotated[str | None, Query(max_length=40, description="the cases with this tag")] = None,
                   q: Annotated[str | None, Query(max_length=200, description=(
                       "text found (any case) in the notes, the decision, the tags, the game id or the player"))] = None,
                   player: Annotated[str | None, Query(max_length=256, description="whose complaint")] = None,
                   status: Annotated[Literal["open", "decided"] | None, Query()] = None,
                   limit: Annotated[int, Query(ge=1, le=1000, description="rows on a page")] = 100,
                   cursor: CaseCursor = None) -> models.Page[models.CaseView]:
        """The cases, the most recently changed first, that match every filter given."""
        after = None
        if cursor:
            moment, case = views.cursor_parts(cursor)
            after = (views.cursor_moment(moment), case)
        reader = gateway.reader()
        search = read.CaseSearch(game or "", tag or "", player or "", status or "", q or "")
        rows: pl.DataFrame = read.cases(reader, search, limit + 1, after)
        items = rows.head(limit).to_dicts()
        more = rows.height > limit
        last = items[-1] if items else None
        return models.Page[models.CaseView](
            items=[case_view(r, settings.dashboard_url) for r in items], batch=reader.batch,
            next_cursor=views.encode_cursor([last["updated_at"], last["case_id"]]) if more and last else None)

    @app.get("/v1/cases/{case}", response_model=models.CaseView, tags=["desk"],
             responses=READ_ERRORS | {404: _doc("no such case")})
    def get_case(case: CaseId, who: Annotated[Caller, Depends(readers)]) -> models.CaseView:
        """A case with its notes, its decision and who took it, and every revision."""
        latest, history = found(case)
        return case_view(latest, settings.dashboard_url, history)

    @app.patch("/v1/cases/{case}", response_model=models.CaseView, tags=["desk"],
               responses=READ_ERRORS | {400: _doc("the body is not JSON"), 404: _doc("no such case"),
                                        422: _doc("nothing to change, or a bad tag")})
    def change_case(case: CaseId, who: Annotated[Caller, Depends(desk_only)],
                    body: Annotated[models.CaseChange, Body()]) -> models.CaseView:
        """Take a decision (who took it is the caller's key), add a note, or set the tags:
        the case's next revision, written as a warehouse batch of its own."""
        try:
            changed = desk.update_case(gateway.location, case,
                                       desk.Change(body.note, body.tags, body.decision), who.principal.name)
        except (desk.CaseError, WarehouseError, OSError) as exc:
            raise write_error(exc) from None
        gateway.refresh()
        return case_view(_row(changed), settings.dashboard_url)

    @app.get("/v1/cases/{case}/bundle", tags=["desk"],
             responses=READ_ERRORS | {
                 200: {"content": {ZIP: {"schema": {"type": "string", "format": "binary"}}},
                       "description": "a zip: report.html, lines.jsonl, README.txt, manifest.json"},
                 404: _doc("no such case, its game is no longer in the warehouse, or it names no player")})
    async def bundle(case: CaseId, who: Annotated[Caller, Depends(readers)]) -> Response:
        """The case's evidence bundle, to send to the player or a regulator: the dispute
        report in the case player's view, the game's lines it rests on, a manifest of
        their SHA-256 with the engine version and the verdict, a README saying how to
        check it (`haftkhabis verify-bundle FILE`). Never the case's notes."""
        latest, _ = await run_in_threadpool(found, case)
        if latest["hand"] is None or latest["player"] is None:
            raise ApiError(404, "not_found", f"case {case} names no player whose view to report in "
                           "(open it again with `player`)")
        reader = gateway.reader()
        lines = await run_in_threadpool(gateway.game_lines, reader, latest["game_id"])
        if not lines:
            raise ApiError(404, "not_found", f"game {latest['game_id']!r} of case {case} is not in the warehouse")
        about = BundleCase(case, latest["game_id"], latest["hand"], latest["seq"], latest["player"],
                           tuple(latest["tags"] or ()), latest["decision"], latest["decided_at"],
                           latest["updated_at"])
        try:
            data = await run_in_threadpool(make_bundle, [raw for raw, _, _ in lines], about)
        except BundleError as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        name = f"{case}-{latest['game_id']}.zip".replace('"', "")
        return Response(data, media_type=ZIP, headers={"Content-Disposition": f'attachment; filename="{name}"'})
