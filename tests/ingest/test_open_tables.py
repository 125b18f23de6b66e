"""Delta tables kept open between uses (`ingest.store._OpenTables`): a table taken again
is the table as it is at the version asked, never another table at the same path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

from ingest.store import Warehouse


def _files(warehouse: Warehouse, version: int | None = None) -> list[str]:
    with warehouse.open_table("games", version) as table:
        return sorted(table.file_uris())


def _fresh(path: Path, version: int | None = None) -> list[str]:
    return sorted(Warehouse(path.parent).table(path.name, version).file_uris())


def test_a_kept_table_is_brought_to_the_version_asked(tmp_path: Path) -> None:
    path = tmp_path / "games"
    write_deltalake(str(path), pa.table({"a": [0]}))
    warehouse = Warehouse(tmp_path)
    assert _files(warehouse) == _fresh(path)
    for k in range(1, 4):  # commits from elsewhere (another writer, another process)
        write_deltalake(str(path), pa.table({"a": [k]}), mode="append")
        assert _files(warehouse) == _fresh(path)
        assert len(_files(warehouse, k)) == k + 1
    assert _files(warehouse, 1) == _fresh(path, 1)  # an earlier version: never a later one
    assert _files(warehouse) == _fresh(path)


def test_a_table_made_again_at_the_same_path_is_not_the_kept_one(tmp_path: Path) -> None:
    path = tmp_path / "games"
    for k in range(3):
        write_deltalake(str(path), pa.table({"a": [k]}), mode="append")
    warehouse = Warehouse(tmp_path)
    assert len(_files(warehouse)) == 3
    shutil.rmtree(path)
    for k in range(4):  # made again, and one version further than the kept table
        write_deltalake(str(path), pa.table({"a": [10 + k]}), mode="append")
    assert _files(warehouse) == _fresh(path)
    assert len(_files(warehouse)) == 4


def test_a_table_in_use_is_not_handed_to_another_user(tmp_path: Path) -> None:
    path = tmp_path / "games"
    write_deltalake(str(path), pa.table({"a": [0]}))
    write_deltalake(str(path), pa.table({"a": [1]}), mode="append")
    warehouse = Warehouse(tmp_path)
    with warehouse.open_table("games", 0) as first, warehouse.open_table("games") as second:
        assert first is not second
        assert (first.version(), second.version()) == (0, 1)
