"""The ASGI application: the routes under `/v1`, who may call each, and errors as JSON.

Every error is a `Problem` (`{"status", "error", "message"}`), a stack trace never: 401
for a missing or unknown key, 403 for a key without the role (or a player's token asking
for what is not theirs), 404 for an unknown game, step, hand, player or batch, 413 for a
body past its cap, 429 past a key's rate, 503 while there is no warehouse to read. A
malformed line in a validated body is a verdict (an error record), not an error.

After each commit the queue's listener (`committed`) refreshes the reader, counts the batch
(`service.metrics`), hands its games to the live feed (`service.live`) and to the alerts
(`service.alerts`); none of them waits, so the committer never does.
"""


# no `from __future__ import annotations`: FastAPI reads the routes' annotations, which
# name dependencies made inside create_app
import asyncio
import gc
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from fastapi import Depends, FastAPI, Query, Request, Security
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from fastapi_offline import FastAPIOffline
from pydantic import BeforeValidator, StringConstraints
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from engine import ENGINE_VERSION, _core
from engine.analysis import AnalysisError, Search, analyse_replay
from engine.player_view import public_analysis
from engine.report import render_hand_report
from engine.violations import Code
from engine.whatif import BadMove, WhatIfError, what_if
from ingest import audits, read
from ingest.storage import Location
from service import models, views
from service.alert_rules import AlertConfig
from service.alerts import AlertEngine
from service.auth import KeyExpired, KeyStore, Principal, RateLimiter, Role
from service.bodies import BadBody, BodyTooLarge, decoded
from service.jobs import CommitEvent, CommitPolicy, IngestQueue, Receipt
from service.live import LiveHub, Watch
from service.metrics import CONTENT_TYPE as METRICS_TYPE
from service.metrics import ServiceMetrics
from service.public import private_roots, public
from service.validation import BodyPace, BodyTooSlow, KeySlots, TooManyAtOnce, ValidationPool
from service.warehouse import Gateway, WarehouseUnavailable

log = logging.getLogger("haftkhabis.service")

API_VERSION = "1.0.0"
NDJSON = "application/x-ndjson"
MiB = 1 << 20
#: the most moves a what-if branch may be asked to play
MAX_BRANCH = 200
#: where a report's "Reproduce" line reads the game, in an answer of this service
REPRODUCE_SOURCE = "--warehouse WAREHOUSE"
#: a hand's analysis runs on the request: its rollouts are capped
MAX_ANALYSIS_ROLLOUTS = 2000
#: a what-if move as `engine.whatif.Move.parse` reads it: a card (a J with the suit it
#: declares, a 2 with its target), `draw` or `pass`, in any case. Declared, so every move
#: of this form is answered (a move the rules forbid is refused in the answer, with its rule)
MOVE = r"^(?:[2-9TJQKAtjqka][CDHScdhs](?:/[CDHScdhs])?(?:>\S.{0,255})?|[Dd][Rr][Aa][Ww]|[Pp][Aa][Ss][Ss])$"


@dataclass(frozen=True)
class Settings:
    """What `haftkhabis serve` configures."""

    warehouse: str | Path  # a folder or s3://bucket/prefix
    keys: KeyStore = field(default_factory=KeyStore)
    #: object-store options (`--storage-option`), over the `AWS_*` environment
    storage_options: Mapping[str, str] = field(default_factory=dict)
    #: where pushed bodies and receipts are kept (default: `service.jobs.state_folder`)
    state: Path | None = None
    dashboard_url: str = "http://127.0.0.1:8501"
    max_validate_bytes: int = 64 * MiB
    max_ingest_bytes: int = 256 * MiB
    #: the longest line a validated or pushed body may hold (bytes); a longer one is a
    #: `line_too_long` error record (validate) or quarantined (ingest), never held whole
    max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES
    ingest_workers: int = 1
    #: group commit: at most this many seconds between commits, at once past this many lines
    commit_interval: float = 1.0
    commit_lines: int = 100_000
    #: back-pressure: pushes are told to wait once the oldest waiting one is this old
    max_lag: float = 30.0
    #: the parts due are merged after this many groups (0: never; `CommitPolicy`)
    compact_every: int = 8
    validate_threads: int = 2
    #: validations one key may have in flight at once (past it: 429)
    max_validations_per_key: int = 2
    #: a validated or pushed body must arrive at this many bytes a second on average after
    #: `body_grace` seconds (else 408): a slow body holds a socket, never a thread
    body_min_rate: float = 16 * 1024
    body_grace: float = 10.0
    rate: float = 20.0  # requests a second per key, unless its entry says otherwise
    burst: int | None = None
    replay_cache: int = 256
    game_index: bool = True  # find a step's lines by the game index (service.warehouse)
    #: the alert rules (`serve --alerts FILE`); None: no alerts
    alerts: AlertConfig | None = None
    #: the live feed: games queued per subscriber, subscribers at once, seconds between heartbeats
    live_queue: int = 1000
    live_subscribers: int = 100
    live_heartbeat: float = 15.0


class ApiError(Exception):
    def __init__(self, status: int, error: str, message: str,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message
        self.headers = dict(headers or {})


def _problem(status: int, error: str, message: str,
             headers: Mapping[str, str] | None = None) -> JSONResponse:
    body = models.Problem(status=status, error=error, message=message)
    return JSONResponse(body.model_dump(), status_code=status, headers=dict(headers or {}))


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def _doc(description: str) -> dict[str, Any]:
    return {"model": models.Problem, "description": description}


#: the error responses every authenticated route may give
AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: _doc("no API key, or one that is not configured"),
    403: _doc("the key's role may not call this (or a player's token asked for another's view)"),
    422: _doc("a parameter is malformed"),
    429: _doc("the key's rate limit is spent (see Retry-After)"),
}
READ_ERRORS = AUTH_ERRORS | {503: _doc("there is no warehouse to read yet")}

def _iso_day(value: object) -> object:
    """A day as the API takes it: YYYY-MM-DD only (pydantic alone would read `0` as the
    first day of 1970)."""
    if isinstance(value, str) and not (len(value) == 10 and value[4] == "-" and value[7] == "-"):
        raise ValueError("a day is written YYYY-MM-DD")
    return value


Rulesets = Annotated[list[str], Query(alias="ruleset", description="only these rulesets (repeatable)")]
Builds = Annotated[list[str], Query(alias="build", description="only these server builds (repeatable; `?` for none)")]
Codes = Annotated[list[Code], Query(alias="code", description="only these violation codes (repeatable)")]
From = Annotated[date | None, BeforeValidator(_iso_day),
                 Query(alias="from", description="games started on or after this day (UTC)")]
To = Annotated[date | None, BeforeValidator(_iso_day),
               Query(alias="to", description="games started on or before this day (UTC)")]
Limit = Annotated[int, Query(ge=1, le=1000, description="rows on a page")]


#: `cursor` of a listing: its format declared (`service.views.CURSOR_FORMATS`), so every
#: string of that format is a key the listing pages after
_CURSOR = ("`next_cursor` of the previous page: the last row's key, its parts percent-encoded "
           "and joined by `~`")
LeaderboardCursor = Annotated[str | None, Query(max_length=2000, pattern=views.CURSOR_FORMATS["leaderboard"],
                                                description=_CURSOR)]
ComplianceCursor = Annotated[str | None, Query(max_length=2000, pattern=views.CURSOR_FORMATS["compliance"],
                                               description=_CURSOR)]
ViolationsCursor = Annotated[str | None, Query(max_length=2000, pattern=views.CURSOR_FORMATS["violations"],
                                               description=_CURSOR)]
GameId = Annotated[str, PathParam(description="the log's `game`", max_length=256)]
Statuses = Annotated[list[models.Status], Query(alias="status", description="only games of these statuses (repeatable)")]

_bearer = HTTPBearer(auto_error=False, description="an API key: `Authorization: Bearer KEY`")
_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="an API key")


@dataclass(frozen=True, slots=True)
class Caller:
    principal: Principal

    @property
    def player(self) -> str | None:
        return self.principal.player

    def has(self, *roles: Role) -> bool:
        return any(r in self.principal.roles for r in roles)


def create_app(settings: Settings) -> FastAPI:
    """The application over `settings.warehouse`."""
    location = Location.of(settings.warehouse, settings.storage_options)
    gateway = Gateway(location, replays=settings.replay_cache, index=settings.game_index)
    hub = LiveHub(settings.live_queue, settings.live_subscribers)
    alerts: AlertEngine | None = None

    def committed(event: CommitEvent) -> None:
        """The committer's listener: each step on its own (one failing skips no other)."""
        steps: list[Callable[[CommitEvent], None]] = [lambda e: gateway.refresh(), metrics.committed,
                                                     hub.publish]
        if alerts is not None:
            steps.append(alerts.submit)
        for step in steps:
            try:
                step(event)
            except Exception as exc:
                log.warning("a commit's listener failed on batch %d", event.batch, exc_info=exc)

    queue = IngestQueue(location, workers=settings.ingest_workers, state=settings.state,
                        on_commit=committed,
                        policy=CommitPolicy(interval=settings.commit_interval,
                                            lines=settings.commit_lines, max_lag=settings.max_lag,
                                            compact_every=settings.compact_every,
                                            max_line_bytes=settings.max_line_bytes))

    def stored_lines(games: Sequence[str]) -> list[tuple[bytes, str | None, int | None]]:
        """The games' stored lines (for `rules_changed`), found by the game index."""
        current = gateway.reader()
        return [line for game in games for line in gateway.game_lines(current, game)]

    if settings.alerts is not None:
        alerts = AlertEngine(settings.alerts, state=queue.state, stats=queue.stats, lines=stored_lines)
    metrics = ServiceMetrics(queue.stats, lambda: (hub.subscribers, hub.dropped_total),
                             alerts.firing if alerts is not None else dict,
                             alerts.deliveries if alerts is not None else lambda: None)
    pool = ValidationPool(settings.validate_threads)
    slots = KeySlots(settings.max_validations_per_key)
    roots = private_roots(settings.warehouse, settings.state)
    pace = BodyPace(settings.body_min_rate, settings.body_grace)
    limiter = RateLimiter(settings.rate, settings.burst)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # What is loaded by now (the libraries, the routes and their validators) lives as
        # long as the server: out of the garbage collector's sight, a full collection walks
        # only what requests made since. Walking it all took about 140 ms (polars alone
        # about 100), and a full collection came every few seconds of steps: a request that
        # met one waited for it (the step benchmark's slowest requests).
        gc.collect()
        gc.freeze()
        if alerts is not None:
            alerts.start()
        queue.start()
        # open the warehouse (and so start the game index) now, not at the first request
        threading.Thread(target=gateway.problem, name="haftkhabis-open", daemon=True).start()
        yield
        queue.stop()
        if alerts is not None:
            alerts.stop()
        pool.shutdown()
        gc.unfreeze()

    # the documentation pages' scripts and styles come from the fastapi-offline package,
    # served here: the pages work without a CDN (or any network)
    app = FastAPIOffline(
        title="Haft Khabis log service",
        version=API_VERSION,
        summary="Validate, ingest and replay Haft Khabis game logs (haftkhabis/1).",
        description=(
            "Game servers push logs (`POST /v1/ingest`), support tools open any step of a game, "
            "analysts and auditors read the aggregates. Every call but `/v1/health` and these "
            "pages needs an API key (`Authorization: Bearer KEY` or `X-API-Key: KEY`); "
            "docs/api.md has the roles."),
        openapi_url="/v1/openapi.json",
        docs_url="/v1/docs",
        redoc_url="/v1/redoc",
        static_url="/v1/docs-static",
        lifespan=lifespan,
    )

    # ------------------------------------------------------------------ errors

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _problem(exc.status, exc.error, public(exc.message, roots), exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        names = {404: "not_found", 405: "method_not_allowed"}
        message = exc.detail if isinstance(exc.detail, str) else "request refused"
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 404 and message == "Not Found":
            message = f"no such endpoint: {request.url.path} (see /v1/docs)"
        if exc.status_code == 405:
            # every method the path answers (Starlette names only the first route's, and
            # a path with a GET and a POST is two routes)
            allowed = sorted({m for route in app.routes if isinstance(route, APIRoute)
                              and route.matches(request.scope)[0] is not Match.NONE
                              for m in route.methods or ()})
            if allowed:
                headers["Allow"] = ", ".join(allowed)
                message = f"{request.method} is not answered here; {request.url.path} takes {headers['Allow']}"
        return _problem(exc.status_code, names.get(exc.status_code, "http_error"), message, headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for error in exc.errors()[:5]:
            where = ".".join(str(p) for p in error.get("loc", ()) if p not in ("query", "path"))
            problems.append(f"{where}: {error.get('msg', 'invalid')}")
        if exc.errors() and all(tuple(e.get("loc", ()))[:1] == ("path",) for e in exc.errors()):
            # a path that cannot name anything (`/steps/{seq}` with a word for the number)
            # names no resource: 404, as for a number no game has
            return _problem(404, "not_found", "no such resource: " + "; ".join(problems))
        return _problem(422, "invalid_parameter", "; ".join(problems) or "invalid request")

    @app.exception_handler(WarehouseUnavailable)
    async def no_warehouse(request: Request, exc: WarehouseUnavailable) -> JSONResponse:
        return _problem(503, "no_warehouse", public(str(exc), roots))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return _problem(500, "internal_error", "the service failed on this request; it is logged")

    # ------------------------------------------------------------------ keys and roles

    def caller(*roles: Role, player_token: bool = False, limited: bool = True) -> Callable[..., Awaitable[Caller]]:
        """A dependency: the authenticated caller, holding one of `roles` (or a player's
        token, when `player_token`), within its key's rate (unless not `limited`: pushes
        are paced by the queue's back-pressure instead)."""
        allowed = ", ".join(r.value for r in roles) + (" or a player's token" if player_token else "")

        # async: run on the event loop (a dict look-up, a `stat` of the keys file, a token
        # bucket), where a plain function would be handed to a thread and back on every call
        async def dependency(
            bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
            header: Annotated[str | None, Security(_header)],
        ) -> Caller:
            key = bearer.credentials if bearer is not None else header
            if not key:
                raise ApiError(401, "unauthorized", "an API key is needed: send "
                               "`Authorization: Bearer KEY` (or `X-API-Key: KEY`)",
                               {"WWW-Authenticate": "Bearer"})
            try:
                principal = settings.keys.lookup(key)
            except KeyExpired as exc:
                raise ApiError(401, "unauthorized", str(exc),
                               {"WWW-Authenticate": 'Bearer error="invalid_token"'}) from None
            if principal is None:
                raise ApiError(401, "unauthorized", "this API key is not configured on this server",
                               {"WWW-Authenticate": 'Bearer error="invalid_token"'})
            wait = limiter.take(principal) if limited else None
            if wait is not None:
                raise ApiError(429, "rate_limited",
                               f"{principal.describe()} is over its rate limit; retry in {wait:.1f}s",
                               {"Retry-After": str(max(1, round(wait + 0.5)))})
            found = Caller(principal)
            if not (found.has(*roles) or (player_token and principal.player is not None)):
                raise ApiError(403, "forbidden", f"{principal.describe()} may not call this "
                               f"(it needs {allowed})")
            return found

        return dependency

    def viewer_for(who: Caller, game_players: list[str] | None, asked: str | None) -> str | None:
        """Whose view to show: a player's token sees only its own, and only of its games."""
        if who.player is None:
            if asked is not None and game_players is not None and asked not in game_players:
                raise ApiError(404, "not_found", f"{asked!r} did not play this game "
                               f"(players: {', '.join(game_players)})")
            return asked
        if asked is not None and asked != who.player:
            raise ApiError(403, "forbidden", f"a token of {who.player} may not see {asked}'s view")
        if game_players is not None and who.player not in game_players:
            raise ApiError(403, "forbidden", f"{who.player} did not play this game; a player's "
                           "token sees only the games its player played")
        return who.player

    def reader() -> read.Reader:
        return gateway.reader()

    def filter_of(rulesets: list[str], builds: list[str], start: date | None, end: date | None) -> read.GameFilter:
        return read.GameFilter(tuple(rulesets), start, end, tuple(builds))

    # ------------------------------------------------------------------ health

    @app.get("/v1/health", response_model=models.Health, tags=["service"])
    def health() -> models.Health:
        """Whether the service is up (no key needed), and the warehouse batch it reads."""
        stats = queue.stats()
        settings.keys.refresh()
        return models.Health(status="ok", engine_version=ENGINE_VERSION, batch=gateway.batch,
                             games_indexed=gateway.indexed, keys_unread_change=settings.keys.problem is not None,
                             ingest=models.IngestHealth.model_validate(asdict(stats)))

    # ------------------------------------------------------------------ validate

    body_doc = {
        "requestBody": {
            "required": True,
            "description": "JSON lines (haftkhabis/1), optionally gzip'd (`Content-Encoding: gzip`, "
                           "or a .gz file's bytes as they are).",
            "content": {
                NDJSON: {"schema": {"type": "string", "format": "binary", "minLength": 1}},
                "application/octet-stream": {"schema": {"type": "string", "format": "binary", "minLength": 1}},
            },
        },
    }

    async def text_of(request: Request, limit: int) -> AsyncIterator[bytes]:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit \
                and request.headers.get("content-encoding") in (None, "identity"):
            raise BodyTooLarge(limit)
        empty = True
        async for piece in decoded(pace.paced(request.stream()), request.headers.get("content-encoding"),
                                   limit):
            empty = empty and not piece
            yield piece
        if empty:
            raise BadBody("the body is empty: send the log's JSON lines (haftkhabis/1), "
                          "optionally gzip'd")

    @app.post(
        "/v1/validate", tags=["logs"], openapi_extra=body_doc,
        responses=AUTH_ERRORS | {
            200: {"description": "one verdict per game, then one error record per line that "
                                 "belongs to no game: `haftkhabis validate --json -`, byte for byte",
                  "content": {NDJSON: {"schema": {"oneOf": [
                      {"$ref": "#/components/schemas/VerdictLine"},
                      {"$ref": "#/components/schemas/LineError"}]}}},
                  "headers": {
                      "Haftkhabis-Games": {"schema": {"type": "integer"}, "description": "games judged"},
                      "Haftkhabis-Compliant": {"schema": {"type": "boolean"},
                                               "description": "every game compliant, no line error"}}},
            400: _doc("the body is empty or cannot be read (a broken gzip stream, an unknown encoding)"),
            408: _doc("the body arrived slower than the server's minimum rate"),
            413: _doc("the body (decompressed) is larger than the server's cap"),
            429: _doc("the key has as many validations in flight as it may"),
        })
    async def validate(request: Request,
                       who: Annotated[Caller, Depends(caller(Role.ingest, Role.support, Role.analyst,
                                                             Role.auditor))]) -> Response:
        """Judge a log without storing it: the verdicts exactly as `haftkhabis validate
        --json` writes them for standard input (files are named `<stdin>`). A malformed line
        is an error record in the answer, not an error of the request."""
        try:
            with slots.slot(who.principal.name, who.principal.describe()):
                result = await pool.validate(text_of(request, settings.max_validate_bytes),
                                             max_line_bytes=settings.max_line_bytes)
        except TooManyAtOnce as exc:
            raise ApiError(429, "too_many_at_once", str(exc), {"Retry-After": "1"}) from None
        except BodyTooSlow as exc:
            raise ApiError(408, "too_slow", str(exc), {"Connection": "close"}) from None
        except BodyTooLarge as exc:
            raise ApiError(413, "too_large", str(exc)) from None
        except BadBody as exc:
            raise ApiError(400, "bad_body", str(exc)) from None
        headers = {
            "Haftkhabis-Games": str(result.games),
            "Haftkhabis-Lines": str(result.lines),
            "Haftkhabis-Line-Errors": str(result.errors),
            "Haftkhabis-Compliant": "true" if result.clean else "false",
        }
        if isinstance(result.verdicts, bytes):
            return Response(result.verdicts, media_type=NDJSON, headers=headers)
        return StreamingResponse(result.chunks(), media_type=NDJSON, headers=headers)

    # ------------------------------------------------------------------ ingest

    #: committed batches' rows, the latest few: a batch's row never changes once committed,
    #: and each of its hundreds of pushes' receipts shows its part of it
    batch_rows: OrderedDict[int, dict[str, Any]] = OrderedDict()
    batch_rows_lock = threading.Lock()

    def batch_row(number: int) -> dict[str, Any] | None:
        with batch_rows_lock:
            row = batch_rows.get(number)
        if row is None:
            try:
                row = read.batch_row(gateway.reader(), number)
            except WarehouseUnavailable:
                return None
            if row is None:
                return None
            with batch_rows_lock:
                batch_rows[number] = row
                while len(batch_rows) > 64:
                    batch_rows.popitem(last=False)
        return row

    def receipt_status(receipt: Receipt) -> models.BatchStatus:
        outcome = None
        if receipt.batch is not None:
            row = batch_row(receipt.batch)
            outcome = views.batch_outcome(row, receipt.id) if row else None
        return models.BatchStatus(
            id=receipt.id, status=receipt.status,  # type: ignore[arg-type]
            received_at=_when(receipt.received_at), started_at=_when(receipt.started_at),
            finished_at=_when(receipt.finished_at), size=receipt.size, sha256=receipt.sha256,
            batch=receipt.batch, error=public(receipt.error, roots) if receipt.error else None,
            outcome=outcome,
            links={"self": f"/v1/batches/{receipt.id}"})

    @app.post(
        "/v1/ingest", status_code=202, response_model=models.BatchStatus, tags=["logs"],
        openapi_extra=body_doc,
        responses=AUTH_ERRORS | {
            400: _doc("the body is empty or cannot be read (a broken gzip stream, an unknown encoding)"),
            408: _doc("the body arrived slower than the server's minimum rate"),
            413: _doc("the body (decompressed) is larger than the server's cap"),
            429: _doc("the committer is behind: push again after `Retry-After` seconds")})
    async def ingest(request: Request,
                     who: Annotated[Caller, Depends(caller(Role.ingest, limited=False))]) -> models.BatchStatus:
        """Push log lines (a finished game, or any part of any games). The answer, `202`
        with the push's receipt, comes once the body is on disk; pushes waiting are
        committed together as one warehouse batch within `--commit-interval` (all or
        nothing; a game completed when its rest arrives), and the receipt then names it
        (`GET /v1/batches/{id}`). Pushes are not rate-limited: while the committer keeps
        up every push is taken, and when it falls behind a push is answered `429` with
        how long to wait (`Retry-After`). The same body pushed again while it waits gets
        the same receipt; once committed, pushing it again changes nothing."""
        wait = queue.back_pressure()
        if wait is not None:
            metrics.pushes_refused.inc()
            raise ApiError(429, "busy", f"the committer is {queue.stats().oldest_age:.0f}s behind; "
                           f"push again in {wait:.0f}s", {"Retry-After": str(round(wait + 0.5))})
        spool = queue.spool()
        try:
            async for piece in text_of(request, settings.max_ingest_bytes):
                spool.write(piece)
        except BodyTooLarge as exc:
            spool.discard()
            raise ApiError(413, "too_large", str(exc)) from None
        except BadBody as exc:
            spool.discard()
            raise ApiError(400, "bad_body", str(exc)) from None
        except BodyTooSlow as exc:
            spool.discard()
            raise ApiError(408, "too_slow", str(exc), {"Connection": "close"}) from None
        except BaseException:
            spool.discard()
            raise
        # the spool is the queue's from here (a client that leaves must not take a body
        # the journal's appender is writing)
        receipt, _new = await queue.accept(spool)
        metrics.pushes_accepted.inc()
        if log.isEnabledFor(logging.INFO):
            log.info("%s pushed %s bytes as %s", who.principal.describe(), receipt.size, receipt.id)
        # the answer as the response model writes it, made here: FastAPI would check the
        # model it was just built from once more, a cost paid on every push
        return Response(receipt_status(receipt).model_dump_json(), status_code=202,  # type: ignore[return-value]
                        media_type="application/json",
                        headers={"Location": f"/v1/batches/{receipt.id}"})

    @app.get("/v1/batches/{batch_id}", response_model=models.BatchStatus, tags=["logs"],
             responses=AUTH_ERRORS | {404: _doc("no such batch")})
    def batch(batch_id: Annotated[str, PathParam(max_length=64, description=(
                  "a receipt id from POST /v1/ingest, or a warehouse batch number"))],
              who: Annotated[Caller, Depends(caller(Role.ingest, Role.support, Role.auditor))]) -> models.BatchStatus:
        """A pushed batch's progress and outcome (or any committed batch's record, by number)."""
        receipt = queue.get(batch_id)
        if receipt is not None:
            return receipt_status(receipt)
        if batch_id.isascii() and batch_id.isdigit() and len(batch_id) < 19:
            row = batch_row(int(batch_id))
            if row is not None:
                return models.BatchStatus(id=batch_id, status="committed", batch=row["id"],
                                          received_at=row["started"], started_at=row["started"],
                                          finished_at=row["ended"], outcome=views.batch_outcome(row),
                                          links={"self": f"/v1/batches/{batch_id}"})
        raise ApiError(404, "not_found", f"no batch {batch_id!r} (receipt ids start ing_; "
                       "warehouse batches are numbers)")

    # ------------------------------------------------------------------ games


    @app.get("/v1/games/{game}", response_model=models.GameView, tags=["games"],
             responses=READ_ERRORS | {404: _doc("no such game")})
    def game(game: GameId,
             who: Annotated[Caller, Depends(caller(Role.support, Role.auditor, player_token=True))],
             player: Annotated[str | None, Query(description="show this player's view (support)")] = None,
             ) -> models.GameView:
        """A game as the warehouse holds it: its verdict, every hand with its scores, and
        every violation. A player's token sees its own view, of its own games."""
        current = reader()
        # the game index knows the game's partition: the games row is read from it alone
        row = read.game_row(current, game, gateway.partition_of(current, game))
        if row is None:
            raise ApiError(404, "not_found", f"no game {game!r} in the warehouse")
        viewer = viewer_for(who, list(row["players"] or []), player)
        found = views.game_view(current, game, viewer, settings.dashboard_url, row)
        if found is None:
            raise ApiError(404, "not_found", f"no game {game!r} in the warehouse")
        return found

    @app.get("/v1/games/{game}/steps/{seq}", response_model=models.StepView, tags=["games"],
             responses=READ_ERRORS | {404: _doc("no such game, or no line with that seq")})
    def step(game: GameId,
             seq: Annotated[int, PathParam(ge=0, le=2**53, description="the line's `seq`")],
             who: Annotated[Caller, Depends(caller(Role.support, player_token=True))],
             player: Annotated[str | None, Query(description="show this player's view (support)")] = None,
             ) -> models.StepView:
        """The state after one line: every hand (or, in a player's view, only theirs), the
        pile, suit, direction and stock; whose turn it is and their legal moves; the move's
        verdict with the rule's explanation, and why a forced move was forced. `links`
        holds the dashboard's deep link to the same step."""
        _, recorded = gateway.recorded(game)
        if recorded is None:
            raise ApiError(404, "not_found", f"no game {game!r} in the warehouse")
        viewer = viewer_for(who, list(recorded.players), player)
        replayed = gateway.replayed_step(game, seq)  # only that line's step is built
        found = views.step_view(replayed, seq, viewer, settings.dashboard_url) if replayed else None
        if found is None:
            raise ApiError(404, "not_found", f"game {game!r} has no line with seq {seq} "
                           f"(seqs: {recorded.seq_span()})")
        return found

    @app.get("/v1/games/{game}/steps/{seq}/whatif", response_model=models.WhatIfView, tags=["games"],
             responses=READ_ERRORS | {400: _doc("a move that cannot be read"),
                                      404: _doc("no such game, or no line with that seq")})
    def whatif(game: GameId,
               seq: Annotated[int, PathParam(ge=1, le=2**53, description="the line whose move to replace")],
               who: Annotated[Caller, Depends(caller(Role.support, player_token=True))],
               move: Annotated[list[Annotated[str, StringConstraints(pattern=MOVE, max_length=260)]],
                               Query(max_length=MAX_BRANCH, description=(
                   "the branch's moves in order, each the move of the player then to move: a "
                   "card (`7C`; a J with its suit, `JS/H`; a 2 with its target, `2D>lale`), "
                   "`draw` or `pass`; none: what was legal at `seq`"))] = [],  # noqa: B006 - FastAPI copies defaults
               player: Annotated[str | None, Query(max_length=256, description=(
                   "the player view: only that player's moves, no draw, nothing they could "
                   "not see (support; a player's token always gets its own)"))] = None,
               ) -> models.WhatIfView:
        """What if the move at `seq` had been another: the moves given are played from the
        state before it, each checked as the validator checks a line (a move the rules
        forbid is refused with its rule, and the branch stops there); a draw takes the
        cards the logged stock order gives. The answer is every legal move at `seq`, the
        branch's states, the moves legal at its end and, once the hand is decided, its
        outcome beside the recorded one. A player's token gets its own view: its own
        moves only, stopping before a draw and before another player's turn."""
        _, recorded = gateway.recorded(game)
        if recorded is None:
            raise ApiError(404, "not_found", f"no game {game!r} in the warehouse")
        viewer = viewer_for(who, list(recorded.players), player)
        try:
            result = what_if(gateway.game_lines(gateway.reader(), game), game, seq, move, viewer)
        except BadMove as exc:
            raise ApiError(400, "bad_move", str(exc)) from None
        except WhatIfError as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        return views.whatif_view(result, move)

    @app.get("/v1/games/{game}/hands/{hand}/analysis", response_model=models.AnalysisView, tags=["games"],
             responses=READ_ERRORS | {404: _doc("no such game, or no such hand with a decision")})
    def analysis(game: GameId, hand: Annotated[int, PathParam(ge=1, le=2**31)],
                 who: Annotated[Caller, Depends(caller(Role.analyst, Role.support, player_token=True))],
                 rollouts: Annotated[int, Query(ge=10, le=MAX_ANALYSIS_ROLLOUTS, description=(
                     "rollouts per legal move at each decision"))] = 200,
                 seed: Annotated[int, Query(ge=0, le=2**31, description="the rollouts' seed")] = 0,
                 player: Annotated[str | None, Query(max_length=256, description=(
                     "only this player's decisions and deal (analyst, support; a player's "
                     "token always gets its own)"))] = None,
                 search: Annotated[Search, Query(description=(
                     "flat: every legal move played out `rollouts` times; ismcts: the same "
                     "playouts spent by an information-set tree search"))] = Search.FLAT,
                 ) -> models.AnalysisView:
        """Move quality of one hand: at each decision, every legal move's expected points
        at the hand's end by rollouts from what the deciding player could know (never the
        hidden cards as they lay), the best move, and the chosen move's loss with its
        standard error and whether it is significant; each deal's expected points and
        luck. A player's token sees only its own decisions and deal."""
        _, recorded = gateway.recorded(game)
        if recorded is None:
            raise ApiError(404, "not_found", f"no game {game!r} in the warehouse")
        viewer = viewer_for(who, list(recorded.players), player)
        replay = read.game_replay(gateway.reader(), game)
        if replay is None:
            raise ApiError(404, "not_found", f"no game {game!r} in the warehouse")
        try:
            result = analyse_replay(replay, hand=hand, rollouts=rollouts, seed=seed, search=search)
        except AnalysisError as exc:
            raise ApiError(404, "not_found", str(exc)) from None
        return models.AnalysisView(hand=hand, **public_analysis(result, viewer))

    @app.get("/v1/games/{game}/hands/{hand}/report", tags=["games"],
             responses=READ_ERRORS | {
                 200: {"content": {"text/html": {"schema": {"type": "string"}}},
                       "description": "a self-contained HTML page"},
                 404: _doc("no such game or hand, no line with that seq in the hand, or a "
                           "player who did not play the game")})
    def report(game: GameId, hand: Annotated[int, PathParam(ge=0, le=2**31)],
               who: Annotated[Caller, Depends(caller(Role.support, player_token=True))],
               seq: Annotated[int | None, Query(ge=0, le=2**53, description=(
                   "the disputed line (default: the hand's first flagged step)"))] = None,
               player: Annotated[str | None, Query(max_length=256, description=(
                   "the player view: only what this player could see, no server paths "
                   "(support; a player's token always gets its own)"))] = None,
               ) -> HTMLResponse:
        """The dispute report of one hand, as `haftkhabis report --seq S --player P` writes
        it: a summary of the disputed step (its verdict and the rule), the step and its
        neighbours, the scores, the whole hand folded below; one HTML file, no scripts. A
        player's token gets its own view, of the games it played."""
        replayed = gateway.replayed(game)
        if replayed is None:
            raise ApiError(404, "not_found", f"no game {game!r} in the warehouse")
        replay = replayed.replay
        viewer = viewer_for(who, list(replay.players), player)
        if hand not in replay.hands:
            hands = ", ".join(map(str, replay.hands)) or "none"
            raise ApiError(404, "not_found", f"game {game!r} has no hand {hand} (hands: {hands})")
        steps = replay.hand_steps(hand)
        if seq is not None and not any(s.seq == seq for s in steps):
            raise ApiError(404, "not_found", f"hand {hand} of game {game!r} has no line with seq "
                           f"{seq} (seqs {steps[0].seq}–{steps[-1].seq})")
        try:
            # the support view's "Reproduce" line: the warehouse, by name (the files the
            # game was read from are the server's paths, which no answer shows)
            return HTMLResponse(render_hand_report(replay, hand, seq=seq, viewer=viewer,
                                                   source=REPRODUCE_SOURCE))
        except ValueError as exc:  # what the checks above let through, said by the report
            raise ApiError(404, "not_found", str(exc)) from None

    # ------------------------------------------------------------------ aggregates

    @app.get("/v1/players/{player}", response_model=models.PlayerView, tags=["aggregates"],
             responses=READ_ERRORS | {404: _doc("no such player")})
    def player(player: Annotated[str, PathParam(max_length=256)],
               who: Annotated[Caller, Depends(caller(Role.analyst, Role.support, player_token=True))],
               ) -> models.PlayerView:
        """A player's figures and rank per ruleset, and their violations by code. A
        player's token sees only its own."""
        if who.player is not None and who.player != player:
            raise ApiError(403, "forbidden", f"a token of {who.player} may not see {player}'s figures")
        found = views.player_view(reader(), player, settings.dashboard_url)
        if found is None:
            raise ApiError(404, "not_found", f"no player {player!r} in the warehouse")
        return found

    @app.get("/v1/leaderboard", response_model=models.Page[models.LeaderboardRow], tags=["aggregates"],
             responses=READ_ERRORS)
    def leaderboard(who: Annotated[Caller, Depends(caller(Role.analyst))], ruleset: Rulesets = [],  # noqa: B006 - FastAPI copies defaults
                    min_hands: Annotated[int, Query(ge=0, le=2**31, description="only players with this many decided hands")] = 0,
                    limit: Limit = 100, cursor: LeaderboardCursor = None) -> models.Page[models.LeaderboardRow]:
        """Players per ruleset by rank (hands won, then win rate), from the warehouse's
        `leaderboard` view."""
        return views.leaderboard(reader(), ruleset, min_hands, cursor, limit)

    @app.get("/v1/compliance", response_model=models.Page[models.ComplianceRow], tags=["aggregates"],
             responses=READ_ERRORS)
    def compliance(who: Annotated[Caller, Depends(caller(Role.analyst, Role.auditor))],
                   ruleset: Rulesets = [], build: Builds = [], code: Codes = [],  # noqa: B006
                   start: From = None, end: To = None,
                   period: Annotated[Literal["day", "week", "month"] | None,
                                     Query(description="also group by the games' start")] = None,
                   limit: Limit = 100, cursor: ComplianceCursor = None) -> models.Page[models.ComplianceRow]:
        """Violations and the games they are in, by code, ruleset and server build (and
        period), over the games matching the filters."""
        return views.compliance(reader(), filter_of(ruleset, build, start, end),
                                [c.value for c in code], period, cursor, limit)

    @app.get("/v1/compliance/builds", response_model=list[models.BuildRow], tags=["aggregates"],
             responses=READ_ERRORS)
    def compliance_builds(who: Annotated[Caller, Depends(caller(Role.analyst, Role.auditor))],
                          ruleset: Rulesets = [], build: Builds = [],  # noqa: B006
                          start: From = None, end: To = None) -> list[models.BuildRow]:
        """Per server build and ruleset: games, games with violations, the violation rate."""
        return views.builds(reader(), filter_of(ruleset, build, start, end))

    @app.get("/v1/audit/deals", response_model=models.DealAudit, tags=["fair play"],
             responses=READ_ERRORS)
    def audit_deals(who: Annotated[Caller, Depends(caller(Role.analyst, Role.auditor))],
                    build: Annotated[str | None, Query(max_length=256, description="only this server build")] = None,
                    ruleset: Annotated[str | None, Query(max_length=64, description="only this ruleset")] = None,
                    start: From = None,
                    fdr: Annotated[float, Query(gt=0, le=1, description="the false-discovery level "
                                                "(Benjamini–Hochberg) a finding must reach")] = 0.01,
                    ) -> models.DealAudit:
        """Is the shuffle fair? The warehouse's deals (opening hands, starters, logged
        stocks, repeats) against a uniform shuffle, every test corrected together; no
        hand's cards are shown (docs/fairplay.md). The report `haftkhabis audit deals
        --store` kept for these parameters answers at once while no game has landed since;
        otherwise the audit is made for the request (about a minute at a million hands)."""
        return models.DealAudit.model_validate(
            read.current_audit(reader(), audits.Params("deals", build, ruleset, start, fdr)))

    @app.get("/v1/audit/pairs", response_model=models.PairAudit, tags=["fair play"],
             responses=READ_ERRORS)
    def audit_pairs(who: Annotated[Caller, Depends(caller(Role.analyst, Role.auditor, Role.support))],
                    build: Annotated[str | None, Query(max_length=256, description="only this server build")] = None,
                    ruleset: Annotated[str | None, Query(max_length=64, description="only this ruleset")] = None,
                    start: From = None,
                    level: Annotated[float, Query(gt=0, le=1, description="a pair is a case when its "
                                                  "family-wise permutation p-value is at most this")] = 0.01,
                    permutations: Annotated[int, Query(ge=19, le=1000)] = 200,
                    ) -> models.PairAudit:
        """Who is playing together? Per pair: co-seating, 2s and 7 totals spared, J suits
        that suit the other, soft play, combined into one score against a permutation
        null (players relabelled within each game), and the case queue with the signals
        that drive each case and the steps that show them; no card is shown
        (docs/fairplay.md). The report `haftkhabis audit pairs --store` kept for these
        parameters answers at once while no game has landed since; otherwise the audit is
        made for the request (about two minutes at a million hands)."""
        return models.PairAudit.model_validate(
            read.current_audit(reader(), audits.Params("pairs", build, ruleset, start, level, permutations)))

    @app.get("/v1/violations", response_model=models.Page[models.ViolationRow], tags=["aggregates"],
             responses=READ_ERRORS)
    def violations(who: Annotated[Caller, Depends(caller(Role.auditor))],
                   ruleset: Rulesets = [], build: Builds = [], code: Codes = [],  # noqa: B006
                   start: From = None, end: To = None,
                   limit: Limit = 100, cursor: ViolationsCursor = None) -> models.Page[models.ViolationRow]:
        """Every violation, newest games first, with where it was logged."""
        return views.violations(reader(), filter_of(ruleset, build, start, end),
                                [c.value for c in code], cursor, limit)

    # the support desk's cases and bundles (imported here: it builds on this module's
    # errors and roles)
    from service import desk

    desk.add_routes(app, settings, gateway, caller)

    # ------------------------------------------------------------------ live, alerts, metrics

    @app.get(
        "/v1/live", tags=["live"], response_class=EventSourceResponse,
        responses=AUTH_ERRORS | {
            200: {"description": (
                "Server-Sent Events: `ready` once (the last batch committed here, what is watched), "
                "then a `game` event per committed game the caller may see (its data a `LiveGame`, "
                "its id `BATCH:POSITION`), a `dropped` event (a `LiveDropped`) when the client "
                "read too slowly and games were dropped from its queue, and a comment line as a "
                "heartbeat while nothing commits"),
                  "content": {"text/event-stream": {"schema": {"type": "string"}}}},
            503: _doc("as many clients as the server allows are watching already")})
    async def live(who: Annotated[Caller, Depends(caller(Role.support, Role.auditor, Role.analyst, Role.ingest,
                                                         player_token=True))],
                   ruleset: Rulesets = [], build: Builds = [], status: Statuses = [],  # noqa: B006
                   ) -> EventSourceResponse:
        """Watch games land: each committed game's verdict summary (game, ruleset, server
        build, status, violation codes, players, batch) as it is committed. Support,
        auditor, analyst and ingest keys see every game; a player's token only the games
        its player played. A client that reads too slowly misses the oldest games waiting
        for it (at most `--live-queue` wait) and is told how many; the committer never
        waits for it."""
        watch = Watch(who.player, frozenset(ruleset), frozenset(build), frozenset(status))
        subscriber = hub.subscribe(watch, asyncio.get_running_loop())
        if subscriber is None:
            raise ApiError(503, "busy", f"{hub.max_subscribers} clients are watching already "
                           "(serve --live-subscribers); try again later", {"Retry-After": "30"})

        async def stream() -> AsyncIterator[ServerSentEvent]:
            try:
                ready = {"batch": hub.last_batch, "watching": watch.describe()}
                yield ServerSentEvent(orjson.dumps(ready).decode(), event="ready")
                async for event in subscriber.events():
                    yield event
            finally:
                hub.unsubscribe(subscriber)

        async def gone() -> None:  # also when the stream was never started
            hub.unsubscribe(subscriber)

        return EventSourceResponse(stream(), ping=settings.live_heartbeat,
                                   headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
                                   background=BackgroundTask(gone))

    @app.get("/v1/alerts", response_model=models.AlertsView, tags=["live"], responses=AUTH_ERRORS)
    def alert_list(who: Annotated[Caller, Depends(caller(Role.auditor, Role.support))],
                   state: Annotated[Literal["firing", "clear"] | None,
                                    Query(description="only alerts in this state")] = None,
                   ) -> models.AlertsView:
        """The alerts of the rules file (`serve --alerts FILE`): per rule (and server build),
        its state and since when, the last measure and the threshold."""
        if alerts is None:
            return models.AlertsView(configured=False, source=None, evaluated_batch=None, alerts=[],
                                     deliveries=None)
        found = [a for a in alerts.alerts() if state is None or a["state"] == state]
        deliveries = alerts.deliveries()
        return models.AlertsView(
            configured=True, source=alerts.config.source, evaluated_batch=alerts.evaluated_batch,
            alerts=[models.AlertView.model_validate(a) for a in found],
            deliveries=models.Deliveries.model_validate(asdict(deliveries)) if deliveries else None)

    @app.get("/metrics", include_in_schema=False)
    def prometheus() -> Response:
        """The service's figures in Prometheus' text format (no key: bind the service where
        only those who may read them reach it; docs/operations.md)."""
        return Response(metrics.render(), media_type=METRICS_TYPE)

    generated = app.openapi

    def openapi() -> dict[str, Any]:
        """The generated document, less the JSON FastAPI assumes for the answers that are
        not JSON (the verdict lines, the report page, a bundle, the live stream), with the
        verdict lines' schemas (which no JSON answer names) and the live stream's event data
        among its components."""
        if app.openapi_schema is None:
            document = generated()
            for path, method in (("/v1/validate", "post"), ("/v1/games/{game}/hands/{hand}/report", "get"),
                                 ("/v1/cases/{case}/bundle", "get"), ("/v1/live", "get")):
                document["paths"][path][method]["responses"]["200"]["content"].pop("application/json", None)
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            for model in (models.VerdictLine, models.LineError, models.LiveGame, models.LiveDropped):
                schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
                for name, definition in schema.pop("$defs", {}).items():
                    schemas.setdefault(name, definition)
                schemas[model.__name__] = schema
            live = document["paths"]["/v1/live"]["get"]["responses"]["200"]["content"]["text/event-stream"]
            live["x-events"] = {"game": {"$ref": "#/components/schemas/LiveGame"},
                                "dropped": {"$ref": "#/components/schemas/LiveDropped"}}
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def settings_from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from the environment (`uvicorn --factory service.app:app_from_env`)."""
    env = os.environ if environ is None else environ
    return Settings(warehouse=Location.of(env.get("HAFTKHABIS_WAREHOUSE", "data/warehouse")).uri,
                    keys=KeyStore.configured(None, env))


def app_from_env() -> FastAPI:
    return create_app(settings_from_env())
