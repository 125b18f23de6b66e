"""The `haftkhabis` command: each sub-command lives in its own module and registers here."""

from __future__ import annotations

import typer

from cli import dashboard_cmd, engine_cmd, simulate_cmd, warehouse_cmd

app = typer.Typer(
    name="haftkhabis",
    help="Validate, replay, store and explore Haft Khabis game logs (haftkhabis/1).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (engine_cmd, simulate_cmd, warehouse_cmd, dashboard_cmd):
    module.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
