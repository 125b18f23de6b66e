"""Every page under AppTest on the sample warehouse: renders without exception, shows its
key elements, and its widgets drive state (replay stepping, next violation, player view,
deep links)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboards.conftest import DISPUTED

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


def _html(at: AppTest) -> str:
    return "".join(h.proto.body for h in at.get("html"))


def _step_caption(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Step "))


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, sample_warehouse: Path) -> Iterator[AppTest]:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(sample_warehouse))
    at = AppTest.from_file(str(APP), default_timeout=60)
    yield at


def _open(at: AppTest, page: str, **params: str) -> AppTest:
    at.run()
    at.query_params.clear()
    at.query_params.update(params)
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_overview(app: AppTest) -> None:
    app.run()  # the default page
    assert not app.exception
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Games"] == "5"
    assert metrics["Players"] == "9"
    assert metrics["Compliance rate"] == "60.0%"
    assert len(app.dataframe) == 1
    app.multiselect(key="overview_rulesets").set_value(["bazito"]).run()
    assert {m.label: m.value for m in app.metric}["Games"] == "2"


def test_games_filters(app: AppTest) -> None:
    _open(app, "games")
    assert "**5** games match" in app.markdown[0].value
    app.multiselect(key="games_statuses").set_value(["violations"]).run()
    assert "**2** games match" in app.markdown[0].value
    app.text_input(key="games_player").set_value("cyrus").run()
    assert "**1** game match" in app.markdown[0].value
    table = app.dataframe[0].value
    assert list(table["game_id"]) == [DISPUTED]
    assert table["replay"][0] == f"replay?game={DISPUTED}"


def test_scoring_for_a_game(app: AppTest) -> None:
    _open(app, "scoring", game=DISPUTED)
    html = _html(app)
    assert html.count('class="hk-scores"') == 2  # two decided hands
    assert "Multiplier:" in html
    assert any("Match totals" in s.value for s in app.subheader)
    app.session_state["scoring_tab"] = "Across games"
    app.run()
    assert not app.exception
    assert app.dataframe[0].value["ruleset"].to_list()


def test_players(app: AppTest) -> None:
    _open(app, "players")
    board = app.dataframe[0].value
    assert {"rank", "player", "win_rate"} <= set(board.columns)
    _open(app, "players", player="ali")
    metrics = {m.label: m.value for m in app.metric}
    assert int(metrics["Hands"]) >= 3
    assert app.selectbox(key="players_player").value == "ali"
    app.session_state["players_tab"] = "2-card targeting"
    app.run()
    assert not app.exception
    app.radio(key="players_two_metric").set_value("lift").run()
    assert not app.exception


def test_compliance_drill_down_links(app: AppTest) -> None:
    _open(app, "compliance")
    table = app.dataframe[-1].value
    # 12: with the card not held taken from the discard pile (decisions.md), the elimination
    # game's next reshuffle no longer matches the pile
    assert len(table) == 12
    assert all(link.startswith("replay?game=") and "&seq=" in link for link in table["replay"])
    app.multiselect(key="compliance_codes").set_value(["must_play"]).run()
    assert set(app.dataframe[-1].value["code"]) == {"must_play"}


def test_replay_deep_link_and_stepping(app: AppTest) -> None:
    _open(app, "replay", game=DISPUTED, hand="1", step="5")
    assert _step_caption(app).startswith("Step 5 of")
    assert 'class="hk-card' in _html(app)
    app.button(key="replay_next").click().run()
    assert _step_caption(app).startswith("Step 6 of")
    assert app.query_params["step"] == "6" and app.query_params["hand"] == "1"
    app.button(key="replay_prev").click().run()
    assert app.query_params["step"] == "5"
    app.button(key="replay_nextbad").click().run()
    hand, step = int(app.query_params["hand"]), int(app.query_params["step"])
    assert (hand, step) > (1, 5)
    assert 'class="hk-viol"' in _html(app)  # the violation shown with its rule
    app.slider(key="replay_step").set_value(2).run()
    assert app.query_params["step"] == "2"
    app.selectbox(key="replay_hand").set_value(2).run()
    assert app.query_params == {"game": DISPUTED, "hand": "2", "step": "1"}


def test_replay_player_view_hides_other_hands(app: AppTest) -> None:
    _open(app, "replay", game=DISPUTED, hand="1", step="3", view="player", player="bita")
    assert app.radio(key="replay_view").value == "Player view"
    assert app.selectbox(key="replay_viewer").value == "bita"
    html = _html(app)
    assert 'class="hk-back"' in html
    assert html.count('data-player="') == 3
    assert app.query_params["view"] == "player" and app.query_params["player"] == "bita"
    app.radio(key="replay_view").set_value("Support view (every hand)").run()
    assert 'class="hk-back"' not in _html(app)
    assert "view" not in app.query_params


def test_replay_drill_down_by_seq(app: AppTest) -> None:
    _open(app, "replay", game=DISPUTED, seq="7")
    assert "seq 7" in _step_caption(app)
    assert app.query_params["hand"] == "1"


def test_replay_bad_links(app: AppTest) -> None:
    _open(app, "replay", game="no-such-game")
    assert app.error
    _open(app, "replay", game=DISPUTED, hand="abc", step="9999")
    assert _step_caption(app).startswith("Step ")


@pytest.mark.parametrize("page", ["overview", "games", "scoring", "players", "compliance", "replay"])
def test_pages_without_a_warehouse(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, page: str) -> None:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(tmp_path / "missing"))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    assert any("haftkhabis ingest" in w.value for w in at.warning)


def test_picking_a_game_opens_its_replay(app: AppTest) -> None:
    _open(app, "games")
    app.multiselect(key="games_statuses").set_value(["violations"]).run()
    first = app.dataframe[0].value["game_id"][0]
    app.session_state["games_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()
    assert not app.exception
    assert app.text_input(key="replay_game").value == first
    assert _step_caption(app).startswith("Step 1 of")


def test_a_compliance_row_opens_the_replay_at_that_line(app: AppTest) -> None:
    _open(app, "compliance")
    table = app.dataframe[-1].value
    game, seq = table["game_id"][0], int(table["seq"][0])
    app.session_state["compliance_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()
    assert not app.exception
    assert app.query_params["game"] == game
    assert f"seq {seq}" in _step_caption(app)
