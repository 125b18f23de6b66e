"""The warehouse's tables: every Arrow schema, declared once, with the schema version.

Every writer (the ingest workers, the committer, `compact`) and every reader (`queries`,
the dashboard) takes its columns from here. Game-derived tables are partitioned by
`ruleset` and `month` (the month the game started), so that a question about one ruleset
or a date range reads only those folders. Partition columns come last in each schema:
Delta keeps their values in the transaction log, not in the Parquet files.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

#: bump on any change of a table's columns; the warehouse records it in `batches`. 5
#: added the `cases` table: a build reading version 4 would not carry the cases' version in
#: the `batches` rows it writes (and so drop them from the snapshot), so it must refuse 5
SCHEMA_VERSION = 5
#: the versions this build reads: a version-4 warehouse has no `cases` yet (read as empty;
#: its next writer creates the table and writes version 5)
READABLE_SCHEMAS = frozenset({4, 5})

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


def _game_keyed(*fields: pa.Field) -> pa.Schema:
    return pa.schema([pa.field("game_id", pa.string(), nullable=False), *fields, *_PARTITIONS])


GAMES = _game_keyed(
    pa.field("ruleset_declared", pa.string()),
    pa.field("mode", pa.string()),
    pa.field("decks", pa.int32()),
    pa.field("match_hands", pa.int32()),
    pa.field("match_target", pa.int32()),
    pa.field("options", pa.string()),
    pa.field("players", NAMES),
    pa.field("start_time", TS),
    pa.field("end_time", TS),
    pa.field("status", pa.string(), nullable=False),
    pa.field("complete", pa.bool_(), nullable=False),
    pa.field("hands", pa.int32(), nullable=False),
    pa.field("hands_decided", pa.int32(), nullable=False),
    pa.field("winners", NAMES),
    pa.field("totals", POINTS),
    pa.field("meta", pa.string()),
    pa.field("server_build", pa.string()),
    pa.field("source_files", NAMES),
    pa.field("lines", pa.int32(), nullable=False),
    pa.field("violations", pa.int32(), nullable=False),
    pa.field("content_hash", pa.string(), nullable=False),
    pa.field("ingest_batch", pa.int64(), nullable=False),
    pa.field("engine_version", pa.string(), nullable=False),
)

HANDS = _game_keyed(
    pa.field("hand", pa.int32(), nullable=False),
    pa.field("dealer", pa.string()),
    pa.field("first_player", pa.string()),
    pa.field("players", pa.int32(), nullable=False),
    pa.field("winners", NAMES),
    pa.field("reason", pa.string()),
    pa.field("winning_card", pa.string()),
    pa.field("multiplier", pa.int32()),
    pa.field("scores", POINTS),
    pa.field("decided", pa.bool_(), nullable=False),
    pa.field("closed", pa.bool_(), nullable=False),
    pa.field("events", pa.int32(), nullable=False),
    pa.field("start_time", TS),
    pa.field("end_time", TS),
    pa.field("duration_ms", pa.int64()),
    pa.field("reshuffles", pa.int32(), nullable=False),
    pa.field("violations", pa.int32(), nullable=False),
    pa.field("ingest_batch", pa.int64(), nullable=False),
)

HAND_PLAYERS = _game_keyed(
    pa.field("hand", pa.int32(), nullable=False),
    pa.field("player", pa.string(), nullable=False),
    pa.field("seat", pa.int32(), nullable=False),
    pa.field("turn_order", pa.int32()),
    pa.field("points", pa.int64()),
    pa.field("won", pa.bool_()),
    pa.field("finishing_position", pa.int32()),
    pa.field("cards_left", pa.int32()),
    pa.field("left_cards", NAMES),
    pa.field("cards_played", pa.int32(), nullable=False),
    pa.field("cards_drawn", pa.int32(), nullable=False),
    pa.field("penalty_cards", pa.int32(), nullable=False),
    pa.field("sevens_played", pa.int32(), nullable=False),
    pa.field("seven_totals_drawn", pa.int32(), nullable=False),
    pa.field("seven_cards_drawn", pa.int32(), nullable=False),
    pa.field("twos_given", pa.int32(), nullable=False),
    pa.field("twos_received", pa.int32(), nullable=False),
    pa.field("jacks_played", pa.int32(), nullable=False),
    pa.field("violations", pa.int32(), nullable=False),
    pa.field("ingest_batch", pa.int64(), nullable=False),
)

EVENTS = _game_keyed(
    pa.field("seq", pa.int64()),
    pa.field("ordinal", pa.int32(), nullable=False),
    pa.field("hand", pa.int32()),
    pa.field("ts", TS),
    pa.field("type", pa.string()),
    pa.field("player", pa.string()),
    pa.field("card", pa.string()),
    pa.field("suit", pa.string()),
    pa.field("target", pa.string()),
    pa.field("cards", NAMES),
    pa.field("phase", pa.string()),
    # the engine's facts of the line: what a draw was, whose gift a 2 gave
    pa.field("draw_kind", pa.string()),
    pa.field("gift_to", pa.string()),
    pa.field("code", pa.string()),
    pa.field("codes", NAMES),
    pa.field("set_aside", pa.bool_(), nullable=False),
    pa.field("fingerprint", pa.int64(), nullable=False),
    pa.field("raw", pa.string(), nullable=False),
    pa.field("file", pa.string()),
    pa.field("line", pa.int64()),
    pa.field("ingest_batch", pa.int64(), nullable=False),
)

VIOLATIONS = _game_keyed(
    pa.field("seq", pa.int64()),
    pa.field("hand", pa.int32()),
    pa.field("code", pa.string(), nullable=False),
    # a player's own foul (rules.md's list): what "a player's violations" counts everywhere
    pa.field("foul", pa.bool_(), nullable=False),
    pa.field("player", pa.string()),
    pa.field("message", pa.string(), nullable=False),
    pa.field("file", pa.string()),
    pa.field("line", pa.int64()),
    pa.field("ingest_batch", pa.int64(), nullable=False),
)

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
        TableSpec("quarantine", QUARANTINE, ()),
        TableSpec("player_stats", PLAYER_STATS, ()),
        TableSpec("cases", CASES, ()),
        TableSpec("batches", BATCHES, ()),
    )
}

#: tables whose rows belong to one game and are replaced together when it is updated
GAME_TABLES: tuple[str, ...] = tuple(n for n, s in TABLES.items() if s.game_keyed)
#: summaries, recomputed from the game tables with every batch
SUMMARY_TABLES: tuple[str, ...] = ("player_stats",)
#: the tables the ingest workers write: the game tables and `quarantine`
DATA_TABLES: tuple[str, ...] = (*GAME_TABLES, "quarantine")
#: tables the support desk writes (ingest/cases.py), one batch per write; every other
#: writer carries their version over from the snapshot it started from
CASE_TABLES: tuple[str, ...] = ("cases",)
#: tables added after warehouses were first written (schema 4 had none of them): a
#: warehouse without one reads it as empty, and its next writer creates it
LATER_TABLES: tuple[str, ...] = ("cases",)
#: every table but `batches`, whose rows record their versions (the committed snapshot)
SNAPSHOT_TABLES: tuple[str, ...] = (*DATA_TABLES, *SUMMARY_TABLES, *CASE_TABLES)
