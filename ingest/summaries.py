"""Summary tables kept with each batch, so the pages that count over every hand answer at
once at any size.

A summary is a small Delta table of counters per key, every one a sum over rows of the
game tables, so they add and subtract: `player_stats` (per ruleset and player: games
played and won, hands dealt, decided and won, hands scored and their points, fouls; the
leaderboard), `two_gifts` (the 2s each player gave each other: the 2-card matrix),
`seat_results` (decided hands, wins and points by place in the playing order, per
player, play and table size: the first-seat page and a player's seats) and
`special_card_totals` (a player's special cards over their hands: the profile). Each is
one `Summary` (its keys, its counters, the SQL that counts them from rows); one
implementation keeps them all.

A summary is kept **incrementally**: a batch's commit adds the counters of the rows its
games bring (the parts its workers wrote) and takes away those of the rows it replaces (a
game updated when more of its lines arrive: its committed rows, in the parts the batch
rewrites, every table's: a game's `games`, `hands`, `hand_players` and `events` rows are
written, and replaced, together, so a summary may join them), so a commit's cost follows
the batch, not the warehouse. Each result is rewritten in one transaction committed
before the batch's `batches` row, so it is exactly as consistent as the tables it sums.

`recompute` computes a summary whole from the game tables: a batch uses it for a summary
the warehouse does not have yet (version 0: one written before the summary existed, or
its first batch), `compact` too, and the tests hold the incremental tables to it after
random sequences of batches, retries, late lines and re-ingests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ingest.schema import SUMMARY_TABLES, TABLES
from ingest.store import PartFile, PartWriter, Warehouse, read_part

if TYPE_CHECKING:  # imported when a batch commits: an ingest worker never needs it
    import duckdb


@dataclass(frozen=True, slots=True)
class Summary:
    """One summary table: its key columns, its counters (each a sum over rows), the SQL
    that counts them over the game tables' rows (`partial`, over views named as the
    tables, reading only `SOURCES`' columns), and the table made from the summed counters
    (`finish`, over a relation `counters`; by default the keys and counters of the keys
    whose `member` counter is above 0)."""

    name: str
    keys: tuple[str, ...]
    counters: tuple[str, ...]
    member: str
    partial: str
    finish: str | None = None

    def finished(self) -> str:
        return self.finish or (f"SELECT {', '.join(self.keys + self.counters)} FROM counters "
                               f"WHERE {self.member} > 0")


#: the game tables the summaries read, and the columns they read of each
SOURCES: dict[str, tuple[str, ...]] = {
    "games": ("game_id", "players", "hands", "winners", "complete", "mode"),
    "hands": ("game_id", "hand", "players"),
    "hand_players": ("game_id", "hand", "player", "turn_order", "won", "points", "sevens_played",
                     "seven_totals_drawn", "seven_cards_drawn", "twos_given", "twos_received",
                     "jacks_played", "penalty_cards"),
    "violations": ("game_id", "player", "foul"),
    "events": ("game_id", "player", "gift_to"),
}

#: the counters of the rows in the views `games`, `hand_players` and `violations`. A
#: player's games are those with a hand dealt (each counted once, whatever the seats); a
#: hand is dealt to every seated player (`hands_dealt`), decided when `won` is known
#: (`hands`), scored when it has points; a foul is a violation that is the player's own.
_PLAYER_STATS = """
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

#: `player_stats` from its counters (a player is in it while they have a hand dealt)
_PLAYER_STATS_FINISH = """
    SELECT ruleset, player, games, games_won, hands, wins,
           CASE WHEN hands > 0 THEN wins / hands END AS win_rate,
           CASE WHEN hands_scored > 0 THEN total_points / hands_scored END AS mean_points,
           CASE WHEN hands_scored > 0 THEN total_points END AS total_points,
           violations, hands_dealt, hands_scored
    FROM counters WHERE hands_dealt > 0
"""

#: a 2 given to another player (`gift_to`, not the giver: the `two_targets` view's)
_TWO_GIFTS = """
    SELECT ruleset, player, gift_to AS target, count(*)::BIGINT AS twos
    FROM events WHERE gift_to IS NOT NULL AND gift_to <> player
    GROUP BY ALL
"""

#: a decided hand of a seat with its place in the playing order, as the `first_seat` view
#: counts it (its hand's table size, its game's play)
_SEAT_RESULTS = """
    SELECT p.ruleset, coalesce(g.mode, 'points') AS mode, p.player, h.players, p.turn_order,
           count(*)::BIGINT AS hands, count(*) FILTER (WHERE p.won)::BIGINT AS wins,
           count(p.points)::BIGINT AS scored_hands,
           coalesce(sum(p.points), 0)::BIGINT AS total_points
    FROM hand_players p
    JOIN hands h ON p.game_id = h.game_id AND p.hand = h.hand
    JOIN games g ON p.game_id = g.game_id
    WHERE p.won IS NOT NULL AND p.turn_order IS NOT NULL
    GROUP BY ALL
"""

#: the special-card columns of `hand_players` a player's profile shows per hand
SPECIAL_CARD_COLUMNS = ("sevens_played", "seven_totals_drawn", "seven_cards_drawn", "twos_given",
                        "twos_received", "jacks_played", "penalty_cards")

_SPECIAL_CARD_TOTALS = f"""
    SELECT ruleset, player, count(*)::BIGINT AS hands,
           {', '.join(f'sum({c})::BIGINT AS {c}' for c in SPECIAL_CARD_COLUMNS)}
    FROM hand_players GROUP BY ALL
"""

SUMMARIES: dict[str, Summary] = {s.name: s for s in (
    Summary("player_stats", ("ruleset", "player"),
            ("games", "games_won", "hands_dealt", "hands", "wins", "hands_scored", "total_points",
             "violations"), "hands_dealt", _PLAYER_STATS, _PLAYER_STATS_FINISH),
    Summary("two_gifts", ("ruleset", "player", "target"), ("twos",), "twos", _TWO_GIFTS),
    Summary("seat_results", ("ruleset", "mode", "player", "players", "turn_order"),
            ("hands", "wins", "scored_hands", "total_points"), "hands", _SEAT_RESULTS),
    Summary("special_card_totals", ("ruleset", "player"), ("hands", *SPECIAL_CARD_COLUMNS), "hands",
            _SPECIAL_CARD_TOTALS),
)}
assert tuple(SUMMARIES) == SUMMARY_TABLES, "a summary table without its Summary, or one more"


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


def recompute(store: Warehouse, versions: Mapping[str, int],
              names: Iterable[str] = SUMMARY_TABLES) -> dict[str, pa.Table]:
    """The summaries `names` computed whole from the game tables at `versions`."""
    con = _connect()
    try:
        for name in SOURCES:
            con.register(f"{name}_parts", store.dataset(name, versions[name]))
            con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM {name}_parts")
        return {name: _shaped(name, con.sql(
                    f"WITH counters AS ({SUMMARIES[name].partial}) {SUMMARIES[name].finished()}"
                ).to_arrow_table()) for name in names}
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


def _partials(con: duckdb.DuckDBPyConnection, tables: Mapping[str, pa.Table],
              names: Iterable[str]) -> dict[str, pa.Table]:
    """Each summary's counters over the rows `tables` (by game table)."""
    for name, data in tables.items():
        con.register(name, data)
    try:
        return {name: con.sql(SUMMARIES[name].partial).to_arrow_table() for name in names}
    finally:
        for name in tables:
            con.unregister(name)


def update(store: Warehouse, previous: Mapping[str, int], added: Mapping[str, Sequence[PartFile]],
           removed: Mapping[str, Sequence[PartFile]], replaced: set[str]) -> dict[str, pa.Table]:
    """Each summary the warehouse has (at version `previous[name]`, above 0) plus the
    counters of the rows in the `added` parts, less those of the `replaced` games' rows
    in the `removed` parts; a summary the rows change nothing of is left out (its table
    stays as it is)."""
    names = [n for n in SUMMARIES if previous.get(n, 0)]
    if not names:
        return {}
    con = _connect()
    try:
        plus = _partials(con, {n: _rows(store, n, added.get(n, ())) for n in SOURCES}, names)
        # a batch of new games only (a live group's usual case) takes nothing away: its
        # counters are not summed over no rows, four queries for nothing
        minus = _partials(con, {n: _rows(store, n, removed.get(n, ()), replaced) for n in SOURCES},
                          names) if replaced and any(removed.get(n) for n in SOURCES) else {}
        out = {}
        for name in names:
            taken = minus.get(name)
            if plus[name].num_rows == 0 and (taken is None or taken.num_rows == 0):
                continue
            summary = SUMMARIES[name]
            con.register("old", store.dataset(name, previous[name]).to_table())
            con.register("plus", plus[name])
            keys = ", ".join(summary.keys)
            sums = ", ".join(f"sum({c})::BIGINT AS {c}" for c in summary.counters)
            old_counters = ", ".join(f"coalesce({c}, 0) AS {c}" for c in summary.counters)
            negated = ", ".join(f"-{c} AS {c}" for c in summary.counters)
            less = ""
            if taken is not None:
                con.register("minus", taken)
                less = f"UNION ALL BY NAME SELECT {keys}, {negated} FROM minus"
            out[name] = _shaped(name, con.sql(f"""
                WITH counters AS (
                    SELECT {keys}, {sums} FROM (
                        SELECT {keys}, {old_counters} FROM old
                        UNION ALL BY NAME SELECT * FROM plus
                        {less}
                    ) GROUP BY {keys})
                {summary.finished()}""").to_arrow_table())
            for registered in ("old", "plus", "minus") if taken is not None else ("old", "plus"):
                con.unregister(registered)
        return out
    finally:
        con.close()


def refresh(store: Warehouse, previous: Mapping[str, int], versions: Mapping[str, int],
            added: Mapping[str, Sequence[PartFile]], removed: Mapping[str, Sequence[PartFile]],
            replaced: set[str]) -> dict[str, pa.Table]:
    """A batch's summaries to commit: those the warehouse has (`previous`: their versions
    before the batch), kept (`update`); those it has not (version 0: a warehouse written
    before the summary existed, or its first batch), recomputed whole from the game
    tables at `versions` (the batch's own, committed)."""
    absent = [n for n in SUMMARY_TABLES if not previous.get(n, 0)]
    made = update(store, previous, added, removed, replaced)
    if absent:
        made |= recompute(store, versions, absent)
    return made


def _shaped(name: str, data: pa.Table) -> pa.Table:
    schema = TABLES[name].file_schema
    data = pa.Table.from_arrays([data[f.name].cast(f.type) for f in schema], schema=schema)
    return data.sort_by([(k, "ascending") for k in SUMMARIES[name].keys])


def commit(store: Warehouse, name: str, data: pa.Table, batch: int, prefix: str,
           attempt: int | None = None) -> int:
    """Write `data` as the whole summary table `name`, in one transaction: its version."""
    writer = PartWriter(store, name, prefix=f"{prefix}-s")
    if data.num_rows:
        writer.add_table((), data)
    else:  # made, with nothing in it: a version above 0 all the same (`refresh`)
        writer.add_empty(())
    adds = writer.close()
    removes: list[PartFile] = store.committed_files(name)
    return store.commit(name, adds, removes, batch, "summary", attempt)
