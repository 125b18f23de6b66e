"""The self-contained HTML report of one hand: every step, verdicts, scores, escaping."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from cli.app import app
from dashboards.game_replay import replay_blob
from dashboards.report import render_hand_report
from tests.dashboards.conftest import DISPUTED
from tests.dashboards.loggen import dump, random_game


def test_report_has_every_step_verdict_and_score(sample_log: Path) -> None:
    replay = replay_blob(sample_log.read_bytes(), DISPUTED)
    assert replay is not None
    steps = replay.hand_steps(1)
    html = render_hand_report(replay, 1)
    assert html.startswith("<!doctype html>")
    sections = re.findall(r'<section class="hk-step[^"]*" id="step-(\d+)">', html)
    assert [int(n) for n in sections] == [s.number for s in steps]
    for step in steps:
        assert f"seq {step.seq}" in html
        for violation in step.violations:
            assert f"<code>{violation.code.value}</code>" in html
    assert html.count("hk-step bad") == sum(1 for s in steps if s.violations) > 0
    score = replay.score_of(1)
    assert score is not None
    for player in score.players:
        assert f"<td>{player.player}</td>" in html
    # self-contained: no script, no external resource
    assert "<script" not in html.lower()
    assert not re.search(r'(src|href)="(https?:)?//', html)


def test_report_escapes_player_ids() -> None:
    evil = "<img src=x onerror=alert(1)>"
    lines = random_game("g-x", "bazito", [evil, "b", "c", "d"], seed=2)
    replay = replay_blob("\n".join(dump(lines)).encode(), "g-x")
    assert replay is not None
    html = render_hand_report(replay, 1)
    assert evil not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_report_command_writes_the_file(sample_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "hand.html"
    result = CliRunner().invoke(
        app, ["report", "--game", DISPUTED, "--hand", "1", "--out", str(out), "--log", str(sample_log)]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").count('<section class="hk-step') > 5


def test_report_command_refuses_a_missing_hand(sample_log: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["report", "--game", DISPUTED, "--hand", "9", "--out", str(tmp_path / "x.html"),
              "--log", str(sample_log)]
    )
    assert result.exit_code == 2
    assert "no hand 9" in result.output


def test_report_command_reads_the_warehouse(sample_warehouse: Path, tmp_path: Path) -> None:
    out = tmp_path / "hand2.html"
    result = CliRunner().invoke(
        app, ["report", "--game", DISPUTED, "--hand", "2", "--out", str(out),
              "--warehouse", str(sample_warehouse)]
    )
    assert result.exit_code == 0, result.output
    assert f"{DISPUTED} · hand 2" in out.read_text(encoding="utf-8")


def test_dashboard_command_line_is_locked_down(tmp_path: Path) -> None:
    from cli.dashboard_cmd import APP, streamlit_command

    command = streamlit_command(tmp_path, 8765, "127.0.0.1")
    assert command[1:5] == ["-m", "streamlit", "run", str(APP)]
    flags = dict(arg[2:].split("=", 1) for arg in command if arg.startswith("--") and "=" in arg)
    assert flags["server.address"] == "127.0.0.1"
    assert flags["server.port"] == "8765"
    assert flags["server.enableXsrfProtection"] == "true"
    assert flags["browser.gatherUsageStats"] == "false"
    assert flags["client.showErrorDetails"] == "none"
    assert int(flags["server.maxUploadSize"]) <= 50
    assert command[-3:] == ["--", "--warehouse", str(tmp_path)]
