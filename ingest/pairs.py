"""The pair audit: who is playing together? Per pair of players, signals of one doing the
other favours, each compared with what the same player does for the others at the same
kind of moment, combined into one score whose null is estimated by permutation.

The signals (docs/fairplay.md says what each assumes):

- `co_seating`: games played together against chance given each one's activity;
- `twos_spared`: 2s' gifts (a gift makes its target draw) one did not give the other;
- `sevens_spared`: a 7 total one could have put on the other, next, and did not;
- `jacks_suited`: a J's declared suit that the other holds, against the suits it could
  declare;
- `soft_play`: a 7 or a skipping card held back while the other, next, held one card.

Every per-move fact comes from the warehouse: the engine's `gift_to` in `events` and its
`decisions` table (what the player to move could play, whether a draw was free, who was
next and how many cards they held, the suits the others held when a J declared), so the
audit reads no log line again.

Each behaviour signal is a sum over decisions (the player who decided, the other player it
touched, an outcome x, its expectation e): z = ±(Σx − Σe) / √Σe(1 − e), signed so that
positive means a favour. A pair's score is the Stouffer sum of its signals' z over the
signals with enough decisions. Its calibration does not rest on a model of how honest
players choose: the null is estimated by permutation, relabelling the players of each game
at random ("shuffling partners") and taking the highest pair score of each relabelled
warehouse, so a case's p-value is family-wise over every pair scored, and the case queue
at level α holds no honest pair with probability at least 1 − α when players' identities
are exchangeable within a game. Co-seating does not change under that relabelling: it
weighs a pair's score but is held fixed by the null (a pair of friends who sit together
makes no case by sitting together).

A relabelling permutes the seats of a game, so all the decisions of one seat about another
in a game move together: the scores read them summed per (signal, game, actor, other)
(`PairData.groups`), a chunk of games at a time, each chunk adding to every relabelling's
sums per pair (`audit_pairs`), and the audit's warehouse read (`pairs_from_warehouse`) has
DuckDB make those sums, a partition at a time, and keeps them on disk until their chunk is
scored (`WarehousePairs`): what the audit holds does not grow with the number of games. The per-row read (`read_pair_rows`, the signals made in
polars, a row a decision) serves the bench's audits of a few games and the hand-made tests;
both reads give the same audit (tests/ingest/test_pairs.py).
"""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import polars as pl
import pyarrow as pa

from engine.rulesets import RULESETS
from ingest.fairplay import game_filter
from ingest.scratch import SORT_MEMORY, Scratch, bound, copy_rows, own_duckdb

#: the signals, in the order the reports list them
SIGNALS: tuple[str, ...] = ("co_seating", "twos_spared", "sevens_spared", "jacks_suited", "soft_play")
#: the signals of what players do (the permutation moves them); co-seating stays fixed
BEHAVIOUR: tuple[str, ...] = SIGNALS[1:]
#: a favour is a low outcome (a 2 or a 7 total not given) or a high one (a suit held, a
#: card held back)
_SIGN = {"twos_spared": -1.0, "sevens_spared": -1.0, "jacks_suited": 1.0, "soft_play": 1.0}
#: the signals whose expectation is the deciding player's own rate over all their
#: decisions of that kind (recomputed under each relabelling); the others carry their own
_OWN_RATE = frozenset({"sevens_spared", "soft_play"})
#: a signal counts for a pair when the variance of its decisions' outcomes reaches this
#: (about 8 decisions at an even chance; 9 2s given among three candidates)
MIN_VARIANCE = 2.0
#: how far below MIN_VARIANCE a float sum may fall and still reach it: a variance is a sum
#: of fractions of small denominators, exactly 2 for 9 2s among three candidates, which
#: summed one way in floats comes to 1.9999999999999998 and another 2.0000000000000004
_ROUNDING = 1e-9
PERMUTATIONS = 200
#: what the relabellings' sums per pair may hold at once (`_Sums.size` each); past it
#: they are summed in turns, each turn one more pass over the games' chunks, so the
#: audit's memory does not grow with pairs × relabellings
SUMS_MEMORY = 256 << 20
#: steps shown per signal of a case
STEPS_PER_SIGNAL = 6
_SUITS = "CDHS"
#: the ranks that land on the next player in some ruleset (a 7's total, a skip): the
#: decisions the 7 and soft-play signals read
_ATTACK_RANKS = sorted({rank for rules in RULESETS.values() for rank, effect in rules.effects.items()
                        if effect in ("stack", "skip")})
#: co-seating's z enters a pair's score clipped to this: it may tip a pair that behaves
#: as partners, it cannot carry one (sitting together says more about friends and
#: time zones than about collusion)
CO_SEATING_CLIP = 2.0


_COLUMNS = ("signal", "game", "hand", "seq", "actor", "other", "outcome", "expected", "aux")
#: the decisions a case's steps are chosen from: the game by id, the players by name index
_STEP_SCHEMA = {"signal": pl.Int64, "game": pl.String, "hand": pl.Int64, "seq": pl.Int64, "actor": pl.Int64,
                "other": pl.Int64, "outcome": pl.Float64, "expected": pl.Float64, "aux": pl.Int64}
#: games scored at a time (`audit_pairs`; `PairData.chunk_games`, `pairs_from_warehouse`):
#: the scores hold one chunk's games and decision sums besides every relabelling's sums
#: per pair, whatever the number of games
CHUNK_GAMES = 50_000
_TYPES = {"outcome": np.float64, "expected": np.float64}


@dataclass
class PairData:
    """What the pair audit reads, as arrays: each game's players (indexes into `names`,
    seat order) and the decisions of the behaviour signals, either a row each (`add`,
    `add_gift`, `add_decisions`: its signal (an index into BEHAVIOUR), game, hand and seq,
    the deciding player and the player it touched (indexes into their game's player list),
    the outcome x, its expectation e (nan: the deciding player's own rate), and `aux` (a 2's
    target as a name index, a J's suit 0-3)); the scores read them summed (`groups`), a chunk
    of `chunk_games` games at a time (`chunks`, `group_chunk`). All held in memory: the
    per-row read of a few games (`read_pair_rows`) and the hand-made tests; the audit's
    read of a warehouse is `WarehousePairs`, on disk."""

    names: list[str] = field(default_factory=list)
    game_ids: list[str] = field(default_factory=list)
    game_players: list[list[int]] = field(default_factory=list)
    gifts: int = 0  # 2s whose gift applied
    chunk_games: int = field(default_factory=lambda: CHUNK_GAMES)
    _names: dict[str, int] = field(default_factory=dict, repr=False)
    _games: dict[str, int] = field(default_factory=dict, repr=False)
    _local: list[dict[str, int]] = field(default_factory=list, repr=False)
    _rows: list[tuple[float, ...]] = field(default_factory=list, repr=False)
    _chunks: list[dict[str, np.ndarray]] = field(default_factory=list, repr=False)
    _arrays: dict[str, np.ndarray] | None = field(default=None, repr=False)
    _groups: dict[str, np.ndarray] | None = field(default=None, repr=False)
    _seat_frame: pl.DataFrame | None = field(default=None, repr=False)

    def add_game(self, game: str, players: Sequence[str]) -> int:
        """Register a game and its players (seat order); its index."""
        g = self._games.get(game)
        if g is not None:
            return g
        g = self._games[game] = len(self.game_ids)
        self.game_ids.append(game)
        local: dict[str, int] = {}
        indexes: list[int] = []
        for name in players:
            if name in local:  # a name seated twice is one player
                continue
            local[name] = len(indexes)
            if name not in self._names:
                self._names[name] = len(self.names)
                self.names.append(name)
            indexes.append(self._names[name])
        self.game_players.append(indexes)
        self._local.append(local)
        self._seat_frame = None
        return g

    def local(self, game: int, name: str) -> int | None:
        return self._local[game].get(name)

    def add(self, signal: str, game: int, hand: int, seq: int, actor: int, other: int,
            outcome: float, expected: float = math.nan, aux: int = -1) -> None:
        """One decision (game, actor and other as `add_game` and `local` give them)."""
        self._rows.append((BEHAVIOUR.index(signal), game, hand, seq, actor, other, outcome, expected, aux))
        self._arrays = self._groups = None

    def arrays(self) -> dict[str, np.ndarray]:
        """Every decision row, one array a column (`_COLUMNS`)."""
        if self._arrays is None:
            parts = list(self._chunks)
            if self._rows:
                columns = list(zip(*self._rows, strict=True))
                parts.append({c: np.asarray(v, dtype=_TYPES.get(c, np.int64))
                              for c, v in zip(_COLUMNS, columns, strict=True)})
            self._arrays = {c: np.concatenate([p[c] for p in parts]) if parts
                            else np.zeros(0, dtype=_TYPES.get(c, np.int64)) for c in _COLUMNS}
        return self._arrays

    def groups(self) -> dict[str, np.ndarray]:
        """The decisions summed per (signal, game, actor, other), in that order (what the
        scores read: a relabelling moves a game's seats, so the decisions of one actor
        about one other move together): `decisions`, Σx (`outcome`), Σe (`expected`) and
        Σe(1 − e) (`variance`); the last two nan for the signals whose expectation is the
        deciding player's own rate. For the 2s and J the seat pair is unordered (`_key`):
        actor is the lower seat."""
        if self._groups is None:
            width = max((len(p) for p in self.game_players), default=1)
            rows = self.arrays()
            e = rows["expected"]
            self._groups = _summed([{
                "signal": rows["signal"], "game": rows["game"], "actor": rows["actor"], "other": rows["other"],
                "decisions": np.ones(len(e)), "outcome": rows["outcome"], "expected": e,
                "variance": e * (1 - e)}], width) if len(e) else _summed([], width)
        return self._groups

    def decisions(self) -> dict[str, int]:
        """Decisions per behaviour signal."""
        groups = self.groups()
        counts = np.bincount(groups["signal"], weights=groups["decisions"], minlength=len(BEHAVIOUR))
        return {name: int(counts[s]) for s, name in enumerate(BEHAVIOUR)}

    def game_count(self) -> int:
        return len(self.game_ids)

    def chunks(self) -> Iterator[tuple[int, list[list[int]]]]:
        """The games, `chunk_games` at a time: each chunk's first game index and its games'
        players (name indexes, seat order)."""
        for start in range(0, len(self.game_players), max(1, self.chunk_games)):
            yield start, self.game_players[start:start + max(1, self.chunk_games)]

    def group_chunk(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """The sums (`groups`) of the games start ≤ g < stop, g counted from `start`."""
        groups = self.groups()
        kept = (groups["game"] >= start) & (groups["game"] < stop)
        out = {c: v[kept] for c, v in groups.items()}
        out["game"] = out["game"] - start
        return out

    def steps(self) -> pl.DataFrame:
        """The decisions a case's steps are chosen from (`_STEP_SCHEMA`): every row, its
        game by id and its players by name index."""
        rows = self.arrays()
        slots = np.asarray([n for p in self.game_players for n in p], dtype=np.int64)
        offsets = np.r_[0, np.cumsum([len(p) for p in self.game_players])[:-1]].astype(np.int64)
        base = offsets[rows["game"]]
        return pl.DataFrame({
            "signal": rows["signal"], "game": [self.game_ids[g] for g in rows["game"].tolist()],
            "hand": rows["hand"], "seq": rows["seq"], "actor": slots[base + rows["actor"]],
            "other": slots[base + rows["other"]], "outcome": rows["outcome"], "expected": rows["expected"],
            "aux": rows["aux"]}, schema=_STEP_SCHEMA)

    def add_gift(self, game: str, players: Sequence[str], hand: int, seq: int, giver: str,
                 target: str, seated: Sequence[str]) -> None:
        """A 2 whose gift applied: a decision for each player in the hand besides the
        giver (the candidates), the target's outcome 1, the others' 0, each expected
        1 / candidates."""
        g = self.add_game(game, players)
        a, t = self.local(g, giver), self.local(g, target)
        candidates = sorted({c for c in (self.local(g, p) for p in seated if p != giver) if c is not None})
        if a is None or t is None or t not in candidates:
            return
        self.gifts += 1
        for c in candidates:
            self.add("twos_spared", g, hand, seq, a, c, float(c == t), 1.0 / len(candidates),
                     self.game_players[g][t])

    def add_decisions(self, frame: pl.DataFrame) -> None:
        """The rows of the warehouse's `decisions` (joined to the line's type, card and
        suit, and the game's ruleset and players) that make a decision of a signal."""
        if frame.is_empty():
            return
        for ruleset, rows in frame.group_by("ruleset"):
            rules = RULESETS.get(str(ruleset[0]))
            if rules is None:
                continue
            stack = [r for r, e in rules.effects.items() if e == "stack"]
            attack = [r for r, e in rules.effects.items() if e in ("stack", "skip")]
            self._sevens(rows, stack)
            self._soft(rows, attack)
            self._jacks(rows)

    def _seats(self) -> pl.DataFrame:
        """(game_id, name, g, local) for every registered seat."""
        if self._seat_frame is not None:
            return self._seat_frame
        self._seat_frame = pl.DataFrame({
            "game_id": [self.game_ids[g] for g, local in enumerate(self._local) for _ in local],
            "name": [n for local in self._local for n in local],
            "g": [g for g, local in enumerate(self._local) for _ in local],
            "local": [i for local in self._local for i in local.values()],
        }, schema={"game_id": pl.String, "name": pl.String, "g": pl.Int64, "local": pl.Int64})
        return self._seat_frame

    def _add_rows(self, signal: str, rows: pl.DataFrame, outcome: pl.Expr,
                  expected: pl.Expr | None = None, aux: pl.Expr | None = None) -> None:
        for game, players in rows.select("game_id", "players").unique("game_id").iter_rows():
            if game not in self._games:
                self.add_game(game, players)
        seats = self._seats()
        table = (rows.select("game_id", "hand", "seq", "player", "other", outcome.alias("outcome"),
                             (expected if expected is not None else pl.lit(math.nan)).alias("expected"),
                             (aux if aux is not None else pl.lit(-1)).alias("aux"))
                 .join(seats.rename({"name": "player", "local": "actor"}), on=["game_id", "player"])
                 .join(seats.drop("g").rename({"name": "other", "local": "other_local"}),
                       on=["game_id", "other"])
                 .filter(pl.col("actor") != pl.col("other_local")))
        if table.is_empty():
            return
        self._chunks.append({
            "signal": np.full(table.height, BEHAVIOUR.index(signal), dtype=np.int64),
            "game": table["g"].to_numpy().astype(np.int64),
            "hand": table["hand"].to_numpy().astype(np.int64),
            "seq": table["seq"].to_numpy().astype(np.int64),
            "actor": table["actor"].to_numpy().astype(np.int64),
            "other": table["other_local"].to_numpy().astype(np.int64),
            "outcome": table["outcome"].cast(pl.Float64).to_numpy(),
            "expected": table["expected"].cast(pl.Float64).to_numpy(),
            "aux": table["aux"].cast(pl.Int64).to_numpy(),
        })
        self._arrays = self._groups = None

    def _sevens(self, rows: pl.DataFrame, stack: list[str]) -> None:
        """A 7 playable, the next player not on one card, and something else allowed
        (another card, or a draw that is no foul): did they put the total on them?"""
        moments, attacked = _moments(rows, stack, pl.col("next_cards") > 1)
        self._add_rows("sevens_spared", moments, attacked)

    def _soft(self, rows: pl.DataFrame, attack: list[str]) -> None:
        """The next player on one card, a 7 or a skipping card playable, and something
        else allowed: did they hold it back?"""
        moments, attacked = _moments(rows, attack, pl.col("next_cards") == 1)
        self._add_rows("soft_play", moments, ~attacked)

    def _jacks(self, rows: pl.DataFrame) -> None:
        """A J that declared a suit: for each other player in the hand, did the suit suit
        their hand (a non-J card of it), against the share of the suits it could declare
        that they held?"""
        picked = rows.filter(pl.col("suit_choices").is_not_null() & (pl.col("type") == "play")
                             & pl.col("suit").is_in(list(_SUITS)))
        if picked.is_empty():
            return
        exploded = picked.with_columns(held=pl.col("suits_held")).explode("held").filter(
            pl.col("held").is_not_null()).with_columns(
            other=pl.col("held").struct.field("key"), bits=pl.col("held").struct.field("value"),
            suit_index=pl.col("suit").replace_strict({s: i for i, s in enumerate(_SUITS)}, return_dtype=pl.Int64))
        both = pl.col("bits") & pl.col("suit_choices")
        suited = ((pl.col("bits") // (2 ** pl.col("suit_index"))) % 2).cast(pl.Float64)
        chance = (_popcount(both) / _popcount(pl.col("suit_choices"))).cast(pl.Float64)
        # an other who held every suit the J could declare, or none, says nothing (x = e)
        informative = exploded.filter((chance > 0) & (chance < 1))
        self._add_rows("jacks_suited", informative, suited, chance, pl.col("suit_index"))


def _moments(rows: pl.DataFrame, ranks: list[str], when: pl.Expr) -> tuple[pl.DataFrame, pl.Expr]:
    """The decisions (`when`) where a card of `ranks` was playable and something else was
    allowed (another card, or a draw that is no foul), the next player as the other; and
    whether the move was a card of `ranks`."""
    rank = pl.element().str.slice(0, 1)
    has = pl.col("playable").list.eval(rank.is_in(ranks)).list.any()
    other_card = pl.col("playable").list.eval(~rank.is_in(ranks)).list.any()
    free_draw = pl.col("may_draw") & ~pl.col("obliged")
    moments = rows.filter(has & (other_card | free_draw) & when).with_columns(other=pl.col("next_player"))
    return moments, (pl.col("type") == "play") & pl.col("card").str.slice(0, 1).is_in(ranks)


def _popcount(bits: pl.Expr) -> pl.Expr:
    return sum(((bits // (2 ** i)) % 2 for i in range(4)), pl.lit(0))


_KEYS = ("signal", "game", "actor", "other")
_SUMS = ("decisions", "outcome", "expected", "variance")


def _summed(parts: list[dict[str, np.ndarray]], width: int) -> dict[str, np.ndarray]:
    """`parts` (columns `_KEYS` and `_SUMS`) summed per key, sorted by it (`width`: the most
    players of a game)."""
    if not parts:
        return {**{c: np.zeros(0, dtype=np.int64) for c in _KEYS}, **{c: np.zeros(0) for c in _SUMS}}
    if len(parts) == 1 and _is_summed(parts[0], width):
        return parts[0]
    games = max((int(p["game"].max()) + 1 for p in parts if len(p["game"])), default=1)
    key = np.concatenate([_key(p, games, width) for p in parts])
    unique, inverse = np.unique(key, return_inverse=True)
    del key
    out = {"other": unique % width, "actor": unique // width % width, "game": unique // (width * width) % games,
           "signal": unique // (width * width * games)}
    for c in _SUMS:
        out[c] = np.bincount(inverse, weights=np.concatenate([p[c] for p in parts]), minlength=len(unique))
    return out


def _is_summed(part: dict[str, np.ndarray], width: int) -> bool:
    """Whether `part`'s keys are already unique and in order (a `_summed` result)."""
    key = _key(part, int(part["game"].max()) + 1 if len(part["game"]) else 1, width)
    return bool(np.all(key[1:] > key[:-1]))


#: the signals whose decisions carry their own expectation, as indexes into BEHAVIOUR
_CARRIED = np.asarray([name not in _OWN_RATE for name in BEHAVIOUR])


def _key(part: dict[str, np.ndarray], games: int, width: int) -> np.ndarray:
    """Each row's (signal, game, actor, other) as one number. For a signal whose decisions
    carry their expectation (2s, J) the seat pair is taken unordered, actor the lower
    seat: a relabelling sends both directions to the same pair, so they are one sum (the
    signals of the deciding player's own rate keep who decided)."""
    signal, actor, other = part["signal"].astype(np.int64), part["actor"], part["other"]
    carried = _CARRIED[signal]
    low = np.where(carried, np.minimum(actor, other), actor)
    high = np.where(carried, np.maximum(actor, other), other)
    return ((signal * games + part["game"]) * width + low) * width + high


@dataclass
class PairRows:
    """What the pair audit reads of the warehouse, as read: each game's players, every 2
    whose gift applied with the players dealt into its hand, and the `decisions` rows that
    can make a decision of a signal (with their line's type, card and suit)."""

    games: list[tuple[str, list[str]]]
    gifts: list[tuple[Any, ...]]
    decisions: pl.DataFrame

    def data(self, games: Collection[str] | None = None) -> PairData:
        """The audit's arrays, of every game read or of `games` only."""
        data = PairData()
        for game, players in self.games:
            if games is None or game in games:
                data.add_game(game, players)
        for game, players, hand, seq, giver, target, seated in self.gifts:
            if players and (games is None or game in games):
                data.add_gift(game, players, hand, seq, giver, target, seated)
        decisions = self.decisions
        if games is not None:
            decisions = decisions.filter(pl.col("game_id").is_in(list(games)))
        data.add_decisions(decisions)
        return data


#: the most `decisions` rows one statement reads (with their lines' type, card and suit):
#: a bigger warehouse (a bigger partition, for the audit's own read) is read in parts,
#: each a share of its games (all of a game's rows in one part), so the join's memory
#: stays bounded (a million hands' 21 M rows in one statement ran DuckDB out of its
#: memory limit; the audit's read of a partition of 2.8 M decisions peaked at 0.6 GB of
#: DuckDB's buffers)
DECISIONS_PER_READ = 3_000_000


def _pair_games(reader: Any, build: str | None, since: str | None,
                ruleset: str | None) -> list[tuple[str, list[str]]]:
    """The games with their players, in game id order."""
    where, params = game_filter(build, since, ruleset, rows="g")
    return reader.rows("SELECT g.game_id, g.players FROM games g"
                       f" WHERE {' AND '.join([*where, 'g.players IS NOT NULL'])} ORDER BY g.game_id", params)


def _pair_games_and_gifts(reader: Any, build: str | None, since: str | None,
                          ruleset: str | None) -> tuple[list[tuple[str, list[str]]], list[tuple[Any, ...]]]:
    """The games (with their players) and the engine's `gift_to` with the players dealt
    into each gift's hand."""
    games = _pair_games(reader, build, since, ruleset)
    where, params = game_filter(build, since, ruleset)
    gifts = reader.rows(
        "SELECT e.game_id, g.players, e.hand, e.seq, e.player, e.gift_to, list(hp.player) AS seated"
        " FROM events e JOIN games g ON g.game_id = e.game_id AND g.ruleset = e.ruleset AND g.month = e.month"
        " JOIN hand_players hp ON hp.game_id = e.game_id AND hp.hand = e.hand"
        " AND hp.ruleset = e.ruleset AND hp.month = e.month"
        f" WHERE {' AND '.join([*where, 'e.gift_to IS NOT NULL', 'e.gift_to <> e.player', 'NOT e.set_aside'])}"
        " GROUP BY e.game_id, g.players, e.hand, e.seq, e.player, e.gift_to ORDER BY e.game_id, e.seq", params)
    return games, gifts


def _decision_parts(reader: Any, build: str | None, since: str | None, ruleset: str | None,
                    per_read: int = DECISIONS_PER_READ) -> Iterator[pl.DataFrame]:
    """The `decisions` rows that can make a decision of a signal, with their line's type,
    card and suit and their game's players: in parts of about `per_read` rows, each a
    share of the games by a hash of their id (a game's rows in one part, in order)."""
    where, params = game_filter(build, since, ruleset, rows="d")
    total = reader.rows("SELECT count(*) FROM decisions")[0][0] or 0
    parts = max(1, -(-int(total) // per_read))
    for part in range(parts):
        share = [f"hash(d.game_id) % {parts} = {part}"] if parts > 1 else []
        yield reader.frame(
            "SELECT d.game_id, g.players, d.ruleset, d.hand, d.seq, d.player, d.playable, d.obliged,"
            " d.may_draw, d.next_player, d.next_cards, map_entries(d.suits_held) AS suits_held,"
            " d.suit_choices, e.type, e.card, e.suit"
            " FROM decisions d JOIN games g ON g.game_id = d.game_id AND g.ruleset = d.ruleset"
            " AND g.month = d.month"
            " JOIN events e ON e.game_id = d.game_id AND e.seq = d.seq AND e.ruleset = d.ruleset"
            " AND e.month = d.month AND NOT e.set_aside"
            f" WHERE {' AND '.join([*where, *share, 'g.players IS NOT NULL'])}"
            " AND (d.suit_choices IS NOT NULL OR list_has_any(list_transform(d.playable, lambda c: c[1]), ?))"
            " ORDER BY d.game_id, d.seq", [*params, _ATTACK_RANKS])


def read_pair_rows(reader: Any, *, build: str | None = None, since: str | None = None,
                   ruleset: str | None = None) -> PairRows:
    """The rows the pair audit reads (`reader` an `ingest.read.Reader`): the games, the
    engine's `gift_to` in `events` with `hand_players`, and the engine's `decisions`, all
    held (the bench cuts them into audits of a few games); the audit itself reads through
    `pairs_from_warehouse`, in bounded parts."""
    games, gifts = _pair_games_and_gifts(reader, build, since, ruleset)
    decisions = pl.concat(list(_decision_parts(reader, build, since, ruleset)), how="vertical")
    return PairRows(games, gifts, decisions)


def pairs_from_warehouse(reader: Any, *, build: str | None = None, since: str | None = None,
                         ruleset: str | None = None, per_read: int = DECISIONS_PER_READ,
                         chunk_games: int = CHUNK_GAMES, folder: str | None = None) -> WarehousePairs:
    """What the pair audit reads of the warehouse, in a temporary folder (under `folder`;
    `WarehousePairs`): the games, `chunk_games` a file, then every signal's decisions
    summed in DuckDB per (game, actor, other) (`_SIGNAL_PARTS`), a partition at a time (a
    share of it when it holds more than `per_read` decisions), and the first favours of
    every pair and signal for the steps. The per-row read (`read_pair_rows`,
    `PairRows.data`) gives the same audit (tests/ingest/test_pairs.py)."""
    data = WarehousePairs(chunk_games, folder)
    data.add_games(_game_batches(reader, build, since, ruleset, data.root))
    filters, filter_params = game_filter(build, since, ruleset, rows="g")
    numbered = iter(range(len(filter_params)))
    where = [f"{table}.ruleset = $ruleset AND {table}.month = $month" for table in ("g", "x", "y")]
    where.append(re.sub(r"\?", lambda _: f"$filter{next(numbered)}", " AND ".join(filters or ["true"])))
    for name, month, parts in _partitions(reader, ruleset, per_read):
        rules = RULESETS.get(name)
        effects = rules.effects.items() if rules is not None else ()
        values = {"ruleset": name, "month": month, "known": rules is not None,
                  **{f"filter{i}": v for i, v in enumerate(filter_params)},
                  # the cards of those ranks (a card is its rank, then its suit)
                  "stack": [rank + suit for rank, effect in effects if effect == "stack" for suit in _SUITS],
                  "attack": [rank + suit for rank, effect in effects if effect in ("stack", "skip")
                             for suit in _SUITS]}
        for part in range(parts):
            share = [f"hash(g.game_id) % {parts} = {part}"] if parts > 1 else []
            statement = _SIGNAL_PARTS.format(where=" AND ".join(where + share), steps=STEPS_PER_SIGNAL)
            data.add_part(reader.frame(*bound(statement, values)))
    return data


class PairSource(Protocol):
    """What `audit_pairs` reads: `PairData` (in memory) or `WarehousePairs` (on disk)."""

    names: list[str]  # every player, in the order the games first seat them
    gifts: int  # 2s whose gift applied

    def decisions(self) -> dict[str, int]: ...

    def game_count(self) -> int: ...

    def chunks(self) -> Iterator[tuple[int, list[list[int]]]]: ...

    def group_chunk(self, start: int, stop: int) -> dict[str, np.ndarray]: ...

    def steps(self) -> pl.DataFrame: ...


class WarehousePairs(Scratch):
    """What the pair audit reads of a warehouse (`pairs_from_warehouse`), held in a
    temporary folder rather than in memory: the games, `chunk_games` to a file in game id
    order (each game's players, distinct, seat order); each part read's sums per (signal,
    game, player, other, the expectation's denominator) (`_SIGNAL_PARTS`), a file a part
    in game id order; and in memory only the players' names, the counts, and the first
    favours of every signal and pair (the steps). A chunk of games and its sums are read
    back when the scores ask for them (`chunks`, `group_chunk`), so what the audit holds
    is one chunk, whatever the warehouse's size. `close()` removes the folder (garbage
    collection does too)."""

    def __init__(self, chunk_games: int = CHUNK_GAMES, folder: str | None = None) -> None:
        super().__init__("haftkhabis-pairs-", folder)
        self.chunk_games = max(1, chunk_games)
        self.names: list[str] = []
        self._names: dict[str, int] = {}
        self.gifts = 0
        self._decisions = np.zeros(len(BEHAVIOUR), dtype=np.int64)
        self._games = 0
        self._starts: list[int] = []  # each games file's first game index
        self._firsts: list[str] = []  # and its first game id
        self._parts: list[Path] = []
        self._steps = pl.DataFrame(schema=_STEP_SCHEMA)

    def __enter__(self) -> WarehousePairs:
        return self

    def decisions(self) -> dict[str, int]:
        return {name: int(self._decisions[s]) for s, name in enumerate(BEHAVIOUR)}

    def game_count(self) -> int:
        return self._games

    def add_games(self, batches: Iterable[pa.RecordBatch]) -> None:
        """The games, in game id order (`game_id`, `players`), as `PairData.add_game`
        registers them: a name seated twice is one player."""
        ids: list[str] = []
        seated: list[list[str]] = []
        last: str | None = None
        for batch in batches:
            for game, players in zip(batch.column("game_id").to_pylist(), batch.column("players").to_pylist(),
                                     strict=True):
                if game == last:
                    continue
                last = game
                distinct = list(dict.fromkeys(players))
                for name in distinct:
                    if name not in self._names:
                        self._names[name] = len(self.names)
                        self.names.append(name)
                ids.append(game)
                seated.append(distinct)
                if len(ids) == self.chunk_games:
                    self._write_games(ids, seated)
                    ids, seated = [], []
        if ids:
            self._write_games(ids, seated)

    def _write_games(self, ids: list[str], seated: list[list[str]]) -> None:
        frame = pl.DataFrame({"game_id": ids, "players": seated},
                             schema={"game_id": pl.String, "players": pl.List(pl.String)})
        # the sums are found by game id range (`group_chunk`): polars must order the ids as
        # DuckDB's ORDER BY did
        if not frame["game_id"].is_sorted() or (self._firsts and self._firsts[-1] >= ids[0]):
            raise ValueError("the games were not read in the order of their ids")
        frame.write_parquet(self.root / f"games-{len(self._starts):06d}.parquet")
        self._starts.append(self._games)
        self._firsts.append(ids[0])
        self._games += len(ids)

    def add_part(self, frame: pl.DataFrame) -> None:
        """A part of the warehouse read (`_SIGNAL_PARTS`): its sums to a file, its rows for
        the steps kept with those held (the first favours of each signal and pair)."""
        if frame.is_empty():
            return
        index = self._names  # every player of the games, registered by `add_games`
        sums = frame.filter(~pl.col("step")).select(
            pl.col("signal").cast(pl.Int8), "game_id",
            pl.col("player").replace_strict(index, default=-1, return_dtype=pl.Int32),
            pl.col("other").replace_strict(index, default=-1, return_dtype=pl.Int32),
            "den", "n", "x", "num", "spread").sort("game_id")
        self.gifts += int(sums.filter(pl.col("signal") == 0)["x"].sum())
        made = sums.group_by("signal").agg(pl.col("n").sum())
        for signal, n in made.iter_rows():
            self._decisions[int(signal)] += int(n)
        path = self.root / f"part-{len(self._parts):06d}.parquet"
        sums.write_parquet(path, row_group_size=_ROW_GROUP)
        self._parts.append(path)
        del sums
        steps = frame.filter(pl.col("step")).select(
            pl.col("signal").cast(pl.Int64), game="game_id", hand=pl.col("hand").cast(pl.Int64),
            seq=pl.col("seq").cast(pl.Int64),
            actor=pl.col("player").replace_strict(index, default=-1, return_dtype=pl.Int64),
            other=pl.col("other").replace_strict(index, default=-1, return_dtype=pl.Int64),
            outcome=pl.col("x").cast(pl.Float64),
            expected=(pl.col("num") / pl.col("den")).cast(pl.Float64).fill_null(math.nan),
            aux=pl.when(pl.col("signal") == 0)
            .then(pl.col("target").replace_strict(index, default=-1, return_dtype=pl.Int64))
            .otherwise(pl.col("suit").cast(pl.Int64))).filter((pl.col("actor") >= 0) & (pl.col("other") >= 0))
        first = pl.int_range(pl.len()).over("signal", pl.min_horizontal("actor", "other"),
                                            pl.max_horizontal("actor", "other"))
        self._steps = (pl.concat([self._steps, steps], how="vertical").sort("game", "seq")
                       .filter(first < STEPS_PER_SIGNAL))

    def steps(self) -> pl.DataFrame:
        return self._steps

    def chunks(self) -> Iterator[tuple[int, list[list[int]]]]:
        for i, start in enumerate(self._starts):
            yield start, self._chunk_players(i)

    def _chunk_players(self, i: int) -> list[list[int]]:
        """The games of chunk `i`: each one's players as name indexes, seat order."""
        players = pl.read_parquet(self.root / f"games-{i:06d}.parquet", columns=["players"])["players"]
        return [[self._names[name] for name in seated] for seated in players.to_list()]

    def group_chunk(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """The sums of the games of the chunk that starts at `start` (`stop` its end),
        summed per (signal, game, actor, other) as `PairData.groups` gives them, g counted
        from `start`."""
        i = self._starts.index(start)
        players = self._chunk_players(i)
        if len(players) != stop - start:
            raise ValueError(f"games {start}-{stop} are not a chunk of this read")
        if not self._parts:
            return _summed([], 1)
        wanted = pl.col("game_id") >= self._firsts[i]
        if i + 1 < len(self._firsts):
            wanted &= pl.col("game_id") < self._firsts[i + 1]
        ids = pl.read_parquet(self.root / f"games-{i:06d}.parquet", columns=["game_id"]).with_row_index("g")
        read = pl.scan_parquet(self._parts).filter(wanted).collect()
        sums = read.join(ids, on="game_id").drop("game_id")
        if sums.height != read.height:
            raise ValueError(f"{read.height - sums.height} decision sums name a game the read did not list")
        del read
        # each seat of the chunk by (game, player): its local index
        names = len(self.names)
        sizes = np.asarray([len(p) for p in players], dtype=np.int64)
        game_of = np.repeat(np.arange(len(players)), sizes)
        seat = game_of * names + np.asarray([n for p in players for n in p], dtype=np.int64)
        local = np.arange(len(seat)) - np.repeat(np.r_[0, np.cumsum(sizes)[:-1]], sizes)
        order = np.argsort(seat)
        seat = seat[order]
        game = sums["g"].to_numpy().astype(np.int64)

        def seated(column: str) -> np.ndarray:
            key = game * names + sums[column].to_numpy().astype(np.int64)
            at = np.minimum(np.searchsorted(seat, key), max(len(seat) - 1, 0))
            found = (seat[at] == key) if len(seat) else np.zeros(len(key), dtype=bool)
            if not found.all():
                raise ValueError(f"{int((~found).sum())} decision sums of games {start}-{stop} name a player "
                                 "the game does not seat")
            return local[order[at]]

        chunk = {
            "signal": sums["signal"].to_numpy().astype(np.int64), "game": game,
            "actor": seated("player"), "other": seated("other"),
            "decisions": sums["n"].to_numpy().astype(np.float64),
            "outcome": sums["x"].to_numpy().astype(np.float64),
            "expected": sums.select((pl.col("num") / pl.col("den")).cast(pl.Float64).fill_null(math.nan))
            .to_series().to_numpy(),
            "variance": sums.select((pl.col("spread") / pl.col("den") ** 2).cast(pl.Float64).fill_null(math.nan))
            .to_series().to_numpy()}
        return _summed([chunk], max(1, int(sizes.max(initial=1))))


#: games a record batch of `_game_batches` (each becomes Python lists in `add_games`)
_GAME_BATCH = 16_384

#: rows a row group of a part's sums (`WarehousePairs.add_part`): a chunk's read skips the
#: row groups whose game ids lie outside it
_ROW_GROUP = 65_536


def _game_batches(reader: Any, build: str | None, since: str | None, ruleset: str | None, folder: Path,
                  memory: str = SORT_MEMORY) -> Iterator[pa.RecordBatch]:
    """The games with their players, in game id order, a record batch at a time: read as
    they lie into `folder` and sorted by a DuckDB of this read's own, within `memory`,
    spilling to `folder` (`ingest.scratch`)."""
    where, params = game_filter(build, since, ruleset, rows="g")
    read = folder / "games-read"
    files = copy_rows(reader, "SELECT g.game_id, g.players FROM games g"
                      f" WHERE {' AND '.join([*where, 'g.players IS NOT NULL'])}", params, read, _GAME_BATCH)
    if not files:
        return
    con = own_duckdb(folder, memory)
    try:
        sort = con.sql("SELECT game_id, players FROM read_parquet(?) ORDER BY game_id", params=[files])
        yield from sort.to_arrow_reader(_GAME_BATCH)
    finally:
        con.close()
        shutil.rmtree(read, ignore_errors=True)


def _partitions(reader: Any, ruleset: str | None, per_read: int) -> list[tuple[str, str, int]]:
    """The (ruleset, month) partitions of the games, each with the parts it is read in
    (about `per_read` decisions a part)."""
    games = reader.rows("SELECT DISTINCT ruleset, month FROM games ORDER BY ruleset, month")
    counts = dict(((r, m), n) for r, m, n in reader.rows(
        "SELECT ruleset, month, count(*) FROM decisions GROUP BY ruleset, month"))
    return [(r, m, max(1, -(-int(counts.get((r, m), 0)) // per_read))) for r, m in games
            if ruleset is None or r == ruleset]


#: every signal's decisions of one part of the warehouse (`pairs_from_warehouse` fills in
#: the conditions on the games `g`, decisions or gifts `x` and their lines or seats `y`),
#: what `PairData.add_gift` and `add_decisions` make of its rows: per (signal, game,
#: actor, other, the expectation's denominator) the decisions, Σx, and Σe and Σe(1 − e)
#: times that denominator (²); then the rows a case's steps show, the first favours
#: (`STEPS_PER_SIGNAL`) per signal and pair in game and seq order. Parameters (`ingest.scratch.bound`):
#: the cards of the ruleset's stack ranks, those of its attack ranks (stack or skip),
#: whether the ruleset is known (else only its 2s are read), and the `where`'s.
_SIGNAL_PARTS = """
WITH turns AS MATERIALIZED (
    SELECT x.game_id, x.hand, x.seq, x.player, x.next_player AS other, x.next_cards,
           list_contains(g.players, x.next_player) AND x.next_player <> x.player AS next_seated,
           list_has_any(x.playable, $stack) AND (NOT list_has_all($stack, x.playable)
                                                 OR (x.may_draw AND NOT x.obliged)) AS seven_moment,
           coalesce(y.type = 'play' AND list_contains($stack, y.card), false) AS seven_played,
           list_has_any(x.playable, $attack) AND (NOT list_has_all($attack, x.playable)
                                                  OR (x.may_draw AND NOT x.obliged)) AS attack_moment,
           coalesce(y.type = 'play' AND list_contains($attack, y.card), false) AS attack_played,
           $known AND x.suit_choices IS NOT NULL AND y.type = 'play' AND y.suit IN ('C', 'D', 'H', 'S') AS declared,
           CASE WHEN declared THEN map_entries(x.suits_held) END AS held,
           CASE WHEN declared THEN g.players END AS players, x.suit_choices, position(y.suit IN 'CDHS') - 1 AS suit
    FROM decisions x
    JOIN games g ON g.game_id = x.game_id AND g.ruleset = x.ruleset AND g.month = x.month
    JOIN events y ON y.game_id = x.game_id AND y.seq = x.seq AND y.ruleset = x.ruleset AND y.month = x.month
        AND NOT y.set_aside
    WHERE {where} AND g.players IS NOT NULL AND list_contains(g.players, x.player)
        AND (x.suit_choices IS NOT NULL OR list_has_any(x.playable, $attack))
),
gifts AS (
    SELECT x.game_id, g.players, x.hand, x.seq, x.player, x.gift_to AS target, list(y.player) AS seated
    FROM events x
    JOIN games g ON g.game_id = x.game_id AND g.ruleset = x.ruleset AND g.month = x.month
    JOIN hand_players y ON y.game_id = x.game_id AND y.hand = x.hand AND y.ruleset = x.ruleset AND y.month = x.month
    WHERE {where} AND x.gift_to IS NOT NULL AND x.gift_to <> x.player AND NOT x.set_aside
        AND len(g.players) > 0 AND list_contains(g.players, x.player)
    GROUP BY x.game_id, g.players, x.hand, x.seq, x.player, x.gift_to
),
candidates AS (
    SELECT game_id, hand, seq, player, target,
           list_distinct(list_filter(seated, lambda p: p <> player AND list_contains(players, p))) AS others
    FROM gifts
),
twos AS (
    SELECT 0 AS signal, game_id, hand, seq, player, other, CAST(other = target AS INTEGER) AS x,
           1 AS num, len(others) AS den, target, -1 AS suit
    FROM (SELECT *, unnest(others) AS other FROM candidates WHERE list_contains(others, target))
),
sevens AS (
    SELECT 1 AS signal, game_id, hand, seq, player, other, CAST(seven_played AS INTEGER) AS x,
           NULL::BIGINT AS num, NULL::BIGINT AS den, NULL::VARCHAR AS target, -1 AS suit
    FROM turns WHERE next_seated AND next_cards > 1 AND seven_moment
),
soft AS (
    SELECT 3 AS signal, game_id, hand, seq, player, other, CAST(NOT attack_played AS INTEGER) AS x,
           NULL::BIGINT AS num, NULL::BIGINT AS den, NULL::VARCHAR AS target, -1 AS suit
    FROM turns WHERE next_seated AND next_cards = 1 AND attack_moment
),
jacks AS (
    SELECT 2 AS signal, game_id, hand, seq, player, held.key AS other,
           CAST((held.value >> suit) & 1 AS INTEGER) AS x, bit_count(held.value & suit_choices & 15) AS num,
           bit_count(suit_choices & 15) AS den, NULL::VARCHAR AS target, suit
    FROM (SELECT game_id, players, hand, seq, player, suit_choices, suit, unnest(held) AS held FROM turns
          WHERE declared)
    WHERE held.value IS NOT NULL AND held.key <> player AND list_contains(players, held.key)
        AND bit_count(held.value & suit_choices & 15) > 0
        AND bit_count(held.value & suit_choices & 15) < bit_count(suit_choices & 15)
),
decided AS MATERIALIZED (
    SELECT * FROM twos UNION ALL SELECT * FROM sevens UNION ALL SELECT * FROM jacks UNION ALL SELECT * FROM soft
)
SELECT false AS step, signal, game_id, player, other, den, count(*) AS n, CAST(sum(x) AS BIGINT) AS x,
       CAST(sum(num) AS BIGINT) AS num, CAST(sum(num * (den - num)) AS BIGINT) AS spread,
       NULL::INTEGER AS hand, NULL::BIGINT AS seq, NULL::VARCHAR AS target, NULL::INTEGER AS suit
FROM decided GROUP BY signal, game_id, player, other, den
UNION ALL
SELECT true, signal, game_id, player, other, den, 1, x, num, NULL, hand, seq, target, suit FROM decided
WHERE x = CASE WHEN signal IN (0, 1) THEN 0 ELSE 1 END
QUALIFY row_number() OVER (PARTITION BY signal, least(player, other), greatest(player, other)
                           ORDER BY game_id, seq) <= {steps}
ORDER BY step, signal, game_id, player, other, den, seq
"""


# ------------------------------------------------------------------------------ scoring


@dataclass
class SignalScore:
    decisions: int
    observed: float
    expected: float
    z: float | None  # None: too few decisions for this pair

    def to_json(self) -> dict[str, Any]:
        return {"decisions": self.decisions, "observed": self.observed, "expected": self.expected, "z": self.z}


@dataclass
class PairScore:
    a: str
    b: str
    score: float  # the Stouffer sum of the signals' z: positive when they favour each other
    p_value: float  # family-wise, from the permutation null of the highest score
    case: bool
    signals: dict[str, SignalScore]

    @property
    def drivers(self) -> list[str]:
        """The signals behind the score: those with z of at least 1, largest first."""
        scored = [(s.z, name) for name, s in self.signals.items() if s.z is not None and s.z >= 1.0]
        return [name for _, name in sorted(scored, reverse=True)]

    def to_json(self) -> dict[str, Any]:
        return {"players": [self.a, self.b], "score": self.score, "p_value": self.p_value, "case": self.case,
                "signals": {name: s.z for name, s in self.signals.items() if s.z is not None},
                "drivers": self.drivers,
                "detail": {name: s.to_json() for name, s in self.signals.items()}}


@dataclass
class PairReport:
    level: float
    permutations: int
    games: int
    gifts: int
    decisions: dict[str, int]
    pairs_scored: int
    pairs: list[PairScore]
    null_max: list[float]
    steps: dict[tuple[str, str], list[dict[str, Any]]]

    @property
    def cases(self) -> list[PairScore]:
        return [p for p in self.pairs if p.case]

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "permutations": self.permutations, "games": self.games,
                "gifts": self.gifts, "decisions": self.decisions, "pairs_scored": self.pairs_scored,
                "signals": list(SIGNALS),
                "cases": [{**p.to_json(), "steps": self.steps.get((p.a, p.b), [])} for p in self.cases],
                "pairs": [p.to_json() for p in self.pairs]}


class _Universe:
    """The games of one chunk (each a list of its players' name indexes, seat order) and
    per game a k × k table of the pair numbers of its seats (what a relabelling maps a
    decision to), into `keys` (every pair of the audit, a · names + b with a < b, sorted;
    None: the chunk's own pairs)."""

    def __init__(self, game_players: Sequence[Sequence[int]], names: int, keys: np.ndarray | None = None) -> None:
        sizes = np.asarray([len(p) for p in game_players], dtype=np.int64)
        self.sizes = sizes
        self.offsets = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)
        self.slots = np.asarray([n for p in game_players for n in p], dtype=np.int64)
        self.slot_game = np.repeat(np.arange(len(sizes)), sizes)
        self.table_offsets = np.r_[0, np.cumsum(sizes * sizes)[:-1]].astype(np.int64)
        # per table size: the slots of its games, a row a game
        self._by_size = [(int(k), self.offsets[sizes == k][:, None] + np.arange(k))
                         for k in np.unique(sizes) if k > 0]
        # every (game, i, j) seat pair: its players' pair key
        game_of = np.repeat(np.arange(len(sizes)), sizes * sizes)
        within = np.arange(int((sizes * sizes).sum())) - np.repeat(self.table_offsets, sizes * sizes)
        k = sizes[game_of]
        i, j = within // np.maximum(k, 1), within % np.maximum(k, 1)
        a = self.slots[self.offsets[game_of] + i]
        b = self.slots[self.offsets[game_of] + j]
        key = np.minimum(a, b) * names + np.maximum(a, b)
        del game_of, within, k, a, b
        seated = i != j
        table = np.full(len(key), -1, dtype=np.int64)
        if keys is None:
            self.keys, table[seated] = np.unique(key[seated], return_inverse=True)
        else:
            self.keys = keys
            table[seated] = np.searchsorted(keys, key[seated])
        self.table = table
        self.names = names

    def identity(self) -> np.ndarray:
        """Every slot's own local index (no relabelling)."""
        return np.arange(len(self.slots)) - self.offsets[self.slot_game]

    def relabelling(self, rng: np.random.Generator | Mapping[int, np.random.Generator]) -> np.ndarray:
        """A random permutation of each game's seats: the new local index of each slot
        (the games of each table size permuted together, a row each, by `rng` or by the
        generator of that size)."""
        labels = np.empty(len(self.slots), dtype=np.int64)
        for size, slots in self._by_size:
            seats = np.broadcast_to(np.arange(size, dtype=np.int64), slots.shape).copy()
            labels[slots] = (rng if isinstance(rng, np.random.Generator) else rng[size]).permuted(seats, axis=1)
        return labels

    def tables(self) -> dict[int, int]:
        """Games per table size."""
        sizes, counts = np.unique(self.sizes, return_counts=True)
        return dict(zip(sizes.tolist(), counts.tolist(), strict=True))

    def together(self) -> np.ndarray:
        """Per pair of `keys`: games together."""
        return np.bincount(self.table[self.table >= 0], minlength=len(self.keys)) / 2.0

    def games_of(self) -> np.ndarray:
        """Per player: games played."""
        return np.bincount(self.slots, minlength=self.names).astype(float)

    def co_seating(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`_co_seating_of` this universe's games alone."""
        return _co_seating_of(self.together(), self.games_of(), self.tables(), self.keys, self.names)


def _co_seating_of(together: np.ndarray, games_of: np.ndarray, tables: Mapping[int, int], keys: np.ndarray,
                   names: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair (`keys`): games together, the games together expected from each one's
    activity alone (`games_of`, `tables`: games per table size), and that count's
    variance. A game of k seats holds the pair with chance q = k(k − 1) n_a n_b / (N² −
    Σn²) (n a player's games, N every seat: each game's k(k − 1) ordered seat pairs spread
    in proportion to the product of the two players' games, at most 1); games are
    independent, so the count has mean Σq and variance Σq(1 − q). The variance matters
    where q is large (a small club, where two regulars share most tables); in a large
    population it is about the mean."""
    total = games_of.sum()
    share = 1.0 / max(total * total - float((games_of ** 2).sum()), 1.0)
    a, b = keys // names, keys % names
    pairing = games_of[a] * games_of[b] * share
    expected, variance = np.zeros(len(keys)), np.zeros(len(keys))
    for size, count in sorted(tables.items()):
        q = np.minimum(pairing * size * (size - 1), 1.0)
        expected += count * q
        variance += count * q * (1 - q)
    return together, expected, variance


@dataclass
class _Sums:
    """One relabelling's sums over some games' decisions, per behaviour signal and pair
    (arrays signals × pairs): decisions, Σx, and for the signals that carry their
    expectation Σe and Σe(1 − e) (`first`, `second`); for those of the deciding player's
    own rate (whose rate needs every game: `finished` takes it) the decisions where the
    pair's first player decided (`first`) and its second (`second`), with each player's
    decisions and Σx (`made`, `done`: signals × players)."""

    count: np.ndarray
    observed: np.ndarray
    first: np.ndarray
    second: np.ndarray
    made: np.ndarray
    done: np.ndarray

    @staticmethod
    def size(pairs: int, names: int) -> int:
        """The bytes of one relabelling's sums."""
        return 8 * len(BEHAVIOUR) * (4 * pairs + 2 * names)

    @classmethod
    def zeros(cls, pairs: int, names: int) -> _Sums:
        shape, players = (len(BEHAVIOUR), pairs), (len(BEHAVIOUR), names)
        return cls(np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(players),
                   np.zeros(players))

    def add(self, other: _Sums) -> None:
        for name in ("count", "observed", "first", "second", "made", "done"):
            getattr(self, name).__iadd__(getattr(other, name))

    def finished(self, keys: np.ndarray, names: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per behaviour signal and pair: decisions, Σx, Σe and z (nan where the variance
        is under MIN_VARIANCE)."""
        a, b = keys // names, keys % names
        expected, z = np.zeros_like(self.observed), np.full_like(self.observed, np.nan)
        for s, name in enumerate(BEHAVIOUR):
            if name in _OWN_RATE:
                # each decision expects the deciding player's rate over all their decisions
                rate = self.done[s] / np.maximum(self.made[s], 1)
                expected[s] = rate[a] * self.first[s] + rate[b] * self.second[s]
                variance = rate[a] * (1 - rate[a]) * self.first[s] + rate[b] * (1 - rate[b]) * self.second[s]
            else:
                expected[s], variance = self.first[s], self.second[s]
            ok = variance >= MIN_VARIANCE - _ROUNDING
            z[s, ok] = _SIGN[name] * (self.observed[s, ok] - expected[s, ok]) / np.sqrt(variance[ok])
        return self.count, self.observed, expected, z


class _Signals:
    """The decisions of one chunk of games summed per (signal, game, actor, other)
    (`PairData.groups`, `PairSource.group_chunk`), with what every relabelling needs
    computed once: each group's seats as positions in the universe's slots, and its
    game's pair table."""

    def __init__(self, groups: Mapping[str, np.ndarray], universe: _Universe) -> None:
        # sorted by signal first
        self.bounds = np.searchsorted(groups["signal"], np.arange(len(BEHAVIOUR) + 1))
        game = groups["game"]
        base = universe.offsets[game]
        self.actor_slot = _narrow(base + groups["actor"])
        self.other_slot = _narrow(base + groups["other"])
        self.base = _narrow(base)
        self.table_base = _narrow(universe.table_offsets[game])
        self.size = _narrow(universe.sizes[game])
        self.decisions = groups["decisions"]
        self.outcome = groups["outcome"]
        self.expected = groups["expected"]
        self.variance = groups["variance"]

    def sums(self, universe: _Universe, labels: np.ndarray) -> _Sums:
        """The chunk's `_Sums` with each game's seats relabelled by `labels` (the new
        local index of each slot)."""
        pairs, names = len(universe.keys), universe.names
        out = _Sums.zeros(pairs, names)
        for s, name in enumerate(BEHAVIOUR):
            low, high = self.bounds[s], self.bounds[s + 1]
            if low == high:
                continue
            actor = labels[self.actor_slot[low:high]]
            pair = universe.table[self.table_base[low:high] + actor * self.size[low:high]
                                  + labels[self.other_slot[low:high]]]
            n, x = self.decisions[low:high], self.outcome[low:high]
            out.count[s] = np.bincount(pair, weights=n, minlength=pairs)
            out.observed[s] = np.bincount(pair, weights=x, minlength=pairs)
            if name in _OWN_RATE:
                who = universe.slots[self.base[low:high] + actor]
                out.made[s] = np.bincount(who, weights=n, minlength=names)
                out.done[s] = np.bincount(who, weights=x, minlength=names)
                first = who == universe.keys[pair] // names
                out.first[s] = np.bincount(pair[first], weights=n[first], minlength=pairs)
                out.second[s] = np.bincount(pair[~first], weights=n[~first], minlength=pairs)
            else:
                out.first[s] = np.bincount(pair, weights=self.expected[low:high], minlength=pairs)
                out.second[s] = np.bincount(pair, weights=self.variance[low:high], minlength=pairs)
        return out

    def scores(self, universe: _Universe, labels: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per behaviour signal and pair, when the universe is every game: decisions, Σx,
        Σe and z (`_Sums.finished`) with the seats relabelled by `labels`."""
        return self.sums(universe, labels).finished(universe.keys, universe.names)


def _narrow(index: np.ndarray) -> np.ndarray:
    """An index array as int32 when its values fit (half the memory, for the scores)."""
    return index.astype(np.int32) if not len(index) or int(index.max()) < 2 ** 31 else index


@dataclass
class CoSeating:
    """The co-seating signal of every pair who sat together (a, b name them)."""

    a: list[str]
    b: list[str]
    together: np.ndarray
    expected: np.ndarray
    z: np.ndarray


def _z(together: np.ndarray, chance: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """The co-seating z = (O − E)/√Var."""
    return (together - chance) / np.sqrt(np.maximum(variance, 1e-9))


def co_seating(data: PairSource) -> CoSeating:
    """The co-seating signal alone, as `audit_pairs` computes it (before its clip), for
    every pair who sat in a game together; it needs the games only, no decisions."""
    seating = _Seating.of(data)
    together, chance, variance = seating.co_seating()
    names, keys = seating.names, seating.keys
    return CoSeating([data.names[int(k) // names] for k in keys], [data.names[int(k) % names] for k in keys],
                     together, chance, _z(together, chance, variance))


@dataclass
class _Seating:
    """What the games alone say, read a chunk at a time: every pair who sat together
    (`keys`, as `_Universe` numbers them) with its games together, each player's games
    and the games per table size."""

    names: int
    keys: np.ndarray
    together: np.ndarray
    games_of: np.ndarray
    tables: dict[int, int]

    @classmethod
    def of(cls, data: PairSource) -> _Seating:
        names = len(data.names)
        keys: np.ndarray = np.zeros(0, dtype=np.int64)
        together: np.ndarray = np.zeros(0)
        games_of, tables = np.zeros(names), dict[int, int]()
        for _, players in data.chunks():
            universe = _Universe(players, names)
            merged, inverse = np.unique(np.r_[keys, universe.keys], return_inverse=True)
            together = np.bincount(inverse, weights=np.r_[together, universe.together()], minlength=len(merged))
            keys = merged
            games_of += universe.games_of()
            for size, count in universe.tables().items():
                tables[size] = tables.get(size, 0) + count
        return cls(names, keys, together, games_of, tables)

    def co_seating(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _co_seating_of(self.together, self.games_of, self.tables, self.keys, self.names)

    def generators(self, seed: int, permutations: int) -> list[dict[int, np.random.Generator]]:
        """Per relabelling, a generator per table size, each where the one generator
        (`seed`) stands when the relabelling of every game at once (`_Universe.relabelling`)
        reaches the games of that size: so relabelling the chunks in order, each size with
        its own, draws exactly the seats that relabelling draws, whatever the chunks. The
        generator is run through every relabelling once to find them (a block of games at a
        time)."""
        rng = np.random.default_rng(seed)
        out: list[dict[int, np.random.Generator]] = []
        for _ in range(permutations):
            at = {}
            for size, games in sorted(self.tables.items()):
                if size <= 0:
                    continue
                at[size] = np.random.Generator(type(rng.bit_generator)())
                at[size].bit_generator.state = rng.bit_generator.state
                for start in range(0, games, _DRAW_BLOCK):
                    rows = min(_DRAW_BLOCK, games - start)
                    rng.permuted(np.broadcast_to(np.arange(size, dtype=np.int64), (rows, size)).copy(), axis=1)
            out.append(at)
        return out


#: games whose seats the generators' first run draws at a time
_DRAW_BLOCK = 65_536


def _combined(co_z: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The Stouffer sum over co-seating and the behaviour signals a pair has enough
    decisions for; nan for a pair with none of the latter."""
    known = ~np.isnan(z)
    signals = known.sum(axis=0)
    total = np.where(known, z, 0.0).sum(axis=0) + co_z
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(signals > 0, total / np.sqrt(signals + 1), np.nan)


def audit_pairs(data: PairSource, level: float = 0.01, permutations: int = PERMUTATIONS,
                seed: int = 0) -> PairReport:
    """Score every pair with enough decisions of at least one behaviour signal; the
    permutation null of the highest score gives each pair's family-wise p-value; the cases
    are those at most `level`.

    The games are scored a chunk at a time (`data.chunks()`): each chunk's decisions add to
    every relabelling's sums per pair (`_Sums`), so what is held is those sums and one
    chunk, whatever the number of games; the sums of as many relabellings as
    `SUMS_MEMORY` holds at a time, the chunks read again for the next ones. A relabelling draws each
    game's seats as the relabelling of every game at once would (`_Seating.generators`),
    so the report does not depend on the chunks."""
    decisions = data.decisions()
    games = data.game_count()
    empty = PairReport(level, permutations, games, data.gifts, decisions, 0, [], [], {})
    if not sum(decisions.values()) or not games:
        return empty
    seating = _Seating.of(data)
    names, keys = seating.names, seating.keys
    pairs = len(keys)
    if not pairs:
        return empty
    together, chance, variance = seating.co_seating()
    co_z = _z(together, chance, variance)
    co_term = np.clip(co_z, -CO_SEATING_CLIP, CO_SEATING_CLIP)
    # None: the players as seated; then each relabelling's generators
    labellings: list[dict[int, np.random.Generator] | None] = [None, *seating.generators(seed, permutations)]
    # as many labellings' sums at a time as SUMS_MEMORY holds, each turn a pass over the
    # games (one pass unless pairs × relabellings outgrow it)
    turn = max(1, SUMS_MEMORY // _Sums.size(pairs, names))
    null_max: list[float] = []
    for first in range(0, len(labellings), turn):
        these = labellings[first:first + turn]
        sums = [_Sums.zeros(pairs, names) for _ in these]
        for start, players in data.chunks():
            universe = _Universe(players, names, keys)
            rows = _Signals(data.group_chunk(start, start + len(players)), universe)
            for total, at in zip(sums, these, strict=True):
                total.add(rows.sums(universe, universe.identity() if at is None else universe.relabelling(at)))
            del universe, rows
        for total, at in zip(sums, these, strict=True):
            if at is None:
                count, observed, expected, z = total.finished(keys, names)
                continue
            permuted = _combined(co_term, total.finished(keys, names)[3])
            null_max.append(float(np.nanmax(permuted)) if np.isfinite(permuted).any() else -math.inf)
        del sums
    score = _combined(co_term, z)
    null = np.sort(np.asarray(null_max))
    out = []
    for p in np.flatnonzero(~np.isnan(score)):
        exceed = len(null) - int(np.searchsorted(null, score[p], side="left"))
        p_value = (1 + exceed) / (permutations + 1)
        key = int(keys[p])
        signals = {"co_seating": SignalScore(int(together[p]), float(together[p]), float(chance[p]),
                                             float(co_z[p]))}
        for s, name in enumerate(BEHAVIOUR):
            signals[name] = SignalScore(int(count[s, p]), float(observed[s, p]), float(expected[s, p]),
                                        None if np.isnan(z[s, p]) else float(z[s, p]))
        out.append(PairScore(data.names[key // names], data.names[key % names],
                             float(score[p]), p_value, p_value <= level, signals))
    out.sort(key=lambda s: -s.score)
    steps = _all_steps(data.names, data.steps(), [c for c in out if c.case])
    return PairReport(level, permutations, games, data.gifts, decisions, len(out), out, null_max, steps)


def _all_steps(names: Sequence[str], rows: pl.DataFrame, cases: list[PairScore]
               ) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The steps that show each case's signals: per signal, the decisions where one of the
    pair did the other the favour (a 2 or a 7 total not given, a suit that suits them, a
    card held back), in game and seq order, with the replay's deep link. `rows`: the
    decisions to choose from (`_STEP_SCHEMA`)."""
    if not cases or rows.is_empty():
        return {pair: [] for pair in ((c.a, c.b) for c in cases)} if cases else {}
    index = {name: i for i, name in enumerate(names)}
    count = len(names)
    wanted = {min(index[c.a], index[c.b]) * count + max(index[c.a], index[c.b]): (c.a, c.b) for c in cases}
    out: dict[tuple[str, str], list[dict[str, Any]]] = {pair: [] for pair in wanted.values()}
    shown: dict[tuple[tuple[str, str], str], int] = {}
    # in game and seq order; a move that makes decisions of several signals for the pair
    # lists them as the audit always has: 7s, soft play, J, then the 2
    tie = {BEHAVIOUR.index(name): i for i, name in enumerate(("sevens_spared", "soft_play", "jacks_suited",
                                                              "twos_spared"))}
    picked = (rows.with_columns(key=pl.min_horizontal("actor", "other") * count + pl.max_horizontal("actor", "other"),
                                tie=pl.col("signal").replace_strict(tie, return_dtype=pl.Int64))
              .filter(pl.col("key").is_in(list(wanted))).sort("game", "seq", "tie"))
    for row in picked.iter_rows(named=True):
        name = BEHAVIOUR[row["signal"]]
        pair = wanted[row["key"]]
        x, e = float(row["outcome"]), float(row["expected"])
        favour = x == 0 if _SIGN[name] < 0 else (x == 1 and (math.isnan(e) or e < 1))
        if not favour or shown.get((pair, name), 0) >= STEPS_PER_SIGNAL:
            continue
        aux = int(row["aux"])
        player, partner = names[row["actor"]], names[row["other"]]
        game, hand, seq = row["game"], int(row["hand"]), int(row["seq"])
        what = _what(name, partner, names[aux] if name == "twos_spared" else _SUITS[aux] if aux >= 0 else "")
        out[pair].append({"signal": name, "game": game, "hand": hand, "seq": seq, "player": player,
                          "partner": partner, "what": what,
                          "replay": f"replay?game={game}&hand={hand}&seq={seq}"})
        shown[(pair, name)] = shown.get((pair, name), 0) + 1
    return out


def _what(signal: str, partner: str, detail: str) -> str:
    """A step in words (`detail`: a 2's target, a J's suit)."""
    if signal == "twos_spared":
        return f"gave the 2 to {detail}, not {partner}"
    if signal == "sevens_spared":
        return f"did not put the 7 total on {partner}, next"
    if signal == "jacks_suited":
        return f"declared {detail}, a suit {partner} held"
    return f"held back a 7 or a skip with {partner} next on one card"
