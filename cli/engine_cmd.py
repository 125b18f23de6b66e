"""`haftkhabis validate` and `haftkhabis replay`: the engine's verdicts for people and machines."""

from __future__ import annotations

import sys
from typing import Annotated

import orjson
import typer
from rich.console import Console
from rich.markup import escape

from engine.narrate import describe_event, describe_state
from engine.reader import InputPathError
from engine.validate import GameVerdict, Step, Validator, replay_game

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
    validator = Validator()
    try:
        validator.feed_paths(paths)
    except InputPathError as exc:
        raise _fail(str(exc)) from None
    verdicts = list(validator.finish())
    errors = validator.errors
    ok = not errors and all(v.status == "compliant" for v in verdicts)
    if json:
        out = sys.stdout.buffer
        for verdict in verdicts:
            out.write(orjson.dumps(verdict.to_json()) + b"\n")
        for error in errors:
            out.write(orjson.dumps(error.to_json()) + b"\n")
        out.flush()
        raise typer.Exit(0 if ok else 1)
    console = Console(highlight=False, soft_wrap=True)
    for verdict in verdicts:
        if quiet and verdict.status == "compliant":
            continue
        _print_verdict(console, verdict)
    for error in errors:
        where = f"{error.file}:{error.line}" if error.line else error.file
        console.print(f"{escape(where)}: [red]{error.code.value}[/red]: {escape(error.message)}")
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    summary = ", ".join(
        f"[{STATUS_STYLE[s]}]{n} {s}[/]" for s, n in sorted(counts.items())
    ) or "no games"
    n_violations = sum(len(v.violations) for v in verdicts)
    console.print(
        f"{len(verdicts)} games: {summary}; {n_violations} violations; "
        f"{len(errors)} line errors; {validator.lines_read} lines read"
    )
    raise typer.Exit(0 if ok else 1)


def _print_verdict(console: Console, verdict: GameVerdict) -> None:
    style = STATUS_STYLE[verdict.status]
    winners = ", ".join(verdict.winners) or "-"
    console.print(
        f"[bold]{escape(verdict.game)}[/bold]  {verdict.ruleset or '?'}  [{style}]{verdict.status}[/]"
        f"  winners: {escape(winners)}  violations: {len(verdict.violations)}"
    )
    for v in verdict.violations:
        where = f"{v.file}:{v.line}" if v.file else "?"
        seq = "-" if v.seq is None else v.seq
        console.print(f"  {escape(where)}: seq {seq}: [red]{v.code.value}[/red]: {escape(v.message)}")


def replay(
    paths: Annotated[list[str], typer.Argument(help="The log file(s) holding the game.")],
    game: Annotated[str, typer.Option("--game", "-g", help="The game id.")],
    hand: Annotated[int | None, typer.Option("--hand", help="Only this hand.")] = None,
    step: Annotated[int | None, typer.Option("--step", help="Only this step (1-based, within --hand if given).")] = None,
    json: Annotated[bool, typer.Option("--json", help="Write the steps as JSON Lines.")] = False,
) -> None:
    """Step through one game: each event, its verdict, and the state after it."""
    try:
        run, _errors = replay_game(paths, game)
    except InputPathError as exc:
        raise _fail(str(exc)) from None
    if run is None:
        raise _fail(f"no game {game!r} in {', '.join(paths)}")
    steps = [s for s in run.steps if hand is None or _hand_of(s) == hand]
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
    verdict = run.verdict()
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


def _hand_of(step: Step) -> int | None:
    return step.state.get("hand") if step.state else None


def _step_json(number: int, step: Step) -> dict[str, object]:
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
