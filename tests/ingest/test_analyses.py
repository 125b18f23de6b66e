"""Issue 32: stored analyses are made once and recomputed only when their key changes
(the game's lines, the engine, the policy, the search, the rollouts or the seed); `stats
ratings` reads them; an S3 warehouse (moto's server on loopback) stores and reads them as
a folder does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from cli.app import app
from engine.analysis import Search
from ingest import analyses, read
from ingest.pipeline import ingest

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample" / "bazito.jsonl"


def _warehouse(tmp_path: Path, games: int = 4) -> Path:
    """A warehouse of the sample's first `games` bazito games."""
    wanted: list[str] = []
    lines = []
    for raw in SAMPLE.read_bytes().splitlines():
        try:
            game = orjson.loads(raw).get("game")
        except orjson.JSONDecodeError:
            continue
        if game not in wanted and len(wanted) < games:
            wanted.append(game)
        if game in wanted:
            lines.append(raw)
    log = tmp_path / "few.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    root = tmp_path / "wh"
    ingest([str(log)], str(root), workers=1)
    return root


def test_analyses_are_stored_once_and_recomputed_when_the_key_changes(tmp_path: Path) -> None:
    root = _warehouse(tmp_path)
    reader = read.connect(root)
    try:
        first = analyses.refresh(reader, rollouts=10, seed=1)
        assert first.games == 4 and first.analysed == 4 and first.kept == 0
        stamps = {p.name: p.stat().st_mtime_ns for p in (root / analyses.FOLDER).glob("*.parquet")}
        again = analyses.refresh(reader, rollouts=10, seed=1)
        assert again.kept == 4 and again.analysed == 0
        assert stamps == {p.name: p.stat().st_mtime_ns for p in (root / analyses.FOLDER).glob("*.parquet")}
        other = analyses.refresh(reader, rollouts=10, seed=2)
        assert other.analysed == 4
        table = analyses.stored(reader)
        assert set(table.column("kind").to_pylist()) == {"decision", "deal"}
        assert set(table.column("seed").to_pylist()) == {2}
        rows = analyses.ratings_rows(table)
        assert rows and {"player", "rating", "uncertainty", "games", "accuracy", "luck"} <= rows[0].keys()
    finally:
        reader.close()


def test_stats_ratings_prints_one_row_per_player(tmp_path: Path) -> None:
    root = _warehouse(tmp_path, games=3)
    result = CliRunner().invoke(app, ["stats", "ratings", "--warehouse", str(root), "--rollouts", "10",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = orjson.loads(result.stdout)
    players = [r["player"] for r in rows]
    assert len(players) == len(set(players)) >= 4
    for row in rows:
        assert row["games"] >= 1 and row["uncertainty"] > 0
        assert row["accuracy"] is None or row["accuracy_low"] <= row["accuracy"] <= row["accuracy_high"]


def _rows(table: Any) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda r: (r["game_id"], r["kind"], r["seq"] or -1, r["player"]))


def test_analyses_on_an_s3_warehouse_are_stored_once_and_read_as_on_a_folder(
        moto: Any, tmp_path: Path) -> None:
    local = _warehouse(tmp_path, games=3)
    uri = f"s3://{moto.bucket()}/wh"
    ingest([str(tmp_path / "few.jsonl")], uri, workers=1, storage_options=moto.options)
    reader = read.connect(uri, moto.options)
    try:
        first = analyses.refresh(reader, rollouts=10, seed=1, search=Search.ISMCTS)
        assert (first.games, first.analysed, first.kept, first.failed) == (3, 3, 0, 0)
        bucket, prefix = uri.removeprefix("s3://").split("/", 1)
        stored_keys = [k for k in moto.keys(bucket, f"{prefix}/{analyses.FOLDER}/")]
        assert len(stored_keys) == 3 and all(k.endswith(".parquet") for k in stored_keys)
        again = analyses.refresh(reader, rollouts=10, seed=1, search=Search.ISMCTS)
        assert (again.analysed, again.kept) == (0, 3)
        on_s3 = analyses.stored(reader)
        decision = next(r for r in on_s3.to_pylist() if r["kind"] == "decision")
        assert analyses.decision_at(reader, decision["game_id"], decision["seq"]) == decision
        assert analyses.decision_at(reader, decision["game_id"], -5) is None
        flat = analyses.refresh(reader, rollouts=10, seed=1)  # another search: another key
        assert flat.analysed == 3
    finally:
        reader.close()
    # the same rows a folder warehouse stores for the same games, key and seeds
    folder = read.connect(local)
    try:
        analyses.refresh(folder, rollouts=10, seed=1, search=Search.ISMCTS)
        assert {r["search"] for r in on_s3.to_pylist()} == {"ismcts"}
        assert _rows(on_s3) == _rows(analyses.stored(folder))
    finally:
        folder.close()
    result = CliRunner().invoke(app, ["stats", "ratings", "--warehouse", uri, "--rollouts", "10", "--seed", "1",
                                      "--format", "json", *[a for k, v in moto.options.items()
                                                            for a in ("--storage-option", f"{k}={v}")]])
    assert result.exit_code == 0, result.output
    assert len(orjson.loads(result.stdout)) >= 4
