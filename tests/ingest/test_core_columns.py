"""Issue 29: the engine's tables' columns are declared once, where the engine fills them
(`engine/core/haftkhabis-py/src/ingest.rs`), and read by `ingest.schema`; the version a
warehouse records is the engine's one version."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from engine import ENGINE_VERSION, _core
from engine.simulate import SimConfig, simulate
from ingest.columns import ColumnMismatch, to_table
from ingest.pipeline import ingest, replay_rows
from ingest.queries import open_warehouse
from ingest.schema import PARTITION_COLUMNS, TABLES
from tests.ingest.conftest import batches, write_lines

REPO = Path(__file__).resolve().parents[2]
ENGINE_TABLES = ["games", "hands", "hand_players", "events", "violations", "decisions"]
#: the Arrow type each type name of the engine's declarations stands for
ARROW = {"string": pa.string(), "bool": pa.bool_(), "int8": pa.int8(), "int32": pa.int32(),
         "int64": pa.int64(), "timestamp[us, UTC]": pa.timestamp("us", tz="UTC"),
         "list<string>": pa.list_(pa.string()), "list<int8>": pa.list_(pa.int8()),
         "map<string, int64>": pa.map_(pa.string(), pa.int64())}


def _handed() -> list[dict[str, Any]]:
    game = next(iter(simulate(SimConfig("persian", games=1, seed=29))))
    handed: list[dict[str, Any]] = []
    replay_rows([(line, "log.jsonl", n) for n, line in enumerate(game.lines, 1)], 1,
                lambda ruleset, month, tables: handed.append(tables))
    assert handed
    return handed


def test_the_engines_tables_are_its_declaration_then_the_partitions() -> None:
    declared = _core.warehouse_columns()
    assert list(declared) == ENGINE_TABLES
    for name, columns in declared.items():
        schema = TABLES[name].schema
        assert TABLES[name].partition_by == PARTITION_COLUMNS
        assert schema.names == [c["name"] for c in columns] + list(PARTITION_COLUMNS)
        for column in columns:
            field = schema.field(column["name"])
            assert field.nullable is column["nullable"]
            assert field.type == ARROW[column["type"]], f"{name}.{column['name']}"


def test_the_engine_hands_over_exactly_the_declared_columns() -> None:
    declared = _core.warehouse_columns()
    for tables in _handed():
        assert list(tables) == ENGINE_TABLES
        for name, columns in tables.items():
            assert list(columns) == [c["name"] for c in declared[name]]
            to_table(name, columns).validate(full=True)


@pytest.mark.parametrize("change", ["missing", "extra"])
def test_a_missing_or_extra_column_is_an_error(change: str) -> None:
    columns = dict(_handed()[0]["hands"])
    if change == "missing":
        del columns["dealer"]
    else:
        columns["dealers"] = columns["dealer"]
    with pytest.raises(ColumnMismatch, match="dealer"):
        to_table("hands", columns)


def test_the_warehouse_docs_name_every_declared_column() -> None:
    """docs/warehouse.md's section of each engine table names each of its columns."""
    doc = (REPO / "docs" / "warehouse.md").read_text(encoding="utf-8")
    for name, columns in _core.warehouse_columns().items():
        section = re.search(rf"^### `{name}` —.*?(?=^#)", doc, re.MULTILINE | re.DOTALL)
        assert section, f"docs/warehouse.md has no section for {name}"
        named = set(re.findall(r"`([a-z_]+)`", section.group(0)))
        missing = [c["name"] for c in columns if c["name"] not in named]
        assert not missing, f"docs/warehouse.md does not document {name}.{missing}"


def test_games_and_batches_record_the_one_engine_version(tmp_path: Path) -> None:
    game = next(iter(simulate(SimConfig("bazito", games=1, seed=7))))
    log = write_lines(tmp_path / "log.jsonl", game.lines)
    root = tmp_path / "wh"
    ingest([str(log)], str(root), workers=1)
    with open_warehouse(str(root)) as reader:
        versions = reader.rows("SELECT DISTINCT engine_version FROM games")
    assert versions == [{"engine_version": ENGINE_VERSION}]
    assert [b["engine_version"] for b in batches(root)] == [ENGINE_VERSION]
