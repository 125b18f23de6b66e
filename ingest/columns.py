"""The engine's column batches as pyarrow tables of the warehouse's declared schemas.

The core builds every game table's columns in Arrow's own layout
(`engine/core/haftkhabis-py/src/columns.rs`) and hands each as
`(length, null_count, [buffers], [children])`, each buffer the core's own memory lent
through the buffer protocol; here they become pyarrow arrays of the types of
`ingest.schema`'s tables (the columns the core declares, `_core.warehouse_columns()`),
without a copy and without a Python object per value. A column the core does not give,
or gives in another layout, is an error here, not a silently different table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from ingest.schema import TABLES

#: one column as the core hands it: (length, null_count, buffers, children); a buffer is
#: anything with the buffer protocol (`engine._core.ColumnBuffer`, or bytes)
ColumnData = tuple[int, int, Sequence[Any], Sequence[Any]]


class ColumnMismatch(Exception):
    """The engine's columns do not match the declared schema (a bug, not bad input)."""


def _children(type_: pa.DataType) -> list[pa.DataType]:
    if pa.types.is_map(type_):
        entries = pa.struct([pa.field("key", type_.key_type, nullable=False),
                             pa.field("value", type_.item_type)])
        return [entries]
    if pa.types.is_list(type_):
        return [type_.value_type]
    if pa.types.is_struct(type_):
        return [type_.field(i).type for i in range(type_.num_fields)]
    return []


class _Plan:
    """How one column of a declared type is built from the core's buffers: the type,
    its children's plans, and whether it is a map (whose entries take the map's own field
    names). Worked out once per type: a batch has thousands of columns to build."""

    __slots__ = ("children", "map_fields", "type")

    def __init__(self, type_: pa.DataType) -> None:
        self.type = type_
        self.children = [_Plan(kind) for kind in _children(type_)]
        self.map_fields = ((type_.key_field, type_.item_field) if pa.types.is_map(type_)
                           else None)

    def build(self, data: ColumnData) -> pa.Array:
        length, nulls, buffers, children = data
        if len(self.children) != len(children):
            raise ColumnMismatch(f"{self.type} takes {len(self.children)} child arrays, "
                                 f"got {len(children)}")
        kids = [plan.build(child) for plan, child in zip(self.children, children, strict=True)]
        if self.map_fields is not None:
            # a map is a list of key/value entries, with the map's own field names
            kids = [pa.StructArray.from_arrays([kids[0].field(0), kids[0].field(1)],
                                               fields=list(self.map_fields))]
        return pa.Array.from_buffers(
            self.type, length, [None if b is None else pa.py_buffer(b) for b in buffers],
            null_count=nulls, children=kids or None)


def to_array(type_: pa.DataType, data: ColumnData) -> pa.Array:
    """One column of the core as a pyarrow array of `type_`."""
    return _Plan(type_).build(data)


#: table → (its file schema, a plan per column), worked out on first use
_PLANS: dict[str, tuple[pa.Schema, list[tuple[str, _Plan]]]] = {}


def _plans(name: str) -> tuple[pa.Schema, list[tuple[str, _Plan]]]:
    found = _PLANS.get(name)
    if found is None:
        schema = TABLES[name].file_schema
        found = _PLANS[name] = (schema, [(f.name, _Plan(f.type)) for f in schema])
    return found


def to_table(name: str, columns: Mapping[str, ColumnData]) -> pa.Table:
    """The core's columns of table `name` as a table of its file schema (the columns
    stored in the Parquet files, partition columns left out)."""
    schema, plans = _plans(name)
    if len(columns) != len(plans) or any(n not in columns for n, _ in plans):
        missing = [n for n, _ in plans if n not in columns]
        extra = sorted(set(columns) - set(schema.names))
        raise ColumnMismatch(f"table {name}: the engine gave no {missing} and extra {extra}")
    table = pa.Table.from_arrays([plan.build(columns[n]) for n, plan in plans], schema=schema)
    table.validate(full=False)
    return table
