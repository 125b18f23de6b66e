"""The engine's column batches as pyarrow tables of the warehouse's declared schemas.

The core builds every game table's columns in Arrow's own layout
(`engine/core/haftkhabis-py/src/columns.rs`) and hands each as
`(length, null_count, [buffers], [children])`; here they become pyarrow arrays of the
types `ingest.schema` declares, without a Python object per value. The schema is declared
there once: a column the core does not give, or gives in another layout, is an error
here, not a silently different table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from ingest.schema import TABLES

#: one column as the core hands it: (length, null_count, buffers, children)
ColumnData = tuple[int, int, Sequence[bytes | None], Sequence[Any]]


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


def to_array(type_: pa.DataType, data: ColumnData) -> pa.Array:
    """One column of the core as a pyarrow array of `type_`."""
    length, nulls, buffers, children = data
    kinds = _children(type_)
    if len(kinds) != len(children):
        raise ColumnMismatch(f"{type_} takes {len(kinds)} child arrays, got {len(children)}")
    kids = [to_array(kind, child) for kind, child in zip(kinds, children, strict=True)]
    if pa.types.is_map(type_):
        # a map is a list of key/value entries, with the map's own field names
        entries = pa.StructArray.from_arrays(
            [kids[0].field(0), kids[0].field(1)],
            fields=[type_.key_field, type_.item_field])
        kids = [entries]
    return pa.Array.from_buffers(
        type_, length, [pa.py_buffer(b) if b is not None else None for b in buffers],
        null_count=nulls, children=kids or None)


def to_table(name: str, columns: Mapping[str, ColumnData]) -> pa.Table:
    """The core's columns of table `name` as a table of its file schema (the columns
    stored in the Parquet files, partition columns left out)."""
    schema = TABLES[name].file_schema
    missing = [f.name for f in schema if f.name not in columns]
    extra = sorted(set(columns) - set(schema.names))
    if missing or extra:
        raise ColumnMismatch(f"table {name}: the engine gave no {missing} and extra {extra}")
    arrays = [to_array(f.type, columns[f.name]) for f in schema]
    table = pa.Table.from_arrays(arrays, schema=schema)
    table.validate(full=False)
    return table
