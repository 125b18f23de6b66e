"""`haftkhabis validate` and `haftkhabis replay` as a user runs them."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from cli.app import app
from engine import _core

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


def _strict_replay(objs: list[dict[str, object]]) -> _core.GameRun:
    """Replay one game's lines, in seq order, stopping at the first violation."""
    run = _core.GameRun(str(objs[0]["game"]), strict=True)
    for number, obj in enumerate(objs, 1):
        run.feed(orjson.dumps(obj), number)
    return run


def test_strict_replay_raises_at_the_first_violation() -> None:
    objs = [orjson.loads(line) for line in BAZITO.read_bytes().splitlines()]
    run = _strict_replay(objs)  # compliant: no exception
    assert run.is_complete() and run.violations == []
    objs[3]["player"] = objs[4].get("player", "p0") if objs[3].get("player") != objs[4].get("player") else "p3"
    with pytest.raises(_core.ReplayError) as caught:
        _strict_replay(objs)
    assert caught.value.violation["seq"] == 3
    assert caught.value.violation["line"] == 4


# ---------------------------------------------------------------------------- replay: numbering, --seq, set-aside lines


def _conflicted(tmp_path: Path) -> tuple[Path, int]:
    """The bazito fixture with a second, different line carrying seq 5 (a duplicate-seq
    conflict): the validator keeps the first and sets this one aside."""
    lines = BAZITO.read_bytes().splitlines()
    other = orjson.loads(lines[5])
    assert other["seq"] == 5
    other["ts"] = "2030-01-01T00:00:00Z"
    lines.insert(6, orjson.dumps(other))
    log = tmp_path / "conflict.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    return log, 7


def test_replay_numbers_steps_within_the_hand_and_prints_both() -> None:
    whole = runner.invoke(app, ["replay", str(BAZITO), "--game", "fx-bazito-points", "--json"])
    steps = [orjson.loads(line) for line in whole.stdout.splitlines()]
    in_hand = [s for s in steps if s["hand"] == 1]
    assert [s["step"] for s in in_hand] == list(range(1, len(in_hand) + 1))
    pick = in_hand[4]
    by_step = runner.invoke(app, ["replay", str(BAZITO), "--game", "fx-bazito-points",
                                  "--hand", "1", "--step", "5", "--json"])
    by_seq = runner.invoke(app, ["replay", str(BAZITO), "--game", "fx-bazito-points",
                                 "--seq", str(pick["seq"]), "--json"])
    assert orjson.loads(by_step.stdout) == orjson.loads(by_seq.stdout) == pick
    text = runner.invoke(app, ["replay", str(BAZITO), "--game", "fx-bazito-points", "--seq", str(pick["seq"])])
    assert f"hand 1 · step 5 · seq {pick['seq']}" in text.output


def test_replay_refuses_ambiguous_or_missing_steps_naming_what_exists() -> None:
    base = ["replay", str(BAZITO), "--game", "fx-bazito-points"]
    alone = runner.invoke(app, [*base, "--step", "3"])
    assert alone.exit_code == 2 and "a step number counts within its hand" in alone.output and "--hand N" in alone.output
    far = runner.invoke(app, [*base, "--hand", "1", "--step", "999"])
    assert far.exit_code == 2 and "has steps 1–" in far.output
    seq = runner.invoke(app, [*base, "--seq", "99999"])
    assert seq.exit_code == 2 and "no line with seq 99999 (seqs 0–" in seq.output
    trimmed = runner.invoke(app, ["replay", str(BAZITO), "--game", "  fx-bazito-points ", "--seq", "2"])
    assert trimmed.exit_code == 0, trimmed.output


def test_replay_shows_the_set_aside_line_with_its_file_and_line(tmp_path: Path) -> None:
    log, line = _conflicted(tmp_path)
    result = runner.invoke(app, ["replay", str(log), "--game", "fx-bazito-points", "--seq", "5"])
    assert result.exit_code == 0, result.output
    assert f"set aside: another line with seq 5 at {log}:{line}" in result.output  # the path as given
    assert "2030-01-01T00:00:00Z" in result.output  # the set-aside line itself
    head = result.output.split("set aside")[0]
    assert "✓ legal" in head  # the kept line is not blamed for the conflict


def test_replay_explains_forced_moves() -> None:
    result = runner.invoke(app, ["replay", str(BAZITO), "--game", "fx-bazito-points", "--json"])
    whys = [orjson.loads(line)["why"] for line in result.stdout.splitlines()]
    assert any(w and ("drawing was the only move" in w or "the total of" in w) for w in whys)


def test_help_shows_no_raw_types() -> None:
    for command in (["replay"], ["report"], ["validate"], ["query"], ["stats", "players"], ["ingest"]):
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0
        for raw in ("<bool>", "<list[", "<str>", "<int>", "<path>", "<float>"):
            assert raw not in result.output, (command, raw, result.output)
