"""The "Deal audit" page on a warehouse whose shuffle is rigged (the finding is shown, by
card, with the chart of observed against expected; filters re-run the audit) and the
"Collusion" page on one with a colluding pair (the case, its steps, their replay links)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboards.conftest import open_page
from tests.ingest.fairplaykit import BUILD, STUCK, rigged_warehouse

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


@pytest.fixture(scope="module")
def rigged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rigged_warehouse(tmp_path_factory.mktemp("rigged-dash"))


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, rigged: Path) -> Iterator[AppTest]:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(rigged))
    yield AppTest.from_file(str(APP), default_timeout=90)


def test_the_deal_audit_page_shows_the_stuck_card(app: AppTest) -> None:
    open_page(app, "deal_audit")
    metrics = {m.label: m.value for m in app.metric}
    assert int(metrics["Findings"]) >= 1 and int(metrics["Tests made"]) > 0
    findings = app.dataframe[0].value
    assert STUCK in " ".join(findings["concerns"])
    app.radio(key="deal_audit_family").set_value("stock.position").run()
    assert not app.exception
    assert app.get("arrow_vega_lite_chart") or app.get("vega_lite_chart")
    app.selectbox(key="deal_audit_build").set_value(BUILD).run()
    assert not app.exception
    assert all(BUILD in c for c in app.dataframe[0].value["concerns"])


def test_the_collusion_page_shows_the_case_with_its_replays(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.ingest.fairplaykit import PAIR, pair_warehouse

    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(pair_warehouse(tmp_path_factory.mktemp("pairs-dash"), 1.0)))
    at = AppTest.from_file(str(APP), default_timeout=90)
    open_page(at, "collusion")
    at.selectbox(key="collusion_level").set_value(0.05).run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Cases"] == "1"
    queue = at.dataframe[0].value  # the case queue, one row a case
    assert len(queue) == 1 and set(PAIR) == set(queue["pair"][0].split(" + "))
    assert "sevens_spared" in queue["drivers"][0] and queue["first step"][0].startswith("replay?game=")

    # the pair network: the case and its players' other pairs, the case first; choosing a
    # pair (what a click on its dot, or on a case's row, does) drills down to its signals
    # and replays
    network = next(c for c in at.get("vega_lite_chart") if "collusion_network" in c.proto.id)
    spec = json.loads(network.proto.spec)
    assert [param["select"]["fields"] for param in spec["params"] if param["name"] == "pair"] == [["pair"]]
    pairs = at.selectbox(key="collusion_pair").options
    case_pair = queue["pair"][0]
    assert pairs[0] == case_pair and len(pairs) > 1
    assert all(set(p.split(" + ")) & set(PAIR) for p in pairs)  # neighbours: pairs of the case's players
    at.selectbox(key="collusion_pair").set_value(case_pair).run()
    assert not at.exception
    assert any(case_pair in m.value and "a case" in m.value for m in at.markdown)
    signals, steps = at.dataframe[0].value, at.dataframe[1].value
    assert set(signals["signal"]) == {"co_seating", "twos_spared", "sevens_spared", "jacks_suited", "soft_play"}
    assert len(steps) and all(link.startswith("replay?game=") for link in steps["replay"])
    assert set(steps["signal"]) >= {"twos_spared", "sevens_spared", "jacks_suited"}
    assert steps["replay"][0] == queue["first step"][0]
    neighbour = pairs[-1]
    at.selectbox(key="collusion_pair").set_value(neighbour).run()
    assert not at.exception
    assert any(neighbour in m.value and "no case at 0.05" in m.value for m in at.markdown)
    assert set(at.dataframe[0].value["signal"]) == set(signals["signal"])


def test_with_no_case_the_pair_network_shows_the_highest_scores(app: AppTest) -> None:
    """On tables with no colluders (the rigged warehouse's 40 persian games) the network
    says there is no case and draws the highest-scoring pairs; a chosen one shows its
    signals and no steps."""
    open_page(app, "collusion")
    metrics = {m.label: m.value for m in app.metric}
    scored = int(metrics["Pairs scored"].replace(",", ""))
    assert metrics["Cases"] == "0" and scored > 0
    assert any(c.value.startswith("No case at 0.01: the ") for c in app.caption)
    pairs = app.selectbox(key="collusion_pair").options
    assert len(pairs) == min(10, scored)
    app.selectbox(key="collusion_pair").set_value(pairs[0]).run()
    assert not app.exception
    assert any(pairs[0] in m.value and "no case at 0.01" in m.value for m in app.markdown)
    assert len(app.dataframe) == 1  # the signals; no steps without a case
