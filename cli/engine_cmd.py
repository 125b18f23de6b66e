"""`haftkhabis validate` and `haftkhabis replay`: the engine's verdicts for people and machines."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, BinaryIO

import orjson
import typer

from cli import terminal
from cli.terminal import shown
from engine import _core

if TYPE_CHECKING:
    from engine.replay import GameReplay, ReplayStep

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
    terminal.console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {shown(message)}")
    return typer.Exit(2)


def validate(
    paths: Annotated[list[str], typer.Argument(help="Log files, directories (recursive) or - for stdin.")],
    json: Annotated[bool, typer.Option("--json", help="Write the verdicts as JSON Lines.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary and failing games.")] = False,
    max_line_bytes: Annotated[int, typer.Option(
        "--max-line-bytes", min=1, metavar="N",
        help="The longest line read; a longer one is a line_too_long error, read past unheld.")]
        = _core.DEFAULT_MAX_LINE_BYTES,
    max_open_games: Annotated[int, typer.Option(
        "--max-open-games", min=1, metavar="N",
        help="The most games held at once; past it the one longest without a line is judged "
             "as it stands (too_many_open_games).")] = _core.DEFAULT_MAX_OPEN_GAMES,
    max_waiting_lines: Annotated[int, typer.Option(
        "--max-waiting-lines", min=1, metavar="N",
        help="The most lines one game holds waiting for a missing seq; past it the game is "
             "judged as it stands (too_many_open_games).")] = _core.DEFAULT_MAX_WAITING_LINES,
    max_waiting_bytes: Annotated[int, typer.Option(
        "--max-waiting-bytes", min=1, metavar="N",
        help="The most bytes of lines all games together hold waiting for a missing seq; past "
             "it the games holding most are judged as they stand.")] = _core.DEFAULT_MAX_WAITING_BYTES,
    code: Annotated[list[str] | None, typer.Option("--code", "-c", metavar="CODE", help=(
        "Only the games with a violation of this code, and only those violations "
        "(repeatable; e.g. must_play, sequence)."))] = None,
) -> None:
    """Replay every game under its ruleset and judge every line.

    Exit status: 0 when every game is compliant and no line errors; 1 otherwise; 2 when it
    cannot run. With --code: 0 when no game has a violation of those codes, 1 when one does.
    """
    codes = _codes(code)
    if codes and json:
        _json_with_codes(paths, codes)
    if json:
        # the core writes the JSON lines itself, in chunks, as games finish
        out = sys.stdout.buffer
        try:
            totals = _core.validate_to(paths, out.write, stdin=_python_stdin(),
                                       max_line_bytes=max_line_bytes,
                                       max_open_games=max_open_games,
                                       max_waiting_lines=max_waiting_lines,
                                       max_waiting_bytes=max_waiting_bytes)
        except FileNotFoundError as exc:
            raise _fail(str(exc)) from None
        out.flush()
        ok = totals["errors"] == 0 and totals["statuses"].get("compliant", 0) == totals["games"]
        raise typer.Exit(0 if ok else 1)
    console = terminal.console(highlight=False, soft_wrap=True)
    matched = such = 0  # with --code: the games with a violation of those codes, and those violations

    def show(judged: list[_core.Verdict | _core.ErrorInfo]) -> None:
        """Print what the core hands over, as it comes (a batch at a time, one print per
        batch: memory stays flat however many games or bad lines a file holds)."""
        nonlocal matched, such
        lines: list[str] = []
        for item in judged:
            if isinstance(item, dict):  # a line that belongs to no game
                if not codes:  # it is no game's violation
                    where = f"{item['file']}:{item['line']}" if item["line"] else item["file"]
                    lines.append(f"{shown(where)}: [red]{shown(item['code'])}[/red]: "
                                 f"{shown(item['message'])}")
            elif codes:
                found = [v for v in item.violations if v["code"] in codes]
                such += len(found)
                if found:
                    matched += 1
                    lines.extend(_verdict_lines(item, found))
            elif not (quiet and item.status == "compliant"):
                lines.extend(_verdict_lines(item))
        if lines:
            console.print("\n".join(lines))

    try:
        totals = _core.validate_each(paths, show, stdin=_python_stdin(),
                                     max_line_bytes=max_line_bytes, max_open_games=max_open_games,
                                     max_waiting_lines=max_waiting_lines,
                                     max_waiting_bytes=max_waiting_bytes)
    except FileNotFoundError as exc:
        raise _fail(str(exc)) from None
    games, errors, statuses = totals["games"], totals["errors"], totals["statuses"]
    if codes:
        console.print(f"{matched} of {games} games with a violation of {', '.join(sorted(codes))}; "
                      f"{such} such violations; {totals['lines']} lines read")
        raise typer.Exit(1 if matched else 0)
    summary = ", ".join(
        f"[{STATUS_STYLE[s]}]{n} {'with violations' if s == 'violations' else s}[/]"
        for s, n in sorted(statuses.items())
    ) or "no games"
    console.print(
        f"{games} games ({summary}); {totals['violations']} violations in all; "
        f"{errors} line errors; {totals['lines']} lines read"
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


def _codes(given: list[str] | None) -> set[str]:
    """`--code` values, checked against the engine's codes (a usage error names them)."""
    from engine.violations import Code

    known = {c.value for c in Code}
    wrong = [c for c in given or [] if c not in known]
    if wrong:
        raise _fail(f"unknown violation code {', '.join(map(repr, wrong))}; the codes are "
                    f"{', '.join(sorted(known))}")
    return set(given or [])


def _json_with_codes(paths: list[str], codes: set[str]) -> None:
    """`--json --code`: the game records with a violation of `codes`, each with only those
    violations (the line errors are left out: they are no game's)."""
    out = sys.stdout.buffer
    matched = 0

    def write(chunk: bytes) -> None:
        nonlocal matched
        for line in chunk.splitlines():
            record = orjson.loads(line)
            if record.get("kind") != "game":
                continue
            found = [v for v in record["violations"] if v["code"] in codes]
            if found:
                matched += 1
                out.write(orjson.dumps(dict(record, violations=found)) + b"\n")

    try:
        _core.validate_to(paths, write, stdin=_python_stdin())
    except FileNotFoundError as exc:
        raise _fail(str(exc)) from None
    out.flush()
    raise typer.Exit(1 if matched else 0)


def _verdict_lines(verdict: _core.Verdict,
                   violations: list[_core.ViolationInfo] | None = None) -> list[str]:
    """A game's line and its violations' (`violations`: only these), as Rich markup."""
    style = STATUS_STYLE[verdict.status]
    winners = ", ".join(verdict.winners) or "-"
    shown_violations = verdict.violations if violations is None else violations
    count = f"{len(shown_violations)} of {len(verdict.violations)}" if violations is not None \
        else str(len(verdict.violations))
    lines = [f"[bold]{shown(verdict.game)}[/bold]  {shown(verdict.ruleset or '?')}  "
             f"[{style}]{verdict.status}[/]  winners: {shown(winners)}  violations: {count}"]
    for v in shown_violations:
        where = f"{v['file']}:{v['line']}" if v["file"] else "?"
        seq = "-" if v["seq"] is None else v["seq"]
        lines.append(f"  {shown(where)}: seq {seq}: [red]{shown(v['code'])}[/red]: {shown(v['message'])}")
    return lines


def replay(
    paths: Annotated[list[str] | None, typer.Argument(
        help="The log files or folders holding the game (or - for stdin); none with --warehouse.",
        metavar="[PATH]...", show_default=False)] = None,
    game: Annotated[str, typer.Option("--game", "-g", metavar="ID", help="The game id.")] = "",
    hand: Annotated[int | None, typer.Option("--hand", metavar="N", min=0,
                                             help="Only this hand (0: the header).")] = None,
    step: Annotated[int | None, typer.Option(
        "--step", metavar="K", min=1,
        help="Only the K-th step of --hand (1-based, as the dashboard numbers it).")] = None,
    seq: Annotated[int | None, typer.Option(
        "--seq", metavar="S", min=0, help="Only the line with this seq (as validate prints it).")] = None,
    warehouse: Annotated[str | None, typer.Option(
        "--warehouse", "-w", metavar="DIR", help="Read the game from this warehouse instead of logs.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Write the steps as JSON Lines.")] = False,
) -> None:
    """Step through one game: each line's hand, step and seq, what it records, its verdict,
    why the move happened, and the state after it.

    Steps are numbered within their hand (hand 0 is the header), the same way as the
    dashboard's replay and the dispute report; `--seq` picks a line by the seq `validate`
    prints.
    """
    from cli import sources
    from engine.narrate import describe_state

    game = sources.game_id(game)
    if not game:
        raise _fail("give the game with --game ID")
    if warehouse is not None and paths:
        raise _fail("give either log paths or --warehouse, not both")
    if warehouse is None and not paths:
        raise _fail("give the log files holding the game, or --warehouse DIR")
    if step is not None and hand is None:
        from engine.replay import step_without_hand

        raise _fail(step_without_hand("--hand N", "--seq S"))
    try:
        run = sources.from_warehouse(warehouse, game) if warehouse is not None else sources.from_logs(
            list(paths or []), game)
    except sources.SourceError as exc:
        raise _fail(str(exc)) from None
    chosen = _chosen_steps(run, hand, step, seq)
    if json:
        out = sys.stdout.buffer
        for s in chosen:
            out.write(orjson.dumps(_step_json(s)) + b"\n")
        out.flush()
        return
    console = terminal.console(highlight=False, soft_wrap=True)
    console.print(
        f"[bold]{shown(run.game)}[/bold] ({shown(run.ruleset or '?')}) — {len(run.steps)} lines, "
        f"status [{STATUS_STYLE.get(run.status, 'bold')}]{run.status}[/]"
    )
    for s in chosen:
        where = f" · {s.file}:{s.line}" if s.file and s.line else ""
        console.rule(shown(s.label + where), align="left", style="dim")
        console.print(f"[bold]{shown(s.text)}[/bold]")
        if s.violations:
            for v in s.violations:
                console.print(f"  [red]✗ {v.code.value}[/red]: {shown(v.message)}")
        else:
            console.print("  [green]✓ legal[/green]")
        if s.why:
            console.print(f"  why: {shown(s.why)}")
        for aside in s.set_aside:
            at = f"{aside.file}:{aside.line}" if aside.file else f"line {aside.line}"
            console.print(f"  [yellow]⚠ set aside[/yellow]: another line with seq {s.seq} at {shown(at)}")
            if aside.raw is not None:
                console.print("    " + shown(aside.raw.decode("utf-8", "replace")))
            for v in aside.violations:
                console.print(f"    [red]✗ {v.code.value}[/red]: {shown(v.message)}")
        for text in describe_state(s.after):
            console.print("  " + shown(text))


def _chosen_steps(run: GameReplay, hand: int | None, step: int | None, seq: int | None) -> list[ReplayStep]:
    """The steps `--hand`, `--step` and `--seq` pick; a usage error naming what exists."""
    steps = run.steps
    if seq is not None:
        steps = [s for s in steps if s.seq == seq]
        if not steps:
            raise _fail(f"game {run.game} has no line with seq {seq} (seqs {run.seq_span()})")
    if hand is not None:
        if hand not in {s.hand for s in run.steps}:
            hands = ", ".join(str(h) for h in sorted({s.hand for s in run.steps}))
            raise _fail(f"game {run.game} has no hand {hand} (hands: {hands}; 0 is the header)")
        steps = [s for s in steps if s.hand == hand]
        if seq is not None and not steps:
            found = run.by_seq(seq)
            raise _fail(f"seq {seq} is in hand {found.hand if found else '?'}, not hand {hand}")
    if step is not None:
        count = len(run.hand_steps(hand or 0))
        steps = [s for s in steps if s.number == step]
        if not steps:
            raise _fail(f"hand {hand} of game {run.game} has steps 1–{count}; there is no step {step}")
    return steps


def _step_json(step: ReplayStep) -> dict[str, object]:
    return {
        "hand": step.hand,
        "step": step.number,
        "seq": step.seq,
        "file": step.file,
        "line": step.line,
        "event": step.raw,
        "text": step.text,
        "why": step.why,
        "violations": [v.to_json() for v in step.violations],
        "set_aside": [
            {"file": a.file, "line": a.line, "raw": a.raw.decode("utf-8", "replace") if a.raw else None,
             "violations": [v.to_json() for v in a.violations]}
            for a in step.set_aside
        ],
        "state": step.after,
    }
