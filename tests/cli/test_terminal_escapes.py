"""Issue 14, item 7: player ids may be any 1–64 characters, so a log carried OSC/CSI
sequences (a window title, a screen clear) straight to the terminal through `validate`,
`replay`, `query` and `stats`. Everything printed for people shows them escaped; `--json`
output stays exact."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.table import Table
from typer.testing import CliRunner

from cli import terminal
from cli.app import app
from tests.dashboards.loggen import corrupt, dump, random_game

#: an OSC window-title change, a CSI screen clear, a C1 CSI, a right-to-left override
EVIL = ["sara", "\x1b]0;pwned\x07", "om\x1b[2Jid", "x\x9by\u202ez"]
GAME = "g-evil"
# what a colour terminal may legitimately receive: Rich's own SGR sequences, nothing else
_OWN_SEQUENCES = re.compile(r"\x1b\[[0-9;]*m")
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _no_raw_controls(text: str) -> None:
    rest = _OWN_SEQUENCES.sub("", text)
    assert not _CONTROLS.search(rest), repr(_CONTROLS.search(rest))


def _shows_escaped(text: str) -> bool:
    """Some evil id is on screen in its escaped spelling (Python's, or JSON's in a list)."""
    plain = _OWN_SEQUENCES.sub("", text)
    return any(spelled in plain for spelled in (
        "\\x1b]0;pwned\\x07", "om\\x1b[2Jid", "x\\x9by\\u202ez",
        "\\u001b]0;pwned\\u0007", "om\\u001b[2Jid"))


@pytest.fixture(scope="module")
def evil_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = corrupt(random_game(GAME, "bazito", EVIL, seed=5), seed=3, count=2)
    path = tmp_path_factory.mktemp("logs") / "evil.jsonl"
    path.write_text("\n".join(dump(lines)) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def evil_warehouse(evil_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ingest.pipeline import ingest

    root = tmp_path_factory.mktemp("wh") / "warehouse"
    ingest([str(evil_log)], str(root), workers=1)
    return root


@pytest.fixture(params=[False, True], ids=["plain", "colour"])
def runner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    if request.param:  # Rich writes its own colour codes as on a terminal
        monkeypatch.setenv("FORCE_COLOR", "1")
    else:
        monkeypatch.delenv("FORCE_COLOR", raising=False)
    # wide enough that a long temporary path is not wrapped mid-escape
    monkeypatch.setenv("COLUMNS", "400")
    return CliRunner()


def test_validate_escapes_player_ids(runner: CliRunner, evil_log: Path) -> None:
    result = runner.invoke(app, ["validate", str(evil_log)])
    assert result.exit_code == 1, result.output
    _no_raw_controls(result.output)
    assert _shows_escaped(result.output)


def test_validate_json_stays_exact(evil_log: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(evil_log), "--json"])
    records = [json.loads(line) for line in result.stdout.splitlines()]
    game = next(r for r in records if r["kind"] == "game")
    messages = " ".join(v["message"] for v in game["violations"])
    assert "x\x9by\u202ez" in messages or "\x1b]0;pwned\x07" in messages or \
        set(game["winners"]) & set(EVIL)


def test_replay_escapes_player_ids(runner: CliRunner, evil_log: Path) -> None:
    result = runner.invoke(app, ["replay", str(evil_log), "--game", GAME, "--hand", "1"])
    assert result.exit_code == 0, result.output
    _no_raw_controls(result.output)
    assert _shows_escaped(result.output)


def test_replay_json_stays_exact(evil_log: Path) -> None:
    result = CliRunner().invoke(app, ["replay", str(evil_log), "--game", GAME, "--hand", "1",
                                      "--step", "1", "--json"])
    step = json.loads(result.stdout)
    assert set(step["state"]["hands"]) == set(EVIL)


def test_query_and_stats_tables_escape(runner: CliRunner, evil_warehouse: Path) -> None:
    for args in (["query", "SELECT player, hands FROM player_stats ORDER BY player"],
                 ["stats", "players"], ["stats", "game", GAME]):
        result = runner.invoke(app, [*args, "--warehouse", str(evil_warehouse)])
        assert result.exit_code == 0, (args, result.output)
        _no_raw_controls(result.output)
        assert _shows_escaped(result.output), args


def test_query_json_and_csv_stay_exact(evil_warehouse: Path) -> None:
    sql = "SELECT player FROM player_stats ORDER BY player"
    result = CliRunner().invoke(app, ["query", sql, "--warehouse", str(evil_warehouse),
                                      "--format", "json"])
    assert sorted(r["player"] for r in json.loads(result.stdout)) == sorted(EVIL)
    result = CliRunner().invoke(app, ["query", sql, "--warehouse", str(evil_warehouse),
                                      "--format", "csv"])
    assert "\x1b]0;pwned\x07" in result.stdout


def test_report_and_errors_escape(runner: CliRunner, evil_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "hand\x1b[2J.html"
    result = runner.invoke(app, ["report", "--game", GAME, "--hand", "1", "--log", str(evil_log),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    _no_raw_controls(result.output)
    assert "hand\\x1b[2J.html" in _OWN_SEQUENCES.sub("", result.output)
    result = runner.invoke(app, ["validate", str(tmp_path / "missing\x1b]0;t\x07.jsonl")])
    assert result.exit_code == 2
    _no_raw_controls(result.output)


def test_the_console_escapes_what_missed_shown() -> None:
    """The backstop: a raw value in a table cell is still written escaped."""
    console = terminal.console(width=80, force_terminal=True)
    table = Table("player")
    table.add_row("a\x1b]0;x\x1b\\b\x1b[2Jc")
    with console.capture() as captured:
        console.print(table)
        console.print("raw \x1b[31mred\x9b", highlight=False, markup=False)
    _no_raw_controls(captured.get())
    assert "a\\x1b]0;x\\x1b\\b\\x1b[2Jc" in captured.get()
    assert "raw \\x1b[31mred\\x9b" in captured.get()


def test_shown_escapes_markup_and_controls() -> None:
    assert terminal.shown("[bold]x\x1b[0m\n") == "\\[bold]x\\x1b[0m\\n"
    assert terminal.printable("tab\tok ünïcode ♠") == "tab\\tok ünïcode ♠"
