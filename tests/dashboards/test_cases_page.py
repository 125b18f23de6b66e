"""The Cases page (AppTest): a case opened on the desk is listed and found by its words, a
decision taken there is a new revision with who took it, and the search says when nothing
matches."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest import cases, read
from tests.dashboards.conftest import DISPUTED, open_page

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


@pytest.fixture
def desk(monkeypatch: pytest.MonkeyPatch, sample_warehouse: Path, tmp_path: Path) -> Iterator[tuple[AppTest, Path]]:
    warehouse = tmp_path / "wh"
    shutil.copytree(sample_warehouse, warehouse)
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(warehouse))
    yield AppTest.from_file(str(APP), default_timeout=60), warehouse


def test_a_case_is_listed_found_and_decided(desk: tuple[AppTest, Path]) -> None:
    app, warehouse = desk
    opened = cases.open_case(str(warehouse), cases.Draft(DISPUTED, 1, 7, "bita", ["refund"],
                                                         "says the 7 was answered"), "agent-a")
    open_page(app, "cases")
    table = app.dataframe[0].value
    assert list(table["case_id"]) == [opened.case_id]
    app.text_input(key="cases_text").set_value("answered").run()
    assert list(app.dataframe[0].value["case_id"]) == [opened.case_id]
    app.text_input(key="cases_text").set_value("no such words").run()
    assert not app.dataframe and app.caption[0].value.startswith("**0** cases")

    open_page(app, "cases", case=opened.case_id)
    assert app.subheader[0].value == f"Case {opened.case_id}"
    app.text_input(key="desk_agent").set_value("agent-b").run()
    app.text_input(key="cases_new_decision").set_value("dismissed: the log is right").run()
    app.button(key="cases_save").click().run()
    assert not app.exception and not app.error
    history = read.case_revisions(read.connect(warehouse), opened.case_id)
    latest = history.row(history.height - 1, named=True)
    assert (history.height, latest["decision"], latest["decided_by"]) == (2, "dismissed: the log is right", "agent-b")
    # shown as text (markdown escaped): the decision and who took it
    assert any("dismissed" in s.value and "the log is right" in s.value and "agent-b" in s.value
               for s in app.success)
