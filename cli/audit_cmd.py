"""`haftkhabis audit deals`: is the shuffle fair? The warehouse's deals against a uniform
shuffle (ingest/fairplay.py; docs/fairplay.md). `haftkhabis audit pairs`: who plays
together? The case queue of pairs who do each other favours (ingest/pairs.py). Exit 0 when nothing is found at the
chosen false-discovery level, 1 when something is (as `validate` does for violations),
2 on a usage error."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer

from cli import terminal
from cli.terminal import shown
from cli.warehouse_cmd import (
    DEFAULT_WAREHOUSE,
    Format,
    RulesetOption,
    StorageOption,
    WarehouseOption,
    storage_options,
)

if TYPE_CHECKING:
    from ingest import audits
    from ingest.fairplay import AuditReport
    from ingest.read import Reader

#: the filters both audits take (ingest.fairplay.game_filter's)
BuildOption = Annotated[str | None, typer.Option("--build", "-b", metavar="BUILD",
                                                 help="Only this server build.")]
StoreOption = Annotated[bool, typer.Option(
    "--store", help="Keep the report in the warehouse (audits/), where the dashboard's page and the API "
                    "read it instead of auditing while someone waits.")]
SinceOption = Annotated[str | None, typer.Option(
    "--since", metavar="DATE", help="Only games that started at or after this date or moment (ISO 8601).")]


def register(app: typer.Typer) -> None:
    audit = typer.Typer(help="Fair play: audits of the warehouse's deals and of who plays together.",
                        no_args_is_help=True)
    audit.command("deals")(audit_deals_command)
    audit.command("pairs")(audit_pairs_command)
    app.add_typer(audit, name="audit")


def _fail(message: str, code: int = 2) -> typer.Exit:
    terminal.console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {shown(message)}")
    return typer.Exit(code)


def _number(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def audit_deals_command(
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    build: BuildOption = None,
    since: SinceOption = None,
    ruleset: RulesetOption = None,
    fdr: Annotated[float, typer.Option(
        "--fdr", min=0.0, max=1.0, metavar="LEVEL", help="The false-discovery level (Benjamini–Hochberg) a finding "
                                        "must reach.")] = 0.01,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format (csv: every test).")] = Format.table,
    storage: StorageOption = None,
    store: StoreOption = False,
) -> None:
    """Opening hands, starters, stocks and repeated deals against a uniform shuffle; exit 1
    when anything is found at the --fdr level."""
    from ingest import audits
    from ingest.fairplay import audit_deals, deals_from_warehouse

    with _reader(warehouse, storage, since) as reader:
        started = time.perf_counter()
        with deals_from_warehouse(reader, build=build, since=since, ruleset=ruleset) as deals:  # its folder, removed
            report = audit_deals(deals, fdr)
        if store:
            _store(reader, audits.Params("deals", build, ruleset, since, fdr), report.to_json(),
                   time.perf_counter() - started)
    if fmt is Format.json:
        typer.echo(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2).decode())
    elif fmt is Format.csv:
        import csv
        import sys

        out = csv.writer(sys.stdout)
        out.writerow(["family", "concerns", "n", "status", "effect_name", "effect", "ci_low", "ci_high",
                      "p_value", "q_value", "finding", "detail"])
        for t in report.tests:
            out.writerow([t.family, t.concerns, t.n, t.status, t.effect_name, t.effect, t.ci_low,
                          t.ci_high, t.p_value, t.q_value, t.finding, t.detail])
    else:
        _print(report)
    raise typer.Exit(1 if report.findings else 0)


#: findings the table shows at most (laying out the 3,104 of the tiled million-hand
#: warehouse took a quarter of the audit's time, and no one reads them in a terminal)
SHOWN_FINDINGS = 100


def _print(report: AuditReport) -> None:
    from rich.table import Table

    console = terminal.console(wide=True)
    skipped = sum(t.status != "tested" for t in report.tests)
    console.print(f"{report.deals:,} deals, {report.hands:,} hands; {report.tests_made} tests made "
                  f"(Benjamini–Hochberg at {report.level:g}), {skipped} not made: not enough games")
    if not report.findings:
        console.print("nothing found at this level" if report.tests_made else "not enough games for any test")
        return
    findings = sorted(report.findings, key=lambda t: t.q_value or 0.0)
    title = f"{len(findings)} findings"
    if len(findings) > SHOWN_FINDINGS:
        title += f" (the {SHOWN_FINDINGS} with the smallest q; --format csv or json gives every one)"
    table = Table(title=title)
    for column in ("test", "concerns", "n", "effect [95 % interval]", "p", "q", "detail"):
        table.add_column(column)
    for t in findings[:SHOWN_FINDINGS]:
        interval = (f" [{_number(t.ci_low)}, {_number(t.ci_high)}]" if t.ci_low is not None else "")
        table.add_row(t.family, shown(t.concerns), f"{t.n:,}",
                      f"{t.effect_name}: {_number(t.effect)}{interval}", _number(t.p_value),
                      _number(t.q_value), shown(t.detail))
    console.print(table)


def audit_pairs_command(
    warehouse: WarehouseOption = DEFAULT_WAREHOUSE,
    build: BuildOption = None,
    since: SinceOption = None,
    ruleset: RulesetOption = None,
    fdr: Annotated[float, typer.Option(
        "--fdr", min=0.0, max=1.0, metavar="LEVEL", help="The level: a pair is a case when its family-wise "
                                        "permutation p-value is at most this.")] = 0.01,
    permutations: Annotated[int, typer.Option("--permutations", min=19,
                                              help="Relabellings of the players for the null.")] = 200,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    storage: StorageOption = None,
    store: StoreOption = False,
) -> None:
    """The case queue: pairs who do each other favours (co-seating, 2s and 7 totals
    spared, J suits that suit the other, soft play) more than a permutation null (players
    relabelled within each game) allows at the level; exit 1 when there is a case."""
    from ingest import audits
    from ingest.pairs import audit_pairs, pairs_from_warehouse
    from ingest.read import pair_report_json

    with _reader(warehouse, storage, since) as reader:
        started = time.perf_counter()
        with pairs_from_warehouse(reader, build=build, since=since, ruleset=ruleset) as data:  # its folder, removed
            report = audit_pairs(data, fdr, permutations)
        if store:
            _store(reader, audits.Params("pairs", build, ruleset, since, fdr, permutations),
                   pair_report_json(report), time.perf_counter() - started)
    if fmt is not Format.table:
        typer.echo(orjson.dumps(report.to_json(), option=orjson.OPT_INDENT_2).decode())
    else:
        from rich.table import Table

        console = terminal.console(wide=True)
        read = ", ".join(f"{n:,} {name}" for name, n in report.decisions.items())
        console.print(f"{report.games:,} games; decisions read: {read}; {report.pairs_scored} pairs scored; "
                      f"{report.permutations} relabellings; level {report.level:g} (family-wise)")
        if not report.pairs_scored:
            console.print("not enough games for any pair")
        elif not report.cases:
            console.print("no case at this level")
        else:
            table = Table(title=f"{len(report.cases)} cases")
            for column in ("pair", "score", "p (family-wise)", "driving signals (z)", "first step"):
                table.add_column(column)
            for case in report.cases:
                steps = report.steps.get((case.a, case.b), [])
                drivers = ", ".join(f"{name} {case.signals[name].z:.1f}" for name in case.drivers)
                first = next((s["replay"] for name in case.drivers for s in steps if s["signal"] == name), "")
                table.add_row(shown(f"{case.a} + {case.b}"), f"{case.score:.2f}", f"{case.p_value:.3g}",
                              drivers, shown(first))
            console.print(table)
    raise typer.Exit(1 if report.cases else 0)


@contextmanager
def _reader(warehouse: str, storage: Any, since: str | None) -> Iterator[Reader]:
    """The warehouse's reader for an audit; a bad --since or an unreadable warehouse is the
    command's error."""
    from ingest.read import WarehouseMissing, connect
    from ingest.storage import StorageError

    if since is not None:
        try:
            datetime.fromisoformat(since.replace("Z", "+00:00"))
        except ValueError:
            raise _fail(f"--since takes an ISO date or moment such as 2026-10-01, got {since!r}") from None
    try:
        reader = connect(warehouse, storage_options(storage))
    except (WarehouseMissing, StorageError) as exc:
        raise _fail(str(exc), 1) from None
    try:
        yield reader
    finally:
        reader.close()


def _store(reader: Reader, params: audits.Params, report: dict[str, Any], seconds: float) -> None:
    """--store: the report kept in the warehouse for the dashboard and the API to read."""
    from ingest import audits

    uri = audits.store(reader, params, report, seconds)
    terminal.console(stderr=True, soft_wrap=True).print(f"stored {shown(uri)} (made from batch {reader.batch})")
