"""`haftkhabis analyse`: each decision's move quality and each deal's strength, by rollouts."""

from __future__ import annotations

import sys
from typing import Annotated

import orjson
import typer

from cli import terminal
from cli.terminal import shown
from engine.analysis import Search


def register(app: typer.Typer) -> None:
    app.command("analyse")(analyse)


def _fail(message: str) -> typer.Exit:
    terminal.console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {shown(message)}")
    return typer.Exit(2)


def analyse(
    game: Annotated[str, typer.Argument(help="The game id.", metavar="GAME")],
    paths: Annotated[list[str] | None, typer.Argument(
        help="The log files or folders holding the game (or - for stdin); none with --warehouse.",
        metavar="[PATH]...", show_default=False)] = None,
    warehouse: Annotated[str | None, typer.Option(
        "--warehouse", "-w", metavar="DIR", help="Read the game from this warehouse instead of logs.")] = None,
    hand: Annotated[int | None, typer.Option("--hand", metavar="N", min=1, help="Only this hand.")] = None,
    rollouts: Annotated[int, typer.Option(
        "--rollouts", metavar="K", min=10, help="Rollouts per legal move at each decision.")] = 500,
    seed: Annotated[int, typer.Option("--seed", min=0, help="The rollouts' seed (same seed, same figures).")] = 0,
    threads: Annotated[int, typer.Option("--threads", min=0, help="Rollout threads (0: every core).")] = 0,
    search: Annotated[Search, typer.Option(
        "--search", help="flat: every move played out K times (the default); ismcts: the same "
        "playouts spent by an information-set tree search (docs/analysis.md).")] = Search.FLAT,
    json: Annotated[bool, typer.Option("--json", help="Write the analysis as one JSON object.")] = False,
) -> None:
    """Rate every decision of a game: each legal move's expected points at the hand's end
    (lower is better), by rollouts from what the deciding player could know, the best
    move, and the chosen move's loss with its standard error; and each deal's strength.

    The rollouts play the hand out with a fixed greedy policy (docs/analysis.md); the
    figures are estimates of that policy's outcome, reproducible with the same --seed.
    """
    from cli import sources
    from engine.analysis import AnalysisError, analyse_replay

    game = sources.game_id(game)
    if warehouse is not None and paths:
        raise _fail("give either log paths or --warehouse, not both")
    if warehouse is None and not paths:
        raise _fail("give the log files holding the game, or --warehouse DIR")
    try:
        replay = sources.from_warehouse(warehouse, game) if warehouse is not None else sources.from_logs(
            list(paths or []), game)
        result = analyse_replay(replay, hand=hand, rollouts=rollouts, seed=seed, threads=threads,
                                search=search)
    except (sources.SourceError, AnalysisError) as exc:
        raise _fail(str(exc)) from None
    if json:
        sys.stdout.buffer.write(orjson.dumps(result.to_json()) + b"\n")
        sys.stdout.buffer.flush()
        return
    console = terminal.console(highlight=False, soft_wrap=True)
    console.print(f"[bold]{shown(result.game)}[/bold] — {len(result.decisions)} decisions, "
                  f"{rollouts} rollouts a move, search {result.search}, policy {result.policy}, seed {seed}")
    luck = {(row["hand"], row["player"]): row for row in result.luck()}
    current: int | None = None
    for decision in result.decisions:
        if decision.hand != current:
            current = decision.hand
            console.rule(f"hand {current}", align="left", style="dim")
            for (h, player), row in luck.items():
                if h == current:
                    scored = "" if row["points"] is None else f", scored {row['points']}"
                    console.print(f"  deal {shown(player)}: expected {row['expected']:.1f} "
                                  f"± {row['expected_se']:.1f} points, luck {row['luck']:+.1f}{scored}")
        style = "red" if decision.mistake else ("yellow" if decision.chosen_move is not None
                                                and decision.chosen_move.significant else "green")
        console.print(f"seq {decision.seq}: [{style}]{shown(decision.summary())}[/{style}]")
        best = decision.best_move
        console.print(f"    best {shown(best.text)}: {best.mean:.1f} ± {best.se:.1f} points, "
                      f"wins {best.win_rate:.0%}, {best.visits} playouts; {len(decision.moves)} moves")
    mistakes = sum(d.mistake for d in result.decisions)
    console.print(f"clear mistakes (significant, ≥ 5 points): {mistakes} of {len(result.decisions)} decisions")
