"""The `haftkhabis` command: each sub-command lives in its own module and registers here."""

from __future__ import annotations

import sys

import typer

from cli import (
    analysis_cmd,
    audit_cmd,
    crash,
    dashboard_cmd,
    desk_cmd,
    engine_cmd,
    rules_cmd,
    serve_cmd,
    simulate_cmd,
    warehouse_cmd,
)
from cli.help import plain_help

app = typer.Typer(
    name="haftkhabis",
    help="Validate, replay, store and explore Haft Khabis game logs (haftkhabis/1).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (engine_cmd, rules_cmd, simulate_cmd, warehouse_cmd, audit_cmd, dashboard_cmd, serve_cmd,
               analysis_cmd, desk_cmd):
    module.register(app)
plain_help(app)


def main() -> None:
    try:
        app()
    except Exception as exc:  # a bug (verdicts and usage errors leave as SystemExit)
        sys.exit(crash.report(exc))


if __name__ == "__main__":
    main()
