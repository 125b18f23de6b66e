"""Summary tables kept with each batch, so the leaderboard answers at once at any size.

A summary (today `player_stats`) is a small Delta table of counters per ruleset and
player, every one a sum: games played and won, hands dealt, decided and won, hands scored
and their points, fouls. It is kept **incrementally**: a batch's commit adds the counters
of the rows its games bring (the parts its workers wrote) and takes away those of the rows
it replaces (a game updated when more of its lines arrive: its committed rows, in the
parts the batch rewrites), so a commit's cost follows the batch, not the warehouse. The
result is rewritten in one transaction committed before the batch's `batches` row, so it
is exactly as consistent as the tables it sums.

`recompute` computes a summary whole from the game tables: the first batch of a warehouse
uses it, and the tests hold the incremental table to it after random sequences of
batches, retries, late lines and re-ingests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ingest.schema import TABLES
from ingest.store import PartFile, PartWriter, Warehouse, read_part

if TYPE_CHECKING:  # imported when a batch commits: an ingest worker never needs it
    import duckdb

#: the game tables a summary reads, and the columns it reads of each
SOURCES: dict[str, tuple[str, ...]] = {
    "games": ("game_id", "players", "hands", "winners", "complete"),
    "hand_players": ("game_id", "player", "won", "points"),
    "violations": ("game_id", "player", "foul"),
}

#: a player's counters in one ruleset, each a sum over rows (so they add and subtract)
COUNTERS = ("games", "games_won", "hands_dealt", "hands", "wins", "hands_scored",
            "total_points", "violations")

#: the counters of the rows in the views `games`, `hand_players` and `violations`. A
#: player's games are those with a hand dealt (each counted once, whatever the seats); a
#: hand is dealt to every seated player (`hands_dealt`), decided when `won` is known
#: (`hands`), scored when it has points; a foul is a violation that is the player's own.
PARTIAL = """
    SELECT ruleset, player,
           coalesce(sum(games), 0)::BIGINT AS games,
           coalesce(sum(games_won), 0)::BIGINT AS games_won,
           coalesce(sum(hands_dealt), 0)::BIGINT AS hands_dealt,
           coalesce(sum(hands), 0)::BIGINT AS hands,
           coalesce(sum(wins), 0)::BIGINT AS wins,
           coalesce(sum(hands_scored), 0)::BIGINT AS hands_scored,
           coalesce(sum(total_points), 0)::BIGINT AS total_points,
           coalesce(sum(violations), 0)::BIGINT AS violations
    FROM (
        SELECT ruleset, unnest(list_distinct(players)) AS player, 1 AS games
        FROM games WHERE hands > 0
        UNION ALL BY NAME
        SELECT ruleset, unnest(winners) AS player, 1 AS games_won FROM games WHERE complete
        UNION ALL BY NAME
        SELECT ruleset, player, 1 AS hands_dealt, (won IS NOT NULL)::INT AS hands,
               coalesce(won, false)::INT AS wins, (points IS NOT NULL)::INT AS hands_scored,
               coalesce(points, 0) AS total_points
        FROM hand_players
        UNION ALL BY NAME
        SELECT ruleset, player, 1 AS violations FROM violations WHERE foul AND player IS NOT NULL
    )
    GROUP BY ruleset, player
"""

#: the table from its counters (a player is in it while they have a hand dealt)
FINISH = """
    SELECT ruleset, player, games, games_won, hands, wins,
           CASE WHEN hands > 0 THEN wins / hands END AS win_rate,
           CASE WHEN hands_scored > 0 THEN total_points / hands_scored END AS mean_points,
           CASE WHEN hands_scored > 0 THEN total_points END AS total_points,
           violations, hands_dealt, hands_scored
    FROM counters WHERE hands_dealt > 0
"""


#: one in-memory database a process, each summary on a cursor of its own (a database
#: takes about 17 ms to make, a cursor nothing: a live writer commits a batch a second);
#: what a summary makes is temporary (a cursor's own), and its registrations its own
_DATABASE: list[duckdb.DuckDBPyConnection] = []
_DATABASE_LOCK = threading.Lock()


def _connect() -> duckdb.DuckDBPyConnection:
    import duckdb

    with _DATABASE_LOCK:
        if not _DATABASE:
            _DATABASE.append(duckdb.connect(":memory:", config={
                "autoinstall_known_extensions": False, "autoload_known_extensions": False}))
        return _DATABASE[0].cursor()


def recompute(store: Warehouse, versions: Mapping[str, int]) -> pa.Table:
    """`player_stats` computed whole from the game tables at `versions`."""
    con = _connect()
    try:
        for name in SOURCES:
            con.register(f"{name}_parts", store.dataset(name, versions[name]))
            con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM {name}_parts")
        con.execute(f"CREATE TEMP VIEW counters AS {PARTIAL}")
        return _shaped(con.sql(FINISH).to_arrow_table())
    finally:
        con.close()


def _rows(store: Warehouse, name: str, parts: Iterable[PartFile],
          games: set[str] | None = None) -> pa.Table:
    """The rows of `parts` of table `name` (the columns a summary reads, with their
    partition values), those of `games` only when given."""
    spec = TABLES[name]
    columns = list(SOURCES[name])
    tables = []
    for part in parts:
        data = read_part(store, name, part, columns)
        if games is not None:
            data = data.filter(pc.is_in(data["game_id"], value_set=pa.array(sorted(games), pa.string())))
        for column, value in part.partition:
            data = data.append_column(column, pa.array([value] * data.num_rows, pa.string()))
        tables.append(data)
    schema = pa.schema([*(spec.file_schema.field(c) for c in columns),
                        *(pa.field(c, pa.string()) for c in spec.partition_by)])
    return pa.concat_tables([t.select(schema.names).cast(schema) for t in tables]) if tables \
        else schema.empty_table()


def _partial(con: duckdb.DuckDBPyConnection, tables: Mapping[str, pa.Table]) -> pa.Table:
    for name, data in tables.items():
        con.register(name, data)
    try:
        return con.sql(PARTIAL).to_arrow_table()
    finally:
        for name in tables:
            con.unregister(name)


def update(store: Warehouse, previous: int, added: Mapping[str, Sequence[PartFile]],
           removed: Mapping[str, Sequence[PartFile]], replaced: set[str]) -> pa.Table:
    """`player_stats` at version `previous`, plus the counters of the rows in the `added`
    parts, less those of the `replaced` games' rows in the `removed` parts."""
    con = _connect()
    try:
        old = store.dataset("player_stats", previous).to_table() if previous else \
            TABLES["player_stats"].file_schema.empty_table()
        plus = _partial(con, {n: _rows(store, n, added.get(n, ())) for n in SOURCES})
        minus = _partial(con, {n: _rows(store, n, removed.get(n, ()), replaced) for n in SOURCES})
        con.register("old", old)
        con.register("plus", plus)
        con.register("minus", minus)
        sums = ", ".join(f"sum({c})::BIGINT AS {c}" for c in COUNTERS)
        old_counters = ", ".join(f"coalesce({c}, 0) AS {c}" for c in COUNTERS)
        negated = ", ".join(f"-{c} AS {c}" for c in COUNTERS)
        con.execute(f"""
            CREATE TEMP VIEW counters AS
            SELECT ruleset, player, {sums} FROM (
                SELECT ruleset, player, {old_counters} FROM old
                UNION ALL BY NAME SELECT * FROM plus
                UNION ALL BY NAME SELECT ruleset, player, {negated} FROM minus
            ) GROUP BY ruleset, player""")
        return _shaped(con.sql(FINISH).to_arrow_table())
    finally:
        con.close()


def _shaped(data: pa.Table) -> pa.Table:
    schema = TABLES["player_stats"].file_schema
    data = pa.Table.from_arrays([data[f.name].cast(f.type) for f in schema], schema=schema)
    return data.sort_by([("ruleset", "ascending"), ("player", "ascending")])


def commit(store: Warehouse, data: pa.Table, batch: int, prefix: str,
           attempt: int | None = None) -> int:
    """Write `data` as the whole `player_stats` table, in one transaction: its version."""
    writer = PartWriter(store, "player_stats", prefix=f"{prefix}-s")
    if data.num_rows:
        writer.add_table((), data)
    adds = writer.close()
    removes: list[PartFile] = store.committed_files("player_stats")
    return store.commit("player_stats", adds, removes, batch, "summary", attempt)
