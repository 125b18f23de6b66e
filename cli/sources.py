"""Where `replay` and `report` find a game: log files (as given on the command line) or the
warehouse's stored lines. Both give an `engine.replay.GameReplay`, so a step is
numbered the same way in the CLI, the dashboard, the report and the API."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.replay import GameReplay, LineLookup


class SourceError(Exception):
    """The game cannot be read: what was asked for, and what exists."""


def game_id(raw: str) -> str:
    """A game id as pasted: surrounding spaces (and quotes) trimmed, as deep links read it
    (`engine.replay.clean_game_id`)."""
    from engine.replay import clean_game_id

    return clean_game_id(raw)


def from_logs(paths: list[str], game: str, *, digest: bool = False) -> GameReplay:
    """`game` replayed from log files, directories or `-`. With `digest`, every line is
    read through Python so the report can name the game's sha256; without it the core reads
    the files itself (fast) and set-aside lines are read back one by one when shown."""
    from engine import _core
    from engine.replay import build_replay, replay_lines

    if digest:
        replay = replay_lines(log_lines(paths), game)
    else:
        try:
            verdict, errors = _core.replay_game(paths, game)
        except FileNotFoundError as exc:
            raise SourceError(str(exc)) from None
        replay = None if verdict is None else build_replay(verdict, errors, _line_reader(), digest=False)
    if replay is None:
        raise SourceError(f"no game {game!r} in {', '.join(paths)}")
    return replay


def from_warehouse(warehouse: str, game: str) -> GameReplay:
    """`game` replayed from the lines the warehouse stored for it."""
    from ingest import read

    try:
        reader = read.connect(Path(warehouse).expanduser())
    except read.WarehouseMissing as exc:
        raise SourceError(str(exc)) from None
    try:
        replay = read.game_replay(reader, game)
    finally:
        reader.close()
    if replay is None:
        raise SourceError(f"no game {game!r} in the warehouse {warehouse}")
    return replay


def game_lines(paths: list[str] | None, warehouse: str | None, game: str) -> list[tuple[bytes, str | None, int | None]]:
    """The lines of `game`, from log files (`paths`, every line: the engine picks the
    game's) or from the warehouse's stored lines (`warehouse`, a local folder); one of the
    two. SourceError when neither or both are given, or the warehouse has no such game."""
    if warehouse is not None and paths:
        raise SourceError("give either log paths or --warehouse DIR, not both")
    if warehouse is None and not paths:
        raise SourceError("give the log files holding the game, or --warehouse DIR")
    if warehouse is None:
        return log_lines(list(paths or []))
    from ingest import read

    try:
        reader = read.connect(Path(warehouse).expanduser())
    except read.WarehouseMissing as exc:
        raise SourceError(str(exc)) from None
    try:
        found = read.game_lines(reader, game)
    finally:
        reader.close()
    if not found:
        raise SourceError(f"no game {game!r} in the warehouse {warehouse}")
    return found


def log_lines(paths: list[str]) -> list[tuple[bytes, str | None, int | None]]:
    """Every line of `paths` with the file's name as given and its line number."""
    from engine.reader import InputPathError, LineError, display_name, expand_paths, read_lines

    out: list[tuple[bytes, str | None, int | None]] = []
    try:
        files = expand_paths(paths)
    except InputPathError as exc:
        raise SourceError(str(exc)) from None
    for file in files:
        name = display_name(file)
        for item in read_lines(file):
            if isinstance(item, LineError):
                continue
            number, raw = item
            out.append((raw, name, number))
    return out


def _line_reader() -> LineLookup:
    """(file, line) -> the raw line, reading the file again (only set-aside lines ask)."""
    from engine.reader import STDIN, LineError, read_lines

    @lru_cache(maxsize=64)
    def line_of(file: str | None, line: int | None) -> bytes | None:
        if not file or line is None or file in (STDIN, "<stdin>"):
            return None
        for item in read_lines(file):
            if not isinstance(item, LineError) and item[0] == line:
                return item[1]
        return None

    return line_of
