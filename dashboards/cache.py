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

from dashboards import upload
from dashboards.settings import storage_options, warehouse_dir
from dashboards.upload import UploadCheck
from engine.player_view import public_replay
from engine.replay import GameReplay
from engine.report import render_hand_report
from engine.whatif import WhatIf
from ingest import inference, read


@dataclass(frozen=True, slots=True)
class UploadReplay:
    """One game of an upload replayed, or why it was not."""

    replay: GameReplay | None
    problem: str | None = None


@st.cache_data(max_entries=8, show_spinner="Validating the log…")
def check_upload(file_id: str, name: str, _data: bytes) -> UploadCheck:
    """Validate every game of an upload (keyed by the upload's id: bytes are not hashed),
    in a child process under the upload's budget (`dashboards.upload`)."""
    del file_id
    budget = upload.Budget.for_upload(len(_data))
    try:
        return upload.run_within(budget, upload.check_blob, _data, name)
    except upload.OverBudget as exc:
        return UploadCheck([], [], 0, f"{name} was not checked: it {exc}, beyond what Check a "
                           f"log gives a file of this size ({budget.describe()}). Validate it "
                           "with `haftkhabis validate`.")


@st.cache_resource(max_entries=16, show_spinner="Replaying…")
def replay_upload(file_id: str, name: str, _data: bytes, game: str) -> UploadReplay:
    """One game of an upload replayed under the upload's budget (refusals are cached too)."""
    del file_id
    budget = upload.Budget.for_upload(len(_data))
    try:
        return UploadReplay(upload.run_within(budget, upload.replay_upload, _data, name, game))
    except upload.OverBudget as exc:
        return UploadReplay(None, f"Game {game} was not replayed: it {exc}, beyond what Check a "
                            f"log gives a file of this size ({budget.describe()}). Replay it with "
                            f"`haftkhabis replay FILE --game {game}`.")


# ------------------------------------------------------------------------ the warehouse


@st.cache_resource(show_spinner="Opening the warehouse…")
def _reader(root: str) -> read.Reader:
    """One read-only connection per warehouse, shared by every session."""
    return read.connect(root, storage_options())


def reader() -> read.Reader:
    """The warehouse at its latest committed batch: the shared connection, reopened when
    an ingest or a compact committed a newer batch (a vacuum may have deleted the files
    the older snapshot reads)."""
    root = str(warehouse_dir())
    current = _reader(root)
    if current.stale():
        _reader.clear()  # sessions still running a query on the old one finish it
        current = _reader(root)
    return current


def warehouse_problem() -> str | None:
    """Why the warehouse cannot be read (None when it can)."""
    try:
        reader()
    except read.WarehouseMissing as exc:
        return (f"{exc}. Ingest logs with `haftkhabis ingest PATH --warehouse {warehouse_dir()}`; "
                "the Check-a-log page works without a warehouse.")
    return None


def warehouse_ready() -> bool:
    return warehouse_problem() is None


def reload() -> None:
    """Reopen the warehouse at its latest committed batch (a button's callback)."""
    _reader.clear()
    _query.clear()
    _ratings.clear()
    _rating_history.clear()
    _step_analysis.clear()
    _replay.clear()
    _hand_report.clear()
    _infer_builds.clear()
    _what_if.clear()


@st.cache_data(max_entries=512, show_spinner=False)
def _query(name: str, root: str, batch: int, args: tuple[Any, ...], _current: read.Reader) -> Any:
    """Every warehouse question, cached by its name, the snapshot and its arguments (the
    reader of that snapshot is passed along, not hashed)."""
    del root, batch  # the key: a newer batch asks again
    return getattr(read, name)(_current, *args)


@st.cache_data(max_entries=16, show_spinner=False)
def _ratings(root: str, batch: int, min_hands: int, _current: read.Reader) -> list[dict[str, Any]] | None:
    from ingest import analyses

    del root, batch
    try:
        table = analyses.stored(_current)
    except analyses.AnalysesUnavailable:
        return None
    if table.num_rows == 0:
        return None
    return analyses.ratings_rows(table, min_hands=min_hands)


@st.cache_data(max_entries=64, show_spinner=False)
def _rating_history(root: str, batch: int, player: str, _current: read.Reader) -> list[dict[str, Any]]:
    from ingest import analyses

    del root, batch
    try:
        return analyses.rating_history(analyses.stored(_current), player)
    except analyses.AnalysesUnavailable:
        return []


def rating_history(player: str) -> list[dict[str, Any]]:
    """`player`'s rating after each rated hand, from the stored analyses."""
    current = reader()
    return _rating_history(str(current.root), current.batch, player, current)


def ratings(min_hands: int) -> list[dict[str, Any]] | None:
    """One row per player from the stored analyses (None: none stored), cached per
    snapshot."""
    current = reader()
    return _ratings(str(current.root), current.batch, min_hands, current)


@st.cache_data(max_entries=256, show_spinner=False)
def _step_analysis(root: str, batch: int, game: str, seq: int, _current: read.Reader) -> dict[str, Any] | None:
    from ingest import analyses

    del root, batch
    return analyses.decision_at(_current, game, seq)


def step_analysis(game: str, seq: int) -> dict[str, Any] | None:
    """The stored move-quality analysis of the decision at `seq` (None: none stored)."""
    current = reader()
    return _step_analysis(str(current.root), current.batch, game, seq, current)


def query(name: str, *args: Any) -> Any:
    """`read.<name>(reader, *args)`, cached."""
    current = reader()
    return _query(name, str(current.root), current.batch, args, current)


@st.cache_resource(max_entries=32, show_spinner="Replaying the game…")
def _replay(root: str, batch: int, game: str, viewer: str | None, _current: read.Reader) -> GameReplay | None:
    if viewer is not None:  # the player view of the support view (`engine.player_view`)
        whole = _replay(root, batch, game, None, _current)
        return None if whole is None else public_replay(whole, viewer)
    del root, batch
    return read.game_replay(_current, game)


def replay_game(game: str, viewer: str | None = None) -> GameReplay | None:
    """A warehouse game replayed from its raw lines, every step recorded; with `viewer`,
    what that player could see of it (`engine.player_view.public_replay`)."""
    current = reader()
    return _replay(str(current.root), current.batch, game, viewer, current)


def player_replay(game: str, viewer: str) -> GameReplay:
    """What `viewer` could see of a warehouse game (`replay_game(game, viewer)`, which the
    page has found to exist)."""
    found = replay_game(game, viewer)
    if found is None:
        raise LookupError(f"no game {game!r} in the warehouse")
    return found


@st.cache_data(max_entries=32, show_spinner=False)
def _hand_report(root: str, batch: int, game: str, hand: int, seq: int | None, viewer: str | None,
                 _current: read.Reader) -> str:
    replay = _replay(root, batch, game, viewer, _current)
    if replay is None:
        raise ValueError(f"no game {game}")
    return render_hand_report(replay, hand, seq=seq)


def hand_report(game: str, hand: int, seq: int | None = None, viewer: str | None = None) -> str:
    """The dispute report of `hand` about the line `seq`, in `viewer`'s player view (None:
    the support view) — what `haftkhabis report` writes."""
    current = reader()
    return _hand_report(str(current.root), current.batch, game, hand, seq, viewer, current)


# ------------------------------------------------------------------------ rules: inference, what-if


@st.cache_data(max_entries=16, show_spinner="Replaying every game under every ruleset profile…")
def _infer_builds(root: str, batch: int, flt: read.GameFilter, per_build: int) -> Any:
    del batch
    return inference.infer_builds(_reader(root), flt, per_build)


def infer_builds(flt: read.GameFilter, per_build: int) -> inference.BuildInference:
    """The auditor panel's inference (`ingest.inference.infer_builds`), cached."""
    current = reader()
    result: inference.BuildInference = _infer_builds(str(current.root), current.batch, flt, per_build)
    return result


@st.cache_resource(max_entries=64, show_spinner=False)
def _what_if(root: str, batch: int, game: str, seq: int, moves: tuple[str, ...], viewer: str | None) -> Any:
    del batch
    return inference.game_what_if(_reader(root), game, seq, moves, viewer)


def what_if(game: str, seq: int, moves: tuple[str, ...], viewer: str | None = None) -> WhatIf:
    """The what-if at a step (`engine.whatif.what_if`), in `viewer`'s player view (None:
    the support view), cached per move list."""
    current = reader()
    result: WhatIf = _what_if(str(current.root), current.batch, game, seq, moves, viewer)
    return result
