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
- **Limits that bind whatever the statement does** (`run_isolated`, what `haftkhabis query`
  uses): DuckDB's own `memory_limit` does not hold a statement that builds one huge value
  (`unnest(range(300000000))`, `repeat('x', 2000000000)`), and an interrupt is seen only
  between its steps. So untrusted SQL runs in a process of its own: its address space is
  capped (`RLIMIT_AS`: what it has mapped once the warehouse is open, plus the memory limit
  less what it already holds), past which an allocation fails and the statement stops with "memory limit";
  and the parent kills it at the time limit, whatever it is doing. Results come back as
  Arrow IPC through a pipe, within the row and byte caps.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
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
    # settings that would show absolute paths in duckdb_settings() and serve no purpose
    # here; one script, as `queries.attach_snapshot` makes its views (the GIL taken back once)
    statements = ["SET secret_directory = ''", "SET extension_directory = ''", "SET home_directory = ''"]
    if readable:
        statements.append(f"SET allowed_paths = [{', '.join(_literal(p) for p in readable)}]")
    statements += ["SET enable_external_access = false", "SET lock_configuration = true"]
    con.execute(";\n".join(statements))


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


# ---------------------------------------------------------------------------- isolated

#: seconds a query process may take to start and open the warehouse (a guard: its time
#: limit counts from the statement's start)
STARTUP_SECONDS = 120.0
#: address space granted at least, beyond what the child has mapped once the warehouse is
#: open (DuckDB's threads, a batch's Arrow buffers, an error's Python objects)
ADDRESS_MARGIN = 256 * 1024 * 1024


class MemoryLimitExceeded(SandboxError):
    """The statement needed more memory than its limit allows."""


def parse_memory(text: str) -> int:
    """Bytes of a DuckDB memory setting (`2GB`, `512MB`, `1.5GiB`)."""
    found = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?i?B)\s*", text, re.IGNORECASE)
    if not found:
        raise ValueError(f"a memory limit is a number and a unit, like 2GB or 512MB; not {text!r}")
    unit = found.group(2).upper()
    base = 1024 if "I" in unit else 1000
    power = " KMGT".index(unit[0]) if unit[0] in "KMGT" else 0
    return int(float(found.group(1)) * base**power)


class IsolatedResult:
    """A statement running in a child process (`run_isolated`): its batches as they come,
    within the limits; leaving the context ends the child."""

    def __init__(self, process: Any, pipe: Any, limits: Limits) -> None:
        self.limits = limits
        self.truncated = False
        self.rows = 0
        self._process = process
        self._pipe = pipe
        self._deadline = time.monotonic() + STARTUP_SECONDS
        kind, _ = self._receive()  # the warehouse is open: the statement's time starts now
        if kind != "started":
            raise RuntimeError(f"the query process answered {kind!r} before it started")
        self._deadline = time.monotonic() + limits.seconds
        kind, payload = self._receive()
        if kind != "schema":
            raise RuntimeError(f"the query process answered {kind!r} before its schema")
        self.schema: pa.Schema = pa.ipc.read_schema(pa.py_buffer(payload))

    @property
    def column_names(self) -> list[str]:
        return list(self.schema.names)

    def _receive(self) -> tuple[str, Any]:
        left = self._deadline - time.monotonic()
        if left <= 0 or not self._pipe.poll(left):
            self._stop()
            raise TimeLimitExceeded(
                f"the statement was stopped at its time limit ({self.limits.seconds:g} s)")
        try:
            kind, payload = self._pipe.recv()
        except EOFError:
            code = self._process.exitcode if self._process.join(5) is None else None
            raise MemoryLimitExceeded(
                f"the query's process ended (exit code {code}) without an answer: most likely "
                f"its memory limit ({self.limits.memory}) was reached") from None
        if kind == "error":
            error, message = payload
            self._stop()
            raise {"memory": MemoryLimitExceeded, "time": TimeLimitExceeded,
                   "refused": StatementRefused}.get(error, SandboxError)(message)
        return kind, payload

    def batches(self) -> Iterator[pa.RecordBatch]:
        limits, size = self.limits, 0
        while not self.truncated:
            kind, payload = self._receive()
            if kind == "end":
                return
            batch = pa.ipc.read_record_batch(pa.py_buffer(payload), self.schema)
            if limits.rows is not None and self.rows + batch.num_rows > limits.rows:
                batch = batch.slice(0, limits.rows - self.rows)
                self.truncated = True
            size += batch.nbytes
            if limits.result_bytes is not None and size > limits.result_bytes:
                self._stop()
                raise ResultTooLarge(
                    f"the result holds more than {limits.result_bytes / 1_048_576:g} MiB "
                    f"(after {self.rows:,} rows): select fewer columns or rows")
            self.rows += batch.num_rows
            if batch.num_rows:
                yield batch
        self._stop()

    def _stop(self) -> None:
        if self._process.is_alive():
            self._process.kill()
        self._process.join()

    def close(self) -> None:
        self._stop()
        self._pipe.close()

    def __enter__(self) -> IsolatedResult:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def run_isolated(warehouse: str, sql: str, limits: Limits = QUERY_LIMITS,
                 storage_options: dict[str, str] | None = None) -> IsolatedResult:
    """Run untrusted `sql` over the warehouse's committed snapshot in a process of its own,
    under limits that bind (see the module's doc): checked here first (`check`)."""
    import multiprocessing

    check(sql)
    context = multiprocessing.get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=_isolated_child, name="haftkhabis-query",
                              args=(warehouse, storage_options, sql, limits, sending), daemon=True)
    process.start()
    sending.close()
    return IsolatedResult(process, receiving, limits)


def _address_space() -> tuple[int, int]:
    """(bytes mapped, bytes resident) of this process."""
    found = {"VmSize:": 0, "VmRSS:": 0}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key = line.split(maxsplit=1)[0]
            if key in found:
                found[key] = int(line.split()[1]) * 1024
    return found["VmSize:"], found["VmRSS:"]


def _isolated_child(warehouse: str, storage_options: dict[str, str] | None, sql: str,
                    limits: Limits, pipe: Any) -> None:
    """The query process: open the warehouse, cap the address space, stream the result."""
    import resource

    from ingest.lifetime import die_with_parent

    die_with_parent()
    try:
        from ingest.queries import open_warehouse

        reader = open_warehouse(warehouse, limits=limits, storage_options=storage_options)
        pipe.send(("started", None))
        # what it has mapped, plus the limit less what of that it already uses: its resident
        # memory then stays about within the limit, whatever the statement allocates
        mapped, resident = _address_space()
        cap = mapped + max(parse_memory(limits.memory) - resident, ADDRESS_MARGIN)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        # its own limits are the parent's backstop: later (the parent stops it in time), and a
        # row over the cap, so the parent sees that the result was cut
        loose = replace(limits, seconds=limits.seconds + 60,
                        rows=None if limits.rows is None else limits.rows + 1)
        with run(reader.con, sql, None, loose) as result:
            pipe.send(("schema", result.schema.serialize().to_pybytes()))
            for batch in result.batches():
                pipe.send(("batch", batch.serialize().to_pybytes()))
        pipe.send(("end", None))
    except (MemoryError, duckdb.OutOfMemoryException) as exc:
        _tell(pipe, "memory", f"the statement stopped at its memory limit ({limits.memory}): "
              f"{_first_line(exc)}")
    except StatementRefused as exc:
        _tell(pipe, "refused", str(exc))
    except Exception as exc:  # the warehouse missing, a storage error, DuckDB's: its words
        _tell(pipe, "error", _first_line(exc))


def _tell(pipe: Any, kind: str, message: str) -> None:
    # the parent gone, or no memory left to say it: the parent sees the pipe end instead
    with suppress(OSError, MemoryError):
        pipe.send(("error", (kind, message)))


def _first_line(exc: BaseException) -> str:
    return str(exc).split("\n", 1)[0][:500]
