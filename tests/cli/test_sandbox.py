"""Issue 14, items 3–5 and 12 (`query ""`): the SQL sandbox of `haftkhabis query` and of the
dashboard's connection — no file access (a `<cwd>/.tmp` present, as in the hostile run), one
SELECT, time, memory, row and byte limits, streamed results, settings without paths."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from cli.app import app
from ingest import read, sandbox
from ingest.queries import WarehouseReader, open_warehouse
from tests.dashboards.conftest import sample_lines


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ingest.pipeline import ingest

    log = tmp_path_factory.mktemp("logs") / "sample.jsonl"
    log.write_text("\n".join(sample_lines()) + "\n", encoding="utf-8")
    root = tmp_path_factory.mktemp("wh") / "warehouse"
    ingest([str(log)], str(root), workers=1)
    return root


@pytest.fixture
def cwd_with_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding `.tmp` (DuckDB's default temp directory) with a file."""
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "y.csv").write_text("a,b\n1,2\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def cli_reader(warehouse: Path, cwd_with_tmp: Path) -> Iterator[WarehouseReader]:
    with open_warehouse(str(warehouse)) as reader:
        yield reader


@pytest.fixture
def dashboard_reader(warehouse: Path, cwd_with_tmp: Path) -> Iterator[read.Reader]:
    reader = read.connect(warehouse)
    yield reader
    reader.close()


#: the hostile run's file accesses (item 3), each relative to the working directory
FILE_ACCESS = (
    "COPY (SELECT 1 AS x) TO '.tmp/x.csv'",
    "SELECT * FROM read_csv('.tmp/y.csv')",
    "ATTACH '.tmp/evil.duckdb' AS evil",
    "EXPORT DATABASE '.tmp/export'",
)

#: item 5: statements that are not one read-only SELECT
NOT_ONE_SELECT = (
    "SELECT 1; SELECT 2",
    "CREATE TABLE forged AS SELECT 1",
    "INSERT INTO games SELECT * FROM games",
    "CREATE MACRO forged() AS 1",
    "ATTACH ':memory:' AS scratch",
    "DROP VIEW leaderboard; CREATE VIEW leaderboard AS SELECT 'forged' AS player",
    "SET enable_external_access = true",
    "PRAGMA version",
    "CALL pragma_version()",
    "EXPLAIN ANALYZE CREATE TABLE forged AS SELECT 1",
    "EXPLAIN COPY (SELECT 1) TO '.tmp/x.csv'",
    *(s for s in FILE_ACCESS if not s.startswith("SELECT")),  # read_csv: DuckDB refuses it
)


def _tmp_untouched(cwd: Path) -> None:
    assert sorted(p.name for p in (cwd / ".tmp").iterdir()) == ["y.csv"]


@pytest.mark.parametrize("statement", FILE_ACCESS)
def test_cli_connection_reaches_no_file(cli_reader: WarehouseReader, cwd_with_tmp: Path,
                                        statement: str) -> None:
    # DuckDB itself refuses, even for a statement that skips the sandbox's check
    with pytest.raises(duckdb.Error):
        cli_reader.con.execute(statement).fetchall()
    with pytest.raises((sandbox.StatementRefused, duckdb.Error)), cli_reader.query(statement) as result:
        result.table()
    _tmp_untouched(cwd_with_tmp)


@pytest.mark.parametrize("statement", FILE_ACCESS)
def test_dashboard_connection_reaches_no_file(dashboard_reader: read.Reader, cwd_with_tmp: Path,
                                              statement: str) -> None:
    with pytest.raises(duckdb.Error):
        dashboard_reader.con.execute(statement).fetchall()
    with pytest.raises((sandbox.StatementRefused, duckdb.Error)):
        dashboard_reader.rows(statement)
    _tmp_untouched(cwd_with_tmp)


def test_dashboard_cannot_write_into_the_warehouse(dashboard_reader: read.Reader,
                                                   warehouse: Path) -> None:
    """It reads the snapshot's own part files and may create no file anywhere, the
    warehouse folder included (a forged Delta commit, a stray part)."""
    before = sorted(p for p in warehouse.rglob("*"))
    for target in (warehouse / "games" / "forged.parquet",
                   warehouse / "games" / "_delta_log" / "00000000000000000099.json"):
        with pytest.raises(duckdb.Error):
            dashboard_reader.con.execute(f"COPY (SELECT 1 AS x) TO '{target}'").fetchall()
    with pytest.raises(sandbox.StatementRefused):
        dashboard_reader.rows(f"COPY (SELECT 1 AS x) TO '{warehouse / 'games' / 'x.csv'}'")
    assert sorted(p for p in warehouse.rglob("*")) == before
    assert dashboard_reader.rows("SELECT count(*) FROM games")[0][0] == 5


@pytest.mark.parametrize("statement", NOT_ONE_SELECT)
def test_only_one_select_is_run(cli_reader: WarehouseReader, dashboard_reader: read.Reader,
                                statement: str) -> None:
    with pytest.raises(sandbox.StatementRefused):
        cli_reader.query(statement)
    with pytest.raises(sandbox.StatementRefused):
        dashboard_reader.frame(statement)
    # nothing was forged
    names = {r["player"] for r in cli_reader.rows("SELECT player FROM leaderboard")}
    assert "forged" not in names and names
    assert not cli_reader.rows("SELECT * FROM duckdb_tables() WHERE table_name = 'forged'")


@pytest.mark.parametrize("statement", (
    "SELECT count(*) AS n FROM games",
    "FROM games SELECT game_id LIMIT 1",
    "WITH g AS (SELECT * FROM games) SELECT count(*) FROM g",
    "EXPLAIN SELECT * FROM games",
    "EXPLAIN ANALYZE SELECT count(*) FROM hands",
    "/* a comment */ EXPLAIN (FORMAT json) SELECT 1",
    "DESCRIBE games",
    "SELECT 1;",
))
def test_selects_and_explains_run(cli_reader: WarehouseReader, statement: str) -> None:
    with cli_reader.query(statement) as result:
        assert result.table().num_rows >= 1


@pytest.mark.parametrize("sql", ("", ";", "  -- only a comment\n", ";;"))
def test_empty_query_is_a_clear_error(warehouse: Path, sql: str) -> None:
    result = CliRunner().invoke(app, ["query", sql, "--warehouse", str(warehouse)])
    assert result.exit_code == 2, result.output
    assert "no SQL statement" in result.output
    assert isinstance(result.exception, SystemExit)  # typer's exit, not an AttributeError


def test_cli_refuses_copy_and_writes_nothing(warehouse: Path, cwd_with_tmp: Path) -> None:
    for statement in NOT_ONE_SELECT:
        result = CliRunner().invoke(app, ["query", statement, "--warehouse", str(warehouse)])
        assert result.exit_code == 2, (statement, result.output)
        assert "query refused" in result.output
    _tmp_untouched(cwd_with_tmp)


@pytest.mark.parametrize("statement", (
    "SELECT count(*) FROM range(1000000000) a, range(1000000000) b",
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",
    "SELECT sum(range) FROM range(100000000000)",
))
def test_time_limit_interrupts(cli_reader: WarehouseReader, statement: str) -> None:
    limits = replace(sandbox.QUERY_LIMITS, seconds=0.5, memory="512MB")
    with pytest.raises(sandbox.TimeLimitExceeded, match="time limit"), cli_reader.query(statement, limits) as result:
        result.table()
    # the connection is usable again afterwards
    with cli_reader.query("SELECT 42 AS answer") as result:
        assert result.table().column("answer").to_pylist() == [42]


def test_cli_time_limit(warehouse: Path) -> None:
    result = CliRunner().invoke(app, [
        "query", "SELECT count(*) FROM range(1000000000) a, range(1000000000) b",
        "--warehouse", str(warehouse), "--timeout", "0.5"])
    assert result.exit_code == 1
    assert "stopped at its time limit (0.5 s)" in result.output


def test_dashboard_time_limit(dashboard_reader: read.Reader) -> None:
    slow = replace(dashboard_reader, limits=replace(sandbox.DASHBOARD_LIMITS, seconds=0.5))
    with pytest.raises(sandbox.TimeLimitExceeded):
        slow.rows("SELECT count(*) FROM range(1000000000) a, range(1000000000) b")


def test_memory_limit(warehouse: Path) -> None:
    limits = replace(sandbox.QUERY_LIMITS, memory="64MB", seconds=60)
    with open_warehouse(str(warehouse), limits=limits) as reader:
        assert reader.rows("SELECT current_setting('memory_limit') AS m")[0]["m"] in (
            "64.0 MiB", "61.0 MiB", "64.0 MB", "61.0 MB")
        with pytest.raises(duckdb.OutOfMemoryException), reader.query("SELECT range FROM range(100000000) ORDER BY range DESC") as result:
            result.table()


def test_rows_are_capped_and_streamed(cli_reader: WarehouseReader) -> None:
    """`SELECT range FROM range(1e8)` was OOM-killed: the whole result became Python lists."""
    limits = replace(sandbox.QUERY_LIMITS, rows=5_000, batch_rows=1_000)
    with cli_reader.query("SELECT range FROM range(100000000)", limits) as result:
        batches = list(result.batches())
        assert all(isinstance(b, pa.RecordBatch) and b.num_rows <= 1_000 for b in batches)
        assert sum(b.num_rows for b in batches) == 5_000
        assert result.truncated and result.rows == 5_000
    with cli_reader.query("SELECT range FROM range(5000)", limits) as result:
        assert result.table().num_rows == 5_000 and not result.truncated


def test_result_bytes_are_capped(cli_reader: WarehouseReader) -> None:
    limits = replace(sandbox.QUERY_LIMITS, result_bytes=1_000_000)
    with pytest.raises(sandbox.ResultTooLarge, match="more than"), cli_reader.query("SELECT repeat('x', 100000) AS big FROM range(1000)", limits) as result:
        result.table()


def test_cli_row_limit(warehouse: Path) -> None:
    result = CliRunner().invoke(app, ["query", "SELECT range FROM range(100000000)",
                                      "--warehouse", str(warehouse), "--max-rows", "3",
                                      "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:4] == ["range", "0", "1", "2"]
    assert "cut at 3 rows" in result.output


def test_cli_json_stays_exact(warehouse: Path) -> None:
    import json

    result = CliRunner().invoke(app, ["query", "SELECT game_id, players FROM games ORDER BY 1",
                                      "--warehouse", str(warehouse), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 5 and rows[0]["game_id"] == "t41-bazito-1"


_ABSOLUTE = re.compile(r"(?:^|[\[\s,'\"])/")


def test_settings_show_no_paths(cli_reader: WarehouseReader, dashboard_reader: read.Reader,
                                warehouse: Path) -> None:
    with cli_reader.query("SELECT name, value FROM duckdb_settings()") as result:
        table = result.table()
    cli_settings = list(zip(table.column("name").to_pylist(),
                            table.column("value").to_pylist(), strict=True))
    # each connection names its snapshot's part files, and nothing else
    for name, value in [*cli_settings,
                        *dashboard_reader.rows("SELECT name, value FROM duckdb_settings()")]:
        if name == "allowed_paths":
            paths = [p.strip("'") for p in str(value).strip("[]").split(", ")]
            assert paths and all(p.startswith(str(warehouse.resolve()) + "/") and
                                 p.endswith(".parquet") for p in paths)
        else:
            assert not _ABSOLUTE.search(str(value)), (name, value)


def test_python_objects_are_not_reachable(cli_reader: WarehouseReader) -> None:
    secret_table = pa.table({"secret": ["hidden"]})  # noqa: F841 - what a replacement scan finds
    with pytest.raises(duckdb.CatalogException):
        cli_reader.query("SELECT * FROM secret_table")


#: statements that build one huge value, or never end: DuckDB's memory_limit alone does
#: not hold the first kind (issue 34: 14.6 GiB against a 2 GB limit; 4 GiB for a
#: 2 GB string), its interrupt came 34 s late for the second
HOSTILE = (
    ("SELECT max(hash(x)) FROM (SELECT unnest(range(300000000)) x)", "memory"),
    ("SELECT length(repeat('x', 2000000000))", "memory"),
    ("SELECT list_sum(range(200000000))", "memory"),
    ("SELECT length(lpad('x', 2000000000, 'y'))", "memory|time"),
    ("SELECT len(array_agg(x)) FROM range(400000000) t(x)", "memory|time"),
    ("SELECT count(DISTINCT x) FROM range(600000000) t(x)", "memory|time"),
    ("SELECT length(string_agg(raw, '')) FROM events, range(1000000)", "memory|time"),
    ("SELECT x FROM range(300000000) t(x) ORDER BY random() OFFSET 299999999", "memory|time"),
    ("SELECT md5(repeat(raw, 200000)) FROM events", "memory|time"),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", "memory|time"),
    ("SELECT count(*) FROM range(100000000000)", "time"),
    ("SELECT sum(length(raw)) FROM events, range(100000000)", "time|memory"),
)
#: the limits the hostile statements run under (small: the tests stay fast)
HOSTILE_MEMORY_MB = 512
HOSTILE_SECONDS = 4


@pytest.mark.parametrize(("statement", "limit"), HOSTILE)
def test_limits_bind_whatever_the_statement_does(warehouse: Path, statement: str, limit: str) -> None:
    """`haftkhabis query` runs a statement in a process of its own: stopped at its memory
    limit (peak memory of the whole command, its query process included, measured by the
    kernel) or its time limit (the command's wall time), with an error naming the limit."""
    import subprocess
    import sys
    import time

    # the command under a parent that reports the peak memory of everything it waited for
    # (the command, and the query process the command waited for), as the kernel kept it
    measure = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
               "print('peak', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
               "sys.exit(code)")
    command = [sys.executable, "-c", measure, sys.executable, "-m", "cli.app", "query", statement,
               "-w", str(warehouse), "--memory-limit", f"{HOSTILE_MEMORY_MB}MB",
               "--timeout", str(HOSTILE_SECONDS)]
    clock = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    elapsed = time.monotonic() - clock
    assert done.returncode == 1, done.stderr
    assert re.search(rf"at its ({limit}) limit", done.stderr), done.stderr
    peak_mb = int(done.stderr.rsplit("peak ", 1)[1].split()[0]) / 1024
    assert peak_mb < HOSTILE_MEMORY_MB * 1.25 + 100, f"peak {peak_mb:.0f} MB: {done.stderr}"
    # started, stopped at the limit, and reported (the guard is generous: the machine is shared)
    assert elapsed < HOSTILE_SECONDS + 60, elapsed
