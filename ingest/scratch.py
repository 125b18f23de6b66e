"""An audit's scratch space: a temporary folder of its own, the reader's rows copied there
as they lie, and a DuckDB of its own that sorts and groups them within a memory limit,
spilling to that folder. The reader's DuckDB may not spill (`ingest.sandbox`: no temp
directory), so a sort or a grouping of every row of the warehouse there would hold them
all; the pair audit (`ingest.pairs`) and the deal audit (`ingest.fairplay`) read the
warehouse through this instead, and hold what does not grow with it."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

#: what an audit's own DuckDB may hold before it spills to the audit's folder
SORT_MEMORY = "256MB"


class Scratch:
    """A temporary folder (`root`, under `folder` when given) that `close()` removes, as a
    context manager (garbage collection removes it too)."""

    def __init__(self, prefix: str, folder: str | None = None) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix=prefix, dir=folder)
        self.root = Path(self._folder.name)

    def close(self) -> None:
        self._folder.cleanup()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def copy_rows(reader: Any, statement: str, params: Sequence[Any], folder: Path, batch_rows: int) -> list[str]:
    """The rows of `statement` on the reader (an `ingest.read.Reader`), as they lie (no
    sort, no join: the reader's memory is a record batch), a batch of `batch_rows` to a
    Parquet file in `folder` (made here); the files, in order."""
    from ingest import sandbox

    checked = sandbox.check(statement)
    folder.mkdir(parents=True)
    files: list[str] = []
    with reader.con.cursor() as cursor, sandbox.time_limit(cursor, reader.limits.seconds):
        for batch in cursor.sql(checked, params=list(params)).to_arrow_reader(batch_rows):
            files.append(str(folder / f"{len(files):06d}.parquet"))
            pq.write_table(pa.Table.from_batches([batch]), files[-1])
    return files


def own_duckdb(folder: Path, memory: str = SORT_MEMORY) -> duckdb.DuckDBPyConnection:
    """A DuckDB of the audit's own, one thread within `memory`, spilling to `folder`, and
    reading and writing nothing outside it."""
    con = duckdb.connect(":memory:", config={
        "memory_limit": memory, "temp_directory": str(folder / "sort-spill"), "threads": 1,
        "autoinstall_known_extensions": False, "autoload_known_extensions": False,
        "python_enable_replacements": False})
    try:
        con.execute("SET enable_progress_bar = false")  # its bar would go to the command's output
        con.execute(f"SET allowed_directories = ['{folder}/']")
        con.execute("SET enable_external_access = false")
    except BaseException:
        con.close()
        raise
    return con


def bound(statement: str, values: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """`statement` with each `$name` a `?`, and the values in the order they stand."""
    params: list[Any] = []

    def bind(name: re.Match[str]) -> str:
        params.append(values[name.group(1)])
        return "?"

    return re.sub(r"\$([a-z]+[0-9]*)\b", bind, statement), params
