"""`haftkhabis dashboard` (serve the Streamlit app) and `haftkhabis report` (one hand as a
self-contained HTML file)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli import terminal
from cli.terminal import shown


def register(app: typer.Typer) -> None:
    app.command("dashboard")(dashboard)
    app.command("report")(report)


def _fail(message: str) -> typer.Exit:
    terminal.console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {shown(message)}")
    return typer.Exit(2)


def dashboard(
    warehouse: Annotated[str, typer.Option("--warehouse", "-w", help=(
        "The warehouse directory or s3://BUCKET/PREFIX (read; the desk's cases are written to it)."))] = "data/warehouse",
    port: Annotated[int, typer.Option("--port", help="The port to serve on.")] = 8501,
    host: Annotated[str, typer.Option("--host", help="The address to bind; 127.0.0.1 keeps it on this machine.")] = "127.0.0.1",
    storage: Annotated[list[str] | None, typer.Option(
        "--storage-option", metavar="KEY=VALUE",
        help="An object-store option (AWS_ENDPOINT_URL, …), repeatable; AWS_* env is read too.")] = None,
    state: Annotated[Path | None, typer.Option(
        "--state", metavar="DIR", show_default=False,
        help="The API service's state folder (`haftkhabis serve --state`), whose alerts the Live page "
             "shows (default: WAREHOUSE/_api for a warehouse on this disk).")] = None,
) -> None:
    """Serve the dashboard (Streamlit) on http://HOST:PORT until interrupted."""
    from ingest.storage import StorageError, parse_options

    try:
        parse_options(storage)  # checked here, handed to the dashboard as given
    except StorageError as exc:
        raise _fail(str(exc)) from None
    remote = warehouse.startswith("s3://")
    place: Path | str = warehouse if remote else Path(warehouse).expanduser().resolve()
    if not remote and not Path(place).exists():
        terminal.console(stderr=True).print(
            f"[yellow]note:[/yellow] no warehouse at {shown(str(warehouse))}; "
            "the warehouse pages will say so (Check a log works without one)."
        )
    if host not in ("127.0.0.1", "localhost", "::1"):
        terminal.console(stderr=True).print(
            f"[yellow]note:[/yellow] binding {shown(host)}: the dashboard has no login; "
            "anyone who can reach this address can read the warehouse."
        )
    terminal.console(stderr=True).print(f"Dashboard on http://{shown(host)}:{port}/  (Ctrl-C stops it)")
    # the dashboard package builds Streamlit's command line and becomes it (same process)
    command = [sys.executable, "-m", "dashboards.server", "launch", "--warehouse", str(place),
               "--port", str(port), "--host", host]
    for option in storage or ():
        command += ["--storage-option", option]
    if state is not None:
        command += ["--state", str(state.expanduser().resolve())]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)


def report(
    game: Annotated[str, typer.Option("--game", "-g", metavar="ID", help="The game id.")],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="FILE.html", help="The HTML file to write.")],
    hand: Annotated[int | None, typer.Option("--hand", metavar="N", min=0, help=(
        "The hand to report (default: the hand of --seq S, else of the game's first violation)."))] = None,
    seq: Annotated[int | None, typer.Option(
        "--seq", metavar="S", min=0, help="The disputed line (default: the hand's first flagged step).")] = None,
    player: Annotated[str | None, typer.Option(
        "--player", metavar="ID", help="The player view: only what this player could see, no server "
        "paths (default: the support view).")] = None,
    warehouse: Annotated[Path | None, typer.Option(
        "--warehouse", "-w", metavar="DIR", help="Read the game from this warehouse \\[default: data/warehouse].",
        show_default=False)] = None,
    log: Annotated[list[Path] | None, typer.Option(
        "--log", metavar="PATH", help="Read the game from these log files or folders (repeatable).")] = None,
) -> None:
    """Write the dispute report of one hand as a self-contained HTML file: a summary (the
    disputed step, the verdict and its rule, what reproduces it), the step and its
    neighbours, the scores, then the whole hand folded below.

    `--seq S` alone names the line and its hand; with neither `--seq` nor `--hand`, the
    report is about the game's first violation."""
    from cli import sources
    from engine.report import render_hand_report

    game = sources.game_id(game)
    if log and warehouse is not None:
        raise _fail("give either --warehouse or --log, not both")
    try:
        if log:
            replay = sources.from_logs([str(p) for p in log], game, digest=True)
            source = " ".join(str(p) for p in log)
        else:
            place = warehouse or Path("data/warehouse")
            replay = sources.from_warehouse(str(place), game)
            source = f"--warehouse {place}"
    except sources.SourceError as exc:
        raise _fail(str(exc)) from None
    if hand is None:
        found = replay.by_seq(seq) if seq is not None else replay.next_violation(None)
        if found is None:
            raise _fail(f"game {game} has no line with seq {seq} (seqs {replay.seq_span()})" if seq is not None
                        else f"game {game} has no violation to report on: name the hand with --hand N "
                        f"(hands: {', '.join(map(str, replay.hands))}) or the line with --seq S")
        hand = found.hand
        seq = found.seq if seq is None else seq
    if hand not in replay.hands:
        raise _fail(f"game {game} has no hand {hand} (hands: {', '.join(map(str, replay.hands)) or 'none'})")
    try:
        html = render_hand_report(replay, hand, seq=seq, viewer=player, source=source)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    steps = replay.hand_steps(hand)
    bad = sum(1 for s in steps if s.flagged)
    view = f"player view for {player}" if player else "support view"
    terminal.console(stderr=True).print(
        f"wrote {shown(str(out))}: game {shown(game)} hand {hand} ({shown(view)}), {len(steps)} steps, "
        f"{bad} flagged"
    )
