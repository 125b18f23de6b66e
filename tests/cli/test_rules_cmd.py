"""`haftkhabis infer`, `diff-rules`, `what-if` and `schema` as a user runs them."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from cli.app import app
from engine.profiles import Profile, parse_profile
from tests.engine.inferkit import relabelled, simulated

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _mislabelled(tmp_path: Path) -> tuple[Path, list[str]]:
    games = relabelled(simulated(parse_profile("persian:tarkesh=false"), 150, seed=31),
                       Profile.default("persian"), "hk-server/2.4.1-rc")
    path = tmp_path / "mislabelled.jsonl"
    path.write_bytes(b"\n".join(raw for lines in games for raw in lines) + b"\n")
    return path, [orjson.loads(lines[0])["game"] for lines in games]


def test_infer_names_the_build_and_exits_1(tmp_path: Path) -> None:
    path, _ = _mislabelled(tmp_path)
    result = runner.invoke(app, ["infer", str(path), "--builds-only", "--ruleset", "persian"],
                           terminal_width=200)
    assert result.exit_code == 1, result.output
    assert "hk-server/2.4.1-rc plays persian with tarkesh off although its headers say on" in result.output
    assert "64 profiles each" in result.output
    json_run = runner.invoke(app, ["infer", str(path), "--json", "--ruleset", "persian"])
    records = [orjson.loads(line) for line in json_run.stdout.splitlines()]
    games = [r for r in records if r["kind"] == "game"]
    (build,) = [r for r in records if r["kind"] == "build"]
    caught = [g for g in games if g["discrepancy"]]
    assert caught and all(g["inferred"] == "persian:tarkesh=false" for g in caught)
    assert all(g["header_contradiction"]["seq"] is not None for g in caught)
    assert build["findings"] and build["games"] == 150


def test_infer_of_honest_logs_exits_0() -> None:
    result = runner.invoke(app, ["infer", str(REPO / "tests/engine/fixtures/fx-bazito-points.jsonl")])
    assert result.exit_code == 0, result.output
    assert "0 play other rules than their header says" in result.output


def test_diff_rules_shows_the_first_divergence(tmp_path: Path) -> None:
    path, _ = _mislabelled(tmp_path)
    infer = runner.invoke(app, ["infer", str(path), "--json", "--ruleset", "persian"])
    game = next(orjson.loads(line)["game"] for line in infer.stdout.splitlines()
                if orjson.loads(line).get("discrepancy"))
    result = runner.invoke(app, ["diff-rules", str(path), "--game", game, "--as", "persian:tarkesh=false"],
                           terminal_width=200)
    assert result.exit_code == 1, result.output
    assert "The verdicts diverge first at seq" in result.output
    as_json = orjson.loads(runner.invoke(app, ["diff-rules", str(path), "--game", game, "--as",
                                               "persian:tarkesh=false", "--json"]).stdout)
    assert as_json["header_verdict"]["status"] == "violations"
    assert as_json["as_verdict"]["status"] in ("compliant", "incomplete")
    bad = runner.invoke(app, ["diff-rules", str(path), "--game", game, "--as", "persian:nope=1"])
    assert bad.exit_code == 2 and "no setting 'nope'" in bad.output


def test_what_if_lists_and_refuses() -> None:
    sample = str(REPO / "data/sample/bazito.jsonl")
    listed = runner.invoke(app, ["what-if", sample, "--game", "t-08-bz101-00022", "--seq", "2"],
                           terminal_width=200)
    assert listed.exit_code == 0, listed.output
    assert "legal instead: 7♦, 8♦" in listed.output  # as people write cards
    refused = runner.invoke(app, ["what-if", sample, "--game", "t-08-bz101-00022", "--seq", "2", "-m", "draw"],
                            terminal_width=200)
    assert refused.exit_code == 1 and "must_play" in refused.output


def test_schema_check_of_the_committed_file(tmp_path: Path) -> None:
    committed = REPO / "docs/schema/haftkhabis-1.schema.json"
    assert runner.invoke(app, ["schema", "--check", str(committed)]).exit_code == 0
    stale = tmp_path / "stale.json"
    stale.write_text("{}\n")
    assert runner.invoke(app, ["schema", "--check", str(stale)]).exit_code == 1
    out = tmp_path / "s.json"
    assert runner.invoke(app, ["schema", "--out", str(out)]).exit_code == 0
    assert out.read_bytes() == committed.read_bytes()


def test_help_lists_the_new_commands() -> None:
    result = runner.invoke(app, ["--help"], terminal_width=200)
    for command in ("infer", "diff-rules", "what-if", "schema"):
        assert f" {command} " in result.output
