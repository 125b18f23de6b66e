"""Streamlit caching around the pure functions: uploads judged once, replays built once,
warehouse queries run once per argument set. Pages call these, never the engine or DuckDB
directly.

Replays are cached as resources (shared, never copied): a step change reruns the page, and
unpickling a whole game's recorded states each time would eat the 200 ms budget. They are
treated as read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from dashboards import game_replay
from dashboards.game_replay import GameReplay
from dashboards.settings import MAX_INFLATED_BYTES


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
            "codes": ", ".join(sorted({x.code.value for x in v.violations})),
            "hands": len(v.hands or []),
            "winners": ", ".join(v.winners),
            "lines": v.lines,
        })
    games.sort(key=lambda g: (g["violations"] == 0, g["game"]))
    return UploadCheck(games, [e.to_json() for e in errors], len(lines))


@st.cache_resource(max_entries=16, show_spinner="Replaying…")
def replay_upload(file_id: str, name: str, _data: bytes, game: str) -> GameReplay | None:
    del file_id
    text = game_replay.inflate(_data, MAX_INFLATED_BYTES)
    return game_replay.replay_blob(text, game, name)
