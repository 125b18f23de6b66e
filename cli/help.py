"""Help text for people: option values named by what they are (`ID`, `N`, `PATH`), not by
Python types (`<str>`, `<list[Path]>`), and flags shown without a value."""

from __future__ import annotations

from typing import Any

import typer
from typer import _click
from typer.core import TyperArgument, TyperCommand, TyperGroup


def _metavar(param: Any) -> str:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    described = getattr(param, "type_descriptor", None)
    if described is not None and described.is_choice and described.choices:
        return "|".join(str(getattr(c, "value", c)) for c in described.choices)
    name = (param.name or "value").upper()
    return f"{name}..." if isinstance(param, TyperArgument) and param.nargs != 1 else name


def _plain(params: list[Any]) -> list[Any]:
    for param in params:
        if param.metavar is None:
            param.metavar = _metavar(param)
        if isinstance(param, TyperArgument):
            # an argument's name column already says what it is: no `<list[str]>` beside it
            param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
    return params


class Command(TyperCommand):
    def get_params(self, ctx: _click.Context) -> list[_click.Parameter]:
        return _plain(super().get_params(ctx))


class Group(TyperGroup):
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
