"""Streamlit caching around the pure functions: uploads judged once, replays built once,
warehouse queries run once per argument set. Pages call these, never the engine or DuckDB
directly.

Replays are cached as resources (shared, never copied): a step change reruns the page, and
unpickling a whole game's recorded states each time would eat the 200 ms budget. They are
treated as read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import streamlit as st

from dashboards import upload
from dashboards.settings import storage_options, warehouse_dir
from dashboards.upload import UploadCheck
from engine.bundle import BundleCase, make_bundle
from engine.player_view import public_replay
from engine.replay import GameReplay
from engine.report import render_hand_report
from engine.whatif import WhatIf
from ingest import audits, cases, inference, read
from ingest.schema import DATA_TABLES

if TYPE_CHECKING:
    import polars as pl


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


# ------------------------------------------------------------------------ charts

#: the charts' Vega-Lite specs kept (each holds its chart's data as Arrow bytes: the
#: aggregates a page draws, not rows of the game tables)
CHARTS_KEPT = 256


@st.cache_resource(max_entries=CHARTS_KEPT, show_spinner=False)
def _chart_spec(name: str, fingerprint: str, _make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    del name, fingerprint
    return _make()


def chart_spec(name: str, fingerprint: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The Vega-Lite spec of the chart `name` for arguments of that `fingerprint`, made by
    `make` once and shared by every session (`dashboards.charts.cached`): not to be
    changed."""
    return _chart_spec(name, fingerprint, make)


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


#: the questions about the desk's cases: they change with the `cases` table alone
CASE_QUERIES = frozenset({"cases", "case_revisions", "case_tags"})


def data_key(current: read.Reader, name: str = "") -> tuple[int, ...]:
    """What a cached answer depends on: the versions of the tables it reads. A case
    written (a batch of its own) changes only `cases`, so the game tables' answers (and
    replays) stay cached; an ingest or a compact changes them, and they are asked again."""
    versions = current.snapshot.versions
    if name in CASE_QUERIES:
        return (versions.get("cases", 0),)
    return tuple(versions.get(t, 0) for t in DATA_TABLES)


@st.cache_data(max_entries=512, show_spinner=False)
def _query(name: str, root: str, key: tuple[int, ...], args: tuple[Any, ...], _current: read.Reader) -> Any:
    """Every warehouse question, cached by its name, the versions of what it reads and its
    arguments (the reader of that snapshot is passed along, not hashed)."""
    del root, key  # the key: newer tables ask again
    return getattr(read, name)(_current, *args)


@st.cache_resource(max_entries=16, show_spinner=False)
def _stored_audit(root: str, key: tuple[int, ...], params: audits.Params, stamp: tuple[int, float] | None,
                  _current: read.Reader) -> audits.Stored | None:
    del root, key, stamp  # the key: a newer snapshot or a report stored again is read again
    return audits.load(_current, params)


def stored_audit(params: audits.Params) -> audits.Stored | None:
    """The report `haftkhabis audit … --store` kept for `params` (`ingest.audits`), read
    once per snapshot and stored file. Shared by every session: not to be changed."""
    current = reader()
    return _stored_audit(str(current.root), data_key(current), params, audits.stamp(current, params), current)


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
    return _query(name, str(current.root), data_key(current, name), args, current)


@dataclass(frozen=True, slots=True)
class Overview:
    """What the landing page (Overview) shows for a filter."""

    totals: dict[str, Any]  # `read.overview_totals`
    rulesets: pl.DataFrame  # `read.by_ruleset`
    statuses: pl.DataFrame  # `read.status_counts`
    trend: pl.DataFrame  # `read.over_time`


def overview(flt: read.GameFilter) -> Overview:
    """The landing page's questions for `flt`, cached: the page asks them, and the server
    once as it starts, for every game (`dashboards.server._warm`), so the first visitor
    finds them answered."""
    return Overview(query("overview_totals", flt), query("by_ruleset", flt), query("status_counts", flt),
                    query("over_time", flt))


@st.cache_resource(max_entries=32, show_spinner="Replaying the game…")
def _replay(root: str, batch: tuple[int, ...], game: str, viewer: str | None,
            _current: read.Reader) -> GameReplay | None:
    if viewer is not None:  # the player view of the support view (`engine.player_view`)
        whole = _replay(root, batch, game, None, _current)
        return None if whole is None else public_replay(whole, viewer)
    del root, batch
    return read.game_replay(_current, game)


def replay_game(game: str, viewer: str | None = None) -> GameReplay | None:
    """A warehouse game replayed from its raw lines, every step recorded; with `viewer`,
    what that player could see of it (`engine.player_view.public_replay`)."""
    current = reader()
    return _replay(str(current.root), data_key(current), game, viewer, current)


def player_replay(game: str, viewer: str) -> GameReplay:
    """What `viewer` could see of a warehouse game (`replay_game(game, viewer)`, which the
    page has found to exist)."""
    found = replay_game(game, viewer)
    if found is None:
        raise LookupError(f"no game {game!r} in the warehouse")
    return found


@st.cache_data(max_entries=32, show_spinner=False)
def _hand_report(root: str, batch: tuple[int, ...], game: str, hand: int, seq: int | None,
                 viewer: str | None, _current: read.Reader) -> str:
    replay = _replay(root, batch, game, viewer, _current)
    if replay is None:
        raise ValueError(f"no game {game}")
    return render_hand_report(replay, hand, seq=seq)


def hand_report(game: str, hand: int, seq: int | None = None, viewer: str | None = None) -> str:
    """The dispute report of `hand` about the line `seq`, in `viewer`'s player view (None:
    the support view) — what `haftkhabis report` writes."""
    current = reader()
    return _hand_report(str(current.root), data_key(current), game, hand, seq, viewer, current)


# ------------------------------------------------------------------------ rules: inference, what-if


@st.cache_data(max_entries=16, show_spinner="Replaying every game under every ruleset profile…")
def _infer_builds(root: str, batch: tuple[int, ...], flt: read.GameFilter, per_build: int) -> Any:
    del batch
    return inference.infer_builds(_reader(root), flt, per_build)


def infer_builds(flt: read.GameFilter, per_build: int) -> inference.BuildInference:
    """The auditor panel's inference (`ingest.inference.infer_builds`), cached."""
    current = reader()
    result: inference.BuildInference = _infer_builds(str(current.root), data_key(current), flt, per_build)
    return result


@st.cache_resource(max_entries=64, show_spinner=False)
def _what_if(root: str, batch: tuple[int, ...], game: str, seq: int, moves: tuple[str, ...],
             viewer: str | None) -> Any:
    del batch
    return inference.game_what_if(_reader(root), game, seq, moves, viewer)


def what_if(game: str, seq: int, moves: tuple[str, ...], viewer: str | None = None) -> WhatIf:
    """The what-if at a step (`engine.whatif.what_if`), in `viewer`'s player view (None:
    the support view), cached per move list."""
    current = reader()
    result: WhatIf = _what_if(str(current.root), data_key(current), game, seq, moves, viewer)
    return result


# ------------------------------------------------------------------------ the desk's cases


def open_case(draft: cases.Draft, by: str) -> cases.Case:
    """Open a case (a warehouse batch of its own, `ingest.cases`); the next run reads it."""
    found = cases.open_case(str(warehouse_dir()), draft, by, storage_options=storage_options())
    _reader.clear()
    return found


def update_case(case_id: str, change: cases.Change, by: str) -> cases.Case:
    found = cases.update_case(str(warehouse_dir()), case_id, change, by, storage_options=storage_options())
    _reader.clear()
    return found


@st.cache_data(max_entries=16, show_spinner="Making the evidence bundle…")
def _bundle(root: str, key: tuple[int, ...], revision: tuple[str, int], _about: BundleCase,
            _current: read.Reader) -> bytes:
    del root, key, revision
    return make_bundle([raw for raw, _, _ in read.game_lines(_current, _about.game)], _about)


def case_bundle(row: dict[str, Any]) -> bytes:
    """The evidence bundle of a case (its `cases` row, latest revision): what
    `GET /v1/cases/{id}/bundle` serves, byte for byte."""
    current = reader()
    about = BundleCase(row["case_id"], row["game_id"], row["hand"], row["seq"], row["player"],
                       tuple(row["tags"] or ()), row["decision"], row["decided_at"], row["updated_at"])
    return _bundle(str(current.root), data_key(current), (row["case_id"], row["revision"]), about, current)
