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
