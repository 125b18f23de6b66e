"""Issue 32: stored analyses are made once and recomputed only when their key changes
(the game's lines, the engine, the policy, the rollouts or the seed); `stats ratings`
reads them."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from cli.app import app
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
