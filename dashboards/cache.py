"""Streamlit caching around the pure functions: uploads judged once, replays built once,
warehouse queries run once per argument set. Pages call these, never the engine or DuckDB
directly.

Replays are cached as resources (shared, never copied): a step change reruns the page, and
unpickling a whole game's recorded states each time would eat the 200 ms budget. They are
treated as read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from dashboards import data, game_replay
from dashboards.game_replay import GameReplay
from dashboards.report import render_hand_report
from dashboards.settings import MAX_INFLATED_BYTES, warehouse_dir


@dataclass(frozen=True, slots=True)
class UploadCheck:
    """An uploaded log's verdicts, as plain rows."""

    games: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    lines: int
    problem: str | None = None  # why the upload could not be read at all


@st.cache_data(max_entries=8, show_spinner="Validating the log…")
def check_upload(file_id: str, name: str, _data: bytes) -> UploadCheck:
    """Validate every game of an upload (keyed by the upload's id: bytes are not hashed)."""
    del file_id
    try:
        text = game_replay.inflate(_data, MAX_INFLATED_BYTES)
    except (game_replay.UploadTooLarge, OSError, EOFError) as exc:
        return UploadCheck([], [], 0, f"{name}: {exc}")
    lines = game_replay.parse_lines(text)
    verdicts, errors = game_replay.validate_lines(lines, name)
    games = []
    for v in verdicts:
        games.append({
            "game": v.game,
            "ruleset": v.ruleset,
            "status": v.status,
            "violations": len(v.violations),
            "codes": ", ".join(sorted({x["code"] for x in v.violations})),
            "hands": len(v.hands or []),
            "winners": ", ".join(v.winners),
            "lines": v.lines,
        })
    games.sort(key=lambda g: (g["violations"] == 0, g["game"]))
    return UploadCheck(games, [dict(e) for e in errors], len(lines))


@st.cache_resource(max_entries=16, show_spinner="Replaying…")
def replay_upload(file_id: str, name: str, _data: bytes, game: str) -> GameReplay | None:
    del file_id
    text = game_replay.inflate(_data, MAX_INFLATED_BYTES)
    return game_replay.replay_blob(text, game, name)


# ------------------------------------------------------------------------ the warehouse


@st.cache_resource(show_spinner="Opening the warehouse…")
def _reader(root: str) -> data.Reader:
    """One read-only connection per warehouse, shared by every session."""
    return data.connect(Path(root))


def reader() -> data.Reader:
    return _reader(str(warehouse_dir()))


def warehouse_problem() -> str | None:
    """Why the warehouse cannot be read (None when it can)."""
    try:
        reader()
    except data.WarehouseMissing as exc:
        return (f"{exc}. Ingest logs with `haftkhabis ingest PATH --warehouse {warehouse_dir()}`; "
                "the Check-a-log page works without a warehouse.")
    return None


def warehouse_ready() -> bool:
    return warehouse_problem() is None


def reload() -> None:
    """Reopen the warehouse at its latest committed batch (a button's callback)."""
    _reader.clear()
    _query.clear()
    _replay.clear()
    _hand_report.clear()


@st.cache_data(max_entries=512, show_spinner=False)
def _query(name: str, root: str, batch: int, args: tuple[Any, ...]) -> Any:
    """Every warehouse question, cached by its name, the snapshot and its arguments."""
    del batch  # part of the key: a reload at a newer batch asks again
    return getattr(data, name)(_reader(root), *args)


def query(name: str, *args: Any) -> Any:
    """`data.<name>(reader, *args)`, cached."""
    current = reader()
    return _query(name, str(current.root), current.batch, args)


@st.cache_resource(max_entries=32, show_spinner="Replaying the game…")
def _replay(root: str, batch: int, game: str) -> GameReplay | None:
    del batch
    return game_replay.replay_lines(data.game_lines(_reader(root), game), game)


def replay_game(game: str) -> GameReplay | None:
    """A warehouse game replayed from its raw lines, every step recorded."""
    current = reader()
    return _replay(str(current.root), current.batch, game)



@st.cache_data(max_entries=32, show_spinner=False)
def _hand_report(root: str, batch: int, game: str, hand: int) -> str:
    replay = _replay(root, batch, game)
    if replay is None:
        raise ValueError(f"no game {game}")
    return render_hand_report(replay, hand)


def hand_report(game: str, hand: int) -> str:
    current = reader()
    return _hand_report(str(current.root), current.batch, game, hand)

