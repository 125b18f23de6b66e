"""Every page under AppTest on the sample warehouse: renders without exception, shows its
key elements, and its widgets drive state (replay stepping, next violation, player view,
deep links)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from engine.replay import GameReplay
from tests.dashboards.conftest import DISPUTED, open_page

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
    open_page(app, "games")
    assert "**5** games match" in app.markdown[0].value
    app.multiselect(key="games_statuses").set_value(["violations"]).run()
    assert "**2** games match" in app.markdown[0].value
    app.text_input(key="games_player").set_value("cyrus").run()
    assert "**1** game match" in app.markdown[0].value
    table = app.dataframe[0].value
    assert list(table["game_id"]) == [DISPUTED]
    assert table["replay"][0] == f"replay?game={DISPUTED}"


def test_scoring_for_a_game(app: AppTest) -> None:
    open_page(app, "scoring", game=DISPUTED)
    html = _html(app)
    assert html.count('class="hk-scores"') == 2  # two decided hands
    assert "Multiplier:" in html
    assert any("Match totals" in s.value for s in app.subheader)
    app.session_state["scoring_tab"] = "Across games"
    app.run()
    assert not app.exception
    assert app.dataframe[0].value["ruleset"].to_list()


def test_players(app: AppTest) -> None:
    open_page(app, "players")
    assert app.info  # every sample player has fewer than the default 5 hands
    app.number_input(key="players_min_hands").set_value(0).run()
    board = app.dataframe[0].value
    assert {"rank", "player", "measure", "sample", "violations"} <= set(board.columns)
    open_page(app, "players", player="ali")
    metrics = {m.label: m.value for m in app.metric}
    assert int(metrics["Hands"]) >= 3
    assert app.selectbox(key="players_player").value == "ali"
    app.session_state["players_tab"] = "2-card targeting"
    app.run()
    assert not app.exception
    app.radio(key="players_two_metric").set_value("lift").run()
    assert not app.exception
    app.query_params["players_tab"] = "First seat"  # the tab is bound to the URL
    app.run()
    assert not app.exception and app.dataframe[0].value["turn_order"].eq(0).all()


def test_compliance_drill_down_links(app: AppTest) -> None:
    open_page(app, "compliance")
    table = app.dataframe[-1].value
    # 12: with the card not held taken from the discard pile (decisions.md), the elimination
    # game's next reshuffle no longer matches the pile
    assert len(table) == 12
    assert all(link.startswith("replay?game=") and "&seq=" in link for link in table["replay"])
    app.multiselect(key="compliance_codes").set_value(["must_play"]).run()
    assert set(app.dataframe[-1].value["code"]) == {"must_play"}


def test_replay_deep_link_and_stepping(app: AppTest) -> None:
    open_page(app, "replay", game=DISPUTED, hand="1", step="5")
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
    # hand 1 holds seqs 1-21: hand 2's first step is seq 22, and the link names both
    assert app.query_params == {"game": DISPUTED, "hand": "2", "step": "1", "seq": "22"}


def test_replay_player_view_hides_other_hands(app: AppTest) -> None:
    open_page(app, "replay", game=DISPUTED, hand="1", step="3", view="player", player="bita")
    assert app.radio(key="replay_view").value == "Player view"
    assert app.selectbox(key="replay_viewer").value == "bita"
    html = _html(app)
    assert 'class="hk-back"' in html
    assert html.count('data-player="') == 3
    assert app.query_params["view"] == "player" and app.query_params["player"] == "bita"
    app.radio(key="replay_view").set_value("Support view (every hand)").run()
    assert 'class="hk-back"' not in _html(app)
    assert "view" not in app.query_params


def _as_a_browser_that_missed_a_run(app: AppTest, replay: GameReplay) -> None:
    """Make the step's widgets report at the next run what a browser shows for them when
    it recorded none of the values sent before this run: the value this run sent with
    the widget (`set_value`), else the widget's default. A browser under load did this:
    a step clicked while a deep link's page was still settling (its widgets not yet
    holding the values drawn) was answered by a run that drew the View radio without its
    value, so the browser showed the default, the support view, and the next step
    reported it as the user's choice (issue #33's leak)."""
    def shown(widget: Any, options: list[Any]) -> Any:
        proto = widget.proto
        if proto.set_value:
            return options[list(proto.options).index(proto.raw_value)]
        return options[proto.default]

    hand = app.selectbox(key="replay_hand")
    hand.set_value(shown(hand, list(replay.hands)))  # its options are the hands, labelled
    view = app.radio(key="replay_view")
    view.set_value(shown(view, view.options))
    if view.value == "Player view" and any(w.key == "replay_viewer" for w in app.selectbox):
        viewer = app.selectbox(key="replay_viewer")
        viewer.set_value(shown(viewer, viewer.options))
    step = app.slider(key="replay_step")
    step.set_value(step.proto.value[0] if step.proto.set_value else step.proto.default[0])


def test_a_player_view_deep_link_stays_that_players_view(
        app: AppTest, sample_replays: dict[str, GameReplay]) -> None:
    """Whatever the browser recorded of earlier runs, every run sends the view on screen
    with its widgets: a player's deep link, stepped on with a browser that missed the
    values of the runs before, is still that player's view, never the support view."""
    open_page(app, "replay", game=DISPUTED, seq="3", view="player", player="bita")
    for _ in range(3):
        _as_a_browser_that_missed_a_run(app, sample_replays[DISPUTED])
        app.button(key="replay_next").click().run()
        assert not app.exception
        assert app.radio(key="replay_view").value == "Player view"
        assert app.selectbox(key="replay_viewer").value == "bita"
        assert app.query_params["view"] == "player" and app.query_params["player"] == "bita"
        assert "sample.jsonl" not in _step_caption(app)  # the support view's caption names the log
    assert _step_caption(app).startswith("Step 6 of")


def test_replay_drill_down_by_seq(app: AppTest) -> None:
    open_page(app, "replay", game=DISPUTED, seq="7")
    assert "seq 7" in _step_caption(app)
    assert app.query_params["hand"] == "1"


def test_replay_bad_links(app: AppTest) -> None:
    open_page(app, "replay", game="no-such-game")
    assert app.error
    open_page(app, "replay", game=DISPUTED, hand="abc", step="9999")
    assert _step_caption(app).startswith("Step ")


@pytest.mark.parametrize("page", sorted(p.stem for p in (APP.parent / "app_pages").glob("*.py")))
def test_pages_without_a_warehouse(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, page: str) -> None:
    """Every page says how to make a warehouse, or works without one (Check a log), and
    draws its run marker: a page that ended early must still tell a browser it is whole."""
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(tmp_path / "missing"))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception
    assert page == "check_log" or any("haftkhabis ingest" in w.value for w in at.warning)
    assert 'data-hk-run="' in _html(at)


def test_picking_a_game_opens_its_replay_at_its_first_violation(
        app: AppTest, sample_replays: dict[str, GameReplay]) -> None:
    open_page(app, "games")
    app.multiselect(key="games_statuses").set_value(["violations"]).run()
    first = app.dataframe[0].value["game_id"][0]
    app.session_state["games_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()
    assert not app.exception
    assert app.text_input(key="replay_game").value == first
    flagged = sample_replays[first].next_violation(None)
    assert flagged is not None and flagged.seq != 1
    assert _step_caption(app).startswith(f"Step {flagged.number} of")
    assert f"hand {flagged.hand} · seq {flagged.seq}" in _step_caption(app)
    # the player view, when chosen, is the flagged player's
    named = [v.player for v in flagged.violations if v.player in sample_replays[first].players]
    app.switch_page("app_pages/replay.py")  # AppTest's next run: the page on screen, not the Games page
    app.radio(key="replay_view").set_value("Player view").run()
    assert app.selectbox(key="replay_viewer").value == named[0]
    assert app.query_params["view"] == "player" and app.query_params["player"] == named[0]


def test_a_compliance_row_opens_the_replay_at_that_line(app: AppTest) -> None:
    open_page(app, "compliance")
    table = app.dataframe[-1].value
    game, seq = table["game_id"][0], int(table["seq"][0])
    app.session_state["compliance_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()
    assert not app.exception
    assert app.query_params["game"] == game
    assert f"seq {seq}" in _step_caption(app)


def _buttons(at: AppTest, prefix: str = "replay_move_") -> list[tuple[str, str]]:
    return [(b.key, b.label) for b in at.button if b.key and b.key.startswith(prefix)]


def test_replay_move_list_jumps_and_filters(app: AppTest) -> None:
    open_page(app, "replay", game=DISPUTED, hand="1", step="5")
    moves = _buttons(app)
    assert len(moves) == 21  # every line of hand 1, numbered by seq
    assert moves[0][1].startswith("1 ✓ hand 1 dealt")
    flagged = [label for _, label in moves if label.startswith(":red[")]
    assert len(flagged) == 4 and "✗" in flagged[0]  # seqs 7, 8, 11, 13
    # a label is text: red, but no `**` left for the page to show as it is
    assert not any("**" in label for _, label in moves)
    key = next(k for k, label in moves if label.lstrip().startswith("19 "))
    app.button(key=key).click().run()
    assert "seq 19" in _step_caption(app)
    assert app.query_params["seq"] == "19" and app.query_params["step"] == "19"
    app.multiselect(key="replay_movers").set_value(["cyrus"]).run()
    labels = [label for _, label in _buttons(app)]
    assert labels and all("cyrus" in label for label in labels)


def test_the_move_list_of_a_long_hand_lists_the_lines_around_the_step(
    app: AppTest, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hand longer than the move list's window lists the window's lines around the
    current step (more after it than before), says which, and follows the step by a
    stride: the lines stay as they are while the step moves inside the window."""
    from dashboards import views

    def seqs() -> list[int]:
        return [int(label.removeprefix(":red[").split()[0]) for _, label in _buttons(app)]

    monkeypatch.setattr(views, "MOVE_WINDOW", 7)
    monkeypatch.setattr(views, "MOVES_BEFORE", 2)
    monkeypatch.setattr(views, "MOVE_STRIDE", 3)
    open_page(app, "replay", game=DISPUTED, hand="1", step="10")  # line 9: 2 + (9 - 2) % 3 lines before
    assert seqs() == [7, 8, 9, 10, 11, 12, 13]
    assert any("21 of 21 lines · seq 7–13 listed" in c.value for c in app.caption)
    app.button(key="replay_next").click().run()  # still inside the window: the same lines
    assert seqs() == [7, 8, 9, 10, 11, 12, 13]
    app.button(key="replay_next").click().run()  # the window moves by its stride
    assert seqs() == [10, 11, 12, 13, 14, 15, 16]
    open_page(app, "replay", game=DISPUTED, hand="1", step="21")  # the hand's end: the last 7
    assert seqs() == list(range(15, 22))
    open_page(app, "replay", game=DISPUTED, hand="1", step="2")  # its start: the first 7
    assert seqs() == list(range(1, 8))


def test_replay_by_seq_and_the_why_of_a_forced_draw(app: AppTest) -> None:
    open_page(app, "replay", game=DISPUTED, seq="19")
    assert _step_caption(app).startswith("Step 19 of 21 · hand 1 · seq 19")
    assert app.query_params["hand"] == "1" and app.query_params["step"] == "19"
    html = _html(app)
    assert "draws 4: the total of ali&#x27;s 7♦ and bita&#x27;s 7♣" in html
    assert 'class="hk-recent"' in html  # the pile's last cards
    app.button(key="replay_prev").click().run()
    assert "answers ali&#x27;s 7♦; the pending total is now 4" in _html(app)
    assert app.query_params["seq"] == "18"


def test_replay_bad_deep_links_say_what_exists(app: AppTest) -> None:
    open_page(app, "replay", game=DISPUTED, hand="9", step="999")
    warning = app.warning[0].value
    assert "hand=9, step=999" in warning and "no hand 9" in warning
    assert "1 (21 steps), 2 (33 steps)" in warning
    assert _step_caption(app).startswith("Step 1 of 21 · hand 1")
    open_page(app, "replay", game=DISPUTED, hand="1", step="999")
    assert "hand 1 has steps 1–21" in app.warning[0].value
    open_page(app, "replay", game=DISPUTED, seq="999")
    assert "seqs 1–" in app.warning[0].value or "seqs 0–" in app.warning[0].value
    open_page(app, "replay", game=f"  {DISPUTED} ", hand="2", step="3")  # a pasted id, spaces and all
    assert not app.warning
    assert app.text_input(key="replay_game").value == DISPUTED
    assert _step_caption(app).startswith("Step 3 of 33 · hand 2")
    open_page(app, "replay", game="t41-disput")
    assert app.error and DISPUTED in app.error[0].value  # what exists, close to what was asked


def test_replay_report_download_is_the_step_and_view(app: AppTest) -> None:
    open_page(app, "replay", game=DISPUTED, seq="13", view="player", player="bita")
    from dashboards import cache

    html = cache.hand_report(DISPUTED, 1, 13, "bita")
    assert 'data-view="player"' in html and "hand 1 · step 13 · seq 13" in html
    assert "sample.jsonl" not in html  # no server paths in the player view
