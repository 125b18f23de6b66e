"""`haftkhabis simulate`: seeded bot games written as haftkhabis/1 logs (optionally faulty)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from cli import terminal
from cli.terminal import shown

if TYPE_CHECKING:  # the simulator loads only when `simulate` runs (issue 9: a quick start-up)
    from engine.simulate import SimSummary, SimulatedGame


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)


def _fail(message: str) -> typer.Exit:
    terminal.console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {shown(message)}")
    return typer.Exit(2)


def parse_players(text: str) -> tuple[int, int]:
    """`4` or a range `2-14`."""
    low, _, high = text.partition("-")
    try:
        lo = int(low)
        hi = int(high) if high else lo
    except ValueError:
        raise ValueError(f"--players must be a number or a range like 2-14, not {text!r}") from None
    if lo > hi:
        raise ValueError(f"--players range {text!r} runs backwards")
    return lo, hi


def parse_options(text: str) -> dict[str, bool]:
    """`tarkesh=false,ace_deflect=true`."""
    options: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        word = value.strip().lower()
        if not sep or word not in ("true", "false", "on", "off", "1", "0", "yes", "no"):
            raise ValueError(f"--options wants name=true|false pairs, got {item!r}")
        options[name.strip()] = word in ("true", "on", "1", "yes")
    return options


def parse_match(text: str) -> dict[str, int]:
    """`hands=N` or `target=N`."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or name not in ("hands", "target") or not value.strip().isdigit():
        raise ValueError(f"--match must be hands=N or target=N, not {text!r}")
    return {name: int(value)}


def simulate(
    ruleset: Annotated[str, typer.Option("--ruleset", "-r", help="bazito, persian or pis-yedili.")],
    games: Annotated[int, typer.Option("--games", "-n", help="How many games.")] = 100,
    seed: Annotated[int, typer.Option("--seed", "-s", help="The seed: same seed, same bytes.")] = 0,
    players: Annotated[str | None, typer.Option(
        "--players", help="Players per game: a number or a range like 2-14 (default: the ruleset's range).")] = None,
    options: Annotated[str | None, typer.Option(
        "--options", help="persian sub-rules, e.g. tarkesh=false,ace_deflect=true (default: random per game).")] = None,
    mode: Annotated[str | None, typer.Option(
        "--mode", help="persian: points or elimination (default: random per game).")] = None,
    match: Annotated[str | None, typer.Option(
        "--match", help="hands=N or target=N (default: random per game, mostly the ruleset's default).")] = None,
    faults: Annotated[float, typer.Option(
        "--faults", help="Chance per game of one injected fault (0-1); needs --out for the manifest.")] = 0.0,
    out: Annotated[str | None, typer.Option(
        "--out", "-o", help="The log file (.gz: compressed); standard output when absent.")] = None,
    stock_in_deal: Annotated[float, typer.Option(
        "--stock-in-deal", help="Share of deals that list the stock (0-1).")] = 0.5,
) -> None:
    """Let bots play seeded games through the engine and write them as JSON lines.

    With --faults, a manifest of every injected fault is written to OUT.faults.json.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from engine.simulate import SimConfig, manifest_bytes, open_output, write_simulation

    try:
        config = SimConfig(
            ruleset=ruleset,
            games=games,
            seed=seed,
            players=parse_players(players) if players is not None else None,
            options=parse_options(options) if options is not None else None,
            mode=mode,
            match=parse_match(match) if match is not None else None,
            fault_rate=faults,
            stock_in_deal=stock_in_deal,
        )
    except ValueError as exc:
        raise _fail(str(exc)) from None
    if faults > 0 and (out is None or out == "-"):
        raise _fail("--faults needs --out FILE: the manifest is written to FILE.faults.json")
    err = terminal.console(stderr=True)
    show_progress = err.is_terminal and games > 0
    progress = Progress(
        TextColumn(f"simulating {shown(ruleset)}"), BarColumn(), MofNCompleteColumn(),
        TimeRemainingColumn(), console=err, disable=not show_progress, transient=True,
    )
    try:
        if out is not None and out != "-":
            os.makedirs(os.path.dirname(out) or ".", exist_ok=True)  # `--out logs/x.jsonl` on a fresh clone
        stream = open_output(out)
    except OSError as exc:
        raise _fail(f"cannot write {out}: {exc.strerror or exc}") from None
    with progress:
        task = progress.add_task("games", total=games)

        def advance(_: SimulatedGame) -> None:
            progress.advance(task)

        try:
            summary = write_simulation(config, stream, on_game=advance)
        except BrokenPipeError:  # `simulate … | head`: the reader has had enough
            sys.stderr.close()
            raise typer.Exit(0) from None
        finally:
            if stream is not sys.stdout.buffer:
                stream.close()
    if out is not None and out != "-" and faults > 0:
        with open(out + ".faults.json", "wb") as handle:
            handle.write(manifest_bytes(summary.faults))
    _report(err, summary, out)


def _report(err: Console, summary: SimSummary, out: str | None) -> None:
    where = out if out is not None and out != "-" else "standard output"
    text = (f"{summary.games} games, {summary.hands} hands, {summary.lines} lines → {shown(where)}"
            f"; blocked hands {summary.blocked_hands}; aborted games {summary.aborted}")
    if summary.abort_reasons:
        text += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(summary.abort_reasons.items())) + ")"
    if summary.faults:
        text += f"; faults injected {len(summary.faults)}"
    err.print(text, highlight=False)
