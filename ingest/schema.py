"""The warehouse's tables: every Arrow schema, with the schema version.

Every writer (the ingest workers, the committer, `compact`) and every reader (`queries`,
the dashboard) takes its columns from here. The six game tables are the engine's: their
columns (name, type, nullability) are declared once, where the engine fills them
(`engine/core/haftkhabis-py/src/ingest.rs`), and read here from
`engine._core.warehouse_columns()`; this module declares what only Python writes (the
quarantine, the summary, the batches), the partitioning and the schema version.
Game-derived tables are partitioned by `ruleset` and `month` (the month the game
started), so that a question about one ruleset or a date range reads only those folders.
Partition columns come last in each schema: Delta keeps their values in the transaction
log, not in the Parquet files.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from engine._core import warehouse_columns

#: bump on any change of a table's columns (the engine's included); the warehouse records
#: it in `batches`. 5 added the `cases` table: a build reading version 4 would not carry
#: the cases' version in the `batches` rows it writes (and so drop them from the
#: snapshot), so it must refuse 5. 6 added the engine's `decisions` table (what each
#: player faced at each of their moves, for the pair audit), for the same reason. 7 added
#: the deal's facts, derived once by the engine (`hands.dealer_seat`, `starter`, `stock`,
#: `deal_violations`; `hand_players.deal_position`, `opening_cards`: card codes, the
#: core's `card_codes()`), which the deal audit reads instead of parsing every `deal`
#: line's JSON: a build reading 6 would write parts without them into a table whose
#: later parts have them
SCHEMA_VERSION = 7
#: the versions this build reads: a version-4 warehouse has no `cases` yet, a version-4
#: or -5 one no `decisions` (read as empty; its next writer creates the table and writes
#: version 6; games ingested before have no decisions until they are ingested again);
#: parts written before 7 have no deal facts (`LATER_COLUMNS`, read as null: the deal
#: audit reads those games' `deal` lines instead, docs/decisions.md)
READABLE_SCHEMAS = frozenset({4, 5, 6, 7})

#: the partition value when a game's ruleset is not one the engine knows
UNKNOWN_RULESET = "unknown"
#: the partition value when no line of a game carries a timestamp
UNKNOWN_MONTH = "unknown"

TS = pa.timestamp("us", tz="UTC")
POINTS = pa.map_(pa.string(), pa.int64())
NAMES = pa.list_(pa.string())

PARTITION_COLUMNS = ("ruleset", "month")
_PARTITIONS = [
    pa.field("ruleset", pa.string(), nullable=False),
    pa.field("month", pa.string(), nullable=False),
]


#: the Arrow type of each type name the engine's column declarations use
_ENGINE_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "bool": pa.bool_(),
    "int8": pa.int8(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "timestamp[us, UTC]": TS,
    "list<string>": NAMES,
    "list<int8>": pa.list_(pa.int8()),
    "map<string, int64>": POINTS,
}


_ENGINE_COLUMNS = warehouse_columns()


def _engine_table(name: str) -> pa.Schema:
    """A table the engine fills: its columns as the engine declares them (name, type,
    nullability), then the partition columns."""
    fields = []
    for column in _ENGINE_COLUMNS[name]:
        type_ = _ENGINE_TYPES.get(column["type"])
        if type_ is None:
            raise TypeError(f"{name}.{column['name']}: the engine declares type "
                            f"{column['type']!r}, which has no Arrow type here")
        fields.append(pa.field(column["name"], type_, nullable=column["nullable"]))
    return pa.schema([*fields, *_PARTITIONS])


GAMES = _engine_table("games")
HANDS = _engine_table("hands")
HAND_PLAYERS = _engine_table("hand_players")
EVENTS = _engine_table("events")
VIOLATIONS = _engine_table("violations")
DECISIONS = _engine_table("decisions")

QUARANTINE = pa.schema([
    pa.field("file", pa.string(), nullable=False),
    pa.field("file_sha256", pa.string()),
    pa.field("line", pa.int64()),
    pa.field("code", pa.string(), nullable=False),
    pa.field("message", pa.string(), nullable=False),
    pa.field("raw", pa.binary()),
    pa.field("ingest_batch", pa.int64(), nullable=False),
])

#: a summary refreshed with every batch (ingest/summaries.py): the leaderboard's figures
PLAYER_STATS = pa.schema([
    pa.field("ruleset", pa.string(), nullable=False),
    pa.field("player", pa.string(), nullable=False),
    pa.field("games", pa.int64(), nullable=False),
    pa.field("games_won", pa.int64(), nullable=False),
    pa.field("hands", pa.int64(), nullable=False),
    pa.field("wins", pa.int64(), nullable=False),
    pa.field("win_rate", pa.float64()),
    pa.field("mean_points", pa.float64()),
    pa.field("total_points", pa.int64()),
    pa.field("violations", pa.int64(), nullable=False),
    # the counters the mean and the table's membership rest on, kept so that a batch can
    # add and take away rows (ingest/summaries.py): hands dealt (decided or not), and the
    # hands with points
    pa.field("hands_dealt", pa.int64(), nullable=False),
    pa.field("hands_scored", pa.int64(), nullable=False),
])



def _counters(keys: list[tuple[str, pa.DataType]], counters: list[str]) -> pa.Schema:
    """A summary whose every column past its keys is a count or a sum (ingest/summaries.py)."""
    return pa.schema([*(pa.field(n, t, nullable=False) for n, t in keys),
                      *(pa.field(n, pa.int64(), nullable=False) for n in counters)])


#: the 2s each player gave each other player (`events.gift_to`, not themselves), per
#: ruleset: the 2-card matrix's counts
TWO_GIFTS = _counters([("ruleset", pa.string()), ("player", pa.string()), ("target", pa.string())],
                      ["twos"])
#: a player's decided hands by place in the playing order (0: first to play), per ruleset,
#: play (`games.mode`, points when unset) and table size: hands, wins, and the hands with
#: points and their sum. Summed over players it is the `first_seat` view
SEAT_RESULTS = _counters([("ruleset", pa.string()), ("mode", pa.string()), ("player", pa.string()),
                          ("players", pa.int32()), ("turn_order", pa.int32())],
                         ["hands", "wins", "scored_hands", "total_points"])
#: a player's special cards summed over their hands dealt, per ruleset (the profile's
#: special-card means are these over `hands`)
SPECIAL_CARD_TOTALS = _counters([("ruleset", pa.string()), ("player", pa.string())],
                                ["hands", "sevens_played", "seven_totals_drawn", "seven_cards_drawn",
                                 "twos_given", "twos_received", "jacks_played", "penalty_cards"])

#: a note on a case: when, by whom (the API key's name, or the desk agent's), what
CASE_NOTE = pa.struct([
    pa.field("at", TS),
    pa.field("by", pa.string()),
    pa.field("text", pa.string()),
])

#: the support desk's cases (ingest/cases.py), written by the service and the dashboard's
#: desk, not from logs. A row is one revision of a case: the whole case as it stood after
#: one write (opened, a note added, tags changed, a decision taken), so a case is its
#: latest revision and its history the rows before it; nothing is ever rewritten.
CASES = pa.schema([
    pa.field("case_id", pa.string(), nullable=False),
    pa.field("revision", pa.int32(), nullable=False),
    pa.field("game_id", pa.string(), nullable=False),
    pa.field("hand", pa.int32()),
    pa.field("seq", pa.int64()),
    # whose complaint it is: the bundle's report is in this player's view
    pa.field("player", pa.string()),
    pa.field("tags", NAMES),
    pa.field("notes", pa.list_(CASE_NOTE)),
    pa.field("decision", pa.string()),
    pa.field("decided_by", pa.string()),
    pa.field("decided_at", TS),
    pa.field("opened_by", pa.string(), nullable=False),
    pa.field("opened_at", TS, nullable=False),
    pa.field("updated_by", pa.string(), nullable=False),
    pa.field("updated_at", TS, nullable=False),
    pa.field("batch", pa.int64(), nullable=False),
])

BATCH_FILE = pa.struct([
    pa.field("path", pa.string()),
    pa.field("size", pa.int64()),
    pa.field("sha256", pa.string()),
    pa.field("lines", pa.int64()),
    pa.field("status", pa.string()),
    pa.field("error", pa.string()),
])

BATCHES = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("kind", pa.string(), nullable=False),
    pa.field("started", TS, nullable=False),
    pa.field("ended", TS, nullable=False),
    pa.field("files", pa.list_(BATCH_FILE)),
    pa.field("lines", pa.int64(), nullable=False),
    pa.field("games_new", pa.int64(), nullable=False),
    pa.field("games_updated", pa.int64(), nullable=False),
    pa.field("games_unchanged", pa.int64(), nullable=False),
    pa.field("violations", pa.int64(), nullable=False),
    pa.field("errors", pa.int64(), nullable=False),
    pa.field("workers", pa.int32(), nullable=False),
    pa.field("engine_version", pa.string(), nullable=False),
    pa.field("schema_version", pa.int32(), nullable=False),
    pa.field("table_versions", pa.map_(pa.string(), pa.int64())),
])


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One Delta table: its name (its folder), full schema and partition columns."""

    name: str
    schema: pa.Schema
    partition_by: tuple[str, ...]

    @property
    def file_schema(self) -> pa.Schema:
        """The columns stored in the Parquet files (partition values live in the log)."""
        return pa.schema([f for f in self.schema if f.name not in self.partition_by])

    @property
    def game_keyed(self) -> bool:
        return self.schema.names[0] == "game_id"


TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        TableSpec("games", GAMES, PARTITION_COLUMNS),
        TableSpec("hands", HANDS, PARTITION_COLUMNS),
        TableSpec("hand_players", HAND_PLAYERS, PARTITION_COLUMNS),
        TableSpec("events", EVENTS, PARTITION_COLUMNS),
        TableSpec("violations", VIOLATIONS, PARTITION_COLUMNS),
        TableSpec("decisions", DECISIONS, PARTITION_COLUMNS),
        TableSpec("quarantine", QUARANTINE, ()),
        TableSpec("player_stats", PLAYER_STATS, ()),
        TableSpec("two_gifts", TWO_GIFTS, ()),
        TableSpec("seat_results", SEAT_RESULTS, ()),
        TableSpec("special_card_totals", SPECIAL_CARD_TOTALS, ()),
        TableSpec("cases", CASES, ()),
        TableSpec("batches", BATCHES, ()),
    )
}

#: tables whose rows belong to one game and are replaced together when it is updated
GAME_TABLES: tuple[str, ...] = tuple(n for n, s in TABLES.items() if s.game_keyed)
#: summaries, kept from the game tables with every batch (ingest/summaries.py)
SUMMARY_TABLES: tuple[str, ...] = ("player_stats", "two_gifts", "seat_results", "special_card_totals")
#: the tables the ingest workers write: the game tables and `quarantine`
DATA_TABLES: tuple[str, ...] = (*GAME_TABLES, "quarantine")
#: tables the support desk writes (ingest/cases.py), one batch per write; every other
#: writer carries their version over from the snapshot it started from
CASE_TABLES: tuple[str, ...] = ("cases",)
#: tables added after warehouses were first written (schema 4 had none of them): a
#: warehouse without one reads it as empty, and its next writer creates it. A summary
#: added later is absent (version 0) until a batch or `compact` makes it whole: its
#: readers ask the game tables meanwhile (`ingest.read`, docs/decisions.md)
LATER_TABLES: tuple[str, ...] = ("cases", "decisions", "two_gifts", "seat_results",
                                 "special_card_totals")
#: columns added to a table after warehouses were first written, with the schema version
#: that added them: a part written before has none of them, and reads them as null
LATER_COLUMNS: dict[str, tuple[int, tuple[str, ...]]] = {
    "hands": (7, ("dealer_seat", "starter", "stock", "deal_violations")),
    "hand_players": (7, ("deal_position", "opening_cards")),
}
#: every table but `batches`, whose rows record their versions (the committed snapshot)
SNAPSHOT_TABLES: tuple[str, ...] = (*DATA_TABLES, *SUMMARY_TABLES, *CASE_TABLES)
