"""The self-contained HTML report of one hand: every step, verdicts, scores, escaping."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from cli.app import app
from engine.replay import replay_blob
from engine.report import render_hand_report
from tests.dashboards.conftest import DISPUTED
from tests.dashboards.loggen import dump, random_game


def test_report_has_every_step_verdict_and_score(sample_log: Path) -> None:
    replay = replay_blob(sample_log.read_bytes(), DISPUTED)
    assert replay is not None
    steps = replay.hand_steps(1)
    html = render_hand_report(replay, 1)
    assert html.startswith("<!doctype html>")
    whole = html.split('<details class="hk-all"', 1)[1]  # the whole hand, folded below
    sections = re.findall(r'<section class="hk-step[^"]*" id="step-1-(\d+)">', whole)
    assert [int(n) for n in sections] == [s.number for s in steps]
    for step in steps:
        assert f"seq {step.seq}" in html
        for violation in step.violations:
            assert f"<code>{violation.code.value}</code>" in html
    assert whole.count("hk-step bad") == sum(1 for s in steps if s.flagged) > 0
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
    from dashboards.server import APP, streamlit_command

    command = streamlit_command(tmp_path, 8765, "127.0.0.1")
    assert command[1:5] == ["-m", "dashboards.server", "run", str(APP)]
    flags = dict(arg[2:].split("=", 1) for arg in command if arg.startswith("--") and "=" in arg)
    assert flags["server.address"] == "127.0.0.1"
    assert flags["server.port"] == "8765"
    assert flags["server.enableXsrfProtection"] == "true"
    assert flags["browser.gatherUsageStats"] == "false"
    assert flags["client.showErrorDetails"] == "none"
    assert int(flags["server.maxUploadSize"]) <= 50
    assert command[-3:] == ["--", "--warehouse", str(tmp_path)]


def test_report_opens_on_a_summary_of_the_disputed_step(sample_log: Path, sample_warehouse: Path) -> None:
    replay = replay_blob(sample_log.read_bytes(), DISPUTED, file=str(sample_log))
    assert replay is not None and replay.digest
    html = render_hand_report(replay, 1, seq=13)
    summary = html.split('<section class="hk-summary', 1)[1].split("</section>", 1)[0]
    assert "cyrus&#x27;s move broke a rule: must_play." in summary
    assert "must_play: The player drew or passed while the rules oblige them to play." in summary
    assert "hand 1 · step 13 · seq 13" in summary and replay.digest in summary
    assert "persian (points play; options: " in summary and "engine" in summary.lower()
    assert "--seq 13" in summary  # how to reproduce it
    near = html.split('<details class="hk-all"', 1)[0]
    assert re.findall(r'id="step-1-(\d+)"', near) == ["11", "12", "13", "14", "15"]
    assert "@page { size: A4" in html and "max-width: 800px" in html  # print and phone
    # the warehouse's stored lines digest to the same sha256 as the log file's
    from cli import sources

    stored = sources.from_warehouse(str(sample_warehouse), DISPUTED)
    assert stored.digest == replay.digest


def test_the_player_view_shows_only_what_that_player_saw(sample_log: Path) -> None:
    replay = replay_blob(sample_log.read_bytes(), DISPUTED, file=str(sample_log))
    assert replay is not None
    html = render_hand_report(replay, 1, seq=19, viewer="ali")
    assert 'data-view="player"' in html and "what ali could see" in html
    assert str(sample_log) not in html and "sample.jsonl" not in html  # no server paths
    assert "cyrus draws 4 cards" in html and "(5♠ 3♠ 2♥ 4♠)" not in html  # another's draw, hidden
    support = render_hand_report(replay, 1, seq=19)
    assert str(sample_log) in support and "(5♠ 3♠ 2♥ 4♠)" in support


def test_a_set_aside_line_is_shown_as_itself(tmp_path: Path) -> None:
    lines = list(dump(random_game("g-dup", "bazito", seed=5)))
    other = lines[4].replace('"ts":"', '"ts":"2030', 1) if '"ts":"' in lines[4] else lines[4][:-1] + ',"x_note":1}'
    lines.insert(5, other)
    replay = replay_blob("\n".join(lines).encode(), "g-dup", file="server/a.jsonl")
    assert replay is not None
    kept = next(s for s in replay.steps if s.set_aside)
    assert not kept.violations  # the kept, legal line is not blamed
    aside = kept.set_aside[0]
    assert (aside.file, aside.line) == ("server/a.jsonl", 6) and aside.raw == other.encode()
    assert aside.violations[0].code.value == "sequence"
    html = render_hand_report(replay, kept.hand, seq=kept.seq)
    assert "server/a.jsonl:6" in html and "Set aside" in html
    assert "server/a.jsonl" not in render_hand_report(replay, kept.hand, seq=kept.seq, viewer=replay.players[0])
