"""The Live page (issue 30) under AppTest, over a warehouse ingested now: the last hour's
games, builds and latest games; a second run after another ingest shows the new games;
the alerts firing come from the file the API service's alert engine writes in its state
folder (written here by that engine itself), and without one the page says how to get it.
The warehouse's live questions are checked against the rows they count."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from ingest import read
from service.alert_rules import AlertConfig
from service.alerts import AlertEngine
from service.jobs import CommitEvent
from tests.dashboards.conftest import open_page
from tests.dashboards.loggen import corrupt, dump, random_game

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


def _ingest(root: Path, folder: Path, games: list[list[dict[str, object]]], name: str) -> None:
    from ingest.pipeline import ingest

    log = folder / f"{name}.jsonl"
    log.write_text("".join(line + "\n" for game in games for line in dump(game)), encoding="utf-8")
    ingest([str(log)], str(root), workers=1)


@pytest.fixture
def warehouse(tmp_path: Path, sample_log: Path) -> Path:
    """The sample log ingested now (its batch is within the last hour)."""
    from ingest.pipeline import ingest

    root = tmp_path / "wh"
    ingest([str(sample_log)], str(root), workers=1)
    return root


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: str(m.value) for m in at.metric}


#: a column only each of the page's tables has
TABLES = {"live_latest": "replay", "live_builds": "with_violations", "live_alerts": "rule"}


def _table(at: AppTest, name: str) -> list[dict[str, object]]:
    frame = next(d.value for d in at.dataframe if TABLES[name] in d.value.columns)
    return frame.to_dict("records")  # type: ignore[no-any-return]


def test_the_live_page_follows_the_warehouse(warehouse: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "api-state"
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("HAFTKHABIS_API_STATE", str(state))
    at = open_page(AppTest.from_file(str(APP), default_timeout=60), "live")
    metrics = _metrics(at)
    assert metrics["Games, last 60 min"] == "5"
    assert metrics["Last commit"].endswith("ago")
    latest = _table(at, "live_latest")
    assert len(latest) == 5 and all(row["batch"] == 1 for row in latest)
    assert {row["replay"] for row in latest} == {f"replay?game={row['game_id']}" for row in latest}
    builds = {row["server_build"]: row for row in _table(at, "live_builds")}
    assert set(builds) == {"hk-server/2.4.1-rc", "hk-server/2.4.0", "hk-server/2.3.1"}
    assert builds["hk-server/2.4.1-rc"]["violation_rate"] == 1.0  # the disputed game
    assert builds["hk-server/2.4.0"]["games"] == 2 and builds["hk-server/2.4.0"]["violation_rate"] == 0.0
    assert len(at.get("vega_lite_chart")) == 2
    assert any("No alerts file at" in c.value for c in at.caption)

    # games land: the next run shows them, with a new build; the service's alert fires
    _ingest(warehouse, tmp_path, [corrupt(random_game(f"t30-live-{n}", "bazito", seed=60 + n,
                                                      meta={"server_build": "hk/new"})) for n in range(3)],
            "more")
    engine = AlertEngine(AlertConfig.from_text(
        '[[rule]]\nname = "violations"\nkind = "violation_rate"\ngames = 3\nthreshold = 50\n', "test"),
        state=state)
    engine.observe(CommitEvent(2, 1, 100, 0.1, 0, tuple(
        {"game": f"t30-live-{n}", "server_build": "hk/new", "codes": ["card_not_in_hand"], "complete": True}
        for n in range(3)), (0.1,)))
    engine.evaluate()
    engine.stop()  # writes the state file
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert _metrics(at)["Games, last 60 min"] == "8"
    latest = _table(at, "live_latest")
    assert len(latest) == 8 and [row["batch"] for row in latest[:3]] == [2, 2, 2]
    assert {row["game_id"] for row in latest[:3]} == {"t30-live-0", "t30-live-1", "t30-live-2"}
    assert all(row["codes"] for row in latest[:3])
    assert _table(at, "live_builds")[0]["server_build"] == "hk/new"  # worst first
    assert any("1 alert firing" in e.value for e in at.error)
    [alert] = _table(at, "live_alerts")
    assert (alert["rule"], alert["build"], alert["value"], alert["threshold"]) == ("violations", "hk/new", 100.0, 50.0)
    assert abs((alert["since"].to_pydatetime() - datetime.now(UTC)).total_seconds()) < 600  # a time, read


def test_the_live_questions_count_the_rows(warehouse: Path, tmp_path: Path) -> None:
    root = tmp_path / "copy"
    shutil.copytree(warehouse, root)
    _ingest(root, tmp_path, [random_game("t30-q-1", "bazito", seed=70, meta={"server_build": "hk/q"})], "q")
    reader = read.connect(root)
    try:
        since = datetime.now(UTC) - timedelta(hours=1)
        window = read.live_window(reader, since)
        assert (window.first_batch, window.last_batch, window.batches, window.games) == (1, 2, 2, 6)
        assert window.lines == reader.rows("SELECT sum(lines) FROM batches")[0][0]
        rates = read.live_violation_rate(reader, window.first_batch, since)
        expected = reader.rows("""SELECT coalesce(server_build, '?'), count(*), count(*) FILTER (WHERE violations > 0)
                                   FROM games GROUP BY ALL""")
        assert sorted(rates.group_by("server_build").agg(pl.col("games").sum(), pl.col("with_violations").sum())
                      .rows()) == sorted(expected)
        # only the batches since `first_batch`: the second alone holds one game
        assert read.live_latest_games(reader, 2)["game_id"].to_list() == ["t30-q-1"]
        assert read.live_commit_lag(reader, 2)["games"] == 1
        throughput = read.live_throughput(reader, since)
        assert throughput["games"].sum() == 6 and throughput["batches"].sum() == 2
        assert read.live_window(reader, datetime.now(UTC) + timedelta(minutes=1)).first_batch is None
    finally:
        reader.close()
