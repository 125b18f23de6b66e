"""Summary tables refreshed with each batch, so the leaderboard answers at once at any size.

A summary is a small Delta table computed from the game tables as the batch leaves them
(DuckDB reading their Parquet parts as Arrow datasets, local or on S3), rewritten whole in one transaction and
committed before the batch's `batches` row, so it is exactly as consistent as the tables
it sums. The reader's views of the same name read it instead of aggregating millions of
rows on every question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from ingest.schema import TABLES
from ingest.store import PartFile, PartWriter, Warehouse

if TYPE_CHECKING:  # imported when a batch commits: an ingest worker never needs it
    import duckdb

#: summary table → the query that computes it over the game tables
SUMMARIES: dict[str, str] = {
    # A player's games are those with a hand dealt: every hand has a `hand_players` row
    # for each seated player, so they are counted off `games` (one row a game, its
    # players' names deduplicated) rather than as `count(DISTINCT game_id)` over
    # `hand_players`, whose set of (player, game) pairs grows with the warehouse (614 MiB
    # at a million hands, against 286 MiB this way; the same figures).
    "player_stats": """
        WITH games_played AS (
            SELECT ruleset, player, count(*) AS games
            FROM (SELECT ruleset, unnest(list_distinct(players)) AS player
                  FROM games WHERE hands > 0)
            GROUP BY ruleset, player
        ), hands_played AS (
            SELECT ruleset, player,
                   count(*) FILTER (WHERE won IS NOT NULL) AS hands,
                   count(*) FILTER (WHERE won) AS wins,
                   sum(points) AS total_points,
                   avg(points) AS mean_points
            FROM hand_players GROUP BY ruleset, player
        ), games_won AS (
            SELECT ruleset, winner AS player, count(*) AS games_won
            FROM (SELECT ruleset, unnest(winners) AS winner FROM games WHERE complete)
            GROUP BY ruleset, winner
        ), fouls AS (
            SELECT ruleset, player, count(*) AS violations
            FROM violations WHERE foul GROUP BY ruleset, player
        )
        SELECT h.ruleset, h.player, coalesce(g.games, 0) AS games,
               coalesce(w.games_won, 0) AS games_won,
               h.hands, h.wins,
               CASE WHEN h.hands > 0 THEN h.wins / h.hands END AS win_rate,
               h.mean_points, h.total_points,
               coalesce(f.violations, 0) AS violations
        FROM hands_played h
        LEFT JOIN games_played g USING (ruleset, player)
        LEFT JOIN games_won w USING (ruleset, player)
        LEFT JOIN fouls f USING (ruleset, player)
    """,
}

#: the game tables a summary reads
SOURCES = ("games", "hand_players", "violations")


def refresh(store: Warehouse, versions: dict[str, int], batch: int, prefix: str,
            attempt: int | None = None) -> dict[str, int]:
    """Recompute every summary from the game tables at `versions`; their new versions."""
    import duckdb

    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                             "autoload_known_extensions": False})
    try:
        for name in SOURCES:
            _source_view(con, store, name, versions[name])
        out: dict[str, int] = {}
        for name, query in SUMMARIES.items():
            spec = TABLES[name]
            data = con.sql(query).to_arrow_table()
            data = pa.Table.from_arrays(
                [data[f.name].cast(f.type) for f in spec.file_schema],
                schema=spec.file_schema)
            writer = PartWriter(store, name, prefix=f"{prefix}-s")
            if data.num_rows:
                writer.add_table((), data)
            adds = writer.close()
            removes: list[PartFile] = store.committed_files(name, store.table(name).version())
            out[name] = store.commit(name, adds, removes, batch, "summary", attempt)
        return out
    finally:
        con.close()


def _source_view(con: duckdb.DuckDBPyConnection, store: Warehouse, name: str, version: int) -> None:
    """`name` at `version` as a DuckDB view over its parts (pyarrow reads them, wherever
    the warehouse is; partition values come from the Delta log)."""
    con.register(f"{name}_parts", store.dataset(name, version))
    con.execute(f"CREATE VIEW {name} AS SELECT * FROM {name}_parts")
