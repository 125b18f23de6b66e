"""`haftkhabis audit deals`: exit 1 and the finding named when a shuffle is rigged, exit 0
when nothing is found, exit 2 on a bad option."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from cli.app import app
from tests.ingest.fairplaykit import BUILD, STUCK, rigged_warehouse

runner = CliRunner()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rigged_warehouse(tmp_path_factory.mktemp("rigged"))


def test_a_rigged_shuffle_exits_1_and_names_the_card(warehouse: Path) -> None:
    result = runner.invoke(app, ["audit", "deals", "--warehouse", str(warehouse), "--format", "json"])
    assert result.exit_code == 1, result.output
    report = orjson.loads(result.stdout)
    assert report["tests_made"] > 0 and report["correction"] == "benjamini-hochberg"
    stuck = [f for f in report["findings"] if f["family"] == "stock.position"]
    assert stuck and {f["scope"]["card"] for f in stuck} == {STUCK}  # in each build
    assert f"card {STUCK}" in stuck[0]["concerns"] and stuck[0]["q_value"] <= 0.01
    table = runner.invoke(app, ["audit", "deals", "--warehouse", str(warehouse)])
    assert table.exit_code == 1 and STUCK in table.stdout and "findings" in table.stdout


def test_nothing_to_audit_exits_0(warehouse: Path) -> None:
    result = runner.invoke(app, ["audit", "deals", "--warehouse", str(warehouse), "--build", "no-such",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout)["findings"] == []
    later = runner.invoke(app, ["audit", "deals", "--warehouse", str(warehouse), "--build", BUILD,
                                "--since", "2100-01-01"])
    assert later.exit_code == 0 and "not enough games" in later.stdout


def test_bad_options_exit_2(warehouse: Path) -> None:
    assert runner.invoke(app, ["audit", "deals", "--warehouse", str(warehouse), "--since", "soon"]).exit_code == 2
    assert runner.invoke(app, ["audit", "deals", "--warehouse", str(warehouse), "--fdr", "2"]).exit_code == 2
    assert runner.invoke(app, ["audit", "deals", "--warehouse", str(tmp := warehouse / "nope")]).exit_code == 1, tmp


def test_audit_pairs_names_the_colluding_pair(tmp_path: Path) -> None:
    from tests.ingest.fairplaykit import PAIR, pair_warehouse

    root = pair_warehouse(tmp_path, 1.0)
    result = runner.invoke(app, ["audit", "pairs", "--warehouse", str(root), "--fdr", "0.05",
                                 "--permutations", "100", "--format", "json"])
    assert result.exit_code == 1, result.output
    cases = orjson.loads(result.stdout)["cases"]
    assert [set(c["players"]) for c in cases] == [set(PAIR)]
    assert cases[0]["steps"] and cases[0]["signals"]["twos_spared"] > 0
    assert set(cases[0]["drivers"]) >= {"twos_spared", "sevens_spared", "jacks_suited"}
    assert {step["signal"] for step in cases[0]["steps"]} >= set(cases[0]["drivers"]) - {"co_seating", "soft_play"}
    table = runner.invoke(app, ["audit", "pairs", "--warehouse", str(root), "--fdr", "0.05", "--permutations", "100"])
    assert table.exit_code == 1 and "1 cases" in table.stdout and "replay?game=" in table.stdout
    none = runner.invoke(app, ["audit", "pairs", "--warehouse", str(root), "--build", "no-such"])
    assert none.exit_code == 0 and "not enough games" in none.stdout


def test_the_table_shows_the_first_findings_and_says_where_the_rest_are(capsys: pytest.CaptureFixture[str]) -> None:
    from cli.audit_cmd import SHOWN_FINDINGS, _print
    from ingest.fairplay import AuditReport, TestResult

    tests = [TestResult("hand.special", {"ruleset": "bazito", "seat": i}, 100, "extra special cards per hand",
                        p_value=i / 1e6, q_value=i / 1e5, finding=True) for i in range(SHOWN_FINDINGS + 20)]
    _print(AuditReport(0.01, 1000, 4000, tests))
    out = capsys.readouterr().out
    assert f"{SHOWN_FINDINGS + 20} findings (the {SHOWN_FINDINGS} with the smallest q" in out
    assert f"seat {SHOWN_FINDINGS - 1}," in out and f"seat {SHOWN_FINDINGS + 5}," not in out
