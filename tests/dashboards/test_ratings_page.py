"""Issue 32: the Ratings page reads the stored analyses (it never runs rollouts itself)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest import analyses, read
from tests.dashboards.conftest import open_page
from tests.ingest.test_analyses import _warehouse

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


def _page(monkeypatch: pytest.MonkeyPatch, root: Path) -> AppTest:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(root))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page("app_pages/ratings.py").run()
    assert not at.exception
    return at


def test_the_ratings_page_says_how_to_make_analyses_then_shows_them(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    root = _warehouse(tmp_path, games=3)
    at = _page(monkeypatch, root)
    assert any("haftkhabis stats ratings" in w.value for w in at.warning)
    # ended early, the page still draws its run marker (a browser waits on it)
    assert any('data-hk-run="' in h.proto.body for h in at.get("html"))
    reader = read.connect(root)
    try:
        analyses.refresh(reader, rollouts=10, seed=0)
        expected = analyses.ratings_rows(analyses.stored(reader), min_hands=0)
    finally:
        reader.close()
    at = _page(monkeypatch, root)
    at.slider(key="ratings_min_hands").set_value(0).run()
    table = at.dataframe[0].value
    assert list(table["player"]) == [r["player"] for r in expected]
    assert "rating" in table.columns and "uncertainty" in table.columns
    # a player's profile: their metrics and their rating over time
    at.selectbox(key="ratings_player").set_value(expected[0]["player"]).run()
    assert not at.exception
    assert any(m.label.startswith("rating") for m in at.metric)


def test_the_replay_shows_a_steps_stored_move_quality(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    root = _warehouse(tmp_path, games=1)
    reader = read.connect(root)
    try:
        analyses.refresh(reader, rollouts=10, seed=0)
        rows = analyses.stored(reader).to_pylist()
    finally:
        reader.close()
    decision = next(r for r in rows if r["kind"] == "decision")
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(root))
    at = open_page(AppTest.from_file(str(APP), default_timeout=60), "replay",
                   game=decision["game_id"], seq=str(decision["seq"]))
    shown = [a.value for a in [*at.success, *at.warning, *at.error]]
    assert any(v.startswith("Move quality") and decision["player"] in v for v in shown), shown
