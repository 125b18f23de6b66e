"""Merging a live warehouse's small parts (#30): size-tiered merges keep each partition's
parts few (`plan`), a pass holds every row and statistic as it was and is one batch
(`merge_parts`), a pass that dies is undone, and the column-chunk copy it rests on
(`concat_parquet`) refuses what it cannot join."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine._core import concat_parquet
from engine.simulate import SimulatedGame
from ingest.merge import MERGED_TABLES, merge_parts, plan, tier
from ingest.pipeline import ingest
from ingest.queries import open_warehouse
from ingest.schema import SUMMARY_TABLES, TABLES
from ingest.store import PartFile, Warehouse, _ColumnStats, merged_stats, read_part
from tests.ingest.conftest import (
    batches,
    contents,
    game_lines,
    two_batches_of,
    unreferenced_parts,
    write_lines,
)

PARTITIONS = ((("ruleset", "bazito"),), (("ruleset", "persian"),))


def _small_batches(games: dict[str, list[SimulatedGame]], root: Path, tmp: Path,
                   count: int = 10) -> None:
    """`count` batches of two or three games each, the way group commits leave a table:
    a few small parts a partition a batch."""
    bazito, persian = games["bazito"], games["persian"]
    for index in range(count):
        lines = [*game_lines(bazito[2 * index:2 * index + 2]),
                 *(persian[index].lines if index < len(persian) else [])]
        ingest([str(write_lines(tmp / f"g{index}.jsonl", lines))], str(root), workers=1)


def _parts_by_partition(store: Warehouse, name: str) -> Counter[tuple[tuple[str, str], ...]]:
    return Counter(p.partition for p in store.committed_files(name, store.snapshot().versions[name]))


# ------------------------------------------------------------------------------ plan


def test_tiers_are_powers_of_the_fanout_above_the_base() -> None:
    assert [tier(s, base=100, fanout=4) for s in (0, 99, 100, 399, 400, 1599, 1600)] == \
        [0, 0, 1, 1, 2, 2, 3]


@settings(max_examples=60, deadline=None)
@given(rounds=st.lists(st.lists(st.tuples(st.integers(0, 1), st.integers(1, 5_000)),
                                min_size=1, max_size=6), min_size=1, max_size=40),
       fanout=st.integers(2, 6), most=st.integers(2, 9))
def test_merging_what_plan_says_keeps_every_tier_below_the_fanout(
        rounds: list[list[tuple[int, int]]], fanout: int, most: int) -> None:
    """Parts arriving in rounds (a round: a group's parts), a pass after each round until
    nothing is due: every run is one partition's, of two parts or more, within the limit,
    no part in two runs; sizes (rows) are conserved; after the passes no partition holds
    `fanout` parts of one tier below the limit (unless no two of them fit in one)."""
    base, limit = 1_000, 40_000
    parts: list[PartFile] = []
    made = 0
    total = 0
    for round_ in rounds:
        for partition, size in round_:
            made += 1
            total += size
            parts.append(PartFile(f"p{made:06d}", size, PARTITIONS[partition], size, ""))
        while due := plan(parts, fanout=fanout, base=base, limit=limit, most=most):
            seen: set[str] = set()
            for run in due:
                assert 2 <= len(run) <= most and sum(p.size for p in run) <= limit
                assert len({p.partition for p in run}) == 1
                assert not seen & {p.path for p in run}
                seen |= {p.path for p in run}
                made += 1
                parts.append(PartFile(f"p{made:06d}", sum(p.size for p in run), run[0].partition,
                                      sum(p.rows for p in run), ""))
            parts = [p for p in parts if p.path not in seen]
        tiers: dict[tuple[Any, int], list[int]] = {}
        for p in parts:
            if p.size < limit:
                tiers.setdefault((p.partition, tier(p.size, base=base, fanout=fanout)), []).append(p.size)
        for sizes in tiers.values():  # fewer than `fanout`, or no two fit in one part
            assert len(sizes) < fanout or sum(sorted(sizes)[:2]) > limit, tiers
        assert sum(p.rows for p in parts) == total


def test_plan_leaves_parts_at_the_limit_and_takes_the_oldest_first() -> None:
    parts = [PartFile(f"part-b{n:06d}", 10, PARTITIONS[0], 1, "") for n in (5, 3, 9, 1)]
    parts.append(PartFile("part-b000002", 100, PARTITIONS[0], 1, ""))  # at the limit
    assert plan(parts, fanout=4, base=50, limit=100) == \
        [sorted(parts[:4], key=lambda p: p.path)]
    assert plan(parts[:3], fanout=4, base=50, limit=100) == []  # three of four: not due
    assert plan(parts[:4], fanout=4, base=50, limit=100, most=3) == \
        [sorted(parts[:4], key=lambda p: p.path)[:3]]  # the fourth alone: no run
    with pytest.raises(ValueError, match="fanout"):
        plan(parts, fanout=1)


# ------------------------------------------------------------------------ merge_parts


def test_a_merge_pass_keeps_every_row_and_statistic_and_bounds_the_parts(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    root = tmp_path / "wh"
    _small_batches(games, root, tmp_path)
    store = Warehouse(root)
    before = contents(root)
    earlier = store.snapshot()
    assert max(_parts_by_partition(store, "events").values()) >= 4

    summary = merge_parts(str(root), fanout=4)
    assert summary.batch == 11 and summary.removed["events"] >= 4 and not summary.skipped
    assert contents(root) == before
    assert max(_parts_by_partition(store, "events").values()) < 4
    assert batches(root)[-1]["kind"] == "compact"
    # a reader of the snapshot before the pass still finds its files
    assert store.dataset("events", earlier.versions["events"]).to_table().num_rows == \
        len(before["events"])

    # each merged part's statistics are those its rows have
    for name in ("games", "events", "hand_players"):
        merged = [(p, a) for p, a in store.committed_actions(name, store.snapshot().versions[name])
                  if f"part-b{summary.batch:06d}-" in p.path]
        assert merged
        for part, action in merged:
            data = read_part(store, name, part)
            expected = _ColumnStats(TABLES[name].file_schema)
            expected.update(data)
            stored = json.loads(merged_stats(name, [action]))  # as the add action has them
            assert stored == json.loads(expected.to_json(data.num_rows))
            assert pq.ParquetFile(store.part_fs_path(name, part)).metadata.num_rows == part.rows

    # the pass's Delta commit moves rows, it changes none (a change feed skips it)
    version = store.snapshot().versions["events"]
    log = (root / "events" / "_delta_log" / f"{version:020d}.json").read_text().splitlines()
    moves = [a.get("add") or a.get("remove") for a in map(json.loads, log) if "add" in a or "remove" in a]
    assert moves and not any(m["dataChange"] for m in moves)

    again = merge_parts(str(root), fanout=4)
    assert again.batch is None and batches(root)[-1]["id"] == summary.batch
    assert unreferenced_parts(root) == []


def test_a_game_completed_after_its_parts_were_merged_is_stored_once(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    """The first lines of a game, merged with other groups' parts, then its rest: the
    game's old rows are found in the merged part and replaced, as a clean ingest has it."""
    first, second = two_batches_of(games, tmp_path)
    reference = tmp_path / "reference"
    for path in (first, second):
        ingest([str(path)], str(reference), workers=1)
    root = tmp_path / "wh"
    lines = first.read_bytes().splitlines()
    for index in range(4):  # the first batch as four groups, the cut game in the last
        chunk = lines[index * len(lines) // 4:(index + 1) * len(lines) // 4]
        ingest([str(write_lines(tmp_path / f"a{index}.jsonl", chunk))], str(root), workers=1)
    assert merge_parts(str(root), fanout=2).batch is not None
    ingest([str(second)], str(root), workers=1)
    facts = ("SELECT game_id, status, lines, hands, violations, content_hash FROM games",
             "SELECT game_id, count(*) FROM events GROUP BY game_id")
    for query in facts:
        with open_warehouse(str(root)) as merged, open_warehouse(str(reference)) as clean:
            assert sorted(merged.sql(query).fetchall()) == sorted(clean.sql(query).fetchall())
    with open_warehouse(str(root)) as reader:
        assert reader.sql("SELECT count(*) - count(DISTINCT game_id) FROM games").fetchall() == [(0,)]


def test_a_merge_that_dies_before_its_row_is_undone(
        games: dict[str, list[SimulatedGame]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "wh"
    _small_batches(games, root, tmp_path, count=4)
    before = contents(root)

    def dies(*args: Any, **kwargs: Any) -> int:
        raise OSError("the store went away")

    with monkeypatch.context() as patch:
        patch.setattr(Warehouse, "commit_batch", dies)
        with pytest.raises(OSError, match="went away"):
            merge_parts(str(root), fanout=2)
    store = Warehouse(root)
    recorded = store.snapshot(heal=False).versions
    assert any(not store._tail(n, recorded[n])[0] for n in MERGED_TABLES)  # tables it moved
    assert contents(root) == before  # a reader sees the snapshot (and puts the tables back)
    ingest([str(write_lines(tmp_path / "next.jsonl", games["bazito"][20].lines))],
           str(root), workers=1)
    assert unreferenced_parts(root) == []  # the next writer removed the parts it made
    assert len(contents(root)["games"]) == len(before["games"]) + 1


def test_parts_of_two_schemas_are_joined_schema_by_schema(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    """A warehouse written before some columns were declared and after (a `hands` part
    without `dealer_seat`, as an older build wrote it): a run holding both is joined one
    schema at a time, the older part left as it is, and the rows read the same."""
    root = tmp_path / "wh"
    _small_batches(games, root, tmp_path, count=5)
    store = Warehouse(root)
    busiest = _parts_by_partition(store, "hands").most_common(1)[0][0]
    parts = sorted((p for p in store.committed_files("hands", store.snapshot().versions["hands"])
                    if p.partition == busiest), key=lambda p: p.path)
    assert len(parts) >= 3
    older = parts[0]
    path = store.part_fs_path("hands", older)
    pq.write_table(pq.read_table(path, partitioning=None).drop_columns(["dealer_seat"]), path)
    before = contents(root)

    summary = merge_parts(str(root), fanout=2)
    assert not summary.skipped and summary.removed["hands"] >= len(parts) - 1
    left = [p for p in store.committed_files("hands", store.snapshot().versions["hands"])
            if p.partition == busiest]
    assert older.path in {p.path for p in left} and len(left) == 2
    assert contents(root) == before


def test_runs_that_cannot_be_joined_are_skipped_and_said(
        games: dict[str, list[SimulatedGame]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "wh"
    _small_batches(games, root, tmp_path, count=2)
    before = contents(root)

    def refuses(inputs: list[str], output: str) -> int:
        raise ValueError(f"{inputs[1]}: not a Parquet file (cut short)")

    monkeypatch.setattr("engine._core.concat_parquet", refuses)
    summary = merge_parts(str(root), fanout=2)
    assert summary.batch is None and summary.skipped and "not a Parquet file" in summary.skipped[0]
    assert contents(root) == before and batches(root)[-1]["id"] == 2
    assert unreferenced_parts(root) == []


@pytest.mark.slow
def test_a_merge_pass_on_s3(games: dict[str, list[SimulatedGame]], tmp_path: Path, moto: Any) -> None:
    uri = f"s3://{moto.bucket()}/wh"
    for index in range(3):
        ingest([str(write_lines(tmp_path / f"s{index}.jsonl", game_lines(games["bazito"][index::3])))],
               uri, workers=1, storage_options=moto.options)
    before = contents(uri, storage_options=moto.options)
    summary = merge_parts(uri, moto.options, fanout=3)
    assert summary.batch == 4 and summary.removed["events"] >= 3
    assert contents(uri, storage_options=moto.options) == before
    assert max(_parts_by_partition(Warehouse(uri, moto.options), "events").values()) < 3


# ----------------------------------------------------------------------- concat_parquet


def test_concat_copies_row_groups_and_refuses_what_it_cannot_join(tmp_path: Path) -> None:
    one = pa.table({"a": [1, 2], "b": ["x", None]})
    two = pa.table({"a": [3], "b": ["z"]})
    pq.write_table(one, tmp_path / "one.parquet", compression="zstd")
    pq.write_table(two, tmp_path / "two.parquet", compression="zstd")
    pq.write_table(pa.table({"a": ["text"]}), tmp_path / "other.parquet")
    (tmp_path / "text.parquet").write_text("not parquet")
    out = tmp_path / "out.parquet"

    size = concat_parquet([str(tmp_path / "one.parquet"), str(tmp_path / "two.parquet")], str(out))
    assert size == out.stat().st_size
    assert pq.read_table(out).equals(pa.concat_tables([one, two]))
    assert pq.ParquetFile(out).metadata.num_row_groups == 2
    for bad, error, match in (
            ("other.parquet", ValueError, "schema"), ("text.parquet", ValueError, "not a Parquet file"),
            ("missing.parquet", FileNotFoundError, "missing.parquet")):
        with pytest.raises(error, match=match):
            concat_parquet([str(tmp_path / "one.parquet"), str(tmp_path / bad)], str(out))
    with pytest.raises(ValueError, match="no input"):
        concat_parquet([], str(out))


def test_the_merged_tables_are_the_snapshot_s_but_summaries_and_batches() -> None:
    assert "events" in MERGED_TABLES and "quarantine" in MERGED_TABLES
    assert not {"batches", *SUMMARY_TABLES} & set(MERGED_TABLES)
