"""A part's row groups read through its footer's map (service.footers: a short footer
describing only them) are exactly the row groups read with the whole footer; a map that
does not fit its part is refused, and the game index then reads with the whole footer."""

from __future__ import annotations

from array import array
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from service.footers import FooterMap, FooterUnreadable, footer_bytes, map_footer
from service.warehouse import _read_groups

ROWS = 400
GROUP = 17  # rows a row group: 24 row groups, so short footers of more than 14 row groups too


def _part(path: Path) -> Path:
    """A Parquet part with the kinds of columns the warehouse writes (strings, ints, bools,
    timestamps, lists, nulls), statistics and dictionaries included."""
    table = pa.table({
        "game_id": [f"g-{i // 7:03d}" for i in range(ROWS)],
        "ordinal": pa.array(range(ROWS), pa.int32()),
        "ts": pa.array([datetime(2026, 1, 1, tzinfo=UTC)] * ROWS, pa.timestamp("us", tz="UTC")),
        "cards": [[f"{i % 13}H", "QS"] if i % 3 else None for i in range(ROWS)],
        "set_aside": [i % 5 == 0 for i in range(ROWS)],
        "raw": [f'{{"seq":{i},"type":"play","card":"{i % 9}D"}}' for i in range(ROWS)],
        "file": ["logs/a.jsonl"] * ROWS,
        "line": pa.array([i if i % 11 else None for i in range(ROWS)], pa.int64()),
    })
    pq.write_table(table, path, row_group_size=GROUP, compression="zstd")
    return path


def test_row_groups_read_through_the_map_are_the_whole_footers(tmp_path: Path) -> None:
    path = _part(tmp_path / "part.parquet")
    with pa.OSFile(str(path)) as handle:
        whole = pq.ParquetFile(handle)
        groups = whole.metadata.num_row_groups
        assert groups > 15
        mapped = map_footer(*footer_bytes(handle), whole.metadata)
        assert mapped.row_groups == groups
        for first in range(groups):
            for last in {first, min(groups - 1, first + 1), min(groups - 1, first + 15), groups - 1}:
                short = mapped.metadata(handle, first, last)
                assert short.num_row_groups == last - first + 1
                got = pq.ParquetFile(handle, metadata=short).read_row_groups(range(last - first + 1))
                assert got.equals(whole.read_row_groups(range(first, last + 1))), (first, last)
                for n in range(last - first + 1):
                    assert short.row_group(n).to_dict() == whole.metadata.row_group(first + n).to_dict()


def test_a_map_that_does_not_fit_its_part_is_refused(tmp_path: Path) -> None:
    path = _part(tmp_path / "part.parquet")
    other = _part(tmp_path / "other.parquet")
    with pa.OSFile(str(path)) as handle:
        mapped = map_footer(*footer_bytes(handle), pq.ParquetFile(handle).metadata)
    shifted = FooterMap(mapped.fields, array("q", (b + 3 for b in mapped.bounds)), mapped.rows)
    with pa.OSFile(str(path)) as handle, pytest.raises(FooterUnreadable):
        shifted.metadata(handle, 2, 4)
    with pa.OSFile(str(other)) as handle:
        # another part's map: refused, or (the same layout) the same rows; never wrong ones
        try:
            short = mapped.metadata(handle, 0, 1)
        except FooterUnreadable:
            pass
        else:
            got = pq.ParquetFile(handle, metadata=short).read_row_groups([0, 1])
            assert got.equals(pq.ParquetFile(handle).read_row_groups([0, 1]))
    with pytest.raises(FooterUnreadable):
        map_footer(b"\x15\x02garbage", 4, pq.read_metadata(path))


def test_the_index_reads_with_the_whole_footer_when_the_map_fails(tmp_path: Path) -> None:
    path = _part(tmp_path / "part.parquet")
    columns = ["game_id", "ordinal", "raw", "file", "line"]
    with pa.OSFile(str(path)) as handle:
        mapped = map_footer(*footer_bytes(handle), pq.ParquetFile(handle).metadata)
        expected = pq.ParquetFile(handle).read_row_groups([3, 4, 5], columns=columns)
        broken = FooterMap(mapped.fields, array("q", (b - 1 for b in mapped.bounds)), mapped.rows)
        for footer in (mapped, broken, None):
            got = _read_groups(handle, footer, range(3, 6)).select(columns)
            assert got.equals(expected)
