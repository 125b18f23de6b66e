"""Issue 14, item 6 (the dashboard's part): Check a log's work on an upload is bounded by
the upload's size. A 100,000-player header with a deal and 3,000 plays drove the server to
11.6 GB and ran past 300 s; 500,000 lines of `x` took 52 s and 1.3 GB. Now each check runs
in a child process under a time and memory budget, and beyond it the page says so."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from streamlit.testing.v1 import AppTest

from dashboards import upload
from dashboards.settings import MAX_LISTED_ERRORS

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"


def _bomb() -> bytes:
    """The hostile run's upload: a 100,000-player header, a deal, 3,000 plays."""
    players = [f"p{i}" for i in range(100_000)]
    lines = [orjson.dumps({"game": "bomb", "seq": 0, "type": "game", "format": "haftkhabis/1",
                           "ruleset": "bazito", "players": players})]
    lines.append(orjson.dumps({"game": "bomb", "seq": 1, "type": "deal", "hand": 1,
                               "dealer": players[-1], "hands": {p: ["5C"] for p in players[:4]},
                               "starter": "KS"}))
    lines += [orjson.dumps({"game": "bomb", "seq": 2 + i, "type": "play",
                            "player": players[i], "card": "5C"}) for i in range(3_000)]
    return b"\n".join(lines) + b"\n"


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AppTest:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(tmp_path / "none"))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.switch_page("app_pages/check_log.py").run()
    assert not at.exception
    return at


def test_the_budget_grows_with_the_upload() -> None:
    small, large = upload.Budget.for_upload(10_000), upload.Budget.for_upload(20 * 1_048_576)
    assert small.seconds < large.seconds and small.memory < large.memory


def test_a_memory_bomb_is_refused_with_a_clear_message(page: AppTest,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # a budget no Python process can finish in (the mechanism, not the machine's speed)
    monkeypatch.setattr(upload.Budget, "for_upload",
                        classmethod(lambda cls, size: cls(0.05, 256 * 1_048_576)))
    page.file_uploader(key="check_upload").upload("bomb.jsonl", _bomb(), "application/json")
    page.run()
    assert not page.exception, [e.value for e in page.exception]
    message = " ".join(e.value for e in page.error)
    assert "bomb.jsonl was not checked" in message and "not done within" in message
    assert "haftkhabis validate" in message


def test_the_bomb_runs_out_of_memory_in_the_child_not_the_server() -> None:
    with pytest.raises(upload.OverBudget, match="needed more than 64 MB"):
        upload.run_within(upload.Budget(300, 64 * 1_048_576), upload.replay_upload, _bomb(),
                          "bomb.jsonl", "bomb")


def test_a_replay_beyond_the_budget_is_refused(page: AppTest, sample_log: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upload.Budget, "for_upload",
                        classmethod(lambda cls, size: cls(120, 128 * 1_048_576)))
    monkeypatch.setattr(upload, "replay_upload", _never_replays)
    page.file_uploader(key="check_upload").upload("sample.jsonl", sample_log.read_bytes(),
                                                  "application/json")
    page.run()
    assert not page.exception, [e.value for e in page.exception]
    message = " ".join(e.value for e in page.error)
    assert "was not replayed" in message and "needed more than 128 MB" in message
    assert "haftkhabis replay" in message


def _never_replays(data: bytes, name: str, game: str) -> None:
    """A replay that outgrows any budget (the child stops it at its memory limit)."""
    hog = []
    while True:
        hog.append(bytearray(16 * 1_048_576))


def test_garbage_lines_are_counted_not_all_kept(page: AppTest) -> None:
    page.file_uploader(key="check_upload").upload("xs.log", b"x\n" * 500_000, "text/plain")
    page.run()
    assert not page.exception, [e.value for e in page.exception]
    metrics = {m.label: m.value for m in page.metric}
    assert metrics["Line errors"] == "500,000" and metrics["Lines"] == "500,000"
    listed = page.dataframe[0].value
    assert len(listed) == MAX_LISTED_ERRORS


def test_too_many_lines_are_refused_before_validating(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upload, "MAX_UPLOAD_LINES", 1_000)
    check = upload.check_blob(b"x\n" * 1_001, "many.log")
    assert check.problem is not None and "1,001 lines" in check.problem
