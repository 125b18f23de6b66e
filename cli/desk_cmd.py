"""`haftkhabis verify-bundle`: check a case's evidence bundle as its receiver would."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli import terminal
from cli.terminal import shown


def register(app: typer.Typer) -> None:
    app.command("verify-bundle")(verify_bundle)


def verify_bundle(
    bundle: Annotated[Path, typer.Argument(help="The bundle (a zip) to check.", metavar="FILE")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the verdict line and the problems.")] = False,
) -> None:
    """Check an evidence bundle (`GET /v1/cases/{id}/bundle`, or the desk's download):
    every file's SHA-256 against its manifest, the game's lines replayed by this engine to
    the verdict and the sha256 the manifest records, and the report rendered again from
    them, byte for byte.

    Exit status: 0 when the bundle holds, 1 when it does not (each problem named), 2 when
    the file cannot be read.
    """
    from engine.bundle import verify_bundle as verify

    try:
        data = bundle.read_bytes()
    except OSError as exc:
        terminal.console(stderr=True, soft_wrap=True).print(
            f"[red]error:[/red] cannot read {shown(str(bundle))}: {shown(exc.strerror or str(exc))}")
        raise typer.Exit(2) from None
    found = verify(data, bundle.name)
    console = terminal.console(highlight=False, soft_wrap=True)
    if not quiet:
        for line in found.checked:
            console.print(f"[green]✓[/green] {shown(line)}")
    for line in found.notes:
        console.print(f"[yellow]note:[/yellow] {shown(line)}")
    for line in found.problems:
        console.print(f"[red]✗[/red] {shown(line)}")
    case = (found.manifest or {}).get("case") or {}
    about = f"case {case.get('id')}, game {case.get('game')}" if case else "the bundle"
    if found.ok:
        console.print(f"[green]{shown(str(bundle))} holds[/green]: {shown(about)}, "
                      f"{len(found.checked)} checks passed")
        raise typer.Exit(0)
    console.print(f"[red]{shown(str(bundle))} does not hold[/red]: {len(found.problems)} problem(s)")
    raise typer.Exit(1)
