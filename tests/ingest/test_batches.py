"""How a worker's rows are gathered before they are written: the engine hands over one
partition at a time, the largest, once `flush_rows` rows are held; the writers keep the
batches of the narrow tables, gathered, and write the wide one as it comes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from engine import _core
from engine.simulate import SimConfig, simulate
from ingest.columns import to_table
from ingest.schema import TABLES
from ingest.store import COMBINE_BATCHES, PartWriter, Warehouse, read_part

#: the rows the engine counts toward `flush_rows` (`Partition::add`: not `violations`)
COUNTED = ("games", "hands", "hand_players", "events", "decisions")


def _lines() -> list[tuple[bytes, str, int]]:
    lines: list[tuple[bytes, str, int]] = []
    for seed, ruleset in enumerate(("bazito", "persian", "pis-yedili")):
        for game in simulate(SimConfig(ruleset, games=6, seed=40 + seed)):
            lines.extend((line, "log.jsonl", len(lines) + 1) for line in game.lines)
    return lines


def _hand_overs(flush_rows: int) -> tuple[list[tuple[tuple[str, str], list[str], int]], int]:
    """What an Ingestor hands over for the corpus: (partition, its games, the rows counted
    toward `flush_rows`) per batch, and how many batches came before `finish`."""
    handed: list[tuple[tuple[str, str], list[str], int]] = []

    def sink(ruleset: str, month: str, tables: dict[str, Any]) -> None:
        ids = to_table("games", tables["games"])["game_id"].to_pylist()
        rows = sum(len(to_table(name, tables[name])) for name in COUNTED)
        handed.append(((ruleset, month), ids, rows))

    # hold_lines=0: a game is judged as soon as it is over, in input order
    ingestor = _core.Ingestor(batch=1, hold_lines=0, idle_lines=10**9, flush_rows=flush_rows)
    ingestor.feed_lines(_lines(), sink)
    before_finish = len(handed)
    ingestor.finish(sink)
    return handed, before_finish


def test_the_largest_partition_is_handed_over_once_flush_rows_are_held() -> None:
    # flush_rows=1: every game is handed over alone, as it is judged: its own rows
    alone, _ = _hand_overs(1)
    order = [ids[0] for _, ids, _ in alone]
    assert all(len(ids) == 1 for _, ids, _ in alone) and len(set(order)) == 18
    rows_of = {ids[0]: rows for _, ids, rows in alone}
    partition_of = {ids[0]: partition for partition, ids, _ in alone}
    assert len(set(partition_of.values())) >= 3

    flush_rows = 400
    handed, before_finish = _hand_overs(flush_rows)
    assert before_finish >= 3, "the corpus must cross flush_rows several times"
    # the rule, replayed: rows pile up per partition; whenever flush_rows or more are
    # held, the partition holding the most (the first of equals) goes, all its games
    held: Counter[tuple[str, str]] = Counter()
    waiting: dict[tuple[str, str], list[str]] = {}
    expected: list[tuple[tuple[str, str], list[str]]] = []
    for gid in order:
        partition = partition_of[gid]
        held[partition] += rows_of[gid]
        waiting.setdefault(partition, []).append(gid)
        while sum(held.values()) >= flush_rows:
            largest = max(sorted(held), key=lambda p: held[p])
            expected.append((largest, waiting.pop(largest)))
            del held[largest]
    assert [(partition, ids) for partition, ids, _ in handed[:before_finish]] == expected
    # then `finish` hands over the rest, each game once
    games = [g for _, ids, _ in handed for g in ids]
    assert sorted(games) == sorted(order)
    # a batch never holds more than flush_rows and the game that crossed it
    assert all(rows < flush_rows + max(rows_of.values()) for _, _, rows in handed)


def test_a_writer_gathers_many_small_batches_into_one(tmp_path: Path) -> None:
    warehouse = Warehouse(str(tmp_path / "w"))
    writer = PartWriter(warehouse, "violations", "t")
    schema = TABLES["violations"].file_schema
    one = pa.Table.from_pylist([{"game_id": "g1", "code": "must_play", "foul": True,
                                 "message": "m", "ingest_batch": 1}], schema=schema)
    partition = ("bazito", "2026-01")
    for _ in range(3 * COMBINE_BATCHES + 5):
        writer.add_table(partition, one)
        # rare rows never pile up as thousands of separate batches
        assert len(writer.tables[partition]) < COMBINE_BATCHES
    parts = writer.close()
    assert sum(p.rows for p in parts) == 3 * COMBINE_BATCHES + 5
    assert sum(read_part(warehouse, "violations", p).num_rows for p in parts) == \
        3 * COMBINE_BATCHES + 5
