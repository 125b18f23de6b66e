"""Two writers that both believe they hold the lock (#14 item 18, #12's lock with a fencing
token): `_ingest.lock` deleted under a running ingest let a second one commit the same
batch number. Now the lock carries a token checked before every commit, and every commit
lands only on the table version its writer read (Delta's own put-if-absent of the version,
no rebase), so the writer that lost the lock commits nothing, batch ids stay unique, no
row is lost and nothing is duplicated."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engine.simulate import SimulatedGame
from ingest.lock import LOCK_NAME
from ingest.pipeline import ingest
from ingest.queries import open_warehouse
from ingest.schema import DATA_TABLES, SNAPSHOT_TABLES
from ingest.store import PartWriter, Warehouse, WriterFenced, new_attempt
from tests.ingest import faults
from tests.ingest.conftest import (
    REPO,
    batches,
    contents,
    game_lines,
    unreferenced_parts,
    write_lines,
)
from tests.ingest.services import poll

#: the keys that identify a row of each game table
KEYS = {"games": "game_id", "hands": "game_id, hand", "hand_players": "game_id, hand, player",
        "events": "game_id, ordinal"}


def _quarantine_part(store: Warehouse, prefix: str) -> list[Any]:
    writer = PartWriter(store, "quarantine", prefix)
    writer.add((), [("f", "sha", 1, "schema", "a line", b"x", 7)])
    return writer.close()


def _no_duplicates(root: Path) -> None:
    with open_warehouse(str(root)) as reader:
        for table, key in KEYS.items():
            total, distinct = reader.sql(
                f"SELECT count(*), count(DISTINCT ({key})) FROM {table}").fetchall()[0]
            assert total == distinct, table


def test_a_deleted_lock_never_gives_a_batch_number_twice(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    first = write_lines(tmp_path / "first" / "a.jsonl", game_lines(games["bazito"][:8]))
    mine = write_lines(tmp_path / "mine" / "b.jsonl", game_lines(games["bazito"][8:16]))
    theirs = write_lines(tmp_path / "theirs" / "c.jsonl", game_lines(games["pis-yedili"]))
    reference = tmp_path / "reference"
    for path in (first, theirs, mine):
        ingest([str(path)], str(reference), workers=1)
    root = tmp_path / "wh"
    ingest([str(first)], str(root), workers=1)

    # the first ingest commits its first table, then waits (the commit handshake) ...
    handshake = tmp_path / "handshake"
    handshake.mkdir()
    writer = subprocess.Popen(
        faults.command("ingest", str(mine), "-w", str(root), "-q", "-j", "1", handshake=handshake),
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        poll((handshake / "committed-games").exists, "the first ingest's commit of games",
             timeout=240, process=None)
        # ... someone deletes its lock, and a second ingest runs meanwhile, whole
        (root / LOCK_NAME).unlink()
        second = ingest([str(theirs)], str(root), workers=1)
        assert second.batch == 2
        assert second.restored == ["games"]  # the first one's commit, not its to keep
        for name in DATA_TABLES:  # let the first one go on
            (handshake / f"seen-{name}").touch()
        _out, err = writer.communicate(timeout=240)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.communicate()
    # the first one finds its lock gone and stops: one line, nothing more committed
    assert writer.returncode == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "error:" in lines[0] and LOCK_NAME in lines[0], err
    assert "commits nothing more" in lines[0] and "Traceback" not in err
    assert [b["id"] for b in batches(root)] == [1, 2]
    assert unreferenced_parts(root) == []  # what it wrote went with it

    # run again, it commits as batch 3: every row of the three, once each
    assert ingest([str(mine)], str(root), workers=1).batch == 3
    assert [b["id"] for b in batches(root)] == [1, 2, 3]
    assert contents(root, batch_columns=False) == contents(reference, batch_columns=False)
    _no_duplicates(root)


def test_a_writer_whose_lock_was_taken_over_commits_nothing(tmp_path: Path) -> None:
    root = tmp_path / "wh"
    stale, fresh = Warehouse(root), Warehouse(root)
    stale.ensure()
    with stale.lock():
        stale.recover()
        stale.commit("quarantine", _quarantine_part(stale, "b000001-a"), [], 1, "ingest",
                     new_attempt())
        (root / LOCK_NAME).unlink()
        with fresh.lock():  # the file is gone: the new writer locks a new one
            fresh.recover()  # (and undoes the other's commit: no batch row names it)
            version = fresh.table("quarantine").version()
            with pytest.raises(WriterFenced, match="deleted under this writer"):
                stale.commit("quarantine", _quarantine_part(stale, "b000001-b"), [], 1,
                             "ingest", new_attempt())
            assert fresh.table("quarantine").version() == version
            assert fresh.commit("quarantine", _quarantine_part(fresh, "b000001-c"), [], 1,
                                "ingest", new_attempt()) == version + 1


def test_commits_land_only_on_the_version_their_writer_read(tmp_path: Path) -> None:
    """Without the lock's check (a writer that lost it a moment after checking), Delta
    itself refuses: neither a table commit nor a batch row of the same number lands twice."""
    root = tmp_path / "wh"
    one, two = Warehouse(root), Warehouse(root)
    one.ensure()
    with one.lock():
        one.recover()
    for store in (one, two):  # both read the warehouse as it is, as if each held the lock
        store._lock = SimpleNamespace(token=None, check=lambda: None)  # type: ignore[assignment]
        store.recover()
    try:
        committed = one.commit("quarantine", _quarantine_part(one, "b000001-a"), [], 1,
                               "ingest", new_attempt())
        with pytest.raises(WriterFenced, match="another writer committed"):
            two.commit("quarantine", _quarantine_part(two, "b000001-b"), [], 1, "ingest",
                       new_attempt())
        assert Warehouse(root).table("quarantine").version() == committed

        row = {"id": 1, "kind": "ingest", "started": _now(), "ended": _now(), "files": [],
               "lines": 0, "games_new": 0, "games_updated": 0, "games_unchanged": 0,
               "violations": 0, "errors": 0, "workers": 1, "engine_version": "test"}
        versions = dict.fromkeys(SNAPSHOT_TABLES, 0) | {"quarantine": committed}
        one.commit_batch(row, versions, new_attempt(), prefix="b000001-one")
        with pytest.raises(WriterFenced):
            two.commit_batch(row, versions, new_attempt(), prefix="b000001-two")
    finally:
        one._lock = two._lock = None
    ids = Warehouse(root).table("batches").to_pyarrow_table(columns=["id"])["id"].to_pylist()
    assert ids == [1]
    assert not list((root / "batches").glob("part-b000001-two-*"))


def _now() -> datetime:
    return datetime.now(UTC)
