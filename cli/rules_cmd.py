"""`haftkhabis infer`, `diff-rules`, `what-if` and `schema`: which rules a log really
plays, the same log under another profile, another move at a disputed step, and the JSON
Schema for producers. The engine modules load when a command runs (a quick `--help`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from engine.infer import BuildSummary, GameInference

DEFAULT_SCHEMA = "docs/schema/haftkhabis-1.schema.json"


def register(app: typer.Typer) -> None:
    app.command("infer")(infer)
    app.command("diff-rules")(diff_rules)
    app.command("what-if")(what_if)
    app.command("schema")(schema)


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(2)


def _print_game(console: Console, inference: GameInference, detail: bool) -> None:
    header = inference.header.name if inference.header else "(no usable header)"
    inferred = inference.inferred
    passing = inference.compliant
    verb = "closest" if inference.closest_only else "plays"
    line = (f"[bold]{escape(inference.game)}[/bold]  header: {escape(header)}  "
            f"{verb}: {escape(inferred.name if inferred else '?')}  "
            f"complies with {len(passing)}/{len(inference.verdicts)} profiles")
    console.print(line)
    if inference.discrepancy:
        console.print(f"  [red]≠ header:[/red] {escape(', '.join(inference.discrepancy))}")
    contradiction = inference.header_contradiction
    if contradiction is not None:
        console.print(f"  header profile contradicted at {escape(contradiction.where())}: "
                      f"{contradiction.code}: {escape(contradiction.message)}")
    if detail:
        for verdict in inference.verdicts:
            if verdict.first is None:
                console.print(f"    [green]✓[/green] {escape(verdict.profile.name)}")
            else:
                count = "" if verdict.violations is None else f" ({verdict.violations} violations)"
                console.print(f"    ✗ {escape(verdict.profile.name)}{count}: {escape(verdict.first.where())} "
                              f"{verdict.first.code}: {escape(verdict.first.message)}")


def _print_build(console: Console, summary: BuildSummary, top: int) -> None:
    table = Table(title=f"{summary.build} — {summary.games} games", title_justify="left")
    table.add_column("profile", overflow="fold")
    table.add_column("games compliant", justify="right")
    table.add_column("share", justify="right")
    table.add_column("in headers", justify="right")
    for profile, games, share in summary.table(top):
        table.add_row(escape(profile.name), str(games), f"{share:.0%}", str(summary.headers[profile] or ""))
    console.print(table)
    for sentence in summary.findings():
        console.print(f"[bold red]finding:[/bold red] {escape(sentence)}")


def infer(
    paths: Annotated[list[str], typer.Argument(help="Log files or directories (recursive).")],
    game: Annotated[list[str] | None, typer.Option("--game", "-g", metavar="ID", help="Only these games (repeatable).")] = None,
    ruleset: Annotated[str | None, typer.Option("--ruleset", "-r", metavar="R", help="Only this ruleset's profiles.")] = None,
    json: Annotated[bool, typer.Option("--json", help="JSON Lines: one object per game, then one per build.")] = False,
    detail: Annotated[bool, typer.Option("--detail", help="Every profile's first contradicting line.")] = False,
    games_shown: Annotated[bool, typer.Option("--games/--builds-only", help="List every game.")] = True,
    top: Annotated[int, typer.Option("--top", metavar="N", help="Profiles shown per build.")] = 8,
) -> None:
    """Replay each game under every ruleset profile (the three rulesets; persian with each
    combination of its options in both modes): the profiles it complies with, the closest
    when none does, the first line contradicting each; per server build, the share of games
    compliant with each profile and what the logs play differently from their headers.

    Exit status: 0 when every game plays what its header says, 1 when one does not, 2 when
    it cannot run.
    """
    from engine.infer import infer_paths, summarize
    from engine.profiles import candidates

    try:
        profiles = candidates(ruleset)
        if not profiles:
            raise ValueError(f"unknown ruleset {ruleset!r}")
        results = infer_paths(paths, games=game, profiles=profiles)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    summaries = summarize(results)
    if json:
        out = sys.stdout.buffer
        for inference in results:
            out.write(orjson.dumps(inference.to_json()) + b"\n")
        for summary in summaries:
            out.write(orjson.dumps(summary.to_json()) + b"\n")
        out.flush()
    else:
        console = Console(highlight=False, soft_wrap=True)
        if games_shown:
            for inference in results:
                _print_game(console, inference, detail)
            console.print()
        for summary in summaries:
            _print_build(console, summary, top)
        mismatched = sum(1 for r in results if r.discrepancy)
        console.print(f"{len(results)} games, {len(profiles)} profiles each; "
                      f"{mismatched} play other rules than their header says")
    raise typer.Exit(1 if any(r.discrepancy for r in results) else 0)


PathsArgument = Annotated[list[str] | None, typer.Argument(
    help="Log files or directories holding the game; none with --warehouse.", metavar="[PATH]...",
    show_default=False)]
WarehouseOption = Annotated[str | None, typer.Option(
    "--warehouse", "-w", metavar="DIR", help="Read the game from this warehouse (a local folder) instead of logs.")]
GameOption = Annotated[str, typer.Option("--game", "-g", metavar="ID", help="The game.")]


def _lines(paths: list[str] | None, warehouse: str | None, game: str) -> list[tuple[bytes, str | None, int | None]]:
    from cli import sources

    try:
        return sources.game_lines(paths, warehouse, game)
    except sources.SourceError as exc:
        raise _fail(str(exc)) from None


def diff_rules(
    paths: PathsArgument = None,
    game: GameOption = "",
    profile: Annotated[str, typer.Option("--as", metavar="PROFILE", help=(
        "The other profile, e.g. persian:tarkesh=false."))] = "",
    warehouse: WarehouseOption = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """The same log under its own header and under another profile, side by side: the
    first step where the verdicts diverge, and the scores and winners under each. Settings
    the profile does not name are the header's (when it is of the same ruleset).

    Exit status: 0 when the verdicts agree, 1 when they diverge, 2 when it cannot run.
    """
    from cli.sources import game_id
    from engine.infer import diff_rules as run_diff

    game = game_id(game)
    if not game or not profile:
        raise _fail("give the game with --game ID and the other profile with --as PROFILE")
    try:
        diff = run_diff(_lines(paths, warehouse, game), game, profile)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    if json:
        sys.stdout.buffer.write(orjson.dumps(diff.to_json()) + b"\n")
        raise typer.Exit(0 if diff.diverges_at is None else 1)
    console = Console(highlight=False, soft_wrap=True)
    header = diff.header.name if diff.header else "(no usable header)"
    table = Table(title=f"{game}", title_justify="left")
    # short, distinct headers (a profile's name is long, and two cut to a width read the
    # same): the profiles are the first row, folded rather than cut
    table.add_column("")
    table.add_column("as its header says", overflow="fold")
    table.add_column("as --as says", overflow="fold")
    table.add_row("profile", escape(header), escape(diff.other.name))
    table.add_row("status", diff.own.status, diff.as_other.status)
    table.add_row("violations", str(len(diff.own.violations)), str(len(diff.as_other.violations)))
    for hand in sorted({h["hand"] for h in (diff.own.hands or []) + (diff.as_other.hands or [])}):
        def show(v: object, number: int = hand) -> str:
            hands = getattr(v, "hands", None) or []
            h = next((x for x in hands if x["hand"] == number), None)
            if h is None:
                return "—"
            scores = " ".join(f"{p}:{s}" for p, s in (h["scores"] or {}).items())
            order = f" order {' '.join(h['order'])}" if h["order"] else ""
            return f"winners {' '.join(h['winners'])}{order}  {scores}".strip()
        table.add_row(f"hand {hand}", escape(show(diff.own)), escape(show(diff.as_other)))
    totals = [" ".join(f"{p}:{s}" for p, s in (v.totals or {}).items()) or "—" for v in (diff.own, diff.as_other)]
    table.add_row("totals", escape(totals[0]), escape(totals[1]))
    table.add_row("winners", escape(" ".join(diff.own.winners) or "—"), escape(" ".join(diff.as_other.winners) or "—"))
    console.print(table)
    if diff.diverges_at is None:
        console.print("The verdicts agree at every step.")
        raise typer.Exit(0)
    own_at, other_at = diff.at(diff.diverges_at)
    console.print(f"The verdicts diverge first at seq {diff.diverges_at} "
                  f"(the table first differs after seq {diff.state_diverges_at}):")
    for label, found in (("header", own_at), ("as", other_at)):
        text = "; ".join(f"{v['code']}: {v['message']}" for v in found) or "no violation"
        console.print(f"  {label}: {escape(text)}")
    raise typer.Exit(1)


def what_if(
    paths: PathsArgument = None,
    game: GameOption = "",
    seq: Annotated[int | None, typer.Option("--seq", metavar="S", min=0, help=(
        "The line whose move to replace, by its seq (as validate prints it: `seq 2`)."))] = None,
    move: Annotated[list[str] | None, typer.Option("--move", "-m", metavar="M", help=(
        "A move: 7C, JS/H (a J declaring hearts), 2D>lale (a 2's gift to lale), draw, pass "
        "(repeatable, in order)."))] = None,
    warehouse: WarehouseOption = None,
    json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
    player: Annotated[str | None, typer.Option("--player", metavar="ID", help=(
        "This player's view: their own moves only, no draw, nothing they could not see."))] = None,
) -> None:
    """At the line numbered S (its seq, as `validate` and `replay --seq S` name it), play
    other moves than the recorded one and see what follows.

    Without --move, lists what was legal there. Cards are shown as people read them (10♥,
    J♠ declaring ♥), a draw with its count. Exit status: 0, or 1 when a move is refused, 2
    when it cannot run.
    """
    from cli.sources import game_id
    from engine.whatif import WhatIfError
    from engine.whatif import what_if as run_what_if

    game = game_id(game)
    if not game or seq is None:
        raise _fail("give the game with --game ID and the line with --seq S")
    try:
        result = run_what_if(_lines(paths, warehouse, game), game, seq, move or [], player)
    except (FileNotFoundError, WhatIfError) as exc:
        raise _fail(str(exc)) from None
    if json:
        sys.stdout.buffer.write(orjson.dumps(result.to_json()) + b"\n")
        raise typer.Exit(1 if result.refused else 0)
    from engine.cards import pretty, pretty_cards
    from engine.events import from_encoded
    from engine.narrate import describe_event

    console = Console(highlight=False, soft_wrap=True)
    recorded = result.recorded or {}
    try:
        said = describe_event(from_encoded(recorded), recorded) if recorded else "nothing"
    except (KeyError, TypeError, ValueError):  # a line the replay keeps but events cannot hold
        said = orjson.dumps(recorded).decode()
    console.print(f"{escape(game)} seq {seq} (hand {result.hand}): recorded {escape(said)}")
    for v in result.recorded_violations:
        console.print(f"  ✗ {v['code']}" + (f": {escape(v['message'])}" if v["message"] else ""))
    console.print(f"legal instead: {escape(', '.join(w for _, w in result.offered(at_end=False)) or 'nothing')}")
    for step in result.steps:
        state = step.state
        legal = (state.get("legal") or {}).get("text") or ""
        if step.move.kind == "draw":
            n = len(step.drawn)
            did = f"draws {n} card{'s' if n != 1 else ''}" + (f" ({pretty_cards(step.drawn)})" if step.drawn else "")
        elif step.move.kind == "pass":
            did = "passes"
        else:
            did = f"plays {step.move.words()}"
        pile = pretty(state["pile_top"]) if state.get("pile_top") else "(empty)"
        pending = f", pending 7 total {state['pending_total']}" if state.get("pending_total") else ""
        console.print(f"  seq {step.seq}: {escape(step.player)} {escape(did)} → pile {pile}{pending}"
                      + (f"; {escape(legal)}" if legal else ""))
    if result.refused is not None:
        console.print(f"[red]refused:[/red] {escape(result.refused.player)} {escape(result.refused.move.words())}: "
                      f"{escape(result.refused.reason())}")
    if result.stopped:
        console.print(f"stopped: {escape(result.stopped)}")
    if result.next_moves:
        console.print(f"next: {escape(', '.join(w for _, w in result.offered(at_end=True)))}")
    if result.outcome is not None:
        recorded_winners = (result.recorded_outcome or {}).get("winners")
        console.print(f"branch outcome: winners {' '.join(result.outcome['winners'])} {result.outcome['scores']}; "
                      f"recorded: winners {' '.join(recorded_winners or [])} "
                      f"{(result.recorded_outcome or {}).get('scores')}")
    raise typer.Exit(1 if result.refused else 0)


def schema(
    out: Annotated[Path | None, typer.Option("--out", "-o", metavar="FILE", help=f"Write it here (e.g. {DEFAULT_SCHEMA}).")] = None,
    check: Annotated[Path | None, typer.Option("--check", metavar="FILE", help="Exit 1 unless this file equals the generated schema.")] = None,
) -> None:
    """The JSON Schema (draft 2020-12) of a haftkhabis/1 line, generated from the codec's
    field table; standard output unless --out."""
    from engine.schema import render

    text = render()
    if check is not None:
        same = check.exists() and check.read_bytes() == text
        if not same:
            Console(stderr=True).print(f"{escape(str(check))} is not the generated schema; "
                                       f"run: haftkhabis schema --out {escape(str(check))}")
        raise typer.Exit(0 if same else 1)
    if out is None:
        sys.stdout.buffer.write(text)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_bytes(text)
    tmp.replace(out)
