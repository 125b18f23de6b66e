"""Issue 32: `haftkhabis analyse GAME` over a log (the warehouse path is `cli.sources`')."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from cli.app import app

BAZITO = Path(__file__).resolve().parents[2] / "data" / "sample" / "bazito.jsonl"
GAME = "t-18-bz101-00001"
runner = CliRunner()


def test_analyse_writes_every_decision_of_a_hand_as_json() -> None:
    args = ["analyse", GAME, str(BAZITO), "--hand", "1", "--rollouts", "20", "--seed", "4", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    body = orjson.loads(result.stdout)
    assert body["game"] == GAME and body["rollouts"] == 20 and body["policy"]
    assert body["decisions"] and all(d["hand"] == 1 for d in body["decisions"])
    first = body["decisions"][0]
    assert {"seq", "player", "moves", "best", "chosen", "loss", "mistake", "summary"} <= first.keys()
    assert first["moves"][first["best"]]["loss"] == 0.0
    assert len(body["deals"]) == 4 and len(body["luck"]) == 4
    again = runner.invoke(app, args)
    assert orjson.loads(again.stdout) == body  # same seed, same figures


def test_analyse_prints_a_readable_hand() -> None:
    result = runner.invoke(app, ["analyse", GAME, str(BAZITO), "--hand", "1", "--rollouts", "10"])
    assert result.exit_code == 0, result.output
    assert "hand 1" in result.stdout and "deal " in result.stdout and "clear mistakes" in result.stdout


def test_analyse_says_what_is_missing() -> None:
    result = runner.invoke(app, ["analyse", GAME])
    assert result.exit_code == 2
    missing = runner.invoke(app, ["analyse", "no-such-game", str(BAZITO)])
    assert missing.exit_code == 2
    no_hand = runner.invoke(app, ["analyse", GAME, str(BAZITO), "--hand", "99", "--rollouts", "10"])
    assert no_hand.exit_code == 2


def test_analyse_reads_the_game_from_a_warehouse_the_same(tmp_path: Path) -> None:
    from tests.ingest.test_analyses import _warehouse

    root = _warehouse(tmp_path, games=1)
    args = ["--hand", "1", "--rollouts", "10", "--seed", "2", "--json"]
    stored = runner.invoke(app, ["analyse", GAME, "--warehouse", str(root), *args])
    logged = runner.invoke(app, ["analyse", GAME, str(BAZITO), *args])
    assert stored.exit_code == 0, stored.output
    assert orjson.loads(stored.stdout) == orjson.loads(logged.stdout)


def test_analyse_by_ismcts_names_its_search_and_refuses_an_unknown_one() -> None:
    args = ["analyse", GAME, str(BAZITO), "--hand", "1", "--rollouts", "10", "--seed", "4", "--json"]
    result = runner.invoke(app, [*args, "--search", "ismcts"])
    assert result.exit_code == 0, result.output
    body = orjson.loads(result.stdout)
    assert body["search"] == "ismcts" and body["decisions"]
    for d in body["decisions"]:
        assert d["search"] == "ismcts"
        assert sum(m["visits"] for m in d["moves"]) == d["rollouts"] == 10 * len(d["moves"])
    flat = orjson.loads(runner.invoke(app, args).stdout)
    assert flat["search"] == "flat"
    assert [d["seq"] for d in flat["decisions"]] == [d["seq"] for d in body["decisions"]]
    assert runner.invoke(app, [*args, "--search", "mcts"]).exit_code == 2
