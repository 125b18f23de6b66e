"""The SQL sandbox: what a DuckDB connection over the warehouse may do, decided in one place.

Both readers the project ships build their connection here — `ingest.queries.open_warehouse`
(the CLI's `query` and `stats`) and `ingest.read.connect` (the dashboard and the API) — and every
statement that did not come from this code base goes through `run()`:

- **No file access.** The connection is opened with no temp directory (DuckDB allows file
  access to its temp directory even with external access disabled, so `<cwd>/.tmp` would
  become readable and writable), no spilling, no extension auto-loading and no Python
  replacement scans; then the paths that could show up in `duckdb_settings()` are cleared,
  external access is disabled and the configuration locked. The only files a connection may
  ever open are the ones `lock(readable=…)` names (the snapshot's part files,
  `ingest.queries.attach_snapshot`).
- **One SELECT.** `check()` parses the text with DuckDB's own parser
  (`duckdb.extract_statements`) and allows exactly one statement, a `SELECT` (which
  includes `FROM …`, `VALUES`, `DESCRIBE`, `SUMMARIZE`, `SHOW`) or an `EXPLAIN [ANALYZE]` of
  one. `COPY`, `ATTACH`, `EXPORT`, `CREATE`, `DROP`, `SET`, `PRAGMA`, `CALL`, … are
  refused before DuckDB runs anything.
- **Limits.** A statement time limit (a timer interrupts the connection), DuckDB's
  `memory_limit`, and a cap on the rows and bytes returned; results are streamed in Arrow
  record batches, never turned into one big Python list.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import duckdb
import pyarrow as pa


@dataclass(frozen=True, slots=True)
class Limits:
    """What one statement may use."""

    seconds: float = 30.0  # wall-clock, from parsing to the last batch fetched
    memory: str = "2GB"  # DuckDB's memory_limit (no temp directory: nothing spills)
    rows: int | None = 10_000  # rows returned at most (None: no cap)
    result_bytes: int | None = 64 * 1024 * 1024  # Arrow bytes returned at most (None: no cap)
    batch_rows: int = 2_048  # rows per record batch fetched
    threads: int | None = None  # DuckDB worker threads (None: every core)


#: `haftkhabis query` (each can be changed on the command line)
QUERY_LIMITS = Limits()
#: the dashboard's own queries: no row cap (its SQL carries its LIMITs), a longer time
#: limit for the biggest aggregates of a million-hand warehouse
DASHBOARD_LIMITS = Limits(seconds=120.0, memory="4GB", rows=None, result_bytes=None)


class SandboxError(Exception):
    """A statement the sandbox refused or stopped."""


class StatementRefused(SandboxError):
    """Not exactly one SELECT (or EXPLAIN of one)."""


class TimeLimitExceeded(SandboxError):
    """The statement ran past its time limit and was interrupted."""


class ResultTooLarge(SandboxError):
    """The result holds more bytes than the limit allows."""


# ---------------------------------------------------------------------------- the connection


def connect(limits: Limits) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB set up for the sandbox; create the views, then `lock()` it."""
    config: dict[str, Any] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        # no temp directory: DuckDB would add it to the directories it allows
        "temp_directory": "",
        "max_temp_directory_size": "0B",
        "memory_limit": limits.memory,
        # `SELECT * FROM name` must not reach Python objects of the calling frames
        "python_enable_replacements": False,
    }
    if limits.threads is not None:
        config["threads"] = limits.threads
    return duckdb.connect(":memory:", config=config)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def lock(con: duckdb.DuckDBPyConnection, *, readable: Sequence[str] = ()) -> None:
    """Take file access away and lock the configuration. `readable`: the only files the
    connection may still open (absolute paths; its views read them)."""
    # settings that would show absolute paths in duckdb_settings() and serve no purpose here
    con.execute("SET secret_directory = ''")
    con.execute("SET extension_directory = ''")
    con.execute("SET home_directory = ''")
    if readable:
        con.execute(f"SET allowed_paths = [{', '.join(_literal(p) for p in readable)}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


# ---------------------------------------------------------------------------- the statement

# what precedes the explained statement: comments, EXPLAIN, ANALYZE, an option list
_EXPLAIN_PREFIX = re.compile(
    r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*EXPLAIN\s+(?:ANALY[SZ]E\s+)?"
    r"(?:\((?:[^()'\"]|'[^']*')*\)\s*)?",
    re.IGNORECASE | re.DOTALL,
)


def check(sql: str) -> str:
    """The one statement `sql` holds, when it is a SELECT or an EXPLAIN of one; else
    `StatementRefused` saying what was found. DuckDB's parser decides (a syntax error is
    its `ParserException`)."""
    statements = duckdb.extract_statements(sql)
    if not statements:
        raise StatementRefused("no SQL statement given (the query is empty)")
    if len(statements) > 1:
        raise StatementRefused(
            f"one statement at a time: the query holds {len(statements)} statements")
    statement = statements[0]
    if statement.type == duckdb.StatementType.EXPLAIN:
        prefix = _EXPLAIN_PREFIX.match(statement.query)
        inner = duckdb.extract_statements(statement.query[prefix.end():]) if prefix else []
        if len(inner) != 1 or inner[0].type != duckdb.StatementType.SELECT:
            raise StatementRefused("EXPLAIN is allowed only of a SELECT")
    elif statement.type != duckdb.StatementType.SELECT:
        raise StatementRefused(
            f"only a read-only SELECT (or EXPLAIN SELECT) is allowed, not "
            f"{statement.type.name.replace('_', ' ')}")
    return statement.query


class _Deadline:
    """A timer that interrupts `con` once `seconds` have passed, unless stopped first."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seconds: float) -> None:
        self.seconds = seconds
        self.fired = False
        self._con = con
        self._guard = threading.Lock()
        self._running = True
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._guard:  # never interrupt after stop(): the connection may run another
            if self._running:
                self.fired = True
                self._con.interrupt()

    def stop(self) -> None:
        with self._guard:
            self._running = False
        self._timer.cancel()

    def explain(self, exc: BaseException) -> BaseException:
        """What to raise for `exc`, a failure of the statement under this deadline."""
        if self.fired and isinstance(exc, duckdb.Error | pa.ArrowException | OSError):
            return TimeLimitExceeded(
                f"the statement was interrupted at its time limit ({self.seconds:g} s)")
        return exc


@contextmanager
def time_limit(con: duckdb.DuckDBPyConnection, seconds: float) -> Iterator[None]:
    """Run the block's statement on `con` under a time limit (`TimeLimitExceeded`)."""
    deadline = _Deadline(con, seconds)
    try:
        yield
    except BaseException as exc:
        error = deadline.explain(exc)
        if error is exc:
            raise
        raise error from None
    finally:
        deadline.stop()


class Result:
    """A running statement's result, read as Arrow record batches within the limits.
    Use it as a context manager: leaving it stops the statement and its timer."""

    def __init__(self, con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None,
                 limits: Limits) -> None:
        self.limits = limits
        self.truncated = False  # set once a row past `limits.rows` was seen
        self.rows = 0
        self._deadline = _Deadline(con, limits.seconds)
        try:
            self._reader = con.sql(sql, params=params).to_arrow_reader(limits.batch_rows)
        except BaseException as exc:
            self._deadline.stop()
            error = self._deadline.explain(exc)
            if error is exc:
                raise
            raise error from None

    @property
    def schema(self) -> pa.Schema:
        return self._reader.schema

    @property
    def column_names(self) -> list[str]:
        return list(self._reader.schema.names)

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The result's batches, up to the row limit; `ResultTooLarge` past the byte limit."""
        limits, size = self.limits, 0
        while not self.truncated:
            try:
                batch = self._reader.read_next_batch()
            except StopIteration:
                return
            except BaseException as exc:
                self._deadline.stop()
                error = self._deadline.explain(exc)
                if error is exc:
                    raise
                raise error from None
            if limits.rows is not None and self.rows + batch.num_rows > limits.rows:
                batch = batch.slice(0, limits.rows - self.rows)
                self.truncated = True
            size += batch.nbytes
            if limits.result_bytes is not None and size > limits.result_bytes:
                raise ResultTooLarge(
                    f"the result holds more than {limits.result_bytes / 1_048_576:g} MiB "
                    f"(after {self.rows:,} rows): select fewer columns or rows")
            self.rows += batch.num_rows
            if batch.num_rows:
                yield batch

    def table(self) -> pa.Table:
        """The whole (limited) result as one table."""
        return pa.Table.from_batches(list(self.batches()), schema=self.schema)

    def close(self) -> None:
        self._reader.close()
        self._deadline.stop()

    def __enter__(self) -> Result:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def run(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None,
        limits: Limits = QUERY_LIMITS) -> Result:
    """Start untrusted `sql` on `con`: checked (`check`), then streamed under `limits`."""
    return Result(con, check(sql), params, limits)
