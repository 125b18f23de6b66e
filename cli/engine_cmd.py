"""`haftkhabis validate` and `haftkhabis replay`: the engine's verdicts for people and machines."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, BinaryIO

import orjson
import typer
from rich.console import Console
from rich.markup import escape

from engine import _core

if TYPE_CHECKING:
    from engine.replay import ReplayStep

STATUS_STYLE = {
    "compliant": "green",
    "incomplete": "yellow",
    "aborted": "yellow",
    "violations": "red",
    "invalid": "bold red",
}


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
    app.command("replay")(replay)


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(2)


def validate(
    paths: Annotated[list[str], typer.Argument(help="Log files, directories (recursive) or - for stdin.")],
    json: Annotated[bool, typer.Option("--json", help="Write the verdicts as JSON Lines.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary and failing games.")] = False,
) -> None:
    """Replay every game under its ruleset and judge every line.

    Exit status: 0 when every game is compliant and no line errors; 1 otherwise; 2 when it
    cannot run.
    """
    if json:
        # the core writes the JSON lines itself, in chunks, as games finish
        out = sys.stdout.buffer
        try:
            totals = _core.validate_to(paths, out.write, stdin=_python_stdin())
        except FileNotFoundError as exc:
            raise _fail(str(exc)) from None
        out.flush()
        ok = totals["errors"] == 0 and totals.get("compliant", 0) == totals["games"]
        raise typer.Exit(0 if ok else 1)
    validator = _core.Validator()
    try:
        files = _core.expand_paths(paths)
    except FileNotFoundError as exc:
        raise _fail(str(exc)) from None
    console = Console(highlight=False, soft_wrap=True)
    statuses: dict[str, int] = {}
    games = violations = errors = 0

    def show(verdicts: list[_core.Verdict]) -> None:
        nonlocal games, violations
        for verdict in verdicts:
            games += 1
            violations += len(verdict.violations)
            statuses[verdict.status] = statuses.get(verdict.status, 0) + 1
            if not (quiet and verdict.status == "compliant"):
                _print_verdict(console, verdict)

    for file in files:
        validator.feed_file(file, stdin=_python_stdin())
        show(validator.take_verdicts())
        for error in validator.take_errors():
            errors += 1
            where = f"{error['file']}:{error['line']}" if error["line"] else error["file"]
            console.print(f"{escape(where)}: [red]{error['code']}[/red]: {escape(error['message'])}")
    show(validator.finish())
    summary = ", ".join(
        f"[{STATUS_STYLE[s]}]{n} {'with violations' if s == 'violations' else s}[/]"
        for s, n in sorted(statuses.items())
    ) or "no games"
    console.print(
        f"{games} games ({summary}); {violations} violations in all; "
        f"{errors} line errors; {validator.lines_read} lines read"
    )
    ok = errors == 0 and statuses.get("compliant", 0) == games
    raise typer.Exit(0 if ok else 1)


def _python_stdin() -> BinaryIO | None:
    """`sys.stdin` when it is not the process's file descriptor 0 (a test runner's), so
    that the core reads `-` from it; None when the core can read fd 0 itself."""
    try:
        if sys.stdin.fileno() == 0:
            return None
    except (AttributeError, OSError, ValueError):
        pass
    return sys.stdin.buffer


def _print_verdict(console: Console, verdict: _core.Verdict) -> None:
    style = STATUS_STYLE[verdict.status]
    winners = ", ".join(verdict.winners) or "-"
    console.print(
        f"[bold]{escape(verdict.game)}[/bold]  {verdict.ruleset or '?'}  [{style}]{verdict.status}[/]"
        f"  winners: {escape(winners)}  violations: {len(verdict.violations)}"
    )
    for v in verdict.violations:
        where = f"{v['file']}:{v['line']}" if v["file"] else "?"
        seq = "-" if v["seq"] is None else v["seq"]
        console.print(f"  {escape(where)}: seq {seq}: [red]{v['code']}[/red]: {escape(v['message'])}")


def replay(
    paths: Annotated[list[str], typer.Argument(help="The log file(s) holding the game.")],
    game: Annotated[str, typer.Option("--game", "-g", help="The game id.")],
    hand: Annotated[int | None, typer.Option("--hand", help="Only this hand.")] = None,
    step: Annotated[int | None, typer.Option("--step", help="Only this step (1-based, within --hand if given).")] = None,
    json: Annotated[bool, typer.Option("--json", help="Write the steps as JSON Lines.")] = False,
) -> None:
    """Step through one game: each event, its verdict, and the state after it."""
    from engine.narrate import describe_event, describe_state
    from engine.replay import replay_game

    try:
        run = replay_game(paths, game)
    except FileNotFoundError as exc:
        raise _fail(str(exc)) from None
    if run is None:
        raise _fail(f"no game {game!r} in {', '.join(paths)}")
    steps = [s for s in run.steps if hand is None or s.hand == hand]
    if hand is not None and not steps:
        raise _fail(f"game {game} has no hand {hand}")
    numbered = list(enumerate(steps, 1))
    if step is not None:
        if not 1 <= step <= len(steps):
            raise _fail(f"step {step} is out of range (1-{len(steps)})")
        numbered = [numbered[step - 1]]
    if json:
        out = sys.stdout.buffer
        for number, s in numbered:
            out.write(orjson.dumps(_step_json(number, s)) + b"\n")
        out.flush()
        return
    console = Console(highlight=False, soft_wrap=True)
    verdict = run.verdict
    console.print(
        f"[bold]{escape(game)}[/bold] ({verdict.ruleset}) — {len(run.steps)} lines, "
        f"status [{STATUS_STYLE[verdict.status]}]{verdict.status}[/]"
    )
    for number, s in numbered:
        console.rule(f"step {number} · seq {s.seq}", align="left", style="dim")
        console.print(f"[bold]{escape(describe_event(s.event, s.raw))}[/bold]")
        if s.violations:
            for v in s.violations:
                console.print(f"  [red]✗ {v.code.value}[/red]: {escape(v.message)}")
        else:
            console.print("  [green]✓ legal[/green]")
        for text in describe_state(s.state):
            console.print("  " + escape(text))


def _step_json(number: int, step: ReplayStep) -> dict[str, object]:
    from engine.narrate import describe_event

    return {
        "step": number,
        "seq": step.seq,
        "file": step.file,
        "line": step.line,
        "event": step.raw,
        "text": describe_event(step.event, step.raw),
        "violations": [v.to_json() for v in step.violations],
        "state": step.state,
    }
