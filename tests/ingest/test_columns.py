"""The engine's column batches reach pyarrow without a copy, as the declared schema."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from engine import _core
from engine.simulate import SimConfig, simulate
from ingest.columns import to_table
from ingest.pipeline import replay_rows
from ingest.schema import TABLES


def _batches(ruleset: str) -> tuple[list[bytes], list[tuple[str, str, dict[str, Any]]]]:
    game = next(iter(simulate(SimConfig(ruleset, games=1, seed=11))))
    handed: list[tuple[str, str, dict[str, Any]]] = []
    replay_rows([(line, "log.jsonl", n) for n, line in enumerate(game.lines, 1)], 1,
                lambda ruleset, month, tables: handed.append((ruleset, month, tables)))
    return game.lines, handed


def _buffers(column: tuple[int, int, list[Any], list[Any]]) -> list[Any]:
    _, _, buffers, children = column
    found = [b for b in buffers if b is not None]
    for child in children:
        found.extend(_buffers(child))
    return found


def test_every_buffer_is_the_cores_memory_lent_read_only() -> None:
    _, handed = _batches("pis-yedili")
    assert handed
    for _, _, tables in handed:
        for columns in tables.values():
            for column in columns.values():
                for buffer in _buffers(column):
                    assert isinstance(buffer, _core.ColumnBuffer)
                    view = memoryview(buffer)
                    assert view.readonly and view.nbytes == len(buffer)
                    # pyarrow wraps the same memory each time: no copy
                    wrapped = pa.py_buffer(buffer)
                    assert wrapped.size == len(buffer)
                    assert wrapped.address == pa.py_buffer(buffer).address
                    if len(buffer):
                        assert wrapped.to_pybytes() == view.tobytes()


def test_the_tables_hold_the_games_lines_and_outlive_the_engine() -> None:
    lines, handed = _batches("bazito")
    tables = {name: pa.concat_tables([to_table(name, t[name]) for _, _, t in handed])
              for name in TABLES if name in handed[0][2]}
    del handed  # the arrays keep the core's buffers alive by themselves
    events = tables["events"]
    assert events.num_rows == len(lines)
    assert [r.encode() for r in events["raw"].to_pylist()] == lines
    assert events["ordinal"].to_pylist() == sorted(events["ordinal"].to_pylist())
    games = tables["games"]
    assert games.num_rows == 1
    assert games["lines"].to_pylist() == [len(lines)]
    hands = tables["hands"]
    assert hands.num_rows == games["hands"][0].as_py()
    for table in tables.values():
        table.validate(full=True)
