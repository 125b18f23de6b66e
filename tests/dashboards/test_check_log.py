"""The Check-a-log page (AppTest): upload, verdicts, step through, jump to a violation,
player view; gzip uploads and garbage files."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.replay import GameReplay
from tests.dashboards.conftest import DISPUTED

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AppTest:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(tmp_path / "none"))
    at = AppTest.from_file(str(APP), default_timeout=30).run()
    at.switch_page("app_pages/check_log.py").run()
    assert not at.exception
    return at


def _caption(at: AppTest, prefix: str) -> str:
    return next(c.value for c in at.caption if c.value.startswith(prefix))


def test_upload_validates_and_replays(page: AppTest, sample_log: Path,
                                      sample_replays: dict[str, GameReplay]) -> None:
    page.file_uploader(key="check_upload").upload("sample.jsonl", sample_log.read_bytes(), "application/json")
    page.run()
    assert not page.exception
    metrics = {m.label: m.value for m in page.metric}
    assert metrics["Games"] == "5"
    assert int(metrics["Not compliant"]) >= 2
    assert page.selectbox(key="check_game").value == DISPUTED  # games with violations first
    assert _caption(page, "Step ").startswith("Step 1 of")
    html = "".join(h.proto.body for h in page.get("html"))
    assert 'class="hk-card' in html
    assert 'hk-black legal' in html or 'hk-red legal' in html  # the mover's legal cards

    page.button(key="check_next").click().run()
    assert _caption(page, "Step ").startswith("Step 2 of")
    assert page.session_state["check_step"] == 2

    page.button(key="check_nextbad").click().run()
    hand, number = page.session_state["check_hand"], page.session_state["check_step"]
    assert (hand, number) > (1, 2)
    assert any("violation" in h.proto.body for h in page.get("html"))

    flagged = sample_replays[DISPUTED].step_at(hand, number)
    assert flagged is not None and flagged.violations
    page.radio(key="check_view").set_value("Player view").run()
    assert not page.exception
    # the player view opens as the player the violation on screen names
    assert page.selectbox(key="check_viewer").value == flagged.violations[0].player
    html = "".join(h.proto.body for h in page.get("html"))
    assert 'class="hk-back"' in html  # the others' hands are face down


def test_gzip_upload(page: AppTest, sample_log: Path) -> None:
    page.file_uploader(key="check_upload").upload("sample.jsonl.gz", gzip.compress(sample_log.read_bytes()),
                                                  "application/gzip")
    page.run()
    assert not page.exception
    assert {m.label: m.value for m in page.metric}["Games"] == "5"


def test_garbage_upload(page: AppTest) -> None:
    page.file_uploader(key="check_upload").upload("junk.log", b"\x00\x01 not json\n[1,2]\n", "text/plain")
    page.run()
    assert not page.exception
    assert {m.label: m.value for m in page.metric}["Line errors"] == "2"
    assert page.warning
