"""The numbers the dashboard shows (issue 10, "The numbers"), under AppTest: a player's
violations agree between `haftkhabis stats players`, the leaderboard and the profile and
count only their own fouls; the leaderboard ranks by a stated measure beside its sample;
the first-seat advantage comes with its sample and 95% interval, per ruleset, play and
table size; points and elimination play are never averaged together; the 2-card lift
needs a minimum count and a cell drills down to its games; charts label every row; the
Games search is partial, case-blind and kept in the URL; Check a log shows each
violation's message, seq and line, and one count of lines and violations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from cli.app import app as cli
from ingest import read
from ingest.queries import open_warehouse
from tests.dashboards.conftest import DISPUTED, open_page
from tests.dashboards.loggen import dump, random_game

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


# ---------------------------------------------------------------------------- helpers


def edge_lines() -> list[str]:
    """Games with what must count against nobody: a shipper's retry (an identical line
    twice), a player the header does not name, a seq gap, a play before any deal."""
    players = ["sara", "omid", "lale", "reza"]
    retried = random_game("e-retry", "bazito", players, seed=2, ts="2026-11-01T10:00:00Z")
    again = [i for i, line in enumerate(retried) if line["type"] == "play"][1]
    retried = [*retried[:again + 1], dict(retried[again]), *retried[again + 1:]]
    stranger = [dict(line) for line in random_game("e-stranger", "bazito", players, seed=3,
                                                   ts="2026-11-02T10:00:00Z")]
    stranger[[i for i, line in enumerate(stranger) if line["type"] == "play"][2]]["player"] = "zed"
    gap = random_game("e-gap", "bazito", players, seed=4, ts="2026-11-03T10:00:00Z")
    lost = [i for i, line in enumerate(gap) if line["type"] == "play"][3]
    gap = gap[:lost] + gap[lost + 1:]
    early = [dict(line) for line in random_game("e-early", "bazito", players, seed=5,
                                                ts="2026-11-04T10:00:00Z")]
    early.insert(1, {"game": "e-early", "seq": 1, "type": "play", "ts": early[0]["ts"], "player": "omid",
                     "card": "5H"})
    for line in early[2:]:
        line["seq"] += 1
    return [text for game in (retried, stranger, gap, early) for text in dump(game)]


@pytest.fixture(scope="module")
def edge_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("edge") / "edge.jsonl"
    path.write_text("\n".join(edge_lines()) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def edge_warehouse(edge_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ingest.pipeline import ingest

    root = tmp_path_factory.mktemp("edge-wh") / "wh"
    ingest([str(edge_log)], str(root), workers=1)
    return root


def _app(monkeypatch: pytest.MonkeyPatch, warehouse: Path) -> AppTest:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(warehouse))
    return AppTest.from_file(str(APP), default_timeout=60)


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, sample_warehouse: Path) -> Iterator[AppTest]:
    yield _app(monkeypatch, sample_warehouse)


@pytest.fixture(scope="module")
def reader(sample_warehouse: Path) -> Iterator[read.Reader]:
    """The dashboard's own queries, outside any page."""
    opened = read.connect(sample_warehouse)
    yield opened
    opened.close()


def _charts(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


def _title(spec: dict[str, Any]) -> str:
    title = spec.get("title")
    return title if isinstance(title, str) else (title or {}).get("text", "")


def _encodings(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every encoding of a chart, its layers' and its facet's inner chart's."""
    found = [spec["encoding"]] if "encoding" in spec else []
    for inner in spec.get("layer", []) + ([spec["spec"]] if "spec" in spec else []):
        found += _encodings(inner)
    return found


def _cli_players(warehouse: Path) -> dict[tuple[str, str], int]:
    result = CliRunner().invoke(cli, ["stats", "players", "-w", str(warehouse), "-f", "json", "-n", "10000"])
    assert result.exit_code == 0, result.output
    return {(r["ruleset"], r["player"]): r["violations"] for r in json.loads(result.output)}


def _fouls(warehouse: Path) -> dict[tuple[str, str], int]:
    """The truth: each player's own fouls, counted from the violations table."""
    with open_warehouse(str(warehouse)) as reader:
        rows = reader.rows("SELECT ruleset, player, count(*) AS n FROM violations WHERE foul GROUP BY ALL")
    return {(r["ruleset"], r["player"]): r["n"] for r in rows}


def _board(at: AppTest) -> dict[tuple[str, str], int]:
    open_page(at, "players", players_tab="Leaderboard")
    at.number_input(key="players_min_hands").set_value(0).run()
    assert at.selectbox(key="players_measure").value == "wins"
    board = at.dataframe[0].value
    return {(r.ruleset, r.player): int(r.violations) for r in board.itertuples()}


def _profile(at: AppTest, player: str) -> dict[tuple[str, str], int]:
    """The per-ruleset violations of one player's profile, checked against its metric and
    its table of fouls by code. A fresh session each (`at`): the tabs follow the URL."""
    open_page(at, "players", player=player)
    table = at.dataframe[0].value
    mine = {(r.ruleset, player): int(r.violations) for r in table.itertuples()}
    metric = int(next(m.value for m in at.metric if m.label == "Violations").replace(",", ""))
    by_code = at.dataframe[-1].value  # "Violations committed", the fouls by code
    assert metric == sum(mine.values()) == int(by_code["violations"].sum() if len(by_code) else 0)
    return mine


# ---------------------------------------------------------------------------- violations


@pytest.mark.parametrize("which", ["sample", "edge"])
def test_a_players_violations_agree_everywhere(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest,
                                               which: str) -> None:
    warehouse: Path = request.getfixturevalue("sample_warehouse" if which == "sample" else "edge_warehouse")
    cli_counts = _cli_players(warehouse)
    board = _board(_app(monkeypatch, warehouse))
    profiles: dict[tuple[str, str], int] = {}
    for player in sorted({player for _, player in cli_counts}):
        profiles |= _profile(_app(monkeypatch, warehouse), player)
    assert cli_counts == board == profiles  # every ruleset and player, in all three
    fouls = _fouls(warehouse)
    assert {k: v for k, v in cli_counts.items() if v} == fouls  # their own fouls, nothing else
    with open_warehouse(str(warehouse)) as reader:
        others = reader.rows("SELECT count(*) AS n FROM violations WHERE NOT foul")[0]["n"]
    assert others > 0 and sum(cli_counts.values()) == sum(fouls.values())
    if which == "sample":
        assert cli_counts[("persian", "ali")] == 5  # 3 of them in elimination play
        assert sum(cli_counts.values()) == 11  # of 12 violations: the stock_mismatch is nobody's
    else:
        assert "zed" not in {player for _, player in cli_counts}  # a stranger's line is the log's fault
        assert ("bazito", "omid") not in fouls  # the play before any deal: unexpected_event, no foul


def test_a_retried_line_counts_against_nobody(edge_warehouse: Path) -> None:
    with open_warehouse(str(edge_warehouse)) as reader:
        retried = reader.rows("SELECT count(*) AS n FROM violations WHERE game_id = 'e-retry'")[0]["n"]
        codes = {r["code"] for r in reader.rows("SELECT DISTINCT code FROM violations WHERE NOT foul")}
    assert retried == 0
    assert {"sequence", "schema", "unexpected_event"} <= codes


# ---------------------------------------------------------------------------- leaderboard


def test_the_leaderboard_ranks_by_a_stated_measure_with_its_sample(app: AppTest) -> None:
    open_page(app, "players", players_tab="Leaderboard")
    app.number_input(key="players_min_hands").set_value(0).run()
    for measure, spec in read.MEASURES.items():
        app.selectbox(key="players_measure").set_value(measure).run()
        assert not app.exception
        caption = next(c.value for c in app.caption if c.value.startswith("Ranked within each ruleset by"))
        assert f"**{spec.explained}**" in caption and "Sample" in caption
        board = app.dataframe[0].value
        assert {"rank", "measure", "sample"} <= set(board.columns)
        assert (board["sample"] >= 1).all() or measure == "wins"
        for _, rows in board.groupby("ruleset"):
            values = list(rows.sort_values("rank")["measure"])
            assert values == sorted(values, reverse=spec.descending)
    # elimination play only in persian; its rows hold the elimination hands alone
    app.selectbox(key="players_measure").set_value("elimination_win_rate").run()
    board = app.dataframe[0].value
    assert set(board["ruleset"]) == {"persian"}
    assert set(board["player"]) == {"ali", "sara", "mina", "kian"} and (board["sample"] == 1).all()
    # min hands applies to the sample: ali has 2 hands of persian points play, 3 in all
    app.selectbox(key="players_measure").set_value("points_win_rate").run()
    app.number_input(key="players_min_hands").set_value(2).run()
    persian = app.dataframe[0].value.query("ruleset == 'persian'")
    assert set(persian["player"]) == {"ali", "bita", "cyrus"}
    assert persian.set_index("player").loc["ali", "hands"] == 3
    assert persian.set_index("player").loc["ali", "sample"] == 2


def test_hands_won_ranks_as_the_cli_does(app: AppTest, sample_warehouse: Path) -> None:
    result = CliRunner().invoke(cli, ["stats", "players", "-w", str(sample_warehouse), "-f", "json", "-n", "100"])
    ranks = {(r["ruleset"], r["player"]): r["rank"] for r in json.loads(result.output)}
    open_page(app, "players", players_tab="Leaderboard")
    app.number_input(key="players_min_hands").set_value(0).run()
    board = app.dataframe[0].value
    assert {(r.ruleset, r.player): int(r.rank) for r in board.itertuples()} == ranks


# ---------------------------------------------------------------------------- first seat, seats, modes


def test_wilson_interval() -> None:
    import polars as pl

    frame = read.with_wilson(pl.DataFrame({"wins": [5, 0, 45], "hands": [10, 2, 157],
                                           "fair_rate": [0.5, 0.25, 0.25]}))
    assert frame["ci_low"].round(4).to_list() == [0.2366, 0.0, 0.2217]
    assert frame["ci_high"].round(4).to_list() == [0.7634, 0.6576, 0.3618]
    assert frame["against_fair"].to_list() == ["within chance", "within chance", "within chance"]
    frame = read.with_wilson(pl.DataFrame({"wins": [60, 10], "hands": [100, 100], "fair_rate": [0.25, 0.25]}))
    assert frame["against_fair"].to_list() == ["above", "below"]


def test_first_seat_by_ruleset_play_and_table_size(app: AppTest, sample_warehouse: Path) -> None:
    open_page(app, "players", players_tab="First seat")
    first = app.dataframe[0].value
    assert (first["turn_order"] == 0).all()
    keys = {(r.ruleset, r.mode, int(r.players)) for r in first.itertuples()}
    assert keys == {("bazito", "points", 4), ("persian", "points", 3), ("persian", "elimination", 4),
                    ("pis-yedili", "points", 3)}
    assert ((first["ci_low"] <= first["win_rate"]) & (first["win_rate"] <= first["ci_high"])).all()
    assert (abs(first["fair_rate"] * first["players"] - 1) < 1e-9).all()
    assert {"hands", "ci_low", "ci_high", "against_fair"} <= set(first.columns)
    elimination = first.query("mode == 'elimination'")
    assert elimination["mean_points"].isna().all()  # no points in elimination play
    assert first.query("mode == 'points'")["mean_points"].notna().all()
    caption = next(c.value for c in app.caption if "Wilson" in c.value)
    assert "95%" in caption and "1 ÷ players" in caption
    every = app.dataframe[1].value  # every seat
    with open_warehouse(str(sample_warehouse)) as reader:
        seated = reader.rows("SELECT count(*) AS n FROM hand_players WHERE won IS NOT NULL")[0]["n"]
    assert every["hands"].sum() == seated  # every decided hand of every seat, once
    titles = [_title(spec) for spec in _charts(app)]
    assert sorted(t for t in titles if "·" in t and "first seat" not in t.lower()) == [
        "bazito · points", "persian · elimination", "persian · points", "pis-yedili · points"]
    heatmap = next(spec for spec in _charts(app) if _title(spec) == "persian · points")
    assert {"players", "turn_order"} <= {e.get("field") for enc in _encodings(heatmap) for e in (enc.get("x", {}),
                                                                                                   enc.get("y", {}))}
    app.multiselect(key="players_seat_rulesets").set_value(["persian"]).run()
    assert set(app.dataframe[0].value["ruleset"]) == {"persian"}


def test_a_profile_splits_points_and_elimination_play(app: AppTest, sample_warehouse: Path) -> None:
    open_page(app, "players", player="ali")
    table = app.dataframe[0].value.set_index("ruleset")
    persian = table.loc["persian"]
    assert (persian["points_hands"], persian["elimination_hands"], persian["hands"]) == (2, 1, 3)
    assert persian["points_win_rate"] == 0.5 and persian["elimination_win_rate"] == 0.0
    with open_warehouse(str(sample_warehouse)) as reader:
        points = reader.rows("SELECT avg(points) AS m FROM hand_players WHERE player = 'ali' "
                             "AND game_id = ?", [DISPUTED])[0]["m"]
    assert persian["mean_points"] == points  # over the points-play hands alone
    assert "Win rate" not in {m.label for m in app.metric}  # no rate over every ruleset and play
    # win rate by seat, one heatmap per ruleset and play, a row per table size
    titles = {_title(spec) for spec in _charts(app)}
    assert {"persian · points", "persian · elimination", "bazito · points"} <= titles


def test_a_players_seats_hold_each_of_their_decided_hands_once(reader: read.Reader) -> None:
    """`player_by_seat` reads only the player's hands and games: per ruleset and play, its
    hands and wins are the player's decided hands with a place in the order, each once."""
    for (player,) in reader.rows("SELECT DISTINCT player FROM hand_players ORDER BY 1"):
        seats = read.player_by_seat(reader, player)
        expected = {(r, m): (n, w) for r, m, n, w in reader.rows("""
            SELECT p.ruleset, coalesce(g.mode, 'points'), count(*), count(*) FILTER (WHERE p.won)
            FROM hand_players p JOIN games g USING (game_id)
            WHERE p.player = ? AND p.won IS NOT NULL AND p.turn_order IS NOT NULL GROUP BY ALL""", [player])}
        summed: dict[tuple[str, str], tuple[int, int]] = {}
        for ruleset, mode, n, w in seats.select("ruleset", "mode", "hands", "wins").rows():
            hands, wins = summed.get((ruleset, mode), (0, 0))
            summed[(ruleset, mode)] = (hands + int(n), wins + int(w))
        assert summed == expected, player


# ---------------------------------------------------------------------------- 2-card targeting


def test_two_card_lift_only_above_a_minimum(app: AppTest, reader: read.Reader) -> None:
    open_page(app, "players", players_tab="2-card targeting")
    app.radio(key="players_two_metric").set_value("lift").run()
    assert app.number_input(key="players_two_min_expected").value == 20
    caption = next(c.value for c in app.caption if c.value.startswith("Lift:"))
    cells = len(read.two_targets(reader, (), 25, True))
    assert f"{cells} of {cells} cells are below that" in caption  # the sample's 2s are few
    app.number_input(key="players_two_min_expected").set_value(0.5).run()
    caption = next(c.value for c in app.caption if c.value.startswith("Lift:"))
    assert f"of {cells} cells" in caption and f"{cells} of {cells}" not in caption
    app.number_input(key="players_two_min_expected").set_value(0.0).run()
    assert "0 of" in next(c.value for c in app.caption if c.value.startswith("Lift:"))


def test_the_heatmap_labels_every_row_and_column(app: AppTest, reader: read.Reader) -> None:
    open_page(app, "players", players_tab="2-card targeting")
    spec = next(s for s in _charts(app) if _title(s).startswith("Who gives 2s"))
    matrix = read.two_targets(reader, (), 25)
    rows, columns = matrix["player"].n_unique(), matrix["target"].n_unique()
    for encoding in _encodings(spec):
        for channel in ("x", "y"):
            axis = encoding[channel]["axis"]
            assert axis["labelOverlap"] is False and axis["labelLimit"] == 0
    assert spec["height"] == {"step": 24}  # a row of its own for each of the `rows` players
    assert rows >= 4 and len(_encodings(spec)[0]["x"]["sort"]) == columns
    assert sorted(_encodings(spec)[0]["y"]["sort"]) == sorted(matrix["player"].unique().to_list())


def test_a_heatmap_cell_drills_down_to_its_games(app: AppTest, reader: read.Reader,
                                                sample_warehouse: Path) -> None:
    open_page(app, "players", players_tab="2-card targeting")
    matrix = read.two_targets(reader, (), 25)
    top = matrix.sort(["twos", "player", "target"], descending=[True, False, False]).row(0, named=True)
    app.selectbox(key="players_two_giver").set_value(top["player"]).run()
    app.selectbox(key="players_two_target").set_value(top["target"]).run()
    assert not app.exception
    games = app.dataframe[0].value
    assert games["twos"].sum() == top["twos"]  # the cell's count, game by game
    for row in games.itertuples():
        assert row.replay == f"replay?game={row.game_id}&seq={row.first_seq}"
    with open_warehouse(str(sample_warehouse)) as warehouse:
        first = warehouse.rows("SELECT game_id, min(seq) AS seq FROM events WHERE player = ? AND gift_to = ? "
                            "GROUP BY 1", [top["player"], top["target"]])
    assert {(r["game_id"], r["seq"]) for r in first} == {(r.game_id, r.first_seq) for r in games.itertuples()}


# ---------------------------------------------------------------------------- chart sizes


def test_compliance_shows_every_code(app: AppTest, reader: read.Reader) -> None:
    open_page(app, "compliance")
    spec = next(s for s in _charts(app) if _title(s).startswith("Violations by code and ruleset"))
    codes = len(read.violations_by(reader, read.GameFilter(), "ruleset")["code"].unique())
    assert f"({codes} codes)" in _title(spec)
    axis = spec["encoding"]["y"]["axis"]
    assert axis["labelOverlap"] is False and axis["labelLimit"] == 0
    assert spec["height"] == {"step": 24}  # a row of its own for each code


def test_the_winning_cards_have_a_row_to_themselves(app: AppTest) -> None:
    open_page(app, "scoring", scoring_tab="Across games")
    rulesets = {"bazito", "persian", "pis-yedili"}
    rows = [block for block in app.main.children.values()]

    def walk(node: Any) -> Iterator[Any]:
        for child in getattr(node, "children", {}).values():
            yield child
            yield from walk(child)

    for block in walk(app.main):
        if getattr(block, "type", None) != "flex_container":
            continue
        titles = [_title(json.loads(chart.proto.spec)) for column in block.children.values()
                  for chart in walk(column) if getattr(chart, "type", None) == "vega_lite_chart"]
        if set(titles) & rulesets:  # the winning cards' row: nothing else beside them
            assert set(titles) == rulesets and len(titles) == 3
            break
    else:
        raise AssertionError(f"no row of winning-card charts in {rows}")
    points = next(s for s in _charts(app) if _title(s).startswith("Points left in losing hands"))
    assert points["height"] >= 200


# ---------------------------------------------------------------------------- the Games search


def test_games_search_is_partial_case_blind_and_in_the_url(app: AppTest) -> None:
    open_page(app, "games", player="SA", status="violations")
    assert app.text_input(key="games_player").value == "SA"
    assert app.multiselect(key="games_statuses").value == ["violations"]
    assert "**1** game match" in app.markdown[0].value
    assert list(app.dataframe[0].value["game_id"]) == ["t41-elim-1"]  # sara, in a game with violations
    app.text_input(key="games_player").set_value("CYR").run()
    assert list(app.dataframe[0].value["game_id"]) == [DISPUTED]
    assert app.query_params["player"] == "CYR" and app.query_params["status"] == "violations"
    app.multiselect(key="games_statuses").set_value(["violations", "compliant"]).run()
    assert app.query_params["status"] == ["violations", "compliant"]  # the parameter repeats
    app.text_input(key="games_text").set_value("BAZITO").run()
    assert "**0** games match" in app.markdown[0].value  # cyrus played no bazito game
    app.text_input(key="games_player").set_value("").run()
    assert {*app.dataframe[0].value["game_id"]} == {"t41-bazito-1", "t41-bazito-2"}
    assert "player" not in app.query_params and app.query_params["game"] == "BAZITO"


def test_a_shared_search_link_restores_every_filter(app: AppTest) -> None:
    open_page(app, "games", ruleset="persian", status="violations,invalid", code="must_play", build="hk-server/2.3.1",
          **{"from": "2026-11-01"})
    assert app.multiselect(key="games_rulesets").value == ["persian"]
    assert app.multiselect(key="games_statuses").value == ["violations"]  # no invalid game to offer
    assert app.selectbox(key="games_code").value == "must_play"
    assert app.multiselect(key="games_builds").value == ["hk-server/2.3.1"]
    assert list(app.dataframe[0].value["game_id"]) == ["t41-elim-1"]
    assert app.query_params["from"] == "2026-11-01"
    open_page(app, "games", status="no-such-status", player="zz")
    assert app.multiselect(key="games_statuses").value == []
    assert "**0** games match" in app.markdown[0].value


# ---------------------------------------------------------------------------- Check a log


def _upload(at: AppTest, log: Path) -> AppTest:
    at.run()
    at.switch_page("app_pages/check_log.py").run()
    at.file_uploader(key="check_upload").upload(log.name, log.read_bytes(), "application/json")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_check_a_log_shows_each_violation_and_one_count(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        sample_log: Path) -> None:
    at = _upload(_app(monkeypatch, tmp_path / "none"), sample_log)
    metrics = {m.label: m.value for m in at.metric}
    games = at.dataframe[0].value
    assert int(metrics["Violations"]) == games["violations"].sum() == 12
    assert int(metrics["Lines"].replace(",", "")) == 336 and games["lines"].sum() == 336
    assert at.selectbox(key="check_game").value == DISPUTED
    found = at.dataframe[-1].value
    assert list(found["seq"]) == [7, 7, 8, 11, 13]
    assert set(found["line"]) == {8, 9, 12, 14}
    assert "bita does not hold 6♠; the card is taken from cyrus's hand" in list(found["message"])
    html = "".join(h.proto.body for h in at.get("html"))
    assert f"{games.set_index('game').loc[DISPUTED, 'lines']} lines · 5 violations" in html
    # choosing a violation goes to its step
    at.session_state["check_violations"] = {"selection": {"rows": [3], "columns": [], "cells": []}}
    at.run()
    step = next(c.value for c in at.caption if c.value.startswith("Step "))
    assert "seq 11" in step
    at.button(key="check_next").click().run()  # and stepping on from there is not undone
    assert "seq 12" in next(c.value for c in at.caption if c.value.startswith("Step "))


def test_check_a_log_counts_a_retried_line_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                edge_log: Path) -> None:
    at = _upload(_app(monkeypatch, tmp_path / "none"), edge_log)
    games = at.dataframe[0].value.set_index("game")
    at.selectbox(key="check_game").set_value("e-retry").run()
    html = "".join(h.proto.body for h in at.get("html"))
    lines = int(games.loc["e-retry", "lines"])
    assert f"{lines} lines ({lines - 1} replayed)" in html  # the table's count, and what replayed
    assert int({m.label: m.value for m in at.metric}["Violations"]) == games["violations"].sum()
