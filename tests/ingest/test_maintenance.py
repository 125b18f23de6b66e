"""Operations at scale (#12, part 3): `snapshot()` stays cheap however many batches there
are, `batches` is compacted as it grows, tables get Delta checkpoints, `compact` rewrites
only the partitions with several small parts (to a target size), and vacuum never deletes
a file a retained snapshot still needs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from typer.testing import CliRunner

from cli.app import app
from cli.warehouse_cmd import DEFAULT_TARGET_SIZE, parse_size
from engine.simulate import SimulatedGame
from ingest import store as store_module
from ingest.maintenance import compact
from ingest.pipeline import ingest
from ingest.queries import open_warehouse
from ingest.schema import SNAPSHOT_TABLES
from ingest.store import TARGET_FILE_SIZE, Warehouse, new_attempt
from tests.ingest.conftest import batches, contents, game_lines, two_batches_of, write_lines


def _batch_rows(store: Warehouse, count: int) -> None:
    """`count` batch rows (no data), committed as ingests commit theirs."""
    with store.lock():
        store.recover()
        for batch in range(1, count + 1):
            now = datetime.now(UTC)
            store.commit_batch({
                "id": batch, "kind": "ingest", "started": now, "ended": now, "files": [],
                "lines": batch, "games_new": 0, "games_updated": 0, "games_unchanged": 0,
                "violations": 0, "errors": 0, "workers": 1, "engine_version": "test",
            }, dict.fromkeys(SNAPSHOT_TABLES, 0) | {"quarantine": batch % 3},
               new_attempt(), prefix=f"b{batch:06d}-test")


def _parts(root: Path, table: str) -> list[Path]:
    return sorted((root / table).rglob("part-*.parquet"))


def test_a_snapshot_reads_only_the_part_with_the_latest_batch(tmp_path: Path) -> None:
    root = tmp_path / "wh"
    store = Warehouse(root)
    store.ensure()
    _batch_rows(store, 30)
    latest = [p for p in _parts(root, "batches") if p.name.startswith("part-b000030-")]
    assert len(latest) == 1 and len(_parts(root, "batches")) == 30
    for part in _parts(root, "batches"):  # every other row's file gone: never read
        if part != latest[0]:
            part.unlink()
    snapshot = Warehouse(root).snapshot()
    assert snapshot.batch == 30 and snapshot.versions["quarantine"] == 0


def test_batches_is_compacted_and_tables_checkpointed_as_they_grow(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "BATCHES_COMPACT_EVERY", 5)
    monkeypatch.setattr(store_module, "CHECKPOINT_EVERY", 4)
    root = tmp_path / "wh"
    store = Warehouse(root)
    store.ensure()
    _batch_rows(store, 12)
    table = DeltaTable(str(root / "batches"))
    assert pa.table(table.get_add_actions()).num_rows <= 3  # rows 1-10 in a part, 11, 12
    rows = table.to_pyarrow_table(columns=["id", "lines"]).sort_by("id").to_pylist()
    assert rows == [{"id": b, "lines": b} for b in range(1, 13)]
    checkpoints = {int(p.name.split(".")[0]) for p in (root / "batches" / "_delta_log").glob(
        "*.checkpoint.parquet")}
    assert checkpoints and all(v % 4 == 0 for v in checkpoints)
    assert Warehouse(root).snapshot().batch == 12


def test_every_table_gets_checkpoints(games: dict[str, list[SimulatedGame]], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CHECKPOINT_EVERY", 2)
    root = tmp_path / "wh"
    for index, game in enumerate(games["bazito"][:3]):
        ingest([str(write_lines(tmp_path / f"in{index}.jsonl", game.lines))], str(root),
               workers=1)
    for name in ("games", "events", "player_stats", "batches"):
        assert (root / name / "_delta_log" / f"{2:020d}.checkpoint.parquet").exists(), name
    monkeypatch.undo()
    compact(str(root), vacuum=False)  # and compact leaves one at every table's latest
    for name in (*SNAPSHOT_TABLES, "batches"):
        version = DeltaTable(str(root / name)).version()
        assert (root / name / "_delta_log" / f"{version:020d}.checkpoint.parquet").exists(), name


def test_compact_rewrites_only_partitions_with_several_small_parts(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    root = tmp_path / "wh"
    lone = games["persian"][0]  # persian, 2026-07: one game, one part per table
    ingest([str(write_lines(tmp_path / "first.jsonl",
                            [*games["bazito"][0].lines, *lone.lines]))], str(root), workers=1)
    for index, game in enumerate(games["bazito"][1:5]):  # bazito, 2026-06: five parts
        ingest([str(write_lines(tmp_path / f"in{index}.jsonl", game.lines))], str(root),
               workers=1)
    persian = root / "events" / "ruleset=persian"
    bazito = root / "events" / "ruleset=bazito"
    lone_parts = sorted(persian.rglob("part-*.parquet"))
    assert len(lone_parts) == 1 and len(list(bazito.rglob("part-*.parquet"))) == 5
    before = contents(root)

    untouched = compact(str(root), target_size=1, vacuum=False)  # nothing is under 1 byte
    assert untouched.batch is None and untouched.files_removed["events"] == 0

    summary = compact(str(root), vacuum=False)  # the default: 128 MiB
    assert summary.batch == 6 and summary.partitions["events"] == 1
    assert summary.files_removed["events"] == 5 and summary.files_added["events"] == 1
    assert contents(root) == before
    paths = set(pa.table(DeltaTable(str(root / "events")).get_add_actions())["path"].to_pylist())
    assert f"ruleset=persian/month=2026-07/{lone_parts[0].name}" in paths  # left as it was
    assert len([p for p in paths if p.startswith("ruleset=bazito/")]) == 1


def test_vacuum_keeps_every_file_a_retained_snapshot_needs(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    first, second = two_batches_of(games, tmp_path)
    root = tmp_path / "wh"
    ingest([str(first)], str(root), workers=1)
    old = open_warehouse(str(root))  # a reader of batch 1, open across what follows
    try:
        expected = old.sql("SELECT count(*), sum(length(raw)) FROM events").fetchall()
        pinned = old.snapshot.versions
        ingest([str(second)], str(root), workers=1)  # replaces a game: batch 1's parts go
        needed = {name: set(DeltaTable(str(root / name), version=pinned[name]).file_uris())
                  for name in SNAPSHOT_TABLES}
        assert not needed["events"] <= set(DeltaTable(str(root / "events")).file_uris()), \
            "batch 2 removed no part of batch 1: nothing to test"
        compact(str(root), retain_hours=1)  # batch 1 was committed within the hour
        assert all(Path(uri).exists() for files in needed.values() for uri in files)
        assert old.sql("SELECT count(*), sum(length(raw)) FROM events").fetchall() == expected
    finally:
        old.close()
    current = contents(root)
    compact(str(root), retain_hours=0)  # no reader of an older snapshot may be open now
    assert not all(Path(uri).exists() for uri in needed["events"])
    assert contents(root) == current


def test_a_compact_and_its_vacuum_leave_nothing_to_recover(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    """The vacuum's own commits (VACUUM START, END) change no rows: the tables are whole,
    no reader takes the lock for them and the next ingest restores nothing."""
    first, second = two_batches_of(games, tmp_path)
    root = tmp_path / "wh"
    ingest([str(first)], str(root), workers=1)
    ingest([str(second)], str(root), workers=1)
    compact(str(root), retain_hours=0)
    store = Warehouse(root)
    pinned = store.snapshot().versions
    assert any(DeltaTable(str(root / n)).version() > pinned[n] for n in SNAPSHOT_TABLES)
    assert all(store._tail(n, pinned[n])[0] for n in SNAPSHOT_TABLES)
    assert store.heal() == []
    more = write_lines(tmp_path / "more.jsonl", games["pis-yedili"][0].lines)
    assert ingest([str(more)], str(root), workers=1).restored == []
    assert [b["kind"] for b in batches(root)] == ["ingest", "ingest", "compact", "ingest"]


@pytest.mark.parametrize(("text", "size"), [
    ("128MiB", 128 * 1024**2), ("64MB", 64 * 1024**2), ("1g", 1024**3), ("4096", 4096),
    ("1.5KiB", 1536), ("10B", 10)])
def test_target_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size
    assert parse_size(DEFAULT_TARGET_SIZE) == TARGET_FILE_SIZE


def test_compact_takes_a_target_size(games: dict[str, list[SimulatedGame]],
                                     tmp_path: Path) -> None:
    root = str(tmp_path / "wh")
    for index, game in enumerate(games["bazito"][:2]):
        ingest([str(write_lines(tmp_path / f"in{index}.jsonl", game.lines))], root, workers=1)
    runner = CliRunner()
    bad: Any = runner.invoke(app, ["compact", "-w", root, "--target-size", "lots"])
    assert bad.exit_code == 2 and "--target-size" in bad.output
    small = runner.invoke(app, ["compact", "-w", root, "--target-size", "1B", "--no-vacuum"])
    assert small.exit_code == 0 and "nothing to merge" in small.output, small.output
    done = runner.invoke(app, ["compact", "-w", root, "--target-size", "64MiB"])
    assert done.exit_code == 0 and "committed as batch 3" in done.output, done.output
    assert "partitions rewritten" in done.output


def test_a_compact_that_died_before_its_row_is_undone(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    """Its merges hold the same rows as the recorded versions, in other files: left in
    place, the next batch's removes (which name the recorded files) would miss the merged
    file, and an updated game would be stored twice."""
    persian = games["persian"]
    root = tmp_path / "wh"
    ingest([str(write_lines(tmp_path / "a.jsonl", [*game_lines(games["bazito"][:6]),
                                                   *persian[1].lines]))], str(root), workers=1)
    ingest([str(write_lines(tmp_path / "b.jsonl", [*game_lines(games["bazito"][6:12]),
                                                   *persian[0].lines[:40]]))], str(root),
           workers=1)
    store = Warehouse(root)
    with store.lock():  # a compact that merges every table, then dies before its row
        store.recover()
        for name in SNAPSHOT_TABLES:
            store.optimize(name, TARGET_FILE_SIZE, 3)
    assert any(not store._tail(n, store.snapshot(heal=False).versions[n])[0]
               for n in SNAPSHOT_TABLES)
    complete = write_lines(tmp_path / "c.jsonl", persian[0].lines)  # updates persian[0]
    summary = ingest([str(complete)], str(root), workers=1)
    assert "games" in summary.restored and summary.games_updated == 1
    with open_warehouse(str(root)) as reader:
        assert reader.sql("SELECT count(*) - count(DISTINCT game_id) FROM games"
                          ).fetchall()[0][0] == 0
        assert reader.sql("SELECT count(*) FROM games WHERE game_id = ?",
                          params=[persian[0].game]).fetchall()[0][0] == 1
