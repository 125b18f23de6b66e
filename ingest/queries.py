"""The committed warehouse as read-only DuckDB views, and the named views built on them.

`open_warehouse()` reads the latest `batches` row and opens every table at the Delta
version that batch recorded (so a batch being committed meanwhile is invisible until its
last commit lands). `attach_snapshot()` — the one place both readers the project ships
(this module's, for the CLI's `query` and `stats`, and `ingest.read.connect`, for the
dashboard and the API) build their tables — names a local warehouse's snapshot files to
DuckDB's own Parquet reader (`read_parquet`, hive partitions), the only files the
connection may open (`allowed_paths`); so a scan is DuckDB's on those files, with its
projection, row-group pruning, late materialisation and join filters. A warehouse on S3
is read through pyarrow datasets instead (DuckDB has no S3 access here: its `httpfs`
extension is never installed). The connection is built and locked by `ingest.sandbox`,
and SQL from outside this code base runs through `WarehouseReader.query` (one SELECT,
under a time, memory and row limit, streamed).

The named views (`VIEWS`) are what the CLI's `stats` commands and the dashboard ask:
player stats and the leaderboard, a player's figures per play (points or elimination),
head-to-head, who targets whom with 2s, first-seat advantage, hand lengths, compliance by
code, ruleset and server build.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from engine import _core
from ingest import sandbox
from ingest.partcache import PartCache
from ingest.schema import LATER_COLUMNS, TABLES
from ingest.store import DEFAULT_WAREHOUSE, Snapshot, Warehouse, WarehouseError

VIEWS: dict[str, str] = {
    # `player_stats` is a table (ingest/summaries.py), refreshed with every batch
    "leaderboard": """
        SELECT row_number() OVER (PARTITION BY ruleset
                                  ORDER BY wins DESC, win_rate DESC NULLS LAST, player) AS rank,
               *
        FROM player_stats
        ORDER BY ruleset, rank
    """,
    # every ordered pair of players who sat in the same decided hands
    "head_to_head": """
        SELECT a.ruleset, a.player, b.player AS opponent,
               count(*) AS hands,
               count(*) FILTER (WHERE a.finishing_position < b.finishing_position) AS ahead,
               count(*) FILTER (WHERE a.finishing_position > b.finishing_position) AS behind,
               count(*) FILTER (WHERE a.finishing_position = b.finishing_position) AS tied
        FROM hand_players a
        JOIN hand_players b
          ON a.game_id = b.game_id AND a.hand = b.hand AND a.player <> b.player
        WHERE a.finishing_position IS NOT NULL AND b.finishing_position IS NOT NULL
        GROUP BY a.ruleset, a.player, b.player
    """,
    # who gives 2s to whom, against a uniform choice among the others at the table:
    # `lift` far above 1 for one target, with many 2s, is a collusion signal
    "two_targets": """
        WITH twos AS (
            SELECT e.ruleset, e.game_id, e.hand, e.player, e.gift_to AS target, h.players
            FROM events e
            JOIN hands h ON e.game_id = h.game_id AND e.hand = h.hand
            WHERE e.gift_to IS NOT NULL AND e.gift_to <> e.player AND h.players > 1
        ), given AS (
            SELECT ruleset, player, target, count(*) AS twos
            FROM twos GROUP BY ruleset, player, target
        ), fair AS (
            SELECT t.ruleset, t.player, p.player AS target,
                   sum(1.0 / (t.players - 1)) AS expected_twos
            FROM twos t
            JOIN hand_players p
              ON p.game_id = t.game_id AND p.hand = t.hand AND p.player <> t.player
            GROUP BY t.ruleset, t.player, p.player
        )
        SELECT f.ruleset, f.player, f.target,
               coalesce(g.twos, 0) AS twos,
               f.expected_twos,
               coalesce(g.twos, 0) / sum(coalesce(g.twos, 0))
                   OVER (PARTITION BY f.ruleset, f.player) AS share,
               f.expected_twos / sum(f.expected_twos)
                   OVER (PARTITION BY f.ruleset, f.player) AS expected_share,
               coalesce(g.twos, 0) / f.expected_twos AS lift
        FROM fair f
        LEFT JOIN given g USING (ruleset, player, target)
    """,
    # win rate by the seat's place in the playing order (0: the first to play), per play
    # (points or elimination: never averaged together) and table size; `mean_points` is
    # null in elimination play, which scores no points
    "first_seat": """
        SELECT p.ruleset, coalesce(g.mode, 'points') AS mode, h.players, p.turn_order,
               count(*) AS hands,
               count(*) FILTER (WHERE p.won) AS wins,
               avg(CASE WHEN p.won THEN 1.0 ELSE 0.0 END) AS win_rate,
               1.0 / h.players AS fair_rate,
               avg(p.points) AS mean_points
        FROM hand_players p
        JOIN hands h ON p.game_id = h.game_id AND p.hand = h.hand
        JOIN games g ON p.game_id = g.game_id
        WHERE p.won IS NOT NULL AND p.turn_order IS NOT NULL
        GROUP BY p.ruleset, coalesce(g.mode, 'points'), h.players, p.turn_order
    """,
    # a player's decided hands per ruleset and play (points or elimination), so rates and
    # means are never taken over both: `scored_hands` are the hands with points
    "player_by_mode": """
        SELECT p.ruleset, coalesce(g.mode, 'points') AS mode, p.player,
               count(*) AS hands,
               count(*) FILTER (WHERE p.won) AS wins,
               count(*) FILTER (WHERE p.won) / count(*) AS win_rate,
               count(p.points) AS scored_hands,
               avg(p.points) AS mean_points
        FROM hand_players p
        JOIN games g ON p.game_id = g.game_id
        WHERE p.won IS NOT NULL
        GROUP BY p.ruleset, coalesce(g.mode, 'points'), p.player
    """,
    # the distribution of hand lengths (lines per closed hand), and its summary
    "hand_lengths": """
        SELECT ruleset, players, events, count(*) AS hands
        FROM hands WHERE closed
        GROUP BY ruleset, players, events
    """,
    "hand_length_summary": """
        SELECT ruleset, players, count(*) AS hands,
               avg(events) AS mean_events,
               quantile_cont(events, 0.5) AS median_events,
               quantile_cont(events, 0.9) AS p90_events,
               max(events) AS max_events,
               avg(duration_ms) / 1000.0 AS mean_seconds
        FROM hands WHERE closed
        GROUP BY ruleset, players
    """,
    # violations by code, ruleset and server build (from the header's meta)
    "compliance": """
        SELECT v.code, v.ruleset, coalesce(g.server_build, '?') AS server_build,
               count(*) AS violations, count(DISTINCT v.game_id) AS games
        FROM violations v
        JOIN games g ON v.game_id = g.game_id
        GROUP BY v.code, v.ruleset, coalesce(g.server_build, '?')
    """,
    "compliance_by_build": """
        SELECT ruleset, coalesce(server_build, '?') AS server_build,
               count(*) AS games,
               count(*) FILTER (WHERE status = 'compliant') AS compliant,
               count(*) FILTER (WHERE violations > 0) AS with_violations,
               sum(violations) AS violations,
               avg(CASE WHEN violations > 0 THEN 1.0 ELSE 0.0 END) AS violation_rate
        FROM games
        GROUP BY ruleset, coalesce(server_build, '?')
    """,
    # the games ruleset inference samples, newest first within each server build
    # (engine/infer.py replays each under every profile: the Compliance page's auditor panel)
    "inference_sample": """
        SELECT game_id, ruleset, coalesce(server_build, '?') AS server_build, start_time,
               row_number() OVER (PARTITION BY coalesce(server_build, '?')
                                  ORDER BY start_time DESC NULLS LAST, game_id) AS build_rank
        FROM games
    """,
    "game_status": """
        SELECT ruleset, status, count(*) AS games, sum(hands) AS hands, sum(lines) AS lines
        FROM games GROUP BY ruleset, status
    """,
}

@dataclass
class WarehouseReader:
    """A read-only DuckDB connection over one committed snapshot of the warehouse.

    `sql`, `arrow` and `rows` are for this code base's own statements; `query` is for
    anyone else's (the sandbox's rules and limits)."""

    con: duckdb.DuckDBPyConnection
    snapshot: Snapshot
    root: str
    limits: sandbox.Limits = sandbox.QUERY_LIMITS

    def query(self, query: str, limits: sandbox.Limits | None = None) -> sandbox.Result:
        """Untrusted SQL: one SELECT, streamed under the limits (`sandbox.run`)."""
        return sandbox.run(self.con, query, None, limits or self.limits)

    def sql(self, query: str, params: list[Any] | None = None) -> duckdb.DuckDBPyRelation:
        return self.con.sql(query, params=params)

    def arrow(self, query: str, params: list[Any] | None = None) -> pa.Table:
        return self.con.sql(query, params=params).to_arrow_table()

    def rows(self, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        return self.arrow(query, params).to_pylist()

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> WarehouseReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_warehouse(root: str = DEFAULT_WAREHOUSE, *, threads: int | None = None,
                   limits: sandbox.Limits = sandbox.QUERY_LIMITS,
                   storage_options: Mapping[str, str] | None = None) -> WarehouseReader:
    """The latest committed snapshot of the warehouse at `root` (a folder or
    `s3://bucket/prefix`) as DuckDB views, in a sandboxed connection (`ingest.sandbox`)
    that may open the snapshot's part files and nothing else (`attach_snapshot`)."""
    store = Warehouse(root, storage_options)
    snapshot = store.snapshot()
    if threads is not None:
        limits = replace(limits, threads=threads)
    con = sandbox.connect(limits)
    readable = attach_snapshot(con, store, snapshot)
    sandbox.lock(con, readable=readable)
    return WarehouseReader(con, snapshot, store.root, limits)


def attach_snapshot(con: duckdb.DuckDBPyConnection, store: Warehouse, snapshot: Snapshot, *,
                    cache: PartCache | None = None) -> list[str]:
    """Make every table of `snapshot` and the named views (`VIEWS`) queryable on `con`
    (not yet locked); return the files DuckDB must be allowed to read (`sandbox.lock`).

    A local warehouse: a view per table over DuckDB's `read_parquet` of the snapshot's part
    files, named one by one (each must lie inside the warehouse folder, else
    `WarehouseError`), partition columns from their hive paths. No directory is allowed,
    so no file can be created anywhere; DuckDB does not tell reading an allowed file from
    overwriting it, so what keeps the parts unwritten is that every statement from outside
    must pass the sandbox's check (one SELECT: no `COPY`). On S3 with a `cache`
    (`ingest.partcache`): the same, over the parts' local copies, which every cursor of
    the connection sees (the dashboard's sessions and the API's requests each query on
    their own). On S3 without: pyarrow datasets, which only the connection itself sees."""
    readable: list[str] = []
    named: set[str] = set()  # the parts as the Delta log names them (local warehouses)
    # every view and table made by one script: DuckDB lets go of the GIL at each call and
    # must take it back, and in a busy server (its event loop holding the GIL for up to
    # the 5 ms switch interval) fifty calls took a live reader's refresh 0.2-1 s
    script: list[str] = []
    for name, spec in TABLES.items():
        version = snapshot.versions.get(name, 0)
        if version == 0 and name != "batches":
            # version 0 is the table as `ensure` created it, empty (and a table added
            # later, `LATER_TABLES`, may not exist yet in an older warehouse)
            script.append(_empty_table(name))
            continue
        if not store.location.local and cache is None:
            con.register(name, store.dataset(name, version))
            continue
        if cache is not None and not store.location.local:
            try:
                with store.open_table(name, version) as table:
                    files = cache.local(name, table.file_uris())
            except ValueError as exc:
                raise WarehouseError(f"{store.root}: {exc}") from None
        else:
            folder = str(Path(store.root).resolve())
            with store.open_table(name, version) as table:
                paths = [uri.removeprefix("file://") for uri in table.file_uris()]
            named.update(paths)
            files = [_resolved(path) for path in paths]
            if any(not f.startswith(folder + "/") for f in files):
                raise WarehouseError(f"{store.root}: table {name} names files outside the warehouse")
        readable += files
        if files:
            hive = ", ".join(f"{_quote(c)}: 'VARCHAR'" for c in spec.partition_by)
            options = f", hive_partitioning = true, hive_types = {{{hive}}}" if hive else ""
            columns, mixed = _later_columns(name, files)
            if mixed:
                options += ", union_by_name = true"
            script.append(
                f"CREATE VIEW {name} AS SELECT {', '.join(columns)} FROM read_parquet("
                f"[{', '.join(_quote(f) for f in files)}]{options})")
        else:  # an empty table: DuckDB cannot read_parquet no file
            script.append(_empty_table(name))
    script += [f"CREATE VIEW {name} AS {body}" for name, body in VIEWS.items()]
    con.execute(";\n".join(script))
    if readable:
        _forget_parts_but(named, set(readable))
    return readable


#: part files' real paths, each resolved once: a part is written once and never renamed,
#: and a live reader is refreshed after every commit, over every part of every table
_REAL_PATHS: dict[str, str] = {}
#: the memos hold at most this many parts beyond a few times the latest snapshot's
PARTS_REMEMBERED = 4096


def _resolved(path: str) -> str:
    real = _REAL_PATHS.get(path)
    if real is None:
        real = _REAL_PATHS[path] = str(Path(path).resolve())
    return real


def _forget_parts_but(named: set[str], real: set[str]) -> None:
    """Forget the parts a snapshot no longer has (merged away), once the memos hold many
    more than it has: a live server reopens its reader after every commit, each adding
    parts, and the memos would otherwise grow with every part ever written. `named`: the
    snapshot's parts as its log names them (a local warehouse's; none on S3, whose parts
    are read from local copies), `real`: the files read. Another warehouse's parts
    forgotten here are only looked up again."""
    limit = 4 * len(real) + PARTS_REMEMBERED
    if len(_REAL_PATHS) > limit:
        for path in list(_REAL_PATHS):
            if path not in named:
                _REAL_PATHS.pop(path, None)
    if len(_PART_COLUMNS) > limit:
        for key in list(_PART_COLUMNS):
            if key[0] not in real:
                _PART_COLUMNS.pop(key, None)


def _empty_table(name: str) -> str:
    """The statement making table `name` empty, with its columns' types (DuckDB's own
    reading of the Arrow schema, found once per table in a scratch connection)."""
    statement = _EMPTY_TABLES.get(name)
    if statement is None:
        with duckdb.connect(":memory:") as scratch:
            scratch.register("empty_table", TABLES[name].schema.empty_table())
            scratch.execute(f"CREATE TABLE {name} AS SELECT * FROM empty_table")
            found = scratch.execute("SELECT sql FROM duckdb_tables() WHERE table_name = ?", [name]).fetchone()
        if found is None:
            raise RuntimeError(f"DuckDB made no table {name}")
        statement = _EMPTY_TABLES[name] = str(found[0]).rstrip().rstrip(";")
    return statement


#: each table's statement making it empty (`_empty_table`)
_EMPTY_TABLES: dict[str, str] = {}
#: the DuckDB type of each Arrow type a later column has (`schema.LATER_COLUMNS`)
_SQL_TYPES = {pa.int8(): "TINYINT", pa.int32(): "INTEGER", pa.list_(pa.int8()): "TINYINT[]"}
#: each part's later columns, read once from its footer (a part is never rewritten; the
#: key has its size and time all the same)
_PART_COLUMNS: dict[tuple[str, int, int], frozenset[str]] = {}


def _later_columns(name: str, files: list[str]) -> tuple[list[str], bool]:
    """The select list of table `name` over its part files, and whether the parts differ
    in their columns. A part written before a column was added (`LATER_COLUMNS`: a
    warehouse ingested by an older build) has none of it: the column reads as null, cast
    when no part has it, by name (`union_by_name`) when some have."""
    import pyarrow.parquet as pq

    spec = TABLES[name]
    if name not in LATER_COLUMNS:
        return list(spec.schema.names), False
    later = LATER_COLUMNS[name][1]
    present: list[frozenset[str]] = []
    for path in files:
        stat = os.stat(path)
        key = (path, stat.st_size, stat.st_mtime_ns)
        found = _PART_COLUMNS.get(key)
        if found is None:  # (bounded as `_REAL_PATHS`: `_forget_parts_but`)
            found = _PART_COLUMNS[key] = frozenset(later) & frozenset(pq.read_schema(path).names)
        present.append(found)
    somewhere = frozenset().union(*present)
    columns = [n if n not in later or n in somewhere
               else f"CAST(NULL AS {_SQL_TYPES[spec.schema.field(n).type]}) AS {n}"
               for n in spec.schema.names]
    return columns, any(p != somewhere for p in present)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def scan_polars(root: str, table: str,
                storage_options: Mapping[str, str] | None = None, *,
                snapshot: Snapshot | None = None) -> Any:
    """A polars LazyFrame over `table` at the committed snapshot. Scanning several tables,
    pass one `snapshot` (`Warehouse(root).snapshot()`, or an open reader's `.snapshot`) to
    every call: each table is then read at that same batch, never one table a batch ahead
    of another."""
    import polars as pl

    store = Warehouse(root, storage_options)
    version = (snapshot or store.snapshot()).versions[table]
    return pl.scan_delta(store.table_uri(table), version=version,
                         storage_options=store.location.delta_options())


def game_lines(reader: WarehouseReader, game: str) -> Iterator[tuple[bytes, str, int]]:
    """A game's raw lines as received (input order), with their file and line. The game's
    `games` row names its partition, so only that partition's `events` parts are read (game
    ids are not ordered within a part: a filter on the id alone reads every part)."""
    found = reader.rows("SELECT ruleset, month FROM games WHERE game_id = ?", [game])
    if found:
        rows = reader.rows(
            "SELECT raw, file, line FROM events WHERE ruleset = ? AND month = ? AND game_id = ? "
            "ORDER BY ordinal", [found[0]["ruleset"], found[0]["month"], game])
    else:  # no games row (a warehouse being repaired?): every part
        rows = reader.rows(
            "SELECT raw, file, line FROM events WHERE game_id = ? ORDER BY ordinal", [game])
    for row in rows:
        yield row["raw"].encode(), row["file"] or "<warehouse>", row["line"] or 0


def replay_game(
    reader: WarehouseReader, game: str, *, record: bool = True
) -> _core.Verdict | None:
    """Replay one game from the warehouse alone (its `events.raw`) with the native core:
    its verdict, with every step recorded (`Verdict.steps()`) unless `record` is False.
    None when no line names the game."""
    validator = _core.Validator(record={game} if record else None, only={game}, facts=True)
    for raw, file, line in game_lines(reader, game):
        validator.feed_line(raw, file, line)
    done = [v for v in validator.take_verdicts() if v.game == game]
    return done[0] if done else validator.finish_game(game)
