"""Help text for people: option values named by what they are (`ID`, `N`, `PATH`), not by
Python types (`<str>`, `<list[Path]>`), flags shown without a value, and paragraphs wrapped
to the terminal."""

from __future__ import annotations

import inspect
from typing import Any

import typer
from typer import _click
from typer._click.types import ParamType
from typer.core import TyperArgument, TyperCommand, TyperGroup


class _Unnamed(ParamType):
    """An argument's type, converting as before, with no type name for the help's type column."""

    def __init__(self, typed: ParamType) -> None:
        self.typed = typed
        self.name = typed.name

    def convert(self, value: Any, param: _click.Parameter | None, ctx: _click.Context | None) -> Any:
        return self.typed.convert(value, param, ctx)

    def get_metavar(self, param: _click.Parameter, ctx: _click.Context) -> str:
        return ""

    def shell_complete(self, ctx: _click.Context, param: _click.Parameter, incomplete: str) -> Any:
        return self.typed.shell_complete(ctx, param, incomplete)


#: option values named as docs/cli.md names them, by parameter (an option that sets its own
#: `metavar` keeps it); tests/cli/test_help.py holds every command's help to the page
METAVARS = {
    "warehouse": "DIR|s3://…", "workers": "N", "wait": "S", "retain_hours": "H", "fmt": "table|csv|json",
    "timeout": "S", "max_rows": "N", "memory_limit": "SIZE", "ruleset": "R", "limit": "N", "min_hands": "N",
    "rank_by": "wins|win-rate|elimination-win-rate|mean-points",
    "port": "N", "host": "HOST", "keys": "FILE", "games": "N", "seed": "S", "players": "K|A-B",
    "options": "k=v,…", "mode": "points|elimination", "match": "hands=N|target=N", "faults": "RATE",
    "stock_in_deal": "RATE", "out": "FILE", "name": "NAME", "role": "R", "player": "P", "append": "FILE",
    "dashboard_url": "URL", "max_validate_mb": "N", "max_ingest_mb": "N", "ingest_workers": "N",
    "commit_interval": "S", "commit_lines": "N", "max_lag": "S", "compact_every": "N",
    "validate_threads": "N", "rate": "R", "burst": "N", "log_level": "LEVEL", "code": "CODE",
}


def _metavar(param: Any) -> str:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    if not isinstance(param, TyperArgument) and param.name in METAVARS:
        return METAVARS[param.name]
    described = getattr(param, "type_descriptor", None)
    if described is not None and described.is_choice and described.choices:
        return "|".join(str(getattr(c, "value", c)) for c in described.choices)
    name = (param.name or "value").upper()
    return f"{name}..." if isinstance(param, TyperArgument) and param.nargs != 1 else name


def _plain(params: list[Any]) -> list[Any]:
    for param in params:
        if param.metavar is None:
            param.metavar = _metavar(param)
        if isinstance(param, TyperArgument) and not isinstance(param.type, _Unnamed):
            # an argument's name column already says what it is: no `<str>` beside it
            param.type = _Unnamed(param.type)
    return params


def _reflowed(text: str | None) -> str | None:
    """A docstring's paragraphs as flowing text: the terminal wraps them, not the source's
    line breaks (a paragraph opening with click's `\\b` keeps its lines)."""
    if text is None:
        return None
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split("\n")) for p in paragraphs)


class Command(TyperCommand):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = _reflowed(self.help)

    def get_params(self, ctx: _click.Context) -> list[_click.Parameter]:
        return _plain(super().get_params(ctx))


class Group(TyperGroup):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = _reflowed(self.help)

    def get_params(self, ctx: _click.Context) -> list[_click.Parameter]:
        return _plain(super().get_params(ctx))


def plain_help(app: typer.Typer) -> None:
    """Every command and group of `app` (and of its sub-apps) with people's metavars."""
    if not (isinstance(app.info.cls, type) and issubclass(app.info.cls, Group)):
        app.info.cls = Group
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):
            command.cls = Command
    for group in app.registered_groups:
        sub: Any = group.typer_instance
        if sub is not None:
            plain_help(sub)
        if group.cls in (None, TyperGroup):
            group.cls = Group
