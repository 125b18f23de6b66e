"""The deal audit: are the warehouse's deals what a uniform shuffle deals?

Every opening hand, starter and logged stock is read from the warehouse (the engine's deal
facts in `hands` and `hand_players`, with their games' build, decks and seats) a chunk of
whole games at a time (`WarehouseDeals`; the simulator's deals are a `DealSet`, one
chunk), each chunk's counts added to what the tests rest on (`DealTally`: counts and sums
per group, the repeat test's hand pairs on disk), so the audit's memory does not grow with
the warehouse, and tested against the exact expectation of a uniform shuffle:

- `hand.special`: special cards (ranks whose effect is not plain, per ruleset) in a hand;
  a hand's count is hypergeometric, the sum over n hands is tested exactly (the n-fold
  convolution of scipy's pmf) up to `EXACT_UP_TO` hands, by its normal limit above;
- `hand.ranks`, `hand.suits`: a position's rank or suit counts, Pearson's chi-square
  divided by the finite-population factor (N-7)/(N-1) (a hand is multivariate
  hypergeometric, not multinomial);
- `starter.ranks`: the starter's rank, uniform over the ranks the ruleset allows;
- `stock.position`: each card's relative position in the logged stock (the part below the
  cards a forbidden-starter ruleset turned and put back), uniform under the null;
- `deals.repeat`: deals sharing two or more identical hands (an exact repeat shares all),
  found by grouping hands packed into one integer each, not by comparing pairs;
- `deals.serial`: the cards a seat's hand shares with its hand of the game's previous deal
  (a weak shuffle carries the last deal over), exactly as the special cards.

Each test gives its effect size with a 95 % interval, its p-value and the count it rests
on; Benjamini–Hochberg over every test made decides the findings. A test whose counts are
too small for its approximation says "not enough games" and is not made.
"""

from __future__ import annotations

import functools
import math
import shutil
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from scipy import optimize, signal, stats

from engine._core import card_codes
from engine.cards import RANKS, SUITS
from engine.rulesets import RULESETS
from ingest.scratch import Scratch, bound, copy_rows, own_duckdb

HAND_SIZE = 7
#: the special-card sum is tested exactly up to this many hands, by its normal limit above
EXACT_UP_TO = 3000
#: fewest hands (deals, stock occurrences) for a hand or stock test
MIN_HANDS = 30
#: a chi-square test is made only when every expected count is at least this
MIN_EXPECTED = 5.0
NOT_ENOUGH = "not enough games"


#: the card of each code the warehouse stores (`hand_players.opening_cards`,
#: `hands.starter`, `hands.stock`): the core's `card_codes()`, declared once there
CARDS: tuple[str, ...] = tuple(card_codes())
_CODES = {card: code for code, card in enumerate(CARDS)}
#: each code's rank index (notation order) and suit index, looked up, not recomputed
RANK_OF = np.asarray([RANKS.index(card[0]) for card in CARDS], dtype=np.int64)
SUIT_OF = np.asarray([SUITS.index(card[1]) for card in CARDS], dtype=np.int64)


def card_code(card: str) -> int:
    """A card's code (the core's, `card_codes()`); KeyError if it is not a card's
    spelling."""
    return _CODES[card]


def card_name(code: int) -> str:
    return CARDS[code]


def special_ranks(ruleset: str) -> frozenset[int]:
    """The rank indexes whose effect in the ruleset is not plain (7, 8, J, 2, A, …)."""
    rules = RULESETS[ruleset]
    return frozenset(RANKS.index(r) for r, effect in rules.effects.items() if effect != "plain")


# --------------------------------------------------------------------------- the data


def _dense(values: np.ndarray | pa.Array | Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Labels sorted and each value's index among them (the audit's groups and scopes are
    laid out in label order)."""
    encoded = pa.chunked_array([pa.array(values, type=pa.string())]
                               if not isinstance(values, pa.ChunkedArray) else values.chunks,
                               type=pa.string())
    labels = pc.unique(encoded).sort()
    index = pc.index_in(encoded, value_set=labels)
    return labels.to_pylist(), index.to_numpy().astype(np.int64) if len(encoded) else np.zeros(0, np.int64)


@dataclass
class Deals:
    """Deals as numpy arrays, the audit's input. Per deal: its game (`game`, a number equal
    for a game's deals, which are consecutive, in hand order; `game_ids` its id), hand,
    ruleset, build and month (indexes into their sorted labels), decks, players and
    starter (-1 when none); per hand (one row per deal and seat, a deal's rows together in
    seat order): its deal, header seat, position after the dealer (0 = the dealer, 1 =
    the next clockwise), player (an index into `player_names`) and 7 card codes (`cards`,
    hands × 7); the logged stocks, top first, flat with offsets per deal (empty when the
    deal logged none)."""

    game_ids: Sequence[str] | pa.ChunkedArray
    game: np.ndarray
    hand_no: np.ndarray
    rulesets: list[str]
    ruleset_ix: np.ndarray
    builds: list[str]
    build_ix: np.ndarray
    months: list[str]
    month_ix: np.ndarray
    decks: np.ndarray
    players: np.ndarray
    starter: np.ndarray
    hand_deal: np.ndarray
    seat: np.ndarray
    position: np.ndarray
    player_names: list[str]
    player_ix: np.ndarray
    cards: np.ndarray
    stock_cards: np.ndarray
    stock_offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.hand_no)

    @property
    def players_of_hand(self) -> np.ndarray:
        return self.players[self.hand_deal]

    def game_id(self, deal: int) -> str:
        value = self.game_ids[deal]
        return str(value if isinstance(value, str) else value.as_py())

    def rows(self) -> list[tuple[Any, ...]]:
        """Every deal as plain values (its game, hand, ruleset, build, month, decks,
        starter, seats with their player, position and cards, stock): what two readings of
        one warehouse compare."""
        starts = np.r_[0, np.cumsum(self.players)]
        out = []
        for d in range(len(self)):
            hands = tuple((int(self.seat[h]), self.player_names[self.player_ix[h]], int(self.position[h]),
                           tuple(self.cards[h].tolist())) for h in range(starts[d], starts[d + 1]))
            stock = tuple(self.stock_cards[self.stock_offsets[d]:self.stock_offsets[d + 1]].tolist())
            out.append((self.game_id(d), int(self.hand_no[d]), self.rulesets[self.ruleset_ix[d]],
                        self.builds[self.build_ix[d]], self.months[self.month_ix[d]], int(self.decks[d]),
                        int(self.starter[d]), hands, stock))
        return out


@dataclass
class DealSet:
    """Deals gathered one by one (`add`: the simulator's records, a warehouse's raw `deal`
    lines), made into `Deals` for the audit (`frozen`)."""

    game_id: list[str] = field(default_factory=list)
    hand_no: list[int] = field(default_factory=list)
    ruleset: list[str] = field(default_factory=list)
    build: list[str] = field(default_factory=list)
    month: list[str] = field(default_factory=list)
    decks: array = field(default_factory=lambda: array("b"))
    players: array = field(default_factory=lambda: array("b"))
    starter: array = field(default_factory=lambda: array("b"))
    hand_deal: array = field(default_factory=lambda: array("q"))
    hand_seat: array = field(default_factory=lambda: array("b"))
    hand_position: array = field(default_factory=lambda: array("b"))
    hand_player: list[str] = field(default_factory=list)
    hand_cards: array = field(default_factory=lambda: array("b"))  # 7 codes a hand, flat
    stock_cards: array = field(default_factory=lambda: array("b"))
    stock_offsets: array = field(default_factory=lambda: array("q", [0]))

    def __len__(self) -> int:
        return len(self.game_id)

    def add(self, *, game_id: str, hand: int, ruleset: str, build: str, month: str, decks: int,
            seats: Sequence[str], dealer: str | None, hands: Mapping[str, Sequence[str]],
            starter: str | None, stock: Sequence[str] | None) -> bool:
        """Add one deal; False (and nothing added) when it is not a full deal of 7 cards
        to every seated player with a known ruleset and a dealer at the table."""
        if ruleset not in RULESETS or dealer is None or dealer not in seats or set(hands) != set(seats) \
                or any(len(h) != HAND_SIZE for h in hands.values()):
            return False
        codes = _CODES
        try:
            coded = {p: [codes[c] for c in hands[p]] for p in seats}
            start = codes[starter] if starter else -1
            logged = [codes[c] for c in stock] if stock else []
        except (KeyError, TypeError):
            return False
        index = len(self.game_id)
        dealer_seat = list(seats).index(dealer)
        for seat, player in enumerate(seats):
            self.hand_deal.append(index)
            self.hand_seat.append(seat)
            self.hand_position.append((seat - dealer_seat) % len(seats))
            self.hand_player.append(player)
            self.hand_cards.extend(coded[player])
        self.game_id.append(game_id)
        self.hand_no.append(hand)
        self.ruleset.append(ruleset)
        self.build.append(build)
        self.month.append(month)
        self.decks.append(decks)
        self.players.append(len(seats))
        self.starter.append(start)
        self.stock_cards.extend(logged)
        self.stock_offsets.append(len(self.stock_cards))
        return True

    def frozen(self) -> Deals:
        rulesets, ruleset_ix = _dense(self.ruleset)
        builds, build_ix = _dense(self.build)
        months, month_ix = _dense(self.month)
        players, player_ix = _dense(self.hand_player)
        games = np.asarray(self.game_id, dtype=object)
        game = np.r_[0, np.cumsum(games[1:] != games[:-1])] if len(games) else np.zeros(0, np.int64)
        return Deals(
            game_ids=list(self.game_id), game=game.astype(np.int64),
            hand_no=np.asarray(self.hand_no, dtype=np.int64), rulesets=rulesets, ruleset_ix=ruleset_ix,
            builds=builds, build_ix=build_ix, months=months, month_ix=month_ix,
            decks=np.asarray(self.decks, dtype=np.int64), players=np.asarray(self.players, dtype=np.int64),
            starter=np.asarray(self.starter, dtype=np.int64),
            hand_deal=np.asarray(self.hand_deal, dtype=np.int64),
            seat=np.asarray(self.hand_seat, dtype=np.int64),
            position=np.asarray(self.hand_position, dtype=np.int64), player_names=players,
            player_ix=player_ix,
            cards=np.asarray(self.hand_cards, dtype=np.int8).reshape(-1, HAND_SIZE),
            stock_cards=np.asarray(self.stock_cards, dtype=np.int8),
            stock_offsets=np.asarray(self.stock_offsets, dtype=np.int64))


def deals_from_records(records: Iterable[Mapping[str, Any]], *, ruleset: str, build: str = "sim",
                       month: str = "2026-01", decks: int = 1, into: DealSet | None = None) -> DealSet:
    """Deals given as `engine.simulate.simulate_deals` yields them (game, hand, seats,
    dealer, hands, starter, stock), as a DealSet (the bench's and the tests' input)."""
    deals = into if into is not None else DealSet()
    for r in records:
        deals.add(game_id=r["game"], hand=r["hand"], ruleset=ruleset, build=build, month=month,
                  decks=decks, seats=r["seats"], dealer=r["dealer"], hands=r["hands"],
                  starter=r["starter"], stock=r["stock"])
    return deals


def game_filter(build: str | None, since: str | None, ruleset: str | None,
                rows: str = "e") -> tuple[list[str], list[Any]]:
    """The audits' filters as SQL conditions on `events e JOIN games g` (or on the table
    aliased `rows`) and their parameters: a server build (`unknown` for a header that
    names none), games started at or after `since` (an ISO date or moment), a ruleset."""
    where: list[str] = []
    params: list[Any] = []
    if build is not None:
        where.append("coalesce(g.server_build, 'unknown') = ?")
        params.append(build)
    if since is not None:
        where.append("g.start_time >= CAST(? AS TIMESTAMPTZ)")
        params.append(since)
    if ruleset is not None:
        where.append(f"{rows}.ruleset = ?")
        params.append(ruleset)
    return where, params


#: games a chunk of the audit (`WarehouseDeals.chunks`): what the audit holds at a time is
#: one chunk's deals and what the tests make of them, whatever the warehouse's size. Fewer
#: than the pair audit's 50,000 (`ingest.pairs.CHUNK_GAMES`): 50,000 persian games (145,000
#: deals, 725,000 hands) took the audit's peak from 0.66 to 0.84 GB (docs/fairplay.md)
CHUNK_GAMES = 20_000

#: rows a record batch when the deals are copied from the reader or read back a chunk at
#: a time
BATCH_ROWS = 65_536
#: chunk folders written to at once when the deals are put in their chunks
_OPEN_FILES = 16


def deals_from_warehouse(reader: Any, *, build: str | None = None, since: str | None = None,
                         ruleset: str | None = None, chunk_games: int = CHUNK_GAMES,
                         folder: str | None = None) -> WarehouseDeals:
    """Every deal the warehouse replayed without a violation at its `deal` line, with its
    game's build (`unknown` when the header names none), decks and seats; `since` is an
    ISO date or moment (the game's start), `reader` an `ingest.read.Reader`. Read into a
    temporary folder (under `folder`) and given to the audit a chunk of `chunk_games`
    whole games at a time (`WarehouseDeals`), so its memory does not grow with the
    warehouse; close it (or use it as a context manager) to remove the folder.

    The deal's facts are the engine's (`hands.dealer_seat`, `starter`, `stock`,
    `deal_violations`; `hand_players.deal_position`, `opening_cards`). A warehouse holding
    games ingested before schema 7, whose rows have no deal facts, is read from its `deal`
    lines instead (as `deals_from_events` does) until those games are ingested again
    (docs/decisions.md)."""
    data = WarehouseDeals(chunk_games, folder)
    try:
        data.read(reader, build, since, ruleset)
    except BaseException:
        data.close()
        raise
    return data


class WarehouseDeals(Scratch):
    """The deals of a warehouse (`deals_from_warehouse`) in a temporary folder rather than
    in memory: the reader's rows copied as they lie (the reader sorts and joins nothing);
    in a DuckDB of the read's own within `SORT_MEMORY`, spilling to the folder
    (`ingest.scratch`), the games with a clean deal sorted by id and numbered into chunks
    of `chunk_games`, and every deal and seat written to its chunk's folder (the rows are
    not sorted: a chunk's are, when it is read). `chunks()` reads them back a chunk at a
    time as `Deals` (a game's deals together, in hand order, as the serial test needs).
    `close()` removes the folder."""

    def __init__(self, chunk_games: int = CHUNK_GAMES, folder: str | None = None) -> None:
        super().__init__("haftkhabis-deals-", folder)
        self.chunk_games = max(1, chunk_games)
        self._chunks = 0
        self._legacy = False  # read from the `deal` lines (no deal facts in the rows)
        self._count: int | None = None

    def __enter__(self) -> WarehouseDeals:
        return self

    def __len__(self) -> int:
        """The deals (every chunk read once)."""
        if self._count is None:
            self._count = sum(len(chunk) for chunk in self.chunks())
        return self._count

    def rows(self) -> list[tuple[Any, ...]]:
        """Every deal as `Deals.rows` gives it, every chunk's in order (all held: for the
        tests' comparisons of two readings of a small warehouse)."""
        return [row for chunk in self.chunks() for row in chunk.rows()]

    def read(self, reader: Any, build: str | None, since: str | None, ruleset: str | None) -> None:
        """The reader's rows copied as they lie; the games with a clean deal sorted by id
        and numbered into chunks; every deal (and seat) written to its chunk's folder."""
        self._legacy = bool(reader.rows("SELECT count(*) FROM hands WHERE dealer_seat IS NULL")[0][0])
        where, params = game_filter(build, since, ruleset, rows="g")
        games = copy_rows(reader, "SELECT g.game_id, g.ruleset, g.month, coalesce(g.server_build, 'unknown')"
                          " AS build, coalesce(g.decks, 1) AS decks, g.players FROM games g"
                          f" WHERE {' AND '.join(where or ['true'])}", params, self.root / "games-read", BATCH_ROWS)
        only = ["ruleset = ?"] if ruleset is not None else []
        known = f"ruleset IN ({', '.join('?' * len(RULESETS))})"
        if self._legacy:
            lines = copy_rows(reader, "SELECT game_id, hand, raw, ruleset, month FROM events WHERE type = 'deal'"
                              f" AND NOT set_aside AND code IS NULL{''.join(' AND ' + w for w in only)}",
                              [ruleset] if only else [], self.root / "lines-read", BATCH_ROWS)
            dealt = ("SELECT e.game_id, e.hand, e.raw, e.ruleset, e.month, g.build, g.decks, g.players"
                     " FROM read_parquet($lines) e JOIN read_parquet($games) g"
                     " ON g.game_id = e.game_id AND g.ruleset = e.ruleset AND g.month = e.month")
            files = {"lines": lines, "games": games}
            tables = {"deals": dealt}
        else:
            hands = copy_rows(reader, "SELECT game_id, hand, ruleset, month, players, coalesce(starter, -1)"
                              f" AS starter, stock FROM hands WHERE deal_violations = 0 AND {known}"
                              f"{''.join(' AND ' + w for w in only)}",
                              [*RULESETS, *([ruleset] if only else [])], self.root / "hands-read", BATCH_ROWS)
            seats = copy_rows(reader, "SELECT game_id, hand, ruleset, month, seat, deal_position, player,"
                              f" opening_cards FROM hand_players{' WHERE ' + only[0] if only else ''}",
                              [ruleset] if only else [], self.root / "seats-read", BATCH_ROWS)
            dealt = ("SELECT h.game_id, h.hand, h.ruleset, h.month, g.build, g.decks, h.players, h.starter,"
                     " h.stock FROM read_parquet($hands) h JOIN read_parquet($games) g"
                     " ON g.game_id = h.game_id AND g.ruleset = h.ruleset AND g.month = h.month"
                     " WHERE len(g.players) > 0")
            files = {"hands": hands, "seats": seats, "games": games}
            # a seat of a deal left out (a violation) finds no deal when its chunk is read
            tables = {"deals": dealt, "seats": "SELECT * FROM read_parquet($seats)"}
        if not all(files.values()):
            return
        con = own_duckdb(self.root)
        try:
            # the games with a clean deal in id order (a sort of the ids only, spilling),
            # each given its chunk: whole games, `chunk_games` a chunk
            query, values = bound(f"SELECT DISTINCT game_id FROM ({dealt})", files)
            numbered = self.root / "chunk-of-game.parquet"
            seen = 0
            with pq.ParquetWriter(numbered, pa.schema([("game_id", pa.string()), ("chunk", pa.int64())])) as out:
                for batch in con.sql(f"SELECT game_id FROM ({query}) ORDER BY game_id",
                                     params=values).to_arrow_reader(BATCH_ROWS):
                    chunk = np.arange(seen, seen + batch.num_rows, dtype=np.int64) // self.chunk_games
                    out.write_table(pa.table({"game_id": batch.column(0), "chunk": chunk}))
                    seen += batch.num_rows
            self._chunks = -(-seen // self.chunk_games)
            # every row to its chunk's folder, as it comes (no sort of the rows); a folder's
            # rows are flushed to a file every `BATCH_ROWS`, and at most `_OPEN_FILES` are
            # open at once, so the writes hold a bounded share of the rows
            con.execute(f"SET partitioned_write_flush_threshold = {BATCH_ROWS}")
            con.execute(f"SET partitioned_write_max_open_files = {_OPEN_FILES}")
            for name, rows in tables.items():
                query, values = bound(f"SELECT c.chunk, r.* FROM ({rows}) r JOIN read_parquet($numbered) c"
                                      " ON c.game_id = r.game_id", {**files, "numbered": str(numbered)})
                con.execute(f"COPY ({query}) TO '{self.root / name}' (FORMAT parquet, PARTITION_BY (chunk))",
                            values)
        finally:
            con.close()
        for part in files.values():  # the copies as read, in their chunks now
            shutil.rmtree(Path(part[0]).parent, ignore_errors=True)

    def chunks(self) -> Iterator[Deals]:
        """The deals, `chunk_games` whole games at a time, in game id order."""
        if not self._chunks:
            return
        con = own_duckdb(self.root)
        try:
            for chunk in range(self._chunks):
                deals = str(self.root / "deals" / f"chunk={chunk}" / "*.parquet")
                if self._legacy:
                    found = DealSet()
                    for batch in con.sql("SELECT * FROM read_parquet(?, hive_partitioning = false)"
                                         " ORDER BY game_id, hand", params=[deals]).to_arrow_reader(BATCH_ROWS):
                        _add_deal_lines(found, zip(*(batch.column(c).to_pylist() for c in (
                            "game_id", "hand", "raw", "ruleset", "month", "build", "decks", "players")), strict=True))
                    yield found.frozen()
                    continue
                deal_batches = list(con.sql(
                    "SELECT * FROM read_parquet(?, hive_partitioning = false) ORDER BY game_id, hand",
                    params=[deals]).to_arrow_reader(BATCH_ROWS))
                seats = self.root / "seats" / f"chunk={chunk}"
                hand_batches = [] if not seats.exists() else list(con.sql(
                    "SELECT d.deal, p.hand, p.seat, p.deal_position, p.player, p.opening_cards"
                    " FROM read_parquet(?, hive_partitioning = false) p JOIN (SELECT game_id, hand, ruleset, month,"
                    " row_number() OVER (ORDER BY game_id, hand) - 1 AS deal"
                    " FROM read_parquet(?, hive_partitioning = false)) d"
                    " ON p.game_id = d.game_id AND p.hand = d.hand AND p.ruleset = d.ruleset AND p.month = d.month",
                    params=[str(seats / "*.parquet"), deals])
                    .to_arrow_reader(BATCH_ROWS))
                yield _deals_of(deal_batches, hand_batches)
        finally:
            con.close()


def _list_values(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A list<int8> column's values, flat, and each row's length (0 for a null)."""
    chunks = column.chunks
    values = [c.flatten().to_numpy(zero_copy_only=False) for c in chunks]
    sizes = [pc.fill_null(pc.list_value_length(c), 0).to_numpy(zero_copy_only=False) for c in chunks]
    return (np.concatenate(values).astype(np.int8) if values else np.zeros(0, np.int8),
            np.concatenate(sizes).astype(np.int64) if sizes else np.zeros(0, np.int64))


def _deals_of(deal_batches: list[pa.RecordBatch], hand_batches: list[pa.RecordBatch]) -> Deals:
    deals = pa.Table.from_batches(deal_batches) if deal_batches else None
    hands = pa.Table.from_batches(hand_batches) if hand_batches else None
    if deals is None or hands is None or deals.num_rows == 0:
        return DealSet().frozen()

    def ints(table: pa.Table, name: str) -> np.ndarray:
        return table[name].to_numpy().astype(np.int64)

    players = ints(deals, "players")
    hand_no = ints(deals, "hand")
    deal_of, seat = ints(hands, "deal"), ints(hands, "seat")
    order = np.argsort(deal_of * (int(seat.max()) + 1) + seat, kind="stable")
    deal_of, seat = deal_of[order], seat[order]
    cards, sizes = _list_values(hands["opening_cards"])
    hand_deal = np.repeat(np.arange(len(players)), players)
    # a clean deal gave every seat 7 cards (the engine's `bad_deal` otherwise), and each
    # hand row names its deal's hand
    if len(sizes) != len(hand_deal) or (sizes != HAND_SIZE).any() or (deal_of != hand_deal).any() \
            or (ints(hands, "hand")[order] != hand_no[hand_deal]).any():
        raise ValueError("the warehouse's hand_players rows do not match its clean deals")
    stock_cards, stock_sizes = _list_values(deals["stock"])
    game_ids = deals["game_id"]
    same = pc.equal(game_ids.slice(1), game_ids.slice(0, len(game_ids) - 1)).to_numpy(zero_copy_only=False)
    game = np.r_[0, np.cumsum(~same.astype(bool))].astype(np.int64)
    rulesets, ruleset_ix = _dense(deals["ruleset"])
    builds, build_ix = _dense(deals["build"])
    months, month_ix = _dense(deals["month"])
    player_names, player_ix = _dense(hands["player"])
    return Deals(
        game_ids=game_ids, game=game, hand_no=hand_no, rulesets=rulesets,
        ruleset_ix=ruleset_ix, builds=builds, build_ix=build_ix, months=months, month_ix=month_ix,
        decks=ints(deals, "decks"), players=players, starter=ints(deals, "starter"),
        hand_deal=hand_deal, seat=seat, position=ints(hands, "deal_position")[order],
        player_names=player_names, player_ix=player_ix[order],
        cards=cards.reshape(-1, HAND_SIZE)[order], stock_cards=stock_cards,
        stock_offsets=np.r_[0, np.cumsum(stock_sizes)].astype(np.int64))


def deals_from_events(reader: Any, *, build: str | None = None, since: str | None = None,
                      ruleset: str | None = None) -> DealSet:
    """The deals read from the warehouse's raw `deal` lines (every deal line replayed
    without a violation, its JSON parsed here), all held: the reading of a warehouse whose
    rows predate the engine's deal facts (schema 7), which the tests compare with the
    engine's facts (the audit reads such a warehouse a chunk at a time,
    `WarehouseDeals`)."""
    where, params = game_filter(build, since, ruleset)
    where += ["e.type = 'deal'", "NOT e.set_aside", "e.code IS NULL"]
    rows = reader.rows(
        "SELECT e.game_id, e.hand, e.raw, e.ruleset, e.month, coalesce(g.server_build, 'unknown'),"
        " coalesce(g.decks, 1), g.players FROM events e JOIN games g"
        " ON g.game_id = e.game_id AND g.ruleset = e.ruleset AND g.month = e.month"
        f" WHERE {' AND '.join(where)} ORDER BY e.game_id, e.hand", params)
    deals = DealSet()
    _add_deal_lines(deals, rows)
    return deals


def _add_deal_lines(deals: DealSet, rows: Iterable[Sequence[Any]]) -> None:
    """Deal lines (game id, hand, the line, ruleset, month, build, decks, the game's seats)
    parsed into `deals`; a line that is not a deal's JSON is left out."""
    for game_id, hand, raw, rules, month, server_build, decks, seats in rows:
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        hands = line.get("hands")
        if not isinstance(hands, dict) or not seats:
            continue
        stock = line.get("stock")
        deals.add(game_id=game_id, hand=hand, ruleset=rules, build=server_build, month=month,
                  decks=decks, seats=seats, dealer=line.get("dealer"), hands=hands,
                  starter=line.get("starter") if isinstance(line.get("starter"), str) else None,
                  stock=stock if isinstance(stock, list) else None)


# --------------------------------------------------------------------------- results


@dataclass
class TestResult:
    """One test: what it tested (`family`, `scope`), on how much, its statistic, p-value,
    effect size with a 95 % interval, and (after the correction) its q-value."""

    family: str
    scope: dict[str, Any]
    n: int
    effect_name: str
    status: str = "tested"
    statistic: float | None = None
    df: int | None = None
    p_value: float | None = None
    effect: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    observed: float | None = None
    expected: float | None = None
    q_value: float | None = None
    finding: bool = False
    detail: str = ""

    @property
    def concerns(self) -> str:
        """Whom or what the test is about, in words: player, seat, position, card, build."""
        scope = self.scope
        parts = []
        if "player" in scope:
            parts.append(f"player {scope['player']}")
        if "seat" in scope:
            parts.append(f"seat {scope['seat']}")
        if "position" in scope:
            parts.append(f"position {scope['position']} after the dealer"
                         + (f" at tables of {scope['players']}" if "players" in scope else ""))
        if "card" in scope:
            parts.append(f"card {scope['card']}")
        if "build" in scope:
            parts.append(f"build {scope['build']}")
        if "month" in scope:
            parts.append(f"month {scope['month']}")
        parts.append(str(scope.get("ruleset")) + (", 2 decks" if scope.get("decks") == 2 else ""))
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {**{k: _plain(v) for k, v in self.__dict__.items()}, "concerns": self.concerns}


def _plain(value: Any) -> Any:
    """A JSON-ready value: numpy scalars as Python's, a non-finite float as None."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass
class AuditReport:
    level: float
    deals: int
    hands: int
    tests: list[TestResult]

    @property
    def tests_made(self) -> int:
        return sum(t.status == "tested" for t in self.tests)

    @property
    def findings(self) -> list[TestResult]:
        return [t for t in self.tests if t.finding]

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "correction": "benjamini-hochberg", "deals": self.deals,
                "hands": self.hands, "tests_made": self.tests_made,
                "not_enough_games": sum(t.status == NOT_ENOUGH for t in self.tests),
                "findings": [t.to_json() for t in self.findings],
                "tests": [t.to_json() for t in self.tests]}


# --------------------------------------------------------------------------- statistics


@functools.lru_cache(maxsize=4096)
def hypergeom_sum_pmf(total: int, successes: int, n: int) -> np.ndarray:
    """The exact pmf of the sum of n independent hypergeometric counts (7 cards from
    `total`, `successes` of them special): scipy's pmf convolved n times (by squaring).
    Cached (read only): many groups of an audit share their size."""
    one = stats.hypergeom(total, successes, HAND_SIZE).pmf(np.arange(HAND_SIZE + 1))
    result = np.array([1.0])
    power = one
    k = n
    while k:
        if k & 1:
            result = np.clip(signal.fftconvolve(result, power), 0.0, None)
        k >>= 1
        if k:
            power = np.clip(signal.fftconvolve(power, power), 0.0, None)
    pmf = result / result.sum()
    pmf.setflags(write=False)
    return pmf


def _two_sided_from_pmf(pmf: np.ndarray, observed: int) -> float:
    low = pmf[: observed + 1].sum()
    high = pmf[observed:].sum()
    return float(min(1.0, 2.0 * min(low, high)))


def chi2_effect_interval(statistic: float, df: int, count: float, level: float = 0.95
                         ) -> tuple[float, float]:
    """Cohen's w = sqrt(lambda / count) with its interval from inverting the noncentral
    chi-square in its noncentrality (the interval of lambda, then scaled)."""
    tail = (1 - level) / 2

    def lam_for(prob: float) -> float:
        # lambda with P(X >= statistic | lambda) = prob; 0 when even lambda = 0 exceeds it
        if stats.chi2.sf(statistic, df) >= prob:
            return 0.0
        high = max(10.0, 2 * statistic)
        while stats.ncx2.sf(statistic, df, high) < prob:
            high *= 2
        return float(optimize.brentq(lambda lam: stats.ncx2.sf(statistic, df, lam) - prob,
                                     0.0, high, xtol=1e-6))

    return math.sqrt(lam_for(tail) / count), math.sqrt(lam_for(1 - tail) / count)


def _normal_interval(mean: float, sd: float, n: int) -> tuple[float, float]:
    half = stats.norm.ppf(0.975) * sd / math.sqrt(n)
    return mean - half, mean + half


def _special_test(counts: np.ndarray, ruleset: str, decks: int, scope: dict[str, Any]) -> TestResult:
    """The special cards of a group's hands against the hypergeometric sum; `counts` is how
    many of its hands hold 0, 1, …, 7 special cards (the sum, its spread and its size are
    read from them)."""
    n = int(counts.sum())
    result = TestResult("hand.special", scope, n, "extra special cards per hand")
    if n < MIN_HANDS:
        result.status = NOT_ENOUGH
        return result
    total = 52 * decks
    successes = len(special_ranks(ruleset)) * 4 * decks
    observed = int(counts @ np.arange(len(counts)))
    null = stats.hypergeom(total, successes, HAND_SIZE)
    mean = float(null.mean())
    if n <= EXACT_UP_TO:
        result.p_value = _two_sided_from_pmf(hypergeom_sum_pmf(total, successes, n), observed)
        result.detail = "exact (convolved hypergeometric)"
    else:
        z = (observed - n * mean) / math.sqrt(n * float(null.var()))
        result.p_value = float(2 * stats.norm.sf(abs(z)))
        result.statistic = z
        result.detail = "normal limit of the hypergeometric sum"
    result.observed = observed / n
    result.expected = mean
    result.effect = observed / n - mean
    result.ci_low, result.ci_high = _normal_interval(result.effect, _counted_sd(counts), n)
    return result


def _counted_sd(counts: np.ndarray) -> float:
    """The sample standard deviation of values 0, 1, … held `counts` times each."""
    n = int(counts.sum())
    if n < 2:
        return 0.0
    values = np.arange(len(counts), dtype=float)
    mean = float(counts @ values) / n
    return math.sqrt(float(counts @ (values - mean) ** 2) / (n - 1))


def _category_test(family: str, counts: np.ndarray, hands: int, decks: int, scope: dict[str, Any],
                   intervals: bool) -> TestResult:
    """Rank (13) or suit (4) counts of `hands` hands of one position against the uniform
    shuffle: Pearson's statistic over the finite-population factor, chi-square(k-1)."""
    k = len(counts)
    result = TestResult(family, scope, hands, "Cohen's w")
    expected = hands * HAND_SIZE / k
    if hands < MIN_HANDS or expected < MIN_EXPECTED:
        result.status = NOT_ENOUGH
        return result
    total = 52 * decks
    fpc = (total - HAND_SIZE) / (total - 1)
    statistic = float(((counts - expected) ** 2 / expected).sum() / fpc)
    result.statistic, result.df = statistic, k - 1
    result.p_value = float(stats.chi2.sf(statistic, k - 1))
    cards = hands * HAND_SIZE * fpc
    result.effect = math.sqrt(max(statistic - (k - 1), 0.0) / cards)
    if intervals:
        result.ci_low, result.ci_high = chi2_effect_interval(statistic, k - 1, cards)
    worst = int(np.argmax(np.abs(counts - expected)))
    label = RANKS[worst] if k == 13 else SUITS[worst]
    result.observed, result.expected = float(counts[worst]), expected
    result.detail = f"largest deviation: {label} ({int(counts[worst])} against {expected:.1f})"
    return result


def _dense_key(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A key's distinct values, ascending, and each row's index among them: by counting
    when the key is a small non-negative integer (every key here is: a label's index, a
    seat, a card code), by sorting otherwise."""
    key = np.asarray(key).ravel()
    if key.dtype.kind in "iu" and key.min() >= 0 and key.max() < 1 << 24:
        present = np.bincount(key) > 0
        return np.flatnonzero(present), (np.cumsum(present) - 1)[key]
    unique, inverse = np.unique(key, return_inverse=True)
    return unique, inverse.ravel()


def _groups(keys: Sequence[np.ndarray]) -> Iterable[tuple[tuple[int, ...], np.ndarray]]:
    """Row indexes grouped by the tuple of the keys' values (each key made dense, the
    tuple packed into one integer, one stable sort: a radix sort when the packed values
    fit 16 bits)."""
    if not len(keys[0]):
        return
    combined = np.zeros(len(keys[0]), dtype=np.int64)
    values = []
    for key in keys:
        unique, inverse = _dense_key(key)
        values.append(unique)
        combined = combined * len(unique) + inverse
    span = math.prod(len(v) for v in values)
    order = np.argsort(combined.astype(np.uint16) if span <= 1 << 16 else combined, kind="stable")
    ordered = combined[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(ordered)]
    for start, end in zip(starts, ends, strict=True):
        code = int(ordered[start])
        parts = []
        for unique in reversed(values):
            code, at = divmod(code, len(unique))
            parts.append(int(unique[at]))
        yield tuple(reversed(parts)), order[start:end]


def audit_deals(deals: Deals | DealSet | WarehouseDeals, level: float = 0.01, *, intervals: bool = True,
                per_month: bool = True, per_player: bool = True) -> AuditReport:
    """Every test of the deal audit on `deals`, corrected together (Benjamini–Hochberg);
    a test whose q-value is at most `level` is a finding. `intervals=False` skips the
    chi-square effects' intervals (the bench's repetitions need only the p-values).

    The deals are read a chunk of whole games at a time (a warehouse's `WarehouseDeals`;
    deals in memory are one chunk), and each test keeps only the counts and sums it rests
    on (`DealTally`): what the audit holds is one chunk, those counts (their number grows
    with the groups tested, the players among them, not with the deals) and the repeat
    test's hand pairs, on disk."""
    if isinstance(deals, DealSet):
        deals = deals.frozen()
    chunks = deals.chunks() if isinstance(deals, WarehouseDeals) else [deals]
    with DealTally(str(deals.root) if isinstance(deals, WarehouseDeals) else None) as tally:
        for chunk in chunks:
            tally.add(chunk)
        tests = tally.tests(intervals=intervals, per_month=per_month, per_player=per_player)
    _correct(tests, level)
    return AuditReport(level, tally.deals, tally.hands, tests)


#: a group's counts: labels (strings, ints) in the order the tests list them → counts
Counts = dict[tuple[Any, ...], np.ndarray]
#: hands holding 0, 1, …, 7 special cards (or sharing 0, …, 7 cards with the last deal)
_PER_HAND = HAND_SIZE + 1


def _tally(into: Counts, labels: Sequence[Sequence[Any] | None], keys: Sequence[np.ndarray],
           counts: Callable[[np.ndarray], np.ndarray],
           merge: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> None:
    """Add each group's `counts(rows)` to `into` (or `merge` it with what `into` holds),
    keyed by its labels (a key's values looked up in its labels, or the value itself where
    `labels` has None)."""
    for values, rows in _groups(keys):
        key = tuple(int(v) if names is None else names[v] for names, v in zip(labels, values, strict=True))
        found = counts(rows)
        if key in into:
            into[key] = merge(into[key], found) if merge is not None else into[key] + found
        else:
            into[key] = found.copy()


def _deals_and_seats(held: np.ndarray, found: np.ndarray) -> np.ndarray:
    """The repeat test's (deals, most seats at a table) of two chunks together."""
    return np.asarray([held[0] + found[0], max(held[1], found[1])])


class DealTally(Scratch):
    """What every test of the audit rests on, added a chunk of whole games at a time
    (`add`) and tested at the end (`tests`): per group, the hands holding each number of
    special cards, the rank and suit counts, the starters' rank counts, the stock
    position sums, the serial overlaps; and the repeat test's pairs of hand keys per deal,
    a Parquet file a chunk in a temporary folder (under `folder`), grouped at the end by a
    DuckDB of the audit's own that spills there (`ingest.scratch`). The groups' counts are
    kept by their labels, so chunks with other labels add up, and the tests come out in
    the order of those labels, as one chunk of every deal gives them."""

    def __init__(self, folder: str | None = None) -> None:
        super().__init__("haftkhabis-deal-tally-", folder)
        self.deals = 0
        self.hands = 0
        self.months: set[str] = set()
        self.positions: Counts = {}  # (ruleset, build, decks, players, position): specials, ranks, suits
        self.seats: Counts = {}  # (ruleset, build, decks, seat): specials
        self.position_months: Counts = {}  # (ruleset, build, month, decks, position): specials
        self.players: Counts = {}  # (ruleset, decks, player): specials
        self.starters: Counts = {}  # (ruleset, build): ranks
        self.starter_months: Counts = {}  # (ruleset, build, month): ranks
        self.stock: Counts = {}  # (ruleset, build, card code): count, Σ shift, Σ shift², Σ variance
        self.repeat: Counts = {}  # (ruleset, decks): deals, most seats
        self.serial: Counts = {}  # (ruleset, build, seat): overlaps 0, …, 7
        self._pairs: list[str] = []
        self._signatures: list[str] = []

    def __enter__(self) -> DealTally:
        return self

    def add(self, d: Deals) -> None:
        """A chunk of whole games (every deal of each of its games, in hand order)."""
        if not len(d):
            return
        first = self.deals
        self.deals += len(d)
        self.hands += len(d.hand_deal)
        self.months.update(d.months)
        rulesets, builds, months = d.rulesets, d.builds, d.months
        hd = d.hand_deal
        special = np.stack([np.isin(RANK_OF, list(special_ranks(r))) for r in rulesets])
        per_hand = special[d.ruleset_ix[hd][:, None], d.cards].sum(axis=1)

        def specials(rows: np.ndarray) -> np.ndarray:
            return np.bincount(per_hand[rows], minlength=_PER_HAND)

        def hands(rows: np.ndarray) -> np.ndarray:
            cards = d.cards[rows]
            return np.r_[specials(rows), np.bincount(RANK_OF[cards].ravel(), minlength=13),
                         np.bincount(SUIT_OF[cards].ravel(), minlength=4)]

        r, b, k = d.ruleset_ix[hd], d.build_ix[hd], d.decks[hd]
        _tally(self.positions, [rulesets, builds, None, None, None], [r, b, k, d.players_of_hand, d.position], hands)
        _tally(self.seats, [rulesets, builds, None, None], [r, b, k, d.seat], specials)
        _tally(self.position_months, [rulesets, builds, months, None, None], [r, b, d.month_ix[hd], k, d.position],
               specials)
        _tally(self.players, [rulesets, None, d.player_names], [r, k, d.player_ix], specials)
        has = np.flatnonzero(d.starter >= 0)
        started = RANK_OF[d.starter[has]]

        def starters(rows: np.ndarray) -> np.ndarray:
            return np.bincount(started[rows], minlength=13)

        _tally(self.starters, [rulesets, builds], [d.ruleset_ix[has], d.build_ix[has]], starters)
        _tally(self.starter_months, [rulesets, builds, months],
               [d.ruleset_ix[has], d.build_ix[has], d.month_ix[has]], starters)
        _stock_sums(d, self.stock)
        _tally(self.repeat, [rulesets, None], [d.ruleset_ix, d.decks],
               lambda rows: np.asarray([len(rows), int(d.players[rows].max())]), merge=_deals_and_seats)
        _serial_overlaps(d, self.serial)
        self._write_pairs(d, first)

    def _write_pairs(self, d: Deals, first: int) -> None:
        """The chunk's pairs of hand keys per deal (one row a pair and deal) and each
        deal's sorted keys and starter, to the folder, deals numbered from `first`."""
        keys = _hand_keys(d.cards)
        order = np.lexsort((keys, d.hand_deal))  # each deal's hand keys ascending
        sorted_keys = keys[order]
        firsts = np.r_[0, np.cumsum(d.players)[:-1]]
        low_parts, high_parts, deal_parts = [], [], []
        seats = int(d.players.max())
        for i in range(seats):
            for j in range(i + 1, seats):
                has = np.flatnonzero(d.players > j)
                low_parts.append(sorted_keys[firsts[has] + i])
                high_parts.append(sorted_keys[firsts[has] + j])
                deal_parts.append(has)
        low, high, deal = np.concatenate(low_parts), np.concatenate(high_parts), np.concatenate(deal_parts)
        by = np.lexsort((deal, high, low))
        low, high, deal = low[by], high[by], deal[by]
        # one row a (pair, deal): a deal holding the same pair twice (two decks) counts once
        keep = np.r_[True, (low[1:] != low[:-1]) | (high[1:] != high[:-1]) | (deal[1:] != deal[:-1])]
        low, high, deal = low[keep], high[keep], deal[keep]
        n = len(self._pairs)
        self._pairs.append(str(self.root / f"pairs-{n:06d}.parquet"))
        pq.write_table(pa.table({
            "ruleset": pa.DictionaryArray.from_arrays(pa.array(d.ruleset_ix[deal], pa.int32()),
                                                      pa.array(d.rulesets, pa.string())),
            "decks": d.decks[deal], "low": low, "high": high, "deal": deal + first}), self._pairs[-1])
        signature = pa.ListArray.from_arrays(pa.array(np.r_[0, np.cumsum(d.players)], pa.int32()),
                                             pa.array(sorted_keys, pa.int64()))
        self._signatures.append(str(self.root / f"deals-{n:06d}.parquet"))
        game_ids = d.game_ids if isinstance(d.game_ids, pa.ChunkedArray) else pa.array(d.game_ids, pa.string())
        pq.write_table(pa.table({"deal": np.arange(len(d)) + first, "game_id": game_ids, "hand": d.hand_no,
                                 "hands": signature, "starter": d.starter}), self._signatures[-1])

    def tests(self, *, intervals: bool, per_month: bool, per_player: bool) -> list[TestResult]:
        """Every test, in the order of its family, then of its group's labels."""
        tests: list[TestResult] = []
        for (ruleset, build, decks, players, position), counts in sorted(self.positions.items()):
            scope = {"ruleset": ruleset, "build": build, "decks": decks, "players": players, "position": position}
            hands = int(counts[:_PER_HAND].sum())
            tests.append(_special_test(counts[:_PER_HAND], ruleset, decks, scope))
            tests.append(_category_test("hand.ranks", counts[_PER_HAND:_PER_HAND + 13], hands, decks, scope,
                                        intervals))
            tests.append(_category_test("hand.suits", counts[_PER_HAND + 13:], hands, decks, scope, intervals))
        for (ruleset, build, decks, seat), counts in sorted(self.seats.items()):
            scope = {"ruleset": ruleset, "build": build, "decks": decks, "seat": seat}
            tests.append(_special_test(counts, ruleset, decks, scope))
        if per_month and len(self.months) > 1:
            for (ruleset, build, month, decks, position), counts in sorted(self.position_months.items()):
                scope = {"ruleset": ruleset, "build": build, "month": month, "decks": decks, "position": position}
                tests.append(_special_test(counts, ruleset, decks, scope))
        if per_player:
            for (ruleset, decks, player), counts in sorted(self.players.items()):
                tests.append(_special_test(counts, ruleset, decks, {"ruleset": ruleset, "decks": decks,
                                                                    "player": player}))
        groups = [("build", self.starters)]
        if per_month and len(self.months) > 1:
            groups.append(("month", self.starter_months))
        for _kind, starters in groups:
            for key, counts in sorted(starters.items()):
                scope = dict(zip(("ruleset", "build", "month"), key, strict=False))
                tests.append(_starter_test(counts, scope, intervals))
        tests.extend(_stock_tests(self.stock))
        tests.extend(self._repeat_tests())
        tests.extend(_serial_tests(self.serial))
        return tests

    def _repeat_tests(self) -> list[TestResult]:
        """Deals that share two or more identical hands, per ruleset and decks. Two deals
        share two hands exactly when they share an unordered pair of hand keys, so every
        deal's pairs of hands are listed (at most C(P, 2) a deal, `_write_pairs`) and
        grouped: deals in a group of equal pairs are in a repeat, found in time and memory
        linear in the deals, however often one deal repeats (a seed reused a thousand times
        must not make a million comparisons). Under a uniform shuffle the chance that two
        given deals of at most P seats share two hands is at most P²(P-1)² / 2 × w/C(N,7) ×
        w/C(N-7,7) (w = 2⁷ with two decks, the ways one multiset hand can be dealt, else
        1); with C(n,2) pairs of deals, the union bound is the p-value."""
        found = self._repeats()
        out: list[TestResult] = []
        for (ruleset, d), (n, seats) in sorted(self.repeat.items()):
            n, seats = int(n), int(seats)
            scope = {"ruleset": ruleset, "decks": d}
            result = TestResult("deals.repeat", scope, n, "share of deals in a repeat")
            if n < 2:
                result.status = NOT_ENOUGH
                out.append(result)
                continue
            groups, examples, involved, exact = found.get((ruleset, d), (0, [], 0, 0))
            total = 52 * d
            ways = 2 ** HAND_SIZE if d == 2 else 1
            log_pair = (math.log(seats ** 2 * (seats - 1) ** 2 / 2) + 2 * math.log(ways)
                        - math.log(math.comb(total, HAND_SIZE))
                        - math.log(math.comb(total - HAND_SIZE, HAND_SIZE)))
            log_bound = math.log(math.comb(n, 2)) + log_pair
            result.statistic = float(groups)
            result.p_value = 1.0 if not groups else float(min(1.0, math.exp(log_bound)))
            result.observed = float(involved)
            result.effect = involved / n
            ci = stats.binomtest(involved, n).proportion_ci(0.95)
            result.ci_low, result.ci_high = float(ci.low), float(ci.high)
            shown = ", ".join(f"{a} = {b}" for a, b in examples)
            result.detail = (f"{involved} deals in {groups} groups sharing 2+ hands ({exact} exact "
                             f"repeats of an earlier deal)" + (f": {shown}" if shown else "")
                             + "; p is a union bound")
            out.append(result)
        return out

    def _repeats(self) -> dict[tuple[str, int], tuple[int, list[tuple[str, str]], int, int]]:
        """Per (ruleset, decks) with a repeat: the groups of deals sharing a pair of hands,
        the first five groups' first two deals (game id#hand, the groups in the order of
        their pair of keys, the deals in game id and hand order), the deals in a group,
        and those equal to an earlier one in every hand and the starter."""
        if not self._pairs:
            return {}
        con = own_duckdb(self.root)
        try:
            con.execute("CREATE TABLE repeated AS SELECT ruleset, decks, low, high, min(deal, 2) AS firsts"
                        " FROM read_parquet(?) GROUP BY ruleset, decks, low, high HAVING count(*) > 1", [self._pairs])
            # (low << 42) + high orders the groups by their pair: a key is 7 codes of 6 bits
            groups = con.execute("SELECT ruleset, decks, count(*), min_by(firsts, (low::HUGEINT << 42) + high, 5)"
                                 " FROM repeated GROUP BY ruleset, decks").fetchall()
            involved = {(r, d): (n, exact) for r, d, n, exact in con.execute(
                "SELECT i.ruleset, i.decks, count(*), count(*) - count(DISTINCT list_append(s.hands, s.starter))"
                " FROM (SELECT DISTINCT p.ruleset, p.decks, p.deal FROM read_parquet(?) p SEMI JOIN repeated r"
                " ON p.ruleset = r.ruleset AND p.decks = r.decks AND p.low = r.low AND p.high = r.high) i"
                " JOIN read_parquet(?) s ON s.deal = i.deal GROUP BY i.ruleset, i.decks",
                [self._pairs, self._signatures]).fetchall()}
            shown = sorted({deal for row in groups for pair in row[3] for deal in pair})
            names = dict(con.execute("SELECT deal, game_id || '#' || hand FROM read_parquet(?)"
                                     " WHERE list_contains(?, deal)", [self._signatures, shown]).fetchall())
        finally:
            con.close()
        return {(r, d): (int(n), [(names[a], names[b]) for a, b in firsts], int(involved[(r, d)][0]),
                         int(involved[(r, d)][1])) for r, d, n, firsts in groups}


def _starter_test(counts: np.ndarray, scope: dict[str, Any], intervals: bool) -> TestResult:
    """The starters' ranks (`counts`, 13) against uniform over the ranks the ruleset allows."""
    forbidden = RULESETS[scope["ruleset"]].forbidden_starter_ranks
    allowed = [i for i, r in enumerate(RANKS) if r not in forbidden]
    n = int(counts.sum())
    counts = counts[allowed]
    result = TestResult("starter.ranks", scope, n, "Cohen's w")
    expected = n / len(allowed)
    if expected < MIN_EXPECTED:
        result.status = NOT_ENOUGH
        return result
    chi = stats.chisquare(counts)
    result.statistic, result.df = float(chi.statistic), len(allowed) - 1
    result.p_value = float(chi.pvalue)
    result.effect = math.sqrt(max(result.statistic - result.df, 0.0) / n)
    if intervals:
        result.ci_low, result.ci_high = chi2_effect_interval(result.statistic, result.df, n)
    worst = int(np.argmax(np.abs(counts - expected)))
    result.observed, result.expected = float(counts[worst]), expected
    result.detail = (f"largest deviation: {RANKS[allowed[worst]]} "
                     f"({int(counts[worst])} against {expected:.1f})")
    return result


#: deals a chunk of the stock test (its arrays are a few bytes a logged card: memory
#: stays bounded however many stocks the chunk logged)
STOCK_CHUNK = 65_536


def _stock_sums(deals: Deals, into: Counts) -> None:
    """Each logged card's relative position in the stock's shuffled part, (i + ½)/L,
    summed per (ruleset, build, card code) into `into`: the occurrences, Σ((i + ½)/L − ½),
    its squares, and Σ(L² − 1)/(12 L²) (the variance of a uniform position); a part of
    `STOCK_CHUNK` deals at a time."""
    rulesets, builds = deals.rulesets, deals.builds
    if not len(deals.stock_cards):
        return
    # where the ruleset forbids starter ranks, the cards turned and put back sit on top:
    # the shuffled part starts after the leading run of forbidden ranks and the card after it
    forbidden = np.zeros((len(rulesets), 13), dtype=bool)
    for i, name in enumerate(rulesets):
        for rank in RULESETS[name].forbidden_starter_ranks:
            forbidden[i, RANKS.index(rank)] = True
    has_forbidden = np.asarray(forbidden.any(axis=1), dtype=bool)
    cells = len(rulesets) * len(builds) * len(CARDS)
    count, shifts, squares, variances = (np.zeros(cells) for _ in range(4))
    for first in range(0, len(deals), STOCK_CHUNK):
        chunk = slice(first, min(first + STOCK_CHUNK, len(deals)))
        offsets = deals.stock_offsets[chunk.start:chunk.stop + 1]
        flat = deals.stock_cards[offsets[0]:offsets[-1]].astype(np.int64)
        if not len(flat):
            continue
        sizes = np.diff(offsets)
        ruleset_ix, build_ix = deals.ruleset_ix[chunk], deals.build_ix[chunk]
        deal = np.repeat(np.arange(len(sizes)), sizes)
        position = np.arange(len(flat)) - (offsets[:-1] - offsets[0])[deal]
        is_forbidden = forbidden[ruleset_ix[deal], RANK_OF[flat]]
        first_allowed = sizes.copy()
        np.minimum.at(first_allowed, deal[~is_forbidden], position[~is_forbidden])
        start = np.where(has_forbidden[ruleset_ix], first_allowed + 1, 0)
        start = np.minimum(start, sizes)
        keep = position >= start[deal]
        keep &= (sizes - start)[deal] >= 2
        cards, deal = flat[keep], deal[keep]
        length = (sizes - start)[deal].astype(float)
        shift = (position[keep] - start[deal] + 0.5) / length - 0.5
        cell = (ruleset_ix[deal] * len(builds) + build_ix[deal]) * len(CARDS) + cards
        count += np.bincount(cell, minlength=cells)
        shifts += np.bincount(cell, weights=shift, minlength=cells)
        squares += np.bincount(cell, weights=shift * shift, minlength=cells)
        variances += np.bincount(cell, weights=(length ** 2 - 1) / (12 * length ** 2), minlength=cells)
    for cell in np.flatnonzero(count):
        group, card = divmod(int(cell), len(CARDS))
        r, b = divmod(group, len(builds))
        key = (rulesets[r], builds[b], card)
        sums = np.asarray([count[cell], shifts[cell], squares[cell], variances[cell]])
        into[key] = into[key] + sums if key in into else sums


def _stock_tests(stock: Counts) -> list[TestResult]:
    """Each card's mean relative position in the stock's shuffled part, (i + ½)/L, against
    ½ (variance (L² − 1)/(12 L²) for a uniform position), per ruleset and build, from the
    sums `_stock_sums` gathered."""
    out: list[TestResult] = []
    for (ruleset, build, card), (count, shifts, squares, variances) in sorted(stock.items()):
        scope = {"ruleset": ruleset, "build": build, "card": card_name(card)}
        n = int(count)
        result = TestResult("stock.position", scope, n, "mean relative position - 0.5")
        if n < MIN_HANDS:
            result.status = NOT_ENOUGH
            out.append(result)
            continue
        total = float(shifts)
        z = total / math.sqrt(float(variances))
        result.statistic = z
        result.p_value = float(2 * stats.norm.sf(abs(z)))
        result.effect = total / n
        result.observed, result.expected = 0.5 + result.effect, 0.5
        sd = math.sqrt(max(float(squares) - total * total / n, 0.0) / (n - 1))
        result.ci_low, result.ci_high = _normal_interval(result.effect, sd, n)
        result.detail = "0 = top of the stock, 1 = bottom"
        out.append(result)
    return out


def _hand_keys(cards: np.ndarray) -> np.ndarray:
    """Each hand as one integer: its 7 sorted card codes (6 bits each) packed, so equal
    hands have equal keys and no two different hands collide."""
    ordered = np.sort(cards, axis=1).astype(np.int64)
    shifts = np.arange(HAND_SIZE, dtype=np.int64) * 6
    return (ordered << shifts).sum(axis=1)


def _serial_overlaps(deals: Deals, into: Counts) -> None:
    """Serial correlation between consecutive deals of a game: how many of the chunk's
    hands share 0, …, 7 cards with their seat's hand of the game's previous deal, per
    (ruleset, build, seat), added to `into`. One-deck deals only (two decks' multisets
    have another law)."""
    n = len(deals)
    if n < 2:
        return
    players = deals.players
    starts = np.r_[0, np.cumsum(players)[:-1]]
    game_ix, hand_no = deals.game, deals.hand_no
    follows = np.zeros(n, dtype=bool)
    follows[1:] = ((game_ix[1:] == game_ix[:-1]) & (hand_no[1:] == hand_no[:-1] + 1)
                   & (players[1:] == players[:-1]) & (deals.decks[1:] == 1) & (deals.decks[:-1] == 1))
    current = np.flatnonzero(follows)
    if not len(current):
        return
    masks = (np.int64(1) << deals.cards.astype(np.int64)).sum(axis=1)
    seats_of = players[current]
    deal_of_row = np.repeat(current, seats_of)
    seat_of_row = np.arange(len(deal_of_row)) - np.repeat(np.r_[0, np.cumsum(seats_of)[:-1]], seats_of)
    row_now = starts[deal_of_row] + seat_of_row
    row_before = starts[deal_of_row - 1] + seat_of_row
    shared = np.bitwise_count(masks[row_now] & masks[row_before]).astype(np.int64)
    _tally(into, [deals.rulesets, deals.builds, None],
           [deals.ruleset_ix[deal_of_row], deals.build_ix[deal_of_row], seat_of_row],
           lambda rows: np.bincount(shared[rows], minlength=_PER_HAND))


def _serial_tests(serial: Counts) -> list[TestResult]:
    """The cards a seat's hand shares with its hand of the game's previous deal. Two
    independent uniform 7-card hands of one deck share Hypergeometric(52, 7, 7) cards, and
    the overlaps of successive pairs are independent, so the sum is tested exactly as the
    special cards are."""
    null = stats.hypergeom(52, HAND_SIZE, HAND_SIZE)
    out: list[TestResult] = []
    for (ruleset, build, seat), counts in sorted(serial.items()):
        k = int(counts.sum())
        result = TestResult("deals.serial", {"ruleset": ruleset, "build": build, "seat": seat}, k,
                            "extra cards shared with the previous deal's hand")
        if k < MIN_HANDS:
            result.status = NOT_ENOUGH
            out.append(result)
            continue
        observed = int(counts @ np.arange(len(counts)))
        if k <= EXACT_UP_TO:
            result.p_value = _two_sided_from_pmf(hypergeom_sum_pmf(52, HAND_SIZE, k), observed)
            result.detail = "exact (convolved hypergeometric)"
        else:
            z = (observed - k * float(null.mean())) / math.sqrt(k * float(null.var()))
            result.statistic = z
            result.p_value = float(2 * stats.norm.sf(abs(z)))
            result.detail = "normal limit of the hypergeometric sum"
        result.observed, result.expected = observed / k, float(null.mean())
        result.effect = observed / k - float(null.mean())
        result.ci_low, result.ci_high = _normal_interval(result.effect, _counted_sd(counts), k)
        out.append(result)
    return out


def _correct(tests: list[TestResult], level: float) -> None:
    made = [t for t in tests if t.status == "tested" and t.p_value is not None]
    if not made:
        return
    q = stats.false_discovery_control(np.asarray([t.p_value for t in made]), method="bh")
    for t, qv in zip(made, q, strict=True):
        t.q_value = float(qv)
        t.finding = bool(qv <= level)
