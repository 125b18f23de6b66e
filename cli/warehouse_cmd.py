"""`haftkhabis ingest`, `compact`, `query` and `stats`: the warehouse from the command line."""

from __future__ import annotations

import csv
import errno
import os
import re
import sys
from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer
from rich.console import Console

from cli import terminal
from cli.terminal import shown
from engine._core import DEFAULT_MAX_LINE_BYTES
from engine.analysis import Search

if TYPE_CHECKING:  # pyarrow, deltalake and duckdb load only when a command runs (issue 9)
    import pyarrow as pa

    from ingest import sandbox
    from ingest.pipeline import BatchSummary
    from ingest.pipeline import Progress as IngestProgress
    from ingest.queries import WarehouseReader

# The defaults the help shows, spelled here so `--help` need not load `ingest`; a test holds
# them equal to ingest.store.DEFAULT_WAREHOUSE and ingest.maintenance.DEFAULT_RETAIN_HOURS.
DEFAULT_WAREHOUSE = "data/warehouse"
DEFAULT_RETAIN_HOURS = 168
DEFAULT_TARGET_SIZE = "128MiB"  # ingest.store.TARGET_FILE_SIZE
# `ingest --follow`'s, held equal to ingest.follow.FollowPolicy's by the same test
DEFAULT_COMMIT_INTERVAL = 1.0
DEFAULT_COMMIT_LINES = 100_000
DEFAULT_RESCAN = 5.0
DEFAULT_COMPACT_EVERY = 8

#: exit status of `ingest` and `compact` when the storage refused a write (a read-only
#: file system, a full disk, no permission): nothing was committed (docs/cli.md)
STORAGE_EXIT = 74  # sysexits.h EX_IOERR

WarehouseOption = Annotated[
    str, typer.Option("--warehouse", "-w", help="The warehouse: a folder or s3://BUCKET/PREFIX.",
                      show_default=True)
]
StorageOption = Annotated[
    list[str] | None, typer.Option(
        "--storage-option", metavar="KEY=VALUE",
        help="An object-store option (AWS_ENDPOINT_URL, AWS_REGION, …), repeatable; "
             "the AWS_* environment is read too.")
]


def storage_options(pairs: list[str] | None) -> dict[str, str]:
    """`--storage-option` pairs as a dict (exit 2 on a malformed one)."""
    from ingest.storage import StorageError, parse_options

    try:
        return parse_options(pairs)
    except StorageError as exc:
        raise _fail(str(exc)) from None


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMG]i?B?|B)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 1024, "KI": 1024, "M": 1024**2, "MI": 1024**2, "G": 1024**3,
          "GI": 1024**3}


def parse_size(text: str) -> int:
    """`128MiB`, `64MB`, `1G`, `4096` as bytes (exit 2 on anything else). KB, MB and GB are
    read as KiB, MiB and GiB, as Delta's own target size is."""
    found = _SIZE.fullmatch(text)
    if found is None or float(found.group(1)) <= 0:
        raise _fail(f"--target-size takes a size such as 128MiB, 64MB or 4096, got {text!r}")
    unit = (found.group(2) or "").upper().removesuffix("B")
    return max(1, int(float(found.group(1)) * _UNITS[unit]))


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


FormatOption = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
RulesetOption = Annotated[str | None, typer.Option("--ruleset", "-r", metavar="RULESET",
                                                   help="Only this ruleset.")]


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest_command)
    app.command("compact")(compact_command)
    app.command("query")(query_command)
    stats = typer.Typer(help="Ready-made questions to the warehouse.", no_args_is_help=True)
    stats.command("players")(stats_players)
    stats.command("player")(stats_player)
    stats.command("compliance")(stats_compliance)
    stats.command("game")(stats_game)
    stats.command("ratings")(stats_ratings)
    app.add_typer(stats, name="stats")


def _console() -> Console:
    """Standard output; wide when it is not a terminal, so tables are not cut."""
    return terminal.console(wide=True)


def _fail(message: str, code: int = 2) -> typer.Exit:
    terminal.console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {shown(message)}")
    return typer.Exit(code)


# the storage's refusals, by errno: an OSError's (the engine's keep theirs:
# engine/core/haftkhabis-py/src/error.rs), or an IngestError's, carried from a worker's
_STORAGE_ERRNOS = {errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM,
                   errno.EIO, errno.EFBIG}


def _storage_errno(exc: BaseException) -> int | None:
    """The errno of a write the storage refused, if that is what `exc` is."""
    number = getattr(exc, "errno", None)
    if number is None and isinstance(exc, OSError):
        # deltalake raises a bare OSError when writing a commit fails, its cause only in
        # the text, last: "… ↳ No space left on device (os error 28)"
        text = str(exc).rstrip()
        _, marker, tail = text.rpartition("(os error ")
        if marker and tail.endswith(")") and tail[:-1].isdigit():
            number = int(tail[:-1])
    return number if isinstance(number, int) and number in _STORAGE_ERRNOS else None


def _storage_failure(command: str, warehouse: str, exc: BaseException) -> typer.Exit | None:
    """One line when `exc` is the batch failing for a reason that is not a bug: the
    storage refusing a write (`STORAGE_EXIT`), or any other I/O or Delta error, a worker
    that died, another writer taking over (exit 1). None for a bug (`cli.app.main`
    reports it, traceback in a file)."""
    from deltalake.exceptions import DeltaError

    from ingest.pipeline import IngestError
    from ingest.storage import StorageError
    from ingest.store import WarehouseError

    number = _storage_errno(exc)
    if number is not None:
        return _fail(f"{command}: cannot write to the warehouse {warehouse}: "
                     f"{os.strerror(number).lower()}; nothing was committed", STORAGE_EXIT)
    if isinstance(exc, IngestError) and exc.bug:
        return None
    if isinstance(exc, IngestError | WarehouseError | StorageError):
        return _fail(str(exc), 1)
    if isinstance(exc, OSError | DeltaError):  # the store failed: unreachable, timed out …
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return _fail(f"{command}: the warehouse {warehouse} failed: {type(exc).__name__}"
                     f"{': ' + first if first else ''}; nothing was committed", 1)
    return None


# ---------------------------------------------------------------------------- ingest


def ingest_command(
    paths: Annotated[list[str] | None, typer.Argument(
        help="Log files and directories (recursive).", show_default=False)] = None,
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    workers: Annotated[int | None, typer.Option("--workers", "-j", min=1,
                                                help="Worker processes (default: every core).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Read files even when an earlier "
                                        "batch already ingested them whole.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar (with --follow: "
                                        "no line per batch).")] = False,
    storage: StorageOption = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", metavar="tcp://HOST:PORT|local:N",
        help="Run the games' replay on a Dask cluster: a scheduler's address, or local:N "
             "to start N worker processes for this batch.")] = None,
    wait: Annotated[float, typer.Option(
        "--wait", min=0, help="Seconds to wait for another ingest's or compact's lock "
        "before giving up (busy).")] = 0.0,
    follow: Annotated[str | None, typer.Option(
        "--follow", metavar="DIR",
        help="Follow the log directory DIR instead of reading PATHS once: lines written to "
             "its files are committed as they come, in group commits, until Ctrl-C or "
             "SIGTERM; a restart goes on where it stopped.")] = None,
    commit_interval: Annotated[float, typer.Option(
        "--commit-interval", min=0.0, metavar="S",
        help="With --follow: commit the lines read at most every S seconds.")] = DEFAULT_COMMIT_INTERVAL,
    commit_lines: Annotated[int, typer.Option(
        "--commit-lines", min=1, metavar="N",
        help="With --follow: commit at once when N lines wait (a group holds at most N).")]
        = DEFAULT_COMMIT_LINES,
    rescan: Annotated[float, typer.Option(
        "--rescan", min=0.01, metavar="S",
        help="With --follow: scan the directory at least every S seconds, changes reported "
             "or not (a file system without inotify is followed by these scans).")] = DEFAULT_RESCAN,
    no_watch: Annotated[bool, typer.Option(
        "--no-watch", help="With --follow: find changes by the rescans only.")] = False,
    compact_every: Annotated[int, typer.Option(
        "--compact-every", min=0, metavar="N",
        help="With --follow: after N groups, merge the parts due (each partition's parts of "
             "one size tier joined once there are 8; 0: never).")] = DEFAULT_COMPACT_EVERY,
    state: Annotated[str | None, typer.Option(
        "--state", metavar="DIR",
        help="With --follow: where the checkpoint and the segments being committed are kept "
             "(default: WAREHOUSE/_follow/NAME-HASH; for S3, under ~/.local/state/haftkhabis).")]
        = None,
    max_line_bytes: Annotated[int, typer.Option(
        "--max-line-bytes", min=1, metavar="N",
        help="The longest line read; a longer one is quarantined (line_too_long), read past "
             "unheld.")] = DEFAULT_MAX_LINE_BYTES,
) -> None:
    """Validate and replay every game in PATHS and commit them to the warehouse as one batch.

    Idempotent: ingesting the same files again changes no table but `batches`.

    A game delivered again with more lines replaces its older version.

    With --follow DIR, tail the directory instead: new files, appended lines, rotated
    (renamed, copied and truncated, compressed) and deleted files, each line committed once.
    """
    if follow is not None:
        if paths:
            raise _fail("ingest: --follow DIR takes no PATHS (follow one directory, or ingest files once)")
        given = [name for name, on in (("--workers", workers is not None), ("--force", force),
                                       ("--cluster", cluster is not None), ("--wait", wait > 0)) if on]
        if given:
            raise _fail(f"ingest: --follow commits its groups in this process, one writer at a "
                        f"time, retrying a busy warehouse; it takes no {', '.join(given)}")
        _follow(follow, warehouse, storage_options(storage), state, quiet, commit_interval,
                commit_lines, rescan, not no_watch, compact_every)
        return
    if not paths:
        raise _fail("ingest: expected PATHS to ingest once, or --follow DIR, found neither")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from engine.reader import InputPathError
    from ingest.pipeline import ingest

    options = storage_options(storage)
    console = terminal.console(stderr=True)
    columns = (
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("files · {task.fields[lines]:,} lines · {task.fields[games]:,} games · "
                   "{task.fields[violations]:,} violations"),
        TimeElapsedColumn(),
    )
    try:
        if quiet:
            summary = ingest(paths, warehouse, workers=workers or None, force=force,
                             storage_options=options, cluster=cluster, wait=wait,
                             max_line_bytes=max_line_bytes)
        else:
            with Progress(*columns, console=console, transient=False) as bar:
                task = bar.add_task("ingest", total=None, lines=0, games=0, violations=0)

                def show(state: IngestProgress) -> None:
                    bar.update(task, total=state.files_total, completed=state.files,
                               description=state.phase, lines=state.lines, games=state.games,
                               violations=state.violations)

                summary = ingest(paths, warehouse, workers=workers or None, force=force,
                                 progress=show, storage_options=options, cluster=cluster,
                                 wait=wait, max_line_bytes=max_line_bytes)
    except InputPathError as exc:
        raise _fail(str(exc)) from None
    except Exception as exc:  # OSError, deltalake's and pyarrow's own error types, a worker's
        refused = _storage_failure("ingest", warehouse, exc)
        if refused is not None:
            raise refused from None
        raise  # a bug (a worker's included): `cli.app.main` writes the traceback to a file
    _print_summary(_console(), summary, warehouse)


def _follow(directory: str, warehouse: str, options: dict[str, str], state: str | None,
            quiet: bool, interval: float, lines: int, rescan: float, watch: bool,
            compact_every: int) -> None:
    """`ingest --follow DIR`: a line per batch committed (standard output), notes on
    standard error; the first Ctrl-C or SIGTERM finishes the group in flight and stops
    (exit 0), a second Ctrl-C abandons it (exit 130: nothing of it committed)."""
    import signal

    from ingest.follow import FollowBatch, Follower, FollowError, FollowPolicy
    from ingest.lifetime import return_freed_memory

    return_freed_memory()  # it runs for hours
    if not os.path.isdir(directory):
        raise _fail(f"ingest --follow: expected a directory, found "
                    f"{'a file' if os.path.exists(directory) else 'nothing'} at {directory}")
    out, err = _console(), terminal.console(stderr=True, soft_wrap=True)
    totals = {"batches": 0, "lines": 0}

    def on_batch(batch: FollowBatch) -> None:
        totals["batches"] += 1
        totals["lines"] += batch.lines
        if not quiet:
            out.print(f"batch {batch.batch}: {_count(batch.files, 'file')}, "
                      f"{_count(batch.lines, 'line')}, {_count(batch.games, 'game')}, "
                      f"{batch.seconds:.2f} s"
                      + (f", {batch.quarantined:,} quarantined" if batch.quarantined else ""),
                      highlight=False)

    def on_note(text: str) -> None:
        err.print(f"[yellow]note:[/yellow] {shown(text)}")

    follower: Follower | None = None
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        if stopping and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: the group in flight is abandoned
        stopping = True
        if follower is not None:
            follower.stop()

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        follower = Follower(directory, warehouse, storage_options=options, state=state,
                            policy=FollowPolicy(interval, lines, rescan, watch, compact_every),
                            on_batch=on_batch, on_note=on_note)
        follower.open()
        if stopping:  # a signal before the follower could hear it
            follower.stop()
        if not quiet:
            err.print(f"following {shown(os.path.abspath(directory))} into {shown(warehouse)} "
                      f"(checkpoint in {shown(follower.state)}); Ctrl-C or SIGTERM stops",
                      highlight=False)
        follower.run()
    except FollowError as exc:
        raise _fail(str(exc), 1) from None
    except KeyboardInterrupt:
        err.print("interrupted: the group in flight was abandoned, nothing of it committed; "
                  "its lines are read again at the next start")
        raise typer.Exit(130) from None
    except Exception as exc:
        refused = _storage_failure("ingest --follow", warehouse, exc)
        if refused is not None:
            raise refused from None
        raise
    finally:
        if follower is not None:
            follower.close()
        for number, handler in previous.items():
            signal.signal(number, handler)
    if not quiet:
        err.print(f"stopped: {totals['batches']:,} batches, {totals['lines']:,} lines committed",
                  highlight=False)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _print_summary(console: Console, s: BatchSummary, warehouse: str) -> None:
    rate = s.lines / s.seconds if s.seconds else 0.0
    console.print(
        f"batch [bold]{s.batch}[/bold] committed to {shown(warehouse)} in {s.seconds:.1f}s: "
        f"{s.files_read} files read, {s.files_skipped} skipped (already ingested), "
        f"{len(s.files_failed)} failed; {s.lines:,} lines ({rate:,.0f}/s) with {s.workers} workers")
    console.print(
        f"games: [green]{s.games_new:,} new[/green], [yellow]{s.games_updated:,} updated[/yellow], "
        f"{s.games_unchanged:,} unchanged; {s.violations:,} violations in new and updated games; "
        f"{s.quarantined:,} lines quarantined; at most {s.peak_open_games:,} games open "
        "at once per worker")
    for item in s.files_failed:
        console.print(f"  [red]{item['status']}[/red]: {shown(item['path'])}: "
                      f"{shown(item['error'] or '')}")
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
    target_size: Annotated[str, typer.Option(
        "--target-size", metavar="SIZE",
        help="The size merged parts aim at, in bytes or with a unit (KiB, MiB, GiB, KB, MB, "
             "GB). Only partitions with several parts under it are rewritten.")]
        = DEFAULT_TARGET_SIZE,
    storage: StorageOption = None,
    wait: Annotated[float, typer.Option(
        "--wait", min=0, help="Seconds to wait for an ingest's lock before giving up.")] = 0.0,
) -> None:
    """Merge small Parquet files of every table, partition by partition, then vacuum files
    no retained snapshot needs. A summary table the warehouse lacks (written before it
    existed) is made first."""
    from rich.table import Table

    from ingest.maintenance import compact

    size = parse_size(target_size)
    try:
        summary = compact(warehouse, retain_hours=retain_hours, vacuum=not no_vacuum,
                          target_size=size, storage_options=storage_options(storage),
                          wait=wait)
    except Exception as exc:  # OSError, deltalake's and pyarrow's own error types
        refused = _storage_failure("compact", warehouse, exc)
        if refused is None:
            raise
        raise refused from None
    console = _console()
    table = Table("table", "partitions rewritten", "files merged", "files written",
                  "files vacuumed")
    for name, removed in summary.files_removed.items():
        table.add_row(name, str(summary.partitions.get(name, 0)), str(removed),
                      str(summary.files_added.get(name, 0)), str(summary.vacuumed.get(name, "-")))
    console.print(table)
    if summary.summaries_made:
        console.print(f"summaries made: {', '.join(summary.summaries_made)}")
    if summary.batch is not None:
        console.print(f"committed as batch {summary.batch} (kind compact)")
    else:
        console.print("nothing to merge")


# ---------------------------------------------------------------------------- query & stats


def _open(warehouse: str, limits: sandbox.Limits | None = None,
          storage: list[str] | None = None) -> WarehouseReader:
    from ingest import sandbox
    from ingest.queries import open_warehouse
    from ingest.storage import StorageError
    from ingest.store import WarehouseError

    try:
        return open_warehouse(warehouse, limits=limits or sandbox.QUERY_LIMITS,
                              storage_options=storage_options(storage))
    except (WarehouseError, StorageError) as exc:
        raise _fail(str(exc), 1) from None


def _json_default(value: Any) -> Any:
    return str(value)


def emit(data: pa.Table, fmt: Format, title: str | None = None, *, console: Console | None = None) -> None:
    """Write an Arrow table as a rich table, CSV or JSON (an array of objects)."""
    emit_batches(data.column_names, data.to_batches(), fmt, title, console=console)


def emit_batches(columns: list[str], batches: Iterable[pa.RecordBatch], fmt: Format,
                 title: str | None = None, *, console: Console | None = None) -> None:
    """Write record batches as they come: CSV and JSON a batch at a time (a JSON array of
    objects, exact), a rich table (for people: every cell escaped) once all have come."""
    from rich.table import Table

    if fmt is Format.json:
        out = sys.stdout.buffer
        out.write(b"[")
        first = True
        for batch in batches:
            for row in batch.to_pylist():
                out.write((b"" if first else b",") + orjson.dumps(
                    row, default=_json_default, option=orjson.OPT_NON_STR_KEYS))
                first = False
        out.write(b"]\n")
        out.flush()
        return
    if fmt is Format.csv:
        writer = csv.writer(sys.stdout, lineterminator=os.linesep)
        writer.writerow(columns)
        for batch in batches:
            for row in batch.to_pylist():
                writer.writerow(["" if v is None else _cell(v) for v in row.values()])
        sys.stdout.flush()
        return
    console = console or _console()
    table = Table(*(shown(c) for c in columns), title=shown(title) if title else None,
                  title_justify="left")
    for batch in batches:
        for row in batch.to_pylist():
            table.add_row(*(shown(_cell(v)) if v is not None else "[dim]-[/dim]"
                            for v in row.values()))
    console.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.0f}"
    if isinstance(value, list | dict):
        return orjson.dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()
    return str(value)


def query_command(
    sql: Annotated[str, typer.Argument(help="One DuckDB SELECT over the warehouse's tables "
                                       "and views (docs/warehouse.md).")],
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    fmt: FormatOption = Format.table,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", min=0.001, help="Interrupt the statement after this many seconds "
        "\\[default: 30].", show_default=False)] = None,
    max_rows: Annotated[int | None, typer.Option(
        "--max-rows", min=1, help="Return at most this many rows \\[default: 10000].",
        show_default=False)] = None,
    memory_limit: Annotated[str | None, typer.Option(
        "--memory-limit", help="DuckDB's memory limit, e.g. 512MB \\[default: 2GB].",
        show_default=False)] = None,
    storage: StorageOption = None,
) -> None:
    """Run one read-only SELECT against the committed warehouse, in the SQL sandbox: no
    file access, one statement, a time, memory and row limit (docs/cli.md)."""
    from dataclasses import replace

    import duckdb

    from ingest import sandbox

    limits = sandbox.QUERY_LIMITS
    if timeout is not None:
        limits = replace(limits, seconds=timeout)
    if max_rows is not None:
        limits = replace(limits, rows=max_rows)
    if memory_limit is not None:
        limits = replace(limits, memory=memory_limit)
    try:
        sandbox.check(sql)  # before the warehouse is opened: an empty or a second statement
    except sandbox.StatementRefused as exc:
        raise _fail(f"query refused: {exc}") from None
    except duckdb.Error as exc:
        raise _fail(str(exc), 1) from None
    try:
        sandbox.parse_memory(limits.memory)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    try:
        # a process of its own: its memory and time limits bind whatever the statement does
        with sandbox.run_isolated(warehouse, sql, limits, storage_options(storage)) as result:
            emit_batches(result.column_names, result.batches(), fmt)
            truncated, rows = result.truncated, result.rows
    except (sandbox.SandboxError, duckdb.Error) as exc:
        raise _fail(str(exc), 1) from None
    if truncated:
        terminal.console(stderr=True).print(
            f"[yellow]note:[/yellow] the result was cut at {rows:,} rows (--max-rows); "
            "add a LIMIT or raise --max-rows")


class RankBy(StrEnum):
    """The leaderboard's measures, as the dashboard's *Rank by* (`ingest.read.MEASURES`)."""

    wins = "wins"
    win_rate = "win-rate"
    elimination_win_rate = "elimination-win-rate"
    mean_points = "mean-points"

    @property
    def measure(self) -> str:
        return {"wins": "wins", "win-rate": "points_win_rate", "elimination-win-rate": "elimination_win_rate",
                "mean-points": "mean_points"}[self.value]


def stats_players(
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    ruleset: RulesetOption = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Players per ruleset.")] = 20,
    min_hands: Annotated[int, typer.Option("--min-hands", min=0, help=(
        "Only players with this many hands in the measure's sample (decided hands; for a rate "
        "or mean, the hands of that play)."))] = 0,
    rank_by: Annotated[RankBy, typer.Option("--rank-by", help=(
        "What to rank by: hands won (ties: fewer hands), the win rate in points play or in "
        "elimination play, or the mean points in points play (fewest first) — the dashboard's "
        "*Rank by*."))] = RankBy.wins,
    fmt: FormatOption = Format.table,
    storage: StorageOption = None,
) -> None:
    """The leaderboard: games, hands, wins, win rate, points, violations, per ruleset;
    ranked by hands won, or by a rate or mean (`--rank-by`) over its sample (`--min-hands`)."""
    if rank_by is not RankBy.wins:
        _ranked_by(warehouse, storage, ruleset, limit, min_hands, rank_by, fmt)
        return
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
    with _open(warehouse, storage=storage) as reader:
        data = reader.arrow(query, [min_hands, ruleset, ruleset, limit])
        emit(data, fmt, "leaderboard")


def _reader(warehouse: str, storage: list[str] | None) -> Any:
    """The read model's reader (`ingest.read`, the dashboard's and the API's)."""
    from ingest import read

    try:
        return read.connect(warehouse, storage_options(storage))
    except read.WarehouseMissing as exc:
        raise _fail(str(exc), 1) from None


def _ranked_by(warehouse: str, storage: list[str] | None, ruleset: str | None, limit: int,
               min_hands: int, rank_by: RankBy, fmt: Format) -> None:
    import pyarrow as pa

    from ingest import read

    spec = read.MEASURES[rank_by.measure]
    reader = _reader(warehouse, storage)
    try:
        frame = read.leaderboard(reader, [ruleset] if ruleset else [], min_hands, rank_by.measure, 1_000_000)
    finally:
        reader.close()
    frame = frame.filter(frame["rank"] <= limit).rename(
        {"measure": spec.label.replace(", ", " · "), "sample": f"sample: {read.SAMPLE_LABELS[spec.sample]}"})
    emit(pa.table(frame.to_arrow()), fmt, f"leaderboard by {spec.label}")
    if fmt is Format.table:
        _console().print(f"ranked within each ruleset by {spec.explained}; the sample is the hands the "
                         f"measure is over (at least {max(min_hands, 1)})")


def stats_player(
    player: Annotated[str, typer.Argument(help="The player id.", metavar="ID")],
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    fmt: FormatOption = Format.table,
    storage: StorageOption = None,
) -> None:
    """One player: their rank and figures per ruleset (each play's rates apart), and their
    own fouls by code — the dashboard's profile and `GET /v1/players/{id}`."""
    import pyarrow as pa

    from ingest import read

    reader = _reader(warehouse, storage)
    try:
        figures = read.player_by_ruleset(reader, player)
        ranks = read.player_rankings(reader, player).select("ruleset", "rank")
        fouls = read.player_violations(reader, player)
        if not figures.height:
            names = [n for n in read.player_names(reader) if player.lower() in n.lower()][:10]
            hint = f"; players whose id contains it: {', '.join(names)}" if names else ""
            raise _fail(f"no player {player!r} in {warehouse}{hint}", 1)
    finally:
        reader.close()
    figures = ranks.join(figures, on="ruleset", how="right").select(
        "ruleset", "rank", *[c for c in figures.columns if c != "ruleset"])
    figures = figures.select([c for c in figures.columns if figures[c].null_count() < figures.height])
    if fmt is Format.json:
        sys.stdout.buffer.write(orjson.dumps({"player": player, "rulesets": figures.to_dicts(),
                                              "violations": fouls.to_dicts()}, default=_json_default) + b"\n")
        return
    if fmt is Format.csv:
        emit(pa.table(figures.to_arrow()), fmt)
        return
    console = _console()
    emit(pa.table(figures.to_arrow()), fmt, f"{player}: figures per ruleset (rates per play)", console=console)
    emit(pa.table(fouls.to_arrow()), fmt, f"{player}: their own fouls, by code", console=console)


def stats_compliance(
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    fmt: FormatOption = Format.table,
    storage: StorageOption = None,
) -> None:
    """Violations by code, ruleset and server build (from the header's meta)."""
    with _open(warehouse, storage=storage) as reader:
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
    storage: StorageOption = None,
) -> None:
    """One game: its verdict, hands and violations as the warehouse holds them."""
    with _open(warehouse, storage=storage) as reader:
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
            grid.add_row(f"[bold]{key}[/bold]", shown(_cell(value)) if value is not None else "-")
        console.print(grid)
        emit(hands, fmt, "hands", console=console)
        if violations.num_rows:
            emit(violations, fmt, "violations", console=console)


def stats_ratings(
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    storage: StorageOption = None,
    rollouts: Annotated[int, typer.Option(
        "--rollouts", metavar="K", min=10,
        help="Rollouts per legal move for games not analysed yet (or analysed otherwise).")] = 100,
    seed: Annotated[int, typer.Option("--seed", min=0, help="The rollouts' seed.")] = 0,
    search: Annotated[Search, typer.Option(
        "--search", help="How decisions are valued: flat rollouts (default) or ismcts.")] = Search.FLAT,
    min_hands: Annotated[int, typer.Option("--min-hands", min=0,
                                           help="Only players with this many rated hands.")] = 0,
    fmt: FormatOption = Format.table,
) -> None:
    """Ratings with uncertainty (Plackett–Luce over hands, with and without the deal
    adjustment), accuracy (mean expected loss per decision, share of clear mistakes) and
    luck per player. Games not analysed yet with this engine, policy, search, rollouts and
    seed are analysed first and stored (<warehouse>/analyses/, a folder or an S3 prefix);
    the rest is read. docs/analysis.md."""
    import pyarrow as pa

    from ingest import analyses

    console = terminal.console(stderr=True, soft_wrap=True)
    reader = _reader(warehouse, storage)
    try:
        counts = analyses.refresh(reader, rollouts=rollouts, seed=seed, search=search)
        rows = analyses.ratings_rows(analyses.stored(reader), min_hands=min_hands)
    except analyses.AnalysesUnavailable as exc:
        raise _fail(str(exc), 1) from None
    finally:
        reader.close()
    if fmt is not Format.json:
        console.print(f"{counts.games} games: {counts.analysed} analysed now, {counts.kept} stored "
                      f"({counts.failed} without a usable header); players rated on {min_hands}+ hands")
    columns = ["player", "rating", "uncertainty", "rating_adjusted", "uncertainty_adjusted", "games",
               "hands", "decisions", "accuracy", "accuracy_low", "accuracy_high", "mistake_share",
               "luck", "luck_low", "luck_high"]
    table = pa.Table.from_pylist(rows) if rows else pa.table({c: pa.array([], pa.string()) for c in columns})
    emit(table.select(columns), fmt, "ratings")
