"""The warehouse's read model: a reader over its committed snapshot, and the questions the
dashboard, the HTTP API and the CLI ask it. Each function takes the reader and plain
arguments and returns a polars DataFrame (or plain values); the dashboard caches them
(`dashboards.cache`), the API lays them out (`service.views`). SQL values are always bound
parameters; only column lists chosen here are interpolated.

The connection is `ingest.queries`' (`attach_snapshot`): the snapshot the latest `batches`
row pins (`ingest.store.Warehouse.snapshot`), the same tables and the same named views
(`ingest.queries.VIEWS`), built and locked by `ingest.sandbox` (no temp directory, external
access disabled, configuration locked; DuckDB's own Parquet reader over the snapshot's
files, which are the only ones it may open), and every statement passes the sandbox's
check (one SELECT) under its time limit. Each statement runs on its own cursor, so
sessions query in parallel instead of taking turns on one connection; on S3 over local
copies of the snapshot's parts (`ingest.partcache`: a pyarrow dataset would be seen by one
connection only, and materialising the tables took memory as large as the warehouse).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import polars as pl

from engine.replay import GameReplay, replay_lines
from ingest import sandbox
from ingest.partcache import PartCache
from ingest.queries import attach_snapshot
from ingest.schema import SUMMARY_TABLES
from ingest.storage import Location
from ingest.store import Snapshot, Warehouse, WarehouseError
from ingest.summaries import SPECIAL_CARD_COLUMNS

if TYPE_CHECKING:
    from ingest import audits
    from ingest.pairs import PairReport


class WarehouseMissing(Exception):
    """No usable warehouse at the given folder (not ingested yet, or another schema)."""


@dataclass
class Reader:
    """A read-only DuckDB database over one committed snapshot; each query runs on its own
    cursor, so concurrent sessions do not share a connection's state."""

    con: duckdb.DuckDBPyConnection
    snapshot: Snapshot
    location: Location  # a folder, or an s3:// URI with its storage options
    limits: sandbox.Limits = sandbox.DASHBOARD_LIMITS
    marker: int | None = None  # `commit_marker` as it was before the snapshot was read
    #: the files the connection may read: the snapshot's parts (their local copies on S3)
    readable: tuple[str, ...] = ()
    #: the summary tables the reads answer from (`ingest.summaries`): those the snapshot
    #: has; the others' questions go to the game tables (a warehouse written before the
    #: summary existed, until its next batch or `compact` makes it)
    summaries: frozenset[str] = frozenset()

    @property
    def batch(self) -> int:
        return self.snapshot.batch

    @property
    def root(self) -> str:
        """The warehouse's folder or `s3://` URI."""
        return self.location.uri

    def frame(self, query: str, params: Sequence[Any] | None = None) -> pl.DataFrame:
        statement = sandbox.check(query)
        with self.con.cursor() as cursor, sandbox.time_limit(cursor, self.limits.seconds):
            return cursor.sql(statement, params=list(params or [])).pl()

    def rows(self, query: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        statement = sandbox.check(query)
        with self.con.cursor() as cursor, sandbox.time_limit(cursor, self.limits.seconds):
            return cursor.sql(statement, params=list(params or [])).fetchall()

    def close(self) -> None:
        self.con.close()

    def stale(self) -> bool:
        """Whether the warehouse committed a batch after this snapshot (an ingest, or a
        compact whose vacuum may have deleted files this snapshot reads). One `stat` of
        the batches table's log folder when nothing was written since the last look."""
        marker = commit_marker(self.location)
        if marker == self.marker:
            return False
        try:
            batch = Warehouse(self.location).snapshot().batch
        except (WarehouseError, OSError):
            return True
        if batch == self.batch:
            self.marker = marker  # written to, but no newer batch
            return False
        return True


def commit_marker(where: Location) -> int | None:
    """Changes whenever a commit lands in the warehouse's `batches` table (the last write
    of every ingest and compact): the modification time of its Delta log folder (on S3,
    which has no folder times: the table's latest version)."""
    if not where.local:
        try:
            return Warehouse(where).table("batches").version()
        except Exception:  # no table there yet, or the store is unreachable
            return None
    try:
        return (Path(where.uri) / "batches" / "_delta_log").stat().st_mtime_ns
    except OSError:
        return None


def connect(where: Path | str | Location, storage_options: Mapping[str, str] | None = None) -> Reader:
    """Open the latest committed snapshot of the warehouse at `where` (a folder, an
    `s3://` URI with its `storage_options`, or a `Location` holding both), read-only."""
    location = Location.of(where, storage_options)
    store = Warehouse(location)
    marker = commit_marker(location)  # before the snapshot: a commit in between is seen later
    cache = None if location.local else part_cache(location)
    con = sandbox.connect(sandbox.DASHBOARD_LIMITS)
    try:
        snapshot = store.snapshot()
        readable = attach_snapshot(con, store, snapshot, cache=cache)
    except WarehouseError as exc:
        con.close()
        raise WarehouseMissing(str(exc)) from None
    sandbox.lock(con, readable=readable)
    if cache is not None:
        cache.sweep(set(readable))
    made = frozenset(n for n in SUMMARY_TABLES if snapshot.versions.get(n, 0) > 0)
    return Reader(con, snapshot, location, marker=marker, readable=tuple(readable), summaries=made)


#: each object-store warehouse's part cache in this process (its sweep's clock with it)
_CACHES: dict[tuple[str, tuple[tuple[str, str], ...]], PartCache] = {}


def part_cache(location: Location) -> PartCache:
    """The local copies of the parts of the warehouse at `location` (on an object store)."""
    key = (location.uri, tuple(sorted((location.delta_options() or {}).items())))
    cache = _CACHES.get(key)
    if cache is None:
        cache = _CACHES[key] = PartCache(location)
    return cache


# ------------------------------------------------------------------------ filters


@dataclass(frozen=True, slots=True)
class GameFilter:
    """The filters the warehouse pages share; empty means "all"."""

    rulesets: tuple[str, ...] = ()
    start: date | None = None
    end: date | None = None  # inclusive
    builds: tuple[str, ...] = ()

    def where(self, alias: str = "g") -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if self.rulesets:
            clauses.append(f"{alias}.ruleset IN ({', '.join('?' * len(self.rulesets))})")
            params.extend(self.rulesets)
        if self.builds:
            clauses.append(f"coalesce({alias}.server_build, '?') IN ({', '.join('?' * len(self.builds))})")
            params.extend(self.builds)
        if self.start is not None:
            clauses.append(f"{alias}.start_time >= ?::DATE")
            params.append(self.start)
        if self.end is not None:
            clauses.append(f"{alias}.start_time < ?::DATE + INTERVAL 1 DAY")
            params.append(self.end)
        return (" AND ".join(clauses) or "TRUE"), params

    @property
    def needs_games(self) -> bool:
        """Whether the filter reads the games table (dates, builds) or only `ruleset`,
        which every game-keyed table carries as its partition column."""
        return self.start is not None or self.end is not None or bool(self.builds)

    def on(self, table: str, alias: str) -> tuple[str, str, list[Any]]:
        """FROM clause and condition to filter `table` (aliased) by this filter, joining
        games only when needed: a ruleset filter alone prunes partitions instead."""
        if self.needs_games:
            where, params = self.where("g")
            return f"{table} {alias} JOIN games g USING (game_id)", where, params
        where, params = GameFilter(self.rulesets).where(alias)
        return f"{table} {alias}", where, params


@dataclass(frozen=True, slots=True)
class Choices:
    """What the filters can offer: the values present in the warehouse."""

    rulesets: list[str]
    statuses: list[str]
    builds: list[str]
    codes: list[str]
    first_day: date | None
    last_day: date | None
    games: int


def choices(reader: Reader) -> Choices:
    """One pass over games (and one over the small violations table)."""
    rulesets, statuses, builds, first, last, games = reader.rows("""
        SELECT list(DISTINCT ruleset ORDER BY ruleset), list(DISTINCT status ORDER BY status),
               list(DISTINCT coalesce(server_build, '?') ORDER BY coalesce(server_build, '?')),
               min(start_time)::DATE, max(start_time)::DATE, count(*)
        FROM games""")[0]
    codes = [r[0] for r in reader.rows("SELECT DISTINCT code FROM violations ORDER BY 1")]
    return Choices(rulesets or [], statuses or [], builds or [], codes, first, last, games)


# ------------------------------------------------------------------------ overview


def overview_totals(reader: Reader, flt: GameFilter) -> dict[str, Any]:
    where, params = flt.where()
    row = reader.frame(f"""
        SELECT count(*) AS games,
               coalesce(sum(hands), 0) AS hands,
               count(*) FILTER (WHERE status = 'compliant') AS compliant,
               count(*) FILTER (WHERE status IN ('violations', 'invalid')) AS failing,
               coalesce(sum(violations), 0) AS violations,
               coalesce(sum(lines), 0) AS lines
        FROM games g WHERE {where}""", params).row(0, named=True)
    players = reader.rows(f"""
        SELECT count(DISTINCT player) FROM (SELECT unnest(players) AS player FROM games g WHERE {where})
    """, params)[0][0]
    row["players"] = players
    row["compliance_rate"] = 1 - row["failing"] / row["games"] if row["games"] else None
    return row


def by_ruleset(reader: Reader, flt: GameFilter) -> pl.DataFrame:
    where, params = flt.where()
    return reader.frame(f"""
        SELECT ruleset, count(*) AS games, sum(hands)::BIGINT AS hands,
               count(*) FILTER (WHERE status = 'compliant') AS compliant,
               count(*) FILTER (WHERE status IN ('incomplete', 'aborted')) AS unfinished,
               count(*) FILTER (WHERE status IN ('violations', 'invalid')) AS failing,
               sum(violations)::BIGINT AS violations,
               1 - count(*) FILTER (WHERE status IN ('violations', 'invalid')) / count(*) AS compliance_rate
        FROM games g WHERE {where}
        GROUP BY ruleset ORDER BY games DESC""", params)


def _time_unit(reader: Reader, where: str, params: list[Any]) -> str:
    """Days, or weeks when the games span more than 120 days."""
    span = reader.rows(f"SELECT datediff('day', min(start_time), max(start_time)) FROM games g WHERE {where}",
                       params)[0][0]
    return "week" if span is not None and span > 120 else "day"


def _every_period(frame: pl.DataFrame, unit: str, key: str, counts: Sequence[str]) -> pl.DataFrame:
    """Add the periods without games (as zero counts), so charts do not bridge the gaps."""
    if not frame.height:
        return frame
    periods = frame.select(pl.date_range(pl.col("period").min(), pl.col("period").max(),
                                         "1w" if unit == "week" else "1d").alias("period"))
    grid = periods.join(frame.select(key).unique(), how="cross")
    full = grid.join(frame, on=["period", key], how="left")
    full = full.with_columns(pl.col(c).fill_null(0) for c in counts).sort("period", key)
    return full.with_columns(pl.lit(unit).alias("unit"))


def over_time(reader: Reader, flt: GameFilter) -> pl.DataFrame:
    """Games, hands and compliance per day (per week over spans longer than 120 days)."""
    where, params = flt.where()
    unit = _time_unit(reader, where, params)
    frame = reader.frame(f"""
        SELECT date_trunc('{unit}', start_time)::DATE AS period, ruleset,
               count(*) AS games, sum(hands)::BIGINT AS hands,
               1 - count(*) FILTER (WHERE status IN ('violations', 'invalid')) / count(*) AS compliance_rate
        FROM games g WHERE {where} AND start_time IS NOT NULL
        GROUP BY ALL ORDER BY period, ruleset""", params)
    return _every_period(frame, unit, "ruleset", ["games", "hands"])


def status_counts(reader: Reader, flt: GameFilter) -> pl.DataFrame:
    where, params = flt.where()
    return reader.frame(f"""
        SELECT ruleset, status, count(*) AS games FROM games g WHERE {where}
        GROUP BY ALL ORDER BY ruleset, status""", params)


# ------------------------------------------------------------------------ games


@dataclass(frozen=True, slots=True)
class GameSearch:
    """What the Games page looks for; the texts match in part and in any case."""

    flt: GameFilter = GameFilter()
    statuses: tuple[str, ...] = ()
    player: str = ""  # part of a seated player's id
    code: str = ""
    text: str = ""  # part of the game id


def find_games(reader: Reader, search: GameSearch, limit: int = 200, offset: int = 0) -> tuple[int, pl.DataFrame]:
    """The games matching `search`, newest first: the total count and one page of rows."""
    where, params = search.flt.where()
    clauses = [where]
    if search.statuses:
        clauses.append(f"g.status IN ({', '.join('?' * len(search.statuses))})")
        params += list(search.statuses)
    if search.player:  # any seated player's id containing it, in any case
        clauses.append("len(list_filter(g.players, lambda p: contains(lower(p), ?))) > 0")
        params.append(search.player.lower())
    if search.text:
        clauses.append("contains(lower(g.game_id), ?)")
        params.append(search.text.lower())
    if search.code:
        clauses.append("g.game_id IN (SELECT game_id FROM violations WHERE code = ?)")
        params.append(search.code)
    condition = " AND ".join(clauses)
    total = reader.rows(f"SELECT count(*) FROM games g WHERE {condition}", params)[0][0]
    # the page's ids first (two narrow columns sorted), then only those rows in full
    page = reader.rows(f"""
        SELECT g.game_id FROM games g WHERE {condition}
        ORDER BY g.start_time DESC NULLS LAST, g.game_id LIMIT ? OFFSET ?""", [*params, limit, offset])
    ids = [r[0] for r in page]
    rows = reader.frame("""
        SELECT g.game_id, g.ruleset, g.start_time, g.status, g.hands, g.violations,
               array_to_string(g.players, ', ') AS players,
               array_to_string(g.winners, ', ') AS winners,
               g.server_build, g.lines
        FROM games g WHERE g.game_id IN (SELECT unnest(?::VARCHAR[]))
        ORDER BY g.start_time DESC NULLS LAST, g.game_id""", [ids])
    return total, rows


#: a game's partition, (ruleset, month): every row of the game, in every game table, has it
Partition = tuple[str, str]


def _one_game(game: str, partition: Partition | None) -> tuple[str, list[Any]]:
    """The condition that picks one game's rows: with its partition, DuckDB reads only that
    partition's files (game ids are not ordered within a part, so nothing prunes a search by
    `game_id` alone: it reads the whole table)."""
    if partition is None:
        return "game_id = ?", [game]
    return "ruleset = ? AND month = ? AND game_id = ?", [*partition, game]


def game_partition(reader: Reader, game: str) -> Partition | None:
    """The game's partition, from its `games` row (a scan of `games`; None: no such game)."""
    found = reader.rows("SELECT ruleset, month FROM games WHERE game_id = ?", [game])
    return (found[0][0], found[0][1]) if found else None


def game_row(reader: Reader, game: str, partition: Partition | None = None) -> dict[str, Any] | None:
    """The game's `games` row (None: none there); `partition`, when known, prunes the read."""
    where, params = _one_game(game, partition)
    frame = reader.frame(f"SELECT * FROM games WHERE {where}", params)
    return frame.row(0, named=True) if frame.height else None


def game_lines(reader: Reader, game: str) -> list[tuple[bytes, str | None, int | None]]:
    """A game's raw lines as received (input order), with their file and line. The games
    row names the partition (ruleset, month), so the events scan reads one folder."""
    partition = game_partition(reader, game)
    where, params = _one_game(game, partition)
    rows = reader.rows(f"SELECT raw, file, line FROM events WHERE {where} ORDER BY ordinal", params)
    return [(raw.encode("utf-8"), file, line) for raw, file, line in rows]


def game_replay(reader: Reader, game: str) -> GameReplay | None:
    """A game replayed from the lines the warehouse stored for it, every step built (the
    support view; `engine.player_view.public_replay` gives a player's). None: no such game."""
    return replay_lines(game_lines(reader, game), game)


# ------------------------------------------------------------------------ scoring


def game_hands(reader: Reader, game: str, partition: Partition | None = None) -> pl.DataFrame:
    where, params = _one_game(game, partition)
    return reader.frame(f"""
        SELECT hand, dealer, first_player, winners, reason, winning_card, multiplier, decided, closed,
               events, reshuffles, violations
        FROM hands WHERE {where} ORDER BY hand""", params)


def game_hand_players(reader: Reader, game: str, partition: Partition | None = None) -> pl.DataFrame:
    where, params = _one_game(game, partition)
    return reader.frame(f"""
        SELECT hand, player, seat, turn_order, points, won, finishing_position, cards_left, left_cards
        FROM hand_players WHERE {where} ORDER BY hand, seat""", params)


def scoring_summary(reader: Reader, flt: GameFilter) -> pl.DataFrame:
    """Per ruleset: decided hands, how they ended, multipliers, points."""
    source, where, params = flt.on("hands", "h")
    return reader.frame(f"""
        SELECT h.ruleset, count(*) AS hands,
               count(*) FILTER (WHERE h.reason = 'out') AS went_out,
               count(*) FILTER (WHERE h.reason = 'blocked') AS blocked,
               count(*) FILTER (WHERE h.reason = 'elimination') AS elimination,
               count(*) FILTER (WHERE h.multiplier > 1) AS multiplied,
               avg(h.multiplier) FILTER (WHERE h.reason = 'out') AS mean_multiplier
        FROM {source}
        WHERE h.decided AND {where}
        GROUP BY h.ruleset ORDER BY hands DESC""", params)


def points_distribution(reader: Reader, flt: GameFilter) -> pl.DataFrame:
    """Losers' hand scores per ruleset, bucketed by 5 points (capped at 200)."""
    source, where, params = flt.on("hand_players", "p")
    return reader.frame(f"""
        SELECT p.ruleset, least(p.points, 200) // 5 * 5 AS points, count(*) AS hands
        FROM {source}
        WHERE p.points IS NOT NULL AND NOT p.won AND {where}
        GROUP BY ALL ORDER BY p.ruleset, points""", params)


def winning_cards(reader: Reader, flt: GameFilter) -> pl.DataFrame:
    source, where, params = flt.on("hands", "h")
    return reader.frame(f"""
        SELECT h.ruleset, replace(substr(h.winning_card, 1, 1), 'T', '10') AS rank, h.multiplier,
               count(*) AS hands
        FROM {source}
        WHERE h.reason = 'out' AND h.winning_card IS NOT NULL AND {where}
        GROUP BY ALL ORDER BY h.ruleset, hands DESC""", params)


# ------------------------------------------------------------------------ players
#
# A player's figures come from the `player_stats` summary, the table `haftkhabis stats
# players` and the HTTP API read, so the three agree by construction: in particular a
# player's violations are their own fouls (`violations.foul`), nothing else. Rates and
# means are taken per play (`player_by_mode`: points or elimination, never both together);
# counts (hands, wins, violations) are the ruleset's totals.


def _player_table(rulesets: Sequence[str] = (), player: str | None = None) -> tuple[str, list[Any]]:
    """`player_stats` rows (of `rulesets`, all when empty; of one `player`, or everyone's)
    with the figures per play beside them: win rate in points and in elimination play,
    mean points (points play alone scores) and the hands each is taken over. The query
    and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if rulesets:
        clauses.append(f"{{alias}}ruleset IN ({', '.join('?' * len(rulesets))})")
        params += list(rulesets)
    if player is not None:
        clauses.append("{alias}player = ?")
        params.append(player)
    where = " AND ".join(clauses) or "TRUE"
    return f"""
        SELECT s.ruleset, s.player, s.games, s.games_won, s.hands, s.wins, s.win_rate,
               m.points_hands, m.points_wins, m.points_wins / m.points_hands AS points_win_rate,
               m.elimination_hands, m.elimination_wins,
               m.elimination_wins / m.elimination_hands AS elimination_win_rate,
               m.scored_hands, m.mean_points, s.violations
        FROM player_stats s
        LEFT JOIN (
            SELECT ruleset, player,
                   max(hands) FILTER (WHERE mode = 'points') AS points_hands,
                   max(wins) FILTER (WHERE mode = 'points') AS points_wins,
                   max(hands) FILTER (WHERE mode = 'elimination') AS elimination_hands,
                   max(wins) FILTER (WHERE mode = 'elimination') AS elimination_wins,
                   max(scored_hands) FILTER (WHERE mode = 'points') AS scored_hands,
                   max(mean_points) FILTER (WHERE mode = 'points') AS mean_points
            FROM player_by_mode WHERE {where.format(alias="")} GROUP BY ruleset, player
        ) m USING (ruleset, player)
        WHERE {where.format(alias="s.")}""", params + params


@dataclass(frozen=True, slots=True)
class Measure:
    """What the leaderboard ranks by: the value's column, the hands it is taken over, and
    whether more is better."""

    label: str
    value: str
    sample: str
    descending: bool
    explained: str


#: the leaderboard's measures, by key (the page's choice)
MEASURES: dict[str, Measure] = {
    "wins": Measure("hands won", "wins", "hands", True,
                    "hands won (ties: fewer hands played), as `haftkhabis stats players` ranks"),
    "points_win_rate": Measure("win rate, points play", "points_win_rate", "points_hands", True,
                               "win rate in points play (hands won ÷ decided hands played "
                               "for points; ties: more hands)"),
    "elimination_win_rate": Measure("win rate, elimination play", "elimination_win_rate",
                                    "elimination_hands", True,
                                    "win rate in elimination play (hands won ÷ decided hands "
                                    "played to elimination; ties: more hands)"),
    "mean_points": Measure("mean points, points play", "mean_points", "scored_hands", False,
                           "mean points taken per hand in points play, fewest first (the "
                           "score counts against the player; elimination play scores none)"),
}


#: each measure's sample (the hands it is taken over), in words
SAMPLE_LABELS = {"hands": "hands", "points_hands": "hands · points play",
                 "elimination_hands": "hands · elimination play", "scored_hands": "scored hands"}


def leaderboard(reader: Reader, rulesets: Sequence[str], min_hands: int, measure: str = "wins",
                limit: int = 500) -> pl.DataFrame:
    """Players per ruleset ranked by `measure` (a `MEASURES` key) among those with at least
    `min_hands` hands in its sample: `measure` is the value, `sample` the hands it is taken
    over, then the ruleset's totals (`player_stats`' figures)."""
    spec = MEASURES[measure]
    figures, params = _player_table(rulesets)
    if measure == "wins":  # the CLI's and the `leaderboard` view's order
        order = "wins DESC, win_rate DESC NULLS LAST, player"
    else:
        order = f"{spec.value} {'DESC' if spec.descending else 'ASC'}, {spec.sample} DESC, player"
    return reader.frame(f"""
        WITH figures AS ({figures})
        SELECT row_number() OVER (PARTITION BY ruleset ORDER BY {order}) AS rank,
               ruleset, player, {spec.value} AS measure, coalesce({spec.sample}, 0) AS sample,
               games, games_won, hands, wins, violations
        FROM figures
        WHERE coalesce({spec.sample}, 0) >= ? AND {spec.value} IS NOT NULL
        ORDER BY ruleset, rank LIMIT ?""",
        [*params, max(min_hands, 0 if measure == "wins" else 1), limit])


def player_names(reader: Reader) -> list[str]:
    return [r[0] for r in reader.rows("SELECT DISTINCT player FROM player_stats ORDER BY 1")]


def player_by_ruleset(reader: Reader, player: str) -> pl.DataFrame:
    """One player's `player_stats` rows (the leaderboard's), with the figures per play."""
    figures, params = _player_table(player=player)
    return reader.frame(f"""
        SELECT ruleset, games, games_won, hands, wins, points_hands, points_win_rate,
               elimination_hands, elimination_win_rate, scored_hands, mean_points, violations
        FROM ({figures}) ORDER BY hands DESC, ruleset""", params)


#: the normal quantile of a two-sided 95% interval
Z95 = 1.959963984540054


def with_wilson(frame: pl.DataFrame, wins: str = "wins", hands: str = "hands") -> pl.DataFrame:
    """Add the 95% Wilson score interval of the win rate (`ci_low`, `ci_high`), and, when
    the frame has a `fair_rate`, where the rate stands against it: `above` or `below` when
    the interval excludes the fair rate, else `within chance`."""
    n = pl.col(hands).cast(pl.Float64)
    p = pl.col(wins).cast(pl.Float64) / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * (p * (1 - p) / n + z2 / (4 * n * n)).sqrt() / (1 + z2 / n)
    out = frame.with_columns(ci_low=pl.when(n > 0).then(centre - half),
                             ci_high=pl.when(n > 0).then(centre + half))
    if "fair_rate" in frame.columns:
        out = out.with_columns(against_fair=pl.when(pl.col("ci_low") > pl.col("fair_rate")).then(pl.lit("above"))
                               .when(pl.col("ci_high") < pl.col("fair_rate")).then(pl.lit("below"))
                               .otherwise(pl.lit("within chance")))
    return out


def first_seat(reader: Reader, rulesets: Sequence[str]) -> pl.DataFrame:
    """Win rate by place in the playing order, per ruleset, play and table size (the
    `first_seat` view), with its 95% interval against the fair rate (1 ÷ players)."""
    clause = f"ruleset IN ({', '.join('?' * len(rulesets))})" if rulesets else "TRUE"
    source = "first_seat"
    if "seat_results" in reader.summaries:  # the view's counts, kept per player: summed
        source = """(
            SELECT ruleset, mode, players, turn_order, sum(hands)::BIGINT AS hands,
                   sum(wins)::BIGINT AS wins, sum(wins) / sum(hands) AS win_rate,
                   1.0 / players AS fair_rate,
                   CASE WHEN sum(scored_hands) > 0 THEN sum(total_points) / sum(scored_hands) END
                       AS mean_points
            FROM seat_results GROUP BY ruleset, mode, players, turn_order)"""
    frame = reader.frame(f"""
        SELECT ruleset, mode, ruleset || ' · ' || mode AS play, players, turn_order, hands, wins,
               win_rate, fair_rate, mean_points
        FROM {source} WHERE {clause} ORDER BY ruleset, mode, players, turn_order""", list(rulesets))
    return with_wilson(frame)


def player_by_seat(reader: Reader, player: str) -> pl.DataFrame:
    """A player's win rate by place in the playing order (0: first to play), per ruleset,
    play and table size, with its 95% interval."""
    if "seat_results" in reader.summaries:
        return with_wilson(reader.frame("""
            SELECT ruleset, mode, ruleset || ' · ' || mode AS play, players, turn_order, hands,
                   wins, wins / hands AS win_rate, 1.0 / players AS fair_rate
            FROM seat_results WHERE player = ? ORDER BY ruleset, mode, players, turn_order""",
            [player]))
    # the hands and games read are only the player's: a join on the whole tables built
    # their hash tables from every row (0.21–0.28 s against 0.11 s at a million hands)
    frame = reader.frame("""
        WITH mine AS (
            SELECT game_id, hand, ruleset, turn_order, won FROM hand_players
            WHERE player = ? AND won IS NOT NULL AND turn_order IS NOT NULL)
        SELECT p.ruleset, coalesce(g.mode, 'points') AS mode,
               p.ruleset || ' · ' || coalesce(g.mode, 'points') AS play, h.players, p.turn_order,
               count(*) AS hands, count(*) FILTER (WHERE p.won) AS wins,
               count(*) FILTER (WHERE p.won) / count(*) AS win_rate, 1.0 / h.players AS fair_rate
        FROM mine p
        JOIN (SELECT game_id, hand, players FROM hands WHERE game_id IN (SELECT game_id FROM mine)) h
          ON p.game_id = h.game_id AND p.hand = h.hand
        JOIN (SELECT game_id, mode FROM games WHERE game_id IN (SELECT game_id FROM mine)) g
          ON p.game_id = g.game_id
        GROUP BY ALL ORDER BY p.ruleset, mode, h.players, p.turn_order""", [player])
    return with_wilson(frame)


def player_points(reader: Reader, player: str) -> pl.DataFrame:
    return reader.frame("""
        SELECT ruleset, least(points, 200) // 5 * 5 AS points, count(*) AS hands
        FROM hand_players WHERE player = ? AND points IS NOT NULL
        GROUP BY ALL ORDER BY ruleset, points""", [player])


#: each special-card column (`summaries.SPECIAL_CARD_COLUMNS`, which the summary sums) and
#: its label
SPECIAL_CARDS = dict(zip(SPECIAL_CARD_COLUMNS, (
    "7s played", "7 totals drawn", "cards drawn for 7s", "2s given", "2s received", "Js played",
    "penalty cards"), strict=True))


def special_cards(reader: Reader, player: str | None) -> pl.DataFrame:
    """Special-card use per hand, per ruleset: one player's means, or everyone's (None)."""
    clause, params = ("player = ?", [player]) if player is not None else ("TRUE", [])
    if "special_card_totals" in reader.summaries:
        columns = ", ".join(f"sum({c}) / sum(hands) AS {c}" for c in SPECIAL_CARDS)
        source = "special_card_totals"
    else:
        columns = ", ".join(f"avg({c}) AS {c}" for c in SPECIAL_CARDS)
        source = "hand_players"
    wide = reader.frame(f"SELECT ruleset, {columns} FROM {source} WHERE {clause} "
                        "GROUP BY ruleset ORDER BY ruleset", params)
    rows = [{"ruleset": record["ruleset"], "what": label, "per hand": record[column]}
            for record in wide.iter_rows(named=True) for column, label in SPECIAL_CARDS.items()]
    return pl.DataFrame(rows, schema={"ruleset": pl.String, "what": pl.String, "per hand": pl.Float64})


def player_violations(reader: Reader, player: str) -> pl.DataFrame:
    """A player's fouls by ruleset and code (they sum to `player_stats.violations`)."""
    return reader.frame("""
        SELECT ruleset, code, count(*) AS violations, count(DISTINCT game_id) AS games
        FROM violations WHERE player = ? AND foul GROUP BY ALL ORDER BY violations DESC""", [player])


def player_head_to_head(reader: Reader, player: str) -> pl.DataFrame:
    """Each opponent met in decided hands: hands together, finished ahead, behind, tied.
    The player's own hands are found first, so the join reads only the games they sat in."""
    return reader.frame("""
        WITH mine AS (
            SELECT game_id, hand, ruleset, finishing_position FROM hand_players
            WHERE player = ? AND finishing_position IS NOT NULL
        )
        SELECT m.ruleset, o.player AS opponent, count(*) AS hands,
               count(*) FILTER (WHERE m.finishing_position < o.finishing_position) AS ahead,
               count(*) FILTER (WHERE m.finishing_position > o.finishing_position) AS behind,
               count(*) FILTER (WHERE m.finishing_position = o.finishing_position) AS tied,
               count(*) FILTER (WHERE m.finishing_position < o.finishing_position) / count(*) AS ahead_rate
        FROM mine m
        JOIN hand_players o ON o.game_id = m.game_id AND o.hand = m.hand AND o.ruleset = m.ruleset
        WHERE o.player <> ? AND o.finishing_position IS NOT NULL
          AND o.game_id IN (SELECT game_id FROM mine)
        GROUP BY ALL ORDER BY hands DESC, opponent""", [player, player])


def two_players(reader: Reader, rulesets: Sequence[str]) -> pl.DataFrame:
    """Everyone in the 2-card matrix: each player's 2s given and received (to and from
    another player), the most given first (the matrix shows the top of this by default)."""
    return reader.frame(f"""
        WITH twos AS ({_twos_given(reader, rulesets)})
        SELECT player, sum(given)::BIGINT AS given, sum(received)::BIGINT AS received FROM (
            SELECT player, sum(twos) AS given, 0 AS received FROM twos GROUP BY player
            UNION ALL SELECT target AS player, 0, sum(twos) FROM twos GROUP BY target)
        GROUP BY player ORDER BY given DESC, received DESC, player""", list(rulesets))


def _twos_given(reader: Reader, rulesets: Sequence[str]) -> str:
    """The 2s each player gave each other player (`player`, `target`, `twos`) in
    `rulesets` (all when empty; one parameter each): the `two_gifts` summary's, or counted
    from `events` when the warehouse has not got it."""
    clause = f"ruleset IN ({', '.join('?' * len(rulesets))})" if rulesets else "TRUE"
    if "two_gifts" in reader.summaries:
        return f"""SELECT player, target, sum(twos)::BIGINT AS twos FROM two_gifts
                   WHERE {clause} GROUP BY player, target"""
    return f"""SELECT player, gift_to AS target, count(*) AS twos FROM events
               WHERE {clause} AND gift_to IS NOT NULL AND gift_to <> player
               GROUP BY player, gift_to"""


def two_targets(reader: Reader, rulesets: Sequence[str], players: int = 25, lift: bool = False,
                min_expected: float = 0.0, chosen: Sequence[str] = ()) -> pl.DataFrame:
    """Who gives 2s to whom, among the players who give most (or among `chosen`).

    Counts are the `two_gifts` summary's (or one scan of the 2s in `events` in a warehouse
    without it); with `lift`, the `two_targets` view also weighs each count against a fair
    choice among the others at each table (a join over every seat of those hands: several
    times slower, so only when asked). `lift` is null where fewer than `min_expected` 2s
    were expected: on a handful of 2s it says nothing.
    """
    clause = f"ruleset IN ({', '.join('?' * len(rulesets))})" if rulesets else "TRUE"
    if lift:
        source = f"""SELECT player, target, sum(twos)::BIGINT AS twos, sum(expected_twos) AS expected_twos
                     FROM two_targets WHERE {clause} GROUP BY player, target"""
    else:
        source = f"""SELECT player, target, twos, NULL::DOUBLE AS expected_twos
                     FROM ({_twos_given(reader, rulesets)})"""
    top_params: list[Any]
    if chosen:
        top, top_params = "SELECT unnest(?::VARCHAR[]) AS player", [list(chosen)]
    else:
        top = "SELECT player FROM t GROUP BY player ORDER BY sum(twos) DESC, player LIMIT ?"
        top_params = [players]
    return reader.frame(f"""
        WITH t AS ({source}),
             top AS ({top})
        SELECT player, target, twos, expected_twos,
               CASE WHEN expected_twos > 0 AND expected_twos >= ? THEN twos / expected_twos END AS lift
        FROM t WHERE player IN (SELECT player FROM top) AND target IN (SELECT player FROM top)
        ORDER BY player, target""", [*rulesets, *top_params, min_expected])


def two_games(reader: Reader, rulesets: Sequence[str], player: str, target: str,
              limit: int = 200) -> pl.DataFrame:
    """The games where `player` gave 2s to `target` (a heatmap cell's games), most such 2s
    first: how many, and the hand and seq of the first, for the replay link."""
    clause = f"e.ruleset IN ({', '.join('?' * len(rulesets))})" if rulesets else "TRUE"
    return reader.frame(f"""
        SELECT e.game_id, e.ruleset, g.start_time, count(*) AS twos,
               count(DISTINCT e.hand) AS hands, arg_min(e.hand, e.seq) AS first_hand,
               min(e.seq) AS first_seq
        FROM events e JOIN games g ON e.game_id = g.game_id
        WHERE {clause} AND e.player = ? AND e.gift_to = ?
        GROUP BY ALL ORDER BY twos DESC, g.start_time DESC NULLS LAST, e.game_id
        LIMIT ?""", [*rulesets, player, target, limit])


# ------------------------------------------------------------------------ compliance


def violations_by(reader: Reader, flt: GameFilter, column: str) -> pl.DataFrame:
    """Violations counted by code and one more dimension: ruleset or server build."""
    assert column in ("ruleset", "server_build")
    if column == "server_build":
        where, params = flt.where()
        source, other = "violations v JOIN games g USING (game_id)", "coalesce(g.server_build, '?')"
    else:
        source, where, params = flt.on("violations", "v")
        other = "v.ruleset"
    return reader.frame(f"""
        SELECT v.code, {other} AS {column}, count(*) AS violations, count(DISTINCT v.game_id) AS games
        FROM {source}
        WHERE {where} GROUP BY ALL ORDER BY violations DESC""", params)


def builds(reader: Reader, flt: GameFilter) -> pl.DataFrame:
    """Per server build: its games, violations and compliance rate, worst first."""
    where, params = flt.where()
    return reader.frame(f"""
        SELECT coalesce(server_build, '?') AS server_build, ruleset, count(*) AS games,
               count(*) FILTER (WHERE violations > 0) AS with_violations,
               sum(violations)::BIGINT AS violations,
               avg(CASE WHEN violations > 0 THEN 1.0 ELSE 0.0 END) AS violation_rate
        FROM games g WHERE {where} GROUP BY ALL ORDER BY server_build, ruleset""", params)


def violations_over_time(reader: Reader, flt: GameFilter) -> pl.DataFrame:
    where, params = flt.where()
    unit = _time_unit(reader, where, params)
    frame = reader.frame(f"""
        SELECT date_trunc('{unit}', g.start_time)::DATE AS period, v.code, count(*) AS violations
        FROM violations v JOIN games g USING (game_id)
        WHERE {where} AND g.start_time IS NOT NULL GROUP BY ALL ORDER BY period, v.code""", params)
    return _every_period(frame, unit, "code", ["violations"])


def violation_rows(reader: Reader, flt: GameFilter, codes: Sequence[str], limit: int = 300) -> pl.DataFrame:
    """The latest violations (newest games first), each with what the replay needs."""
    where, params = flt.where()
    clause = f"v.code IN ({', '.join('?' * len(codes))})" if codes else "TRUE"
    return reader.frame(f"""
        SELECT g.start_time, v.game_id, v.hand, v.seq, v.code, v.player, v.message,
               v.ruleset, coalesce(g.server_build, '?') AS server_build, v.file, v.line
        FROM violations v JOIN games g USING (game_id)
        WHERE {where} AND {clause}
        ORDER BY g.start_time DESC NULLS LAST, v.game_id, v.seq LIMIT ?""", [*params, *codes, limit])


# ------------------------------------------------------------------------ pages (the HTTP API)
#
# Keyset pages for `service/` (and any caller that pages through a large result): each takes
# the last row's key of the previous page (`after`, None for the first page) and returns at
# most `limit` rows in the key's order, so a page costs the same wherever it starts.


def game_violations(reader: Reader, game: str, partition: Partition | None = None) -> pl.DataFrame:
    """One game's violations as the warehouse holds them, in line order."""
    where, params = _one_game(game, partition)
    return reader.frame(f"""
        SELECT seq, hand, code, player, message, file, line FROM violations
        WHERE {where} ORDER BY seq NULLS FIRST, line NULLS FIRST, code""", params)


def leaderboard_page(reader: Reader, rulesets: Sequence[str], min_hands: int,
                     after: tuple[str, int] | None, limit: int) -> pl.DataFrame:
    """The `leaderboard` view (ranks over every player of the ruleset) in (ruleset, rank)
    order, from after the key `after`."""
    clauses: list[str] = ["hands >= ?"]
    params: list[Any] = [min_hands]
    if rulesets:
        clauses.append(f"ruleset IN ({', '.join('?' * len(rulesets))})")
        params += list(rulesets)
    if after is not None:
        clauses.append("(ruleset, rank) > (?, ?)")
        params += list(after)
    return reader.frame(f"""
        SELECT ruleset, rank, player, games, games_won, hands, wins, win_rate, mean_points,
               total_points, violations
        FROM leaderboard WHERE {' AND '.join(clauses)}
        ORDER BY ruleset, rank LIMIT ?""", [*params, limit])


def player_rankings(reader: Reader, player: str) -> pl.DataFrame:
    """One player's `leaderboard` rows: their figures and rank in each ruleset."""
    return reader.frame("""
        SELECT ruleset, rank, games, games_won, hands, wins, win_rate, mean_points, total_points,
               violations
        FROM leaderboard WHERE player = ? ORDER BY ruleset""", [player])


#: `compliance_page`'s period units: the DuckDB date_trunc unit and the label's format
PERIODS = {"day": ("day", "%Y-%m-%d"), "week": ("week", "%Y-%m-%d"), "month": ("month", "%Y-%m")}


def compliance_page(reader: Reader, flt: GameFilter, codes: Sequence[str], period: str | None,
                    after: tuple[str, str, str, str] | None, limit: int) -> pl.DataFrame:
    """Violations (and the games they are in) by code, ruleset and server build — the
    `compliance` view's grouping — and, with `period`, by the day, week (its Monday) or
    month of the game's start (`unknown` without a timestamp); in key order."""
    where, params = flt.where()
    if codes:
        where += f" AND v.code IN ({', '.join('?' * len(codes))})"
        params += list(codes)
    if period is None:
        label = "''"
    else:
        unit, fmt = PERIODS[period]
        label = f"coalesce(strftime(date_trunc('{unit}', g.start_time), '{fmt}'), 'unknown')"
    keyset, key_params = ("TRUE", []) if after is None else (
        "(code, ruleset, server_build, period) > (?, ?, ?, ?)", list(after))
    return reader.frame(f"""
        SELECT * FROM (
            SELECT v.code, v.ruleset, coalesce(g.server_build, '?') AS server_build,
                   {label} AS period, count(*) AS violations, count(DISTINCT v.game_id) AS games
            FROM violations v JOIN games g USING (game_id)
            WHERE {where} GROUP BY ALL)
        WHERE {keyset}
        ORDER BY code, ruleset, server_build, period LIMIT ?""", [*params, *key_params, limit])


def violation_page(reader: Reader, flt: GameFilter, codes: Sequence[str],
                   after: tuple[Any, str, int] | None, limit: int) -> pl.DataFrame:
    """Violations one by one, newest games first (`violation_rows` with a key): the key is
    the game's start (year 1 when it has none), its id, and the row's place
    among the game's violations."""
    where, params = flt.where()
    if codes:
        where += f" AND v.code IN ({', '.join('?' * len(codes))})"
        params += list(codes)
    keyset, key_params = ("TRUE", []) if after is None else (
        "(started < ?::TIMESTAMPTZ OR (started = ?::TIMESTAMPTZ AND (game_id, n) > (?, ?)))",
        [after[0], after[0], after[1], after[2]])
    return reader.frame(f"""
        SELECT * FROM (
            SELECT coalesce(g.start_time, '0001-01-01 00:00:00+00'::TIMESTAMPTZ) AS started, v.game_id,
                   row_number() OVER (PARTITION BY v.game_id
                                      ORDER BY v.seq NULLS FIRST, v.line NULLS FIRST, v.code,
                                               v.message) AS n,
                   g.start_time, v.hand, v.seq, v.code, v.player, v.message, v.ruleset,
                   coalesce(g.server_build, '?') AS server_build, v.file, v.line
            FROM violations v JOIN games g USING (game_id)
            WHERE {where})
        WHERE {keyset}
        ORDER BY started DESC, game_id, n LIMIT ?""", [*params, *key_params, limit])


def batch_row(reader: Reader, batch: int) -> dict[str, Any] | None:
    """One `batches` row (an ingest's record: files, counts, the table versions it left)."""
    frame = reader.frame("SELECT * FROM batches WHERE id = ?", [batch])
    return frame.row(0, named=True) if frame.height else None


# ------------------------------------------------------------------------ live (the Live page)
#
# What landed lately, bounded by time: `live_window` finds the first ingest batch that ended
# after `since` (the small `batches` table), and the other questions filter the game tables
# by `ingest_batch >= ` that number, a constant DuckDB checks against each part's row-group
# statistics: the parts of older batches are skipped, not read, however big the warehouse.
# (A game completed by a later push carries that batch: its rows were replaced.)


def _utc(frame: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """Timestamps in the `UTC` zone (DuckDB names it `Etc/UTC`), to compare with Python's."""
    return frame.with_columns(pl.col(c).dt.convert_time_zone("UTC") for c in columns)


@dataclass(frozen=True, slots=True)
class LiveWindow:
    """The ingest batches committed since `since`, and the latest one whatever its age."""

    since: datetime
    first_batch: int | None  # the first batch that ended at or after `since` (None: none did)
    last_batch: int | None  # the latest ingest batch (None: the warehouse has none)
    last_commit: datetime | None  # when it ended
    batches: int
    games: int
    lines: int


def live_window(reader: Reader, since: datetime) -> LiveWindow:
    first, batches, games, lines = reader.rows("""
        SELECT min(id), count(*), coalesce(sum(games_new + games_updated), 0)::BIGINT,
               coalesce(sum(lines), 0)::BIGINT
        FROM batches WHERE kind = 'ingest' AND ended >= ?""", [since])[0]
    latest = reader.rows("SELECT id, ended FROM batches WHERE kind = 'ingest' ORDER BY id DESC LIMIT 1")
    last, ended = latest[0] if latest else (None, None)
    return LiveWindow(since, first, last, ended, batches, games, lines)


def live_throughput(reader: Reader, since: datetime) -> pl.DataFrame:
    """Per minute since `since`: the games and lines committed, the batches and their mean
    commit time (seconds from a batch's start to its end); minutes without a commit are
    rows of zeros, so a chart shows the gap."""
    frame = reader.frame("""
        SELECT date_trunc('minute', ended) AS minute,
               sum(games_new + games_updated)::BIGINT AS games, sum(lines)::BIGINT AS lines,
               count(*) AS batches, avg(epoch(ended - started)) AS commit_seconds
        FROM batches WHERE kind = 'ingest' AND ended >= ?
        GROUP BY ALL ORDER BY minute""", [since])
    frame = _utc(frame, "minute")
    if not frame.height:
        return frame
    minutes = frame.select(pl.datetime_range(pl.col("minute").min(), pl.col("minute").max(), "1m")
                           .alias("minute"))
    full = minutes.join(frame, on="minute", how="left")
    return full.with_columns(pl.col(c).fill_null(0) for c in ("games", "lines", "batches"))


def live_violation_rate(reader: Reader, first_batch: int, since: datetime, minutes: int = 5) -> pl.DataFrame:
    """Per server build and `minutes`-long period of commit time since `since`: the games
    committed, those with a violation, and their share (the rate)."""
    return _utc(reader.frame(f"""
        SELECT time_bucket(INTERVAL {int(minutes)} MINUTE, b.ended) AS period,
               coalesce(g.server_build, '?') AS server_build, count(*) AS games,
               count(*) FILTER (WHERE g.violations > 0) AS with_violations,
               count(*) FILTER (WHERE g.violations > 0) / count(*) AS violation_rate
        FROM games g JOIN batches b ON b.id = g.ingest_batch
        WHERE g.ingest_batch >= ? AND b.ended >= ?
        GROUP BY ALL ORDER BY period, server_build""", [first_batch, since]), "period")


def live_commit_lag(reader: Reader, first_batch: int) -> dict[str, Any]:
    """Of the whole games committed since `first_batch`: how long after a game's end its
    batch committed (seconds: median, 95th percentile), over how many games."""
    return reader.frame("""
        SELECT count(*) AS games,
               quantile_cont(epoch(b.ended - g.end_time), 0.5) AS p50,
               quantile_cont(epoch(b.ended - g.end_time), 0.95) AS p95
        FROM games g JOIN batches b ON b.id = g.ingest_batch
        WHERE g.ingest_batch >= ? AND g.complete AND g.end_time IS NOT NULL""",
                        [first_batch]).row(0, named=True)


def live_latest_games(reader: Reader, first_batch: int, limit: int = 20) -> pl.DataFrame:
    """The games committed last (since `first_batch`), newest batch first, with their
    violation codes."""
    return _utc(reader.frame("""
        SELECT b.ended AS committed, g.ingest_batch AS batch, g.game_id, g.ruleset,
               coalesce(g.server_build, '?') AS server_build, g.status, g.violations,
               array_to_string(v.codes, ', ') AS codes, array_to_string(g.players, ', ') AS players,
               g.end_time
        FROM games g JOIN batches b ON b.id = g.ingest_batch
        LEFT JOIN (SELECT game_id, list(DISTINCT code ORDER BY code) AS codes FROM violations
                   WHERE ingest_batch >= ? GROUP BY game_id) v USING (game_id)
        WHERE g.ingest_batch >= ?
        ORDER BY g.ingest_batch DESC, g.end_time DESC NULLS LAST, g.game_id LIMIT ?""",
                             [first_batch, first_batch, limit]), "committed", "end_time")


def game_count(reader: Reader) -> int:
    """The warehouse's games (a Parquet footer count: no row is read)."""
    return int(reader.rows("SELECT count(*) FROM games")[0][0])


def since_text(since: date | str | None) -> str | None:
    """An audit's start filter as the audits take it: a date as ISO text; text (an ISO
    date or moment, as --since gives it) as it is."""
    return since.isoformat() if isinstance(since, date) else since


def deal_audit(reader: Reader, build: str | None = None, ruleset: str | None = None,
               since: date | str | None = None, level: float = 0.01) -> dict[str, Any]:
    """The deal audit (`ingest.fairplay`, docs/fairplay.md) of the deals matching the
    filters, as `AuditReport.to_json()` gives it: every test, the findings at `level`."""
    from ingest import fairplay  # scipy loads on the first audit, not with the reader

    with fairplay.deals_from_warehouse(reader, build=build, ruleset=ruleset, since=since_text(since)) as deals:
        return fairplay.audit_deals(deals, level).to_json()  # (the read's folder removed after)


def pair_audit(reader: Reader, build: str | None = None, ruleset: str | None = None,
               since: date | str | None = None, level: float = 0.01, permutations: int = 200) -> dict[str, Any]:
    """The pair audit (`ingest.pairs`, docs/fairplay.md) of the games matching the filters,
    as `PairReport.to_json()` gives it, with the null's highest scores (`null_max`)."""
    from ingest import pairs

    with pairs.pairs_from_warehouse(reader, build=build, ruleset=ruleset, since=since_text(since)) as data:
        report = pairs.audit_pairs(data, level, permutations)  # (the read's folder removed after)
    return pair_report_json(report)


def audit(reader: Reader, params: audits.Params) -> dict[str, Any]:
    """The report of `params` (a deal or pair audit, `ingest.audits`) made now from the
    reader's snapshot."""
    if params.kind == "deals":
        return deal_audit(reader, params.build, params.ruleset, params.since, params.level)
    return pair_audit(reader, params.build, params.ruleset, params.since, params.level, params.permutations or 200)


def current_audit(reader: Reader, params: audits.Params) -> dict[str, Any]:
    """The report of `params`: the one `haftkhabis audit … --store` kept, when it was made
    from the tables the reader sees; else made now (`audit`)."""
    from ingest import audits

    stored = audits.load(reader, params)
    return stored.report if stored is not None and stored.current else audit(reader, params)


def pair_report_json(report: PairReport) -> dict[str, Any]:
    """The pair report as the pages read it: `PairReport.to_json()` with the null's highest
    scores (`null_max`, whence the case threshold), infinities (no finite score in a
    relabelling) as None."""
    return {**report.to_json(), "null_max": [m if math.isfinite(m) else None for m in report.null_max]}


# ------------------------------------------------------------------------ the support desk's cases
#
# A case is the latest revision of its rows in `cases` (ingest/cases.py); the revisions
# before it are its history.

#: the latest revision of every case
_LATEST_CASES = """
    SELECT * FROM cases
    QUALIFY row_number() OVER (PARTITION BY case_id ORDER BY revision DESC) = 1"""


@dataclass(frozen=True, slots=True)
class CaseSearch:
    """What the desk looks for: a game (its exact id), a tag, a player, an open or decided
    status, and text found (in any case) in the notes, the decision, the tags, the game id
    or the player."""

    game: str = ""
    tag: str = ""
    player: str = ""
    status: str = ""  # open · decided · "" for both
    text: str = ""


def cases(reader: Reader, search: CaseSearch, limit: int = 200,
          after: tuple[Any, str] | None = None) -> pl.DataFrame:
    """The cases matching `search`, the most recently updated first (the key: `updated_at`,
    `case_id`; `after` the last row's key of the previous page)."""
    clauses: list[str] = []
    params: list[Any] = []
    if search.game:
        clauses.append("game_id = ?")
        params.append(search.game)
    if search.tag:
        clauses.append("list_contains(tags, ?)")
        params.append(search.tag.strip().lower())
    if search.player:
        clauses.append("player = ?")
        params.append(search.player)
    if search.status == "open":
        clauses.append("decision IS NULL")
    elif search.status == "decided":
        clauses.append("decision IS NOT NULL")
    if search.text:
        clauses.append("""contains(lower(concat_ws(' ', game_id, coalesce(player, ''), coalesce(decision, ''),
                                                  array_to_string(tags, ' '),
                                                  array_to_string(list_transform(notes, lambda n: n.text), ' '))), ?)""")
        params.append(search.text.strip().lower())
    if after is not None:
        clauses.append("(updated_at < ?::TIMESTAMPTZ OR (updated_at = ?::TIMESTAMPTZ AND case_id > ?))")
        params += [after[0], after[0], after[1]]
    where = " AND ".join(clauses) or "TRUE"
    return reader.frame(f"""
        SELECT case_id, revision, game_id, hand, seq, player, tags, notes, decision, decided_by,
               decided_at, opened_by, opened_at, updated_by, updated_at, batch,
               CASE WHEN decision IS NULL THEN 'open' ELSE 'decided' END AS status
        FROM ({_LATEST_CASES}) WHERE {where}
        ORDER BY updated_at DESC, case_id LIMIT ?""", [*params, limit])


def case_revisions(reader: Reader, case_id: str) -> pl.DataFrame:
    """Every revision of one case, the first first (empty: no such case)."""
    return reader.frame("""
        SELECT case_id, revision, game_id, hand, seq, player, tags, notes, decision, decided_by,
               decided_at, opened_by, opened_at, updated_by, updated_at, batch
        FROM cases WHERE case_id = ? ORDER BY revision""", [case_id])


def case_tags(reader: Reader) -> list[str]:
    """Every tag the cases hold now, for the desk's filter."""
    return [r[0] for r in reader.rows(
        f"SELECT DISTINCT unnest(tags) AS tag FROM ({_LATEST_CASES}) ORDER BY tag")]
