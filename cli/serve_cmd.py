"""`haftkhabis serve` (the HTTP API, service/) and `haftkhabis api-key` (a new key and the
entry that configures it). FastAPI and uvicorn load only when `serve` runs."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from cli.warehouse_cmd import DEFAULT_WAREHOUSE, StorageOption, storage_options
from engine import _core

LOOPBACK_NAMES = ("localhost",)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("api-key")(api_key)


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(2)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    warehouse: Annotated[str, typer.Option("--warehouse", "-w", help="The warehouse: a folder or s3://BUCKET/PREFIX (pushed batches are committed to it).")] = DEFAULT_WAREHOUSE,
    storage: StorageOption = None,
    state: Annotated[Path | None, typer.Option("--state", metavar="DIR", help="A local folder for pushed bodies and their receipts (default: WAREHOUSE/_api for a folder, ~/.local/state/haftkhabis/api/BUCKET/PREFIX for S3).", show_default=False)] = None,
    host: Annotated[str, typer.Option("--host", help="The address to bind; 127.0.0.1 keeps it on this machine.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="The port to serve on.")] = 8600,
    keys: Annotated[Path | None, typer.Option("--keys", help="The API keys file (TOML or JSON; default: $HAFTKHABIS_API_KEYS_FILE, else the document in $HAFTKHABIS_API_KEYS).")] = None,
    dashboard_url: Annotated[str, typer.Option("--dashboard-url", help="Where the dashboard is served, for deep links.")] = "http://127.0.0.1:8501",
    max_validate_mb: Annotated[int, typer.Option("--max-validate-mb", min=1, help="Largest body POST /v1/validate takes (MiB, decompressed).")] = 64,
    max_ingest_mb: Annotated[int, typer.Option("--max-ingest-mb", min=1, help="Largest body POST /v1/ingest takes (MiB, decompressed).")] = 256,
    max_line_bytes: Annotated[int, typer.Option("--max-line-bytes", min=1, metavar="N", help="The longest line a validated or pushed body may hold; a longer one is a line_too_long error, read past unheld.")] = _core.DEFAULT_MAX_LINE_BYTES,
    ingest_workers: Annotated[int, typer.Option("--ingest-workers", min=1, help="Worker processes per pushed batch.")] = 1,
    commit_interval: Annotated[float, typer.Option("--commit-interval", min=0.0, help="Pushes waiting are committed together at most this many seconds after the last commit started.")] = 1.0,
    commit_lines: Annotated[int, typer.Option("--commit-lines", min=1, help="…and at once when this many lines wait (the most a group holds).")] = 100_000,
    max_lag: Annotated[float, typer.Option("--max-lag", min=0.0, help="Past this many seconds of wait for the oldest push, new pushes are told to wait (429, Retry-After).")] = 30.0,
    compact_every: Annotated[int, typer.Option("--compact-every", min=0, help="After this many groups, merge the parts due: each partition's parts of one size tier joined once there are 8 (0: never; `haftkhabis compact` still re-packs and vacuums).")] = 8,
    validate_threads: Annotated[int, typer.Option("--validate-threads", min=1, help="Bodies past 1 MiB validated at once, each in a worker process at a lower CPU priority (smaller ones have two threads of their own).")] = 2,
    max_validations_per_key: Annotated[int, typer.Option("--max-validations-per-key", min=1, help="Validations one key may have in flight at once (past it: 429).")] = 2,
    body_min_rate: Annotated[float, typer.Option("--body-min-rate", min=0.0, metavar="BYTES/S", help="A body must arrive at least this fast on average after --body-grace seconds (else 408; 0: no minimum).")] = 16 * 1024,
    body_grace: Annotated[float, typer.Option("--body-grace", min=0.0, metavar="S", help="Seconds a body may take before --body-min-rate applies.")] = 10.0,
    header_timeout: Annotated[float, typer.Option("--header-timeout", min=0.1, metavar="S", help="A connection that has not sent a request's headers within S seconds (of opening, or of its last response) is closed.")] = 10.0,
    keep_alive_timeout: Annotated[int, typer.Option("--keep-alive-timeout", min=1, metavar="S", help="An idle keep-alive connection is closed after S seconds.")] = 5,
    rate: Annotated[float, typer.Option("--rate", min=0, help="Requests a second per key (0: unlimited), unless its entry sets `rate`.")] = 20.0,
    burst: Annotated[int | None, typer.Option("--burst", min=1, help="Requests a key may make at once (default: twice the rate).")] = None,
    alerts: Annotated[Path | None, typer.Option("--alerts", metavar="FILE", help="Alert rules and their webhook (TOML; docs/operations.md). Their states are listed at /v1/alerts and kept in STATE/alerts.json.", show_default=False)] = None,
    live_queue: Annotated[int, typer.Option("--live-queue", min=1, help="Games queued for each /v1/live client; past it a slow client's oldest are dropped (and it is told).")] = 1000,
    live_subscribers: Annotated[int, typer.Option("--live-subscribers", min=1, help="Clients watching /v1/live at once.")] = 100,
    live_heartbeat: Annotated[float, typer.Option("--live-heartbeat", min=0.0, help="Seconds between /v1/live heartbeats (comment lines) while nothing commits; 0: none.")] = 15.0,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn's log level.")] = "info",
) -> None:
    """Serve the HTTP API under /v1 (OpenAPI at /v1/openapi.json, docs at /v1/docs).

    Validation, ingest, games, steps, hand reports and aggregates, behind API keys with
    roles (docs/api.md). Bound to 127.0.0.1 unless --host says otherwise.
    """
    from ingest.lifetime import return_freed_memory

    return_freed_memory()  # it runs for days; first, before any thread
    import uvicorn

    from ingest.spools import sweep_stale
    from ingest.storage import Location, StorageError
    from service.alert_rules import AlertConfig, AlertFileError
    from service.app import MiB, Settings, create_app
    from service.auth import KeyFileError, KeyStore
    from service.connections import bounded_http
    from service.jobs import state_folder

    options = storage_options(storage)
    try:
        location = Location.of(warehouse, options)
    except StorageError as exc:
        raise _fail(str(exc)) from None
    try:
        store = KeyStore.configured(keys)
    except KeyFileError as exc:
        raise _fail(str(exc)) from None
    try:
        rules = AlertConfig.from_file(alerts) if alerts is not None else None
    except AlertFileError as exc:
        raise _fail(str(exc)) from None
    console = Console(stderr=True)
    if not is_loopback(host):
        if store.has_demo_keys:
            raise _fail(f"{store.source} holds published demo keys: serve them on 127.0.0.1 only")
        console.print(f"[yellow]note:[/yellow] binding {escape(host)}: the API is reachable "
                      "from other machines (keys are sent in clear without TLS in front), and "
                      "/metrics, which needs no key, with it.")
    if not len(store):
        console.print("[yellow]note:[/yellow] no API keys are configured (--keys FILE): every "
                      "call but /v1/health will be refused (401).")
    folder = state.expanduser().resolve() if state is not None else state_folder(location)
    settings = Settings(
        warehouse=location.uri, storage_options=options, state=folder, keys=store,
        dashboard_url=dashboard_url,
        max_validate_bytes=max_validate_mb * MiB, max_ingest_bytes=max_ingest_mb * MiB,
        max_line_bytes=max_line_bytes, max_validations_per_key=max_validations_per_key,
        body_min_rate=body_min_rate, body_grace=body_grace,
        ingest_workers=ingest_workers, validate_threads=validate_threads, rate=rate, burst=burst,
        commit_interval=commit_interval, commit_lines=commit_lines, max_lag=max_lag,
        compact_every=compact_every,
        alerts=rules, live_queue=live_queue, live_subscribers=live_subscribers,
        live_heartbeat=live_heartbeat,
    )
    console.print(f"API on http://{escape(host)}:{port}/v1 (docs: /v1/docs) over "
                  f"{escape(location.uri)}, {len(store)} keys from {escape(store.source)}"
                  + ("" if location.local else f"; pushed bodies kept in {escape(str(folder))}")
                  + (f"; {len(rules.rules)} alert rules from {escape(rules.source)}" if rules else "")
                  + " (Ctrl-C stops it)")
    sweep_stale()  # spool folders a killed ingest left in $TMPDIR
    uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level,
                proxy_headers=False, server_header=False, date_header=True,
                http=bounded_http(header_timeout), loop="uvloop", timeout_keep_alive=keep_alive_timeout)


def api_key(
    name: Annotated[str, typer.Option("--name", help="Who the key is for (shown in logs and errors).")],
    role: Annotated[list[str] | None, typer.Option("--role", help="ingest, support, analyst or auditor (repeatable).")] = None,
    player: Annotated[str | None, typer.Option("--player", help="A player-scoped token for this player (no role).")] = None,
    append: Annotated[Path | None, typer.Option("--append", help="Add the entry to this keys file.")] = None,
    expires: Annotated[str | None, typer.Option("--expires", metavar="WHEN", help="Refuse the key from this date or date-time on (ISO 8601, UTC unless given: 2027-06-30, 2027-06-30T12:00:00+03:30).")] = None,
) -> None:
    """Make a new API key: its keys-file entry, and the key (shown once).

    Only the key's SHA-256 digest goes in the keys file.
    """
    from service.auth import KeyFileError, Role, key_entry, new_key, parse_moment

    try:
        until = parse_moment(expires, "--expires")
    except KeyFileError as exc:
        raise _fail(str(exc)) from None
    roles = role or []
    if (player is None) == (not roles):
        raise _fail("give --role (one or more) or --player, not both")
    unknown = [r for r in roles if r not in {x.value for x in Role}]
    if unknown:
        raise _fail(f"unknown role {unknown[0]!r} (roles: {', '.join(x.value for x in Role)})")
    key = new_key()
    entry = key_entry(name, key, roles, player, until)
    if append is not None:
        existing = append.read_text(encoding="utf-8") if append.exists() else ""
        separator = "\n" if existing and not existing.endswith("\n\n") else ""
        append.write_text(existing + separator + entry, encoding="utf-8")
        Console(stderr=True).print(f"added {escape(name)!r} to {escape(str(append))}")
    else:
        typer.echo(entry, nl=False)
    Console(stderr=True).print("the key (shown once; keep it secret):")
    typer.echo(key)
