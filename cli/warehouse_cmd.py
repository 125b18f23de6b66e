"""`haftkhabis ingest`, `compact`, `query` and `stats`: the warehouse from the command line."""

from __future__ import annotations

import csv
import os
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:  # pyarrow, deltalake and duckdb load only when a command runs (issue 9)
    import pyarrow as pa

    from ingest.pipeline import BatchSummary
    from ingest.pipeline import Progress as IngestProgress
    from ingest.queries import WarehouseReader

# The defaults the help shows, spelled here so `--help` need not load `ingest`; a test holds
# them equal to ingest.store.DEFAULT_WAREHOUSE and ingest.maintenance.DEFAULT_RETAIN_HOURS.
DEFAULT_WAREHOUSE = "data/warehouse"
DEFAULT_RETAIN_HOURS = 168

WarehouseOption = Annotated[
    str, typer.Option("--warehouse", "-w", help="The warehouse folder.", show_default=True)
]


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


FormatOption = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest_command)
    app.command("compact")(compact_command)
    app.command("query")(query_command)
    stats = typer.Typer(help="Ready-made questions to the warehouse.", no_args_is_help=True)
    stats.command("players")(stats_players)
    stats.command("compliance")(stats_compliance)
    stats.command("game")(stats_game)
    app.add_typer(stats, name="stats")


def _console() -> Console:
    """Standard output; wide when it is not a terminal, so tables are not cut."""
    return Console() if sys.stdout.isatty() else Console(width=200)


def _fail(message: str, code: int = 2) -> typer.Exit:
    Console(stderr=True).print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(code)


# ---------------------------------------------------------------------------- ingest


def ingest_command(
    paths: Annotated[list[str], typer.Argument(help="Log files and directories (recursive).")],
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    workers: Annotated[int | None, typer.Option("--workers", "-j", min=1,
                                                help="Worker processes (default: every core).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Read files even when an earlier "
                                        "batch already ingested them whole.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Validate and replay every game in PATHS and commit them to the warehouse as one batch.

    Idempotent: ingesting the same files again changes no table but `batches`.

    A game delivered again with more lines replaces its older version.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from engine.reader import InputPathError
    from ingest.pipeline import IngestError, ingest
    from ingest.store import WarehouseError

    console = Console(stderr=True)
    columns = (
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("files · {task.fields[lines]:,} lines · {task.fields[games]:,} games · "
                   "{task.fields[violations]:,} violations"),
        TimeElapsedColumn(),
    )
    try:
        if quiet:
            summary = ingest(paths, warehouse, workers=workers or None, force=force)
        else:
            with Progress(*columns, console=console, transient=False) as bar:
                task = bar.add_task("ingest", total=None, lines=0, games=0, violations=0)

                def show(state: IngestProgress) -> None:
                    bar.update(task, total=state.files_total, completed=state.files,
                               description=state.phase, lines=state.lines, games=state.games,
                               violations=state.violations)

                summary = ingest(paths, warehouse, workers=workers or None, force=force,
                                 progress=show)
    except InputPathError as exc:
        raise _fail(str(exc)) from None
    except (IngestError, WarehouseError) as exc:
        raise _fail(str(exc), 1) from None
    _print_summary(_console(), summary, warehouse)


def _print_summary(console: Console, s: BatchSummary, warehouse: str) -> None:
    rate = s.lines / s.seconds if s.seconds else 0.0
    console.print(
        f"batch [bold]{s.batch}[/bold] committed to {escape(warehouse)} in {s.seconds:.1f}s: "
        f"{s.files_read} files read, {s.files_skipped} skipped (already ingested), "
        f"{len(s.files_failed)} failed; {s.lines:,} lines ({rate:,.0f}/s) with {s.workers} workers")
    console.print(
        f"games: [green]{s.games_new:,} new[/green], [yellow]{s.games_updated:,} updated[/yellow], "
        f"{s.games_unchanged:,} unchanged; {s.violations:,} violations in new and updated games; "
        f"{s.quarantined:,} lines quarantined; at most {s.peak_open_games:,} games open "
        "at once per worker")
    for item in s.files_failed:
        console.print(f"  [red]{item['status']}[/red]: {escape(item['path'])}: "
                      f"{escape(item['error'] or '')}")
    if s.restored:
        console.print(f"recovered from an interrupted batch: restored {', '.join(s.restored)}")


# ---------------------------------------------------------------------------- compact


def compact_command(
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    retain_hours: Annotated[int, typer.Option(
        "--retain-hours", min=0,
        help="Keep files removed less than this long ago (readers of older snapshots "
             "may still need them). Below the default, only when no reader is open.")]
        = DEFAULT_RETAIN_HOURS,
    no_vacuum: Annotated[bool, typer.Option("--no-vacuum", help="Only merge small files.")] = False,
) -> None:
    """Merge small Parquet files of every table, then vacuum files no snapshot needs."""
    from rich.table import Table

    from ingest.maintenance import compact
    from ingest.store import WarehouseError

    try:
        summary = compact(warehouse, retain_hours=retain_hours, vacuum=not no_vacuum)
    except WarehouseError as exc:
        raise _fail(str(exc), 1) from None
    console = _console()
    table = Table("table", "files merged", "files written", "files vacuumed")
    for name, removed in summary.files_removed.items():
        table.add_row(name, str(removed), str(summary.files_added.get(name, 0)),
                      str(summary.vacuumed.get(name, "-")))
    console.print(table)
    if summary.batch is not None:
        console.print(f"committed as batch {summary.batch} (kind compact)")
    else:
        console.print("nothing to merge")


# ---------------------------------------------------------------------------- query & stats


def _open(warehouse: str) -> WarehouseReader:
    from ingest.queries import open_warehouse
    from ingest.store import WarehouseError

    try:
        return open_warehouse(warehouse)
    except WarehouseError as exc:
        raise _fail(str(exc), 1) from None


def _json_default(value: Any) -> Any:
    return str(value)


def emit(data: pa.Table, fmt: Format, title: str | None = None, *, console: Console | None = None) -> None:
    """Write an Arrow table as a rich table, CSV or JSON (an array of objects)."""
    from rich.table import Table

    rows = data.to_pylist()
    if fmt is Format.json:
        sys.stdout.buffer.write(orjson.dumps(rows, default=_json_default,
                                             option=orjson.OPT_NON_STR_KEYS) + b"\n")
        sys.stdout.flush()
        return
    if fmt is Format.csv:
        writer = csv.writer(sys.stdout, lineterminator=os.linesep)
        writer.writerow(data.column_names)
        for row in rows:
            writer.writerow(["" if v is None else _cell(v) for v in row.values()])
        sys.stdout.flush()
        return
    console = console or _console()
    table = Table(*data.column_names, title=title, title_justify="left")
    for row in rows:
        table.add_row(*(escape(_cell(v)) if v is not None else "[dim]-[/dim]" for v in row.values()))
    console.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.0f}"
    if isinstance(value, list | dict):
        return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()
    return str(value)


def query_command(
    sql: Annotated[str, typer.Argument(help="A DuckDB SQL query over the warehouse's tables "
                                       "and views (docs/warehouse.md).")],
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    fmt: FormatOption = Format.table,
) -> None:
    """Run one read-only SQL query against the committed warehouse."""
    import duckdb

    with _open(warehouse) as reader:
        try:
            data = reader.arrow(sql)
        except duckdb.Error as exc:
            raise _fail(str(exc), 1) from None
        emit(data, fmt)


def stats_players(
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    ruleset: Annotated[str | None, typer.Option("--ruleset", "-r", help="Only this ruleset.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Players per ruleset.")] = 20,
    min_hands: Annotated[int, typer.Option("--min-hands", min=0,
                                           help="Only players with this many decided hands.")] = 0,
    fmt: FormatOption = Format.table,
) -> None:
    """The leaderboard: games, hands, wins, win rate, points, violations, per ruleset."""
    query = """
        SELECT ruleset, row_number() OVER (PARTITION BY ruleset
                   ORDER BY wins DESC, win_rate DESC NULLS LAST, player) AS rank,
               player, games, games_won, hands, wins, round(win_rate, 3) AS win_rate,
               round(mean_points, 2) AS mean_points, total_points, violations
        FROM player_stats
        WHERE hands >= ? AND (? IS NULL OR ruleset = ?)
        QUALIFY rank <= ?
        ORDER BY ruleset, rank
    """
    with _open(warehouse) as reader:
        data = reader.arrow(query, [min_hands, ruleset, ruleset, limit])
        emit(data, fmt, "leaderboard")


def stats_compliance(
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    fmt: FormatOption = Format.table,
) -> None:
    """Violations by code, ruleset and server build (from the header's meta)."""
    with _open(warehouse) as reader:
        by_code = reader.arrow(
            "SELECT * FROM compliance ORDER BY violations DESC, code, ruleset, server_build")
        by_build = reader.arrow(
            "SELECT ruleset, server_build, games, compliant, with_violations, violations, "
            "round(violation_rate, 4) AS violation_rate FROM compliance_by_build "
            "ORDER BY ruleset, server_build")
        if fmt is not Format.table:
            emit(by_code, fmt)
            return
        console = _console()
        emit(by_build, fmt, "games by ruleset and server build", console=console)
        emit(by_code, fmt, "violations by code, ruleset and server build", console=console)
        quarantined = reader.sql("SELECT count(*) FROM quarantine").fetchall()[0][0]
        console.print(f"{quarantined:,} lines in quarantine (lines that belong to no game)")


def stats_game(
    game: Annotated[str, typer.Argument(help="The game id.")],
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    fmt: FormatOption = Format.table,
) -> None:
    """One game: its verdict, hands and violations as the warehouse holds them."""
    with _open(warehouse) as reader:
        games = reader.arrow(
            "SELECT game_id, ruleset, mode, players, status, complete, start_time, end_time, "
            "hands, winners, totals, server_build, violations, lines, source_files, "
            "ingest_batch, content_hash FROM games WHERE game_id = ?", [game])
        if games.num_rows == 0:
            raise _fail(f"no game {game!r} in {warehouse}", 1)
        hands = reader.arrow(
            "SELECT hand, dealer, first_player, winners, reason, winning_card, multiplier, "
            "scores, events, duration_ms, reshuffles, violations FROM hands "
            "WHERE game_id = ? ORDER BY hand", [game])
        violations = reader.arrow(
            "SELECT seq, hand, code, player, message, file, line FROM violations "
            "WHERE game_id = ? ORDER BY seq NULLS FIRST", [game])
        if fmt is not Format.table:
            record = games.to_pylist()[0]
            record["hands"] = hands.to_pylist()
            record["violations"] = violations.to_pylist()
            if fmt is Format.json:
                sys.stdout.buffer.write(orjson.dumps(record, default=_json_default,
                                                     option=orjson.OPT_NON_STR_KEYS) + b"\n")
            else:
                emit(games, fmt)
            return
        from rich.table import Table

        console = _console()
        record = games.to_pylist()[0]
        grid = Table.grid(padding=(0, 2))
        for key, value in record.items():
            grid.add_row(f"[bold]{key}[/bold]", escape(_cell(value)) if value is not None else "-")
        console.print(grid)
        emit(hands, fmt, "hands", console=console)
        if violations.num_rows:
            emit(violations, fmt, "violations", console=console)
