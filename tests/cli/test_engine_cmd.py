"""`haftkhabis validate` and `haftkhabis replay` as a user runs them."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from cli.app import app
from engine.validate import ReplayError, replay_lines

FIXTURES = Path(__file__).parent.parent / "engine" / "fixtures"
BAZITO = FIXTURES / "fx-bazito-points.jsonl"
runner = CliRunner()


def test_validate_compliant_exits_0_and_prints_a_summary() -> None:
    result = runner.invoke(app, ["validate", str(BAZITO)])
    assert result.exit_code == 0, result.output
    assert "fx-bazito-points" in result.output and "compliant" in result.output
    assert "1 games" in result.output


def test_validate_json_is_one_object_per_game(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(FIXTURES), "--json"])
    assert result.exit_code == 0
    verdicts = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert {v["kind"] for v in verdicts} == {"game"}
    assert len(verdicts) == len(list(FIXTURES.glob("*.jsonl")))
    assert all(v["status"] == "compliant" for v in verdicts)


def test_a_violation_exits_1_with_file_line_and_seq(tmp_path: Path) -> None:
    lines = BAZITO.read_bytes().splitlines()
    broken = orjson.loads(lines[2])
    assert broken["type"] == "play"
    broken["card"] = "XX"
    lines[2] = orjson.dumps(broken)
    lines.insert(4, b"{not json")
    log = tmp_path / "broken.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    result = runner.invoke(app, ["validate", str(log)])
    assert result.exit_code == 1
    assert "broken.jsonl:3: seq 2: schema" in result.output
    assert "broken.jsonl:5: malformed_json" in result.output
    as_json = runner.invoke(app, ["validate", str(log), "--json"])
    records = [orjson.loads(line) for line in as_json.stdout.splitlines()]
    errors = [r for r in records if r["kind"] == "error"]
    assert errors and errors[0]["line"] == 5 and errors[0]["code"] == "malformed_json"


def test_gzip_and_stdin_are_read(tmp_path: Path) -> None:
    packed = tmp_path / "packed.log"  # named explicitly: read whatever its name
    packed.write_bytes(gzip.compress(BAZITO.read_bytes()))
    assert runner.invoke(app, ["validate", str(packed)]).exit_code == 0
    piped = runner.invoke(app, ["validate", "-", "--json"], input=BAZITO.read_bytes())
    assert piped.exit_code == 0 and '"compliant"' in piped.stdout


def test_missing_path_exits_2() -> None:
    result = runner.invoke(app, ["validate", "/no/such/log.jsonl"])
    assert result.exit_code == 2


def test_replay_shows_the_state_and_legal_moves() -> None:
    result = runner.invoke(app, ["replay", str(BAZITO), "--game", "fx-bazito-points", "--hand", "1", "--step", "3"])
    assert result.exit_code == 0, result.output
    assert "step 3" in result.output and "to move:" in result.output and "pile:" in result.output
    as_json = runner.invoke(app, ["replay", str(BAZITO), "--game", "fx-bazito-points", "--json"])
    steps = [orjson.loads(line) for line in as_json.stdout.splitlines()]
    assert len(steps) == len(BAZITO.read_bytes().splitlines())
    assert steps[2]["state"]["legal"]["player"]


def test_replay_unknown_game_exits_2() -> None:
    assert runner.invoke(app, ["replay", str(BAZITO), "--game", "nope"]).exit_code == 2


def test_strict_replay_raises_at_the_first_violation() -> None:
    objs = [orjson.loads(line) for line in BAZITO.read_bytes().splitlines()]
    replay_lines(objs, strict=True)  # compliant: no exception
    objs[3]["player"] = objs[4].get("player", "p0") if objs[3].get("player") != objs[4].get("player") else "p3"
    with pytest.raises(ReplayError) as caught:
        replay_lines(objs, strict=True)
    assert caught.value.violation.seq == 3
