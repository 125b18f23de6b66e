"""Stored audit reports (`ingest.audits`): `haftkhabis audit … --store` keeps the report
it made; `load` gives it back, current until games land, and never a file that is not
one of ours; the dashboard's fair-play pages show it instead of auditing while they wait."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import orjson
import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from cli.app import app as cli
from engine.simulate import SimConfig, write_simulation
from ingest import audits, read
from ingest.pipeline import ingest
from tests.dashboards.conftest import open_page
from tests.ingest.fairplaykit import STUCK, rigged_warehouse

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"
runner = CliRunner()
DEALS = audits.Params("deals")


def _land_more_games(root: Path, folder: Path) -> None:
    log = folder / "more.jsonl"
    with log.open("wb") as out:
        write_simulation(SimConfig("bazito", games=3, seed=99), out)
    ingest([str(log)], str(root), workers=1)


def _load(root: Path, params: audits.Params) -> audits.Stored | None:
    reader = read.connect(root)
    try:
        return audits.load(reader, params)
    finally:
        reader.close()


def test_a_stored_report_is_read_back_current_until_games_land(tmp_path: Path) -> None:
    root = rigged_warehouse(tmp_path / "rigged")
    assert _load(root, DEALS) is None
    made = runner.invoke(cli, ["audit", "deals", "--warehouse", str(root), "--store", "--format", "json"])
    assert made.exit_code == 1, made.output  # the stuck card is found
    stored = _load(root, DEALS)
    assert stored is not None and stored.current
    assert stored.report == orjson.loads(made.stdout)  # what the command printed, exactly
    assert _load(root, audits.Params("deals", level=0.05)) is None  # other parameters: another report
    _land_more_games(root, tmp_path)
    stale = _load(root, DEALS)
    assert stale is not None and not stale.current and stale.report == stored.report
    again = runner.invoke(cli, ["audit", "deals", "--warehouse", str(root), "--store"])
    assert again.exit_code == 1
    fresh = _load(root, DEALS)
    assert fresh is not None and fresh.current and fresh.batch > stored.batch


def test_a_date_and_its_text_name_the_same_report() -> None:
    """The pages and the API filter by a date, `--since` by its text: one stored report."""
    assert audits.Params("deals", since=date(2026, 10, 1)) == audits.Params("deals", since="2026-10-01")
    assert audits.Params("deals", since=date(2026, 10, 1)).since == "2026-10-01"


def test_a_file_that_is_not_a_report_is_no_report(tmp_path: Path) -> None:
    root = rigged_warehouse(tmp_path / "rigged")
    reader = read.connect(root)
    try:
        uri = audits.store(reader, DEALS, {"findings": []}, 1.0)
        Path(uri).write_bytes(b'{"params": {"kind": "deals"}, "report": ')  # cut short
        assert audits.load(reader, DEALS) is None
        Path(uri).write_bytes(orjson.dumps({"report": {}}))  # not what `store` writes
        assert audits.load(reader, DEALS) is None
    finally:
        reader.close()


def test_the_deal_audit_page_shows_the_stored_report_or_says_how_to_make_one(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from dashboards import views

    root = rigged_warehouse(tmp_path / "rigged")
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(root))
    monkeypatch.setattr(views, "AUDIT_WHILE_WAITING", 0)  # as on a large warehouse
    at = open_page(AppTest.from_file(str(APP), default_timeout=90), "deal_audit")
    command = f"haftkhabis audit deals --store --warehouse {root} --fdr 0.01"  # what to run, to paste
    assert any("No stored audit" in i.value and command in i.value for i in at.info)
    assert not at.metric  # nothing audited while the page waited
    at.button(key="audit_now_deals").click().run()  # asked for: audited now
    assert not at.exception and int({m.label: m.value for m in at.metric}["Findings"]) >= 1

    assert runner.invoke(cli, ["audit", "deals", "--warehouse", str(root), "--store"]).exit_code == 1
    at = open_page(AppTest.from_file(str(APP), default_timeout=90), "deal_audit")
    assert any(c.value.startswith("The stored audit (batch ") for c in at.caption)
    assert STUCK in " ".join(at.dataframe[0].value["concerns"])

    _land_more_games(root, tmp_path)
    at = open_page(AppTest.from_file(str(APP), default_timeout=90), "deal_audit")
    assert any("games have landed since" in w.value for w in at.warning)
    assert STUCK in " ".join(at.dataframe[0].value["concerns"])  # the stale report, said so
