"""Delta tables kept open between uses (`ingest.store._OpenTables`): a table taken again
is the table as it is at the version asked, never another table at the same path; on a
local folder and on S3 (moto's server), where a table's identity is its first log entry's
ETag."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from ingest.store import Warehouse


@dataclass
class Place:
    """Where the warehouse is, and how to write to and remove one of its tables."""

    root: str
    options: dict[str, str] | None = None
    remove: Callable[[str], None] = field(default=lambda name: None)

    def warehouse(self) -> Warehouse:
        return Warehouse(self.root, self.options)

    def append(self, name: str, value: int) -> None:
        write_deltalake(f"{self.root}/{name}", pa.table({"a": [value]}), mode="append",
                        storage_options=self.options)


@pytest.fixture(params=["local", "s3"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    if request.param == "local":
        return Place(str(tmp_path), remove=lambda name: shutil.rmtree(tmp_path / name))
    moto: Any = request.getfixturevalue("moto")
    bucket = moto.bucket()

    def remove(name: str) -> None:
        client = moto.client()
        for key in moto.keys(bucket, f"wh/{name}/"):
            client.delete_object(Bucket=bucket, Key=key)

    return Place(f"s3://{bucket}/wh", moto.options, remove)


def _files(warehouse: Warehouse, version: int | None = None) -> list[str]:
    with warehouse.open_table("games", version) as table:
        return sorted(table.file_uris())


def _fresh(place: Place, version: int | None = None) -> list[str]:
    return sorted(place.warehouse().table("games", version).file_uris())


def test_a_kept_table_is_brought_to_the_version_asked(place: Place) -> None:
    place.append("games", 0)
    warehouse = place.warehouse()
    assert _files(warehouse) == _fresh(place)
    for k in range(1, 4):  # commits from elsewhere (another writer, another process)
        place.append("games", k)
        assert _files(warehouse) == _fresh(place)
        assert len(_files(warehouse, k)) == k + 1
    assert _files(warehouse, 1) == _fresh(place, 1)  # an earlier version: never a later one
    assert _files(warehouse) == _fresh(place)


def test_a_table_made_again_at_the_same_path_is_not_the_kept_one(place: Place) -> None:
    for k in range(3):
        place.append("games", k)
    warehouse = place.warehouse()
    assert len(_files(warehouse)) == 3
    place.remove("games")
    for k in range(4):  # made again, and one version further than the kept table
        place.append("games", 10 + k)
    assert _files(warehouse) == _fresh(place)
    assert len(_files(warehouse)) == 4


def test_a_table_in_use_is_not_handed_to_another_user(place: Place) -> None:
    place.append("games", 0)
    place.append("games", 1)
    warehouse = place.warehouse()
    with warehouse.open_table("games", 0) as first, warehouse.open_table("games") as second:
        assert first is not second
        assert (first.version(), second.version()) == (0, 1)
