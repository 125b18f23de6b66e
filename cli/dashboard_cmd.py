"""`haftkhabis dashboard` (serve the Streamlit app) and `haftkhabis report` (one hand as a
self-contained HTML file)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

import dashboards
from dashboards.settings import SERVER_FLAGS, WAREHOUSE_ENV

APP_DIR = Path(next(iter(dashboards.__path__))).resolve()
APP = APP_DIR / "app.py"


def register(app: typer.Typer) -> None:
    app.command("dashboard")(dashboard)
    app.command("report")(report)


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(2)


def streamlit_command(warehouse: Path, port: int, host: str) -> list[str]:
    """The `streamlit run` command line, every safety flag spelled out."""
    flags = dict(SERVER_FLAGS)
    flags["server.address"] = host
    flags["server.port"] = str(port)
    command = [sys.executable, "-m", "streamlit", "run", str(APP)]
    command += [f"--{key}={value}" for key, value in flags.items()]
    return [*command, "--", "--warehouse", str(warehouse)]


def dashboard(
    warehouse: Annotated[Path, typer.Option("--warehouse", help="The warehouse directory (read-only).")] = Path("data/warehouse"),
    port: Annotated[int, typer.Option("--port", help="The port to serve on.")] = 8501,
    host: Annotated[str, typer.Option("--host", help="The address to bind; 127.0.0.1 keeps it on this machine.")] = "127.0.0.1",
) -> None:
    """Serve the dashboard (Streamlit) on http://HOST:PORT until interrupted."""
    warehouse = warehouse.expanduser().resolve()
    if not warehouse.exists():
        Console(stderr=True).print(
            f"[yellow]note:[/yellow] no warehouse at {escape(str(warehouse))}; "
            "the warehouse pages will say so (Check a log works without one)."
        )
    if host not in ("127.0.0.1", "localhost", "::1"):
        Console(stderr=True).print(
            f"[yellow]note:[/yellow] binding {escape(host)}: the dashboard has no login; "
            "anyone who can reach this address can read the warehouse."
        )
    env = dict(os.environ)
    env[WAREHOUSE_ENV] = str(warehouse)
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    Console(stderr=True).print(f"Dashboard on http://{escape(host)}:{port}/  (Ctrl-C stops it)")
    # Streamlit takes this process over (exec, not a child): a signal to `haftkhabis dashboard`
    # reaches the server itself, so stopping it never leaves an orphan serving the port.
    # The app's own folder is the working directory: Streamlit reads .streamlit/config.toml there.
    command = streamlit_command(warehouse, port, host)
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(APP_DIR)
    os.execve(command[0], command, env)


def report(
    game: Annotated[str, typer.Option("--game", "-g", help="The game id.")],
    hand: Annotated[int, typer.Option("--hand", help="The hand to report.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The HTML file to write.")],
    warehouse: Annotated[Path | None, typer.Option("--warehouse", help="Read the game from this warehouse.")] = None,
    log: Annotated[list[Path] | None, typer.Option("--log", help="Read the game from these log files or folders (repeatable).")] = None,
) -> None:
    """Write one hand of one game, step by step with verdicts and scores, as a
    self-contained HTML file."""
    from dashboards.game_replay import replay_lines
    from dashboards.report import render_hand_report

    if log and warehouse is not None:
        raise _fail("give either --warehouse or --log, not both")
    if log:
        lines = _log_lines([str(p) for p in log])
    else:
        from dashboards import data

        source = (warehouse or Path("data/warehouse")).expanduser().resolve()
        try:
            lines = data.game_lines(data.connect(source), game)
        except data.WarehouseMissing as exc:
            raise _fail(str(exc)) from None
    replay = replay_lines(lines, game)
    if replay is None:
        raise _fail(f"no game {game!r} found")
    if hand not in replay.hands:
        raise _fail(f"game {game} has no hand {hand} (hands: {', '.join(map(str, replay.hands)) or 'none'})")
    html = render_hand_report(replay, hand)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    steps = len(replay.hand_steps(hand))
    bad = sum(1 for s in replay.hand_steps(hand) if s.violations)
    Console(stderr=True).print(
        f"wrote {escape(str(out))}: game {escape(game)} hand {hand}, {steps} steps, {bad} with violations"
    )


def _log_lines(paths: list[str]) -> list[tuple[bytes, str | None, int | None]]:
    from engine.reader import InputPathError, LineError, display_name, expand_paths, read_lines

    out: list[tuple[bytes, str | None, int | None]] = []
    try:
        files = expand_paths(paths)
    except InputPathError as exc:
        raise _fail(str(exc)) from None
    for file in files:
        name = display_name(file)
        for item in read_lines(file):
            if isinstance(item, LineError):
                continue
            number, raw = item
            out.append((raw, name, number))
    return out
