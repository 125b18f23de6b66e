"""The pair audit: who is playing together? One collusion signal so far, the 2s' gifts
(a gift makes its target draw a card): a pair who spare each other give each other fewer
2s than a fair choice among the others seated in the hand would. Its calibration does not
rest on a model of how honest players choose: the null is estimated by permutation,
relabelling the players of each game at random ("shuffling partners") and taking the
highest pair score of each relabelled warehouse, so a case's p-value is family-wise over
every pair scored, and the case queue at level α holds no honest pair with probability at
least 1 − α when players' identities are exchangeable within a game.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ingest.fairplay import game_filter

#: a pair is scored when, in the hands they shared, at least this many 2s were expected to
#: go from one to the other under a fair choice
MIN_EXPECTED = 5.0
PERMUTATIONS = 200


@dataclass
class GiftSet:
    """The 2s whose gift applied, as arrays: per gift its game, giver and target, and the
    players seated in that hand besides the giver (the candidates), all as indexes into
    the game's own player list; and each game's players (indexes into `names`)."""

    names: list[str] = field(default_factory=list)
    game_ids: list[str] = field(default_factory=list)
    game_players: list[list[int]] = field(default_factory=list)  # per game: name indexes
    # one row per gift and candidate
    row_game: list[int] = field(default_factory=list)
    row_giver: list[int] = field(default_factory=list)  # local index in the game
    row_candidate: list[int] = field(default_factory=list)
    row_hit: list[bool] = field(default_factory=list)
    row_chance: list[float] = field(default_factory=list)  # 1 / candidates
    gifts: list[tuple[int, int, int, int, int]] = field(default_factory=list)  # game, hand, seq, giver, target

    def add_gift(self, game: str, players: Sequence[str], hand: int, seq: int, giver: str, target: str,
                 seated: Sequence[str], index: dict[str, int], game_index: dict[str, int]) -> None:
        g = game_index.get(game)
        if g is None:
            g = game_index[game] = len(self.game_ids)
            self.game_ids.append(game)
            local = []
            for name in players:
                if name not in index:
                    index[name] = len(self.names)
                    self.names.append(name)
                local.append(index[name])
            self.game_players.append(local)
        order = list(players)
        if giver not in order or target not in order:
            return
        candidates = [order.index(p) for p in seated if p != giver and p in order]
        if order.index(target) not in candidates:
            return
        a = order.index(giver)
        for c in candidates:
            self.row_game.append(g)
            self.row_giver.append(a)
            self.row_candidate.append(c)
            self.row_hit.append(c == order.index(target))
            self.row_chance.append(1.0 / len(candidates))
        self.gifts.append((g, hand, seq, a, order.index(target)))


def gifts_from_warehouse(reader: Any, *, build: str | None = None, since: str | None = None,
                         ruleset: str | None = None) -> GiftSet:
    """Every 2 whose gift applied (the engine's `gift_to`), with the players dealt into its
    hand; `reader` an `ingest.read.Reader`."""
    where, params = game_filter(build, since, ruleset)
    where += ["e.gift_to IS NOT NULL", "e.gift_to <> e.player", "NOT e.set_aside"]
    rows = reader.rows(
        "SELECT e.game_id, g.players, e.hand, e.seq, e.player, e.gift_to, list(hp.player) AS seated"
        " FROM events e JOIN games g ON g.game_id = e.game_id AND g.ruleset = e.ruleset AND g.month = e.month"
        " JOIN hand_players hp ON hp.game_id = e.game_id AND hp.hand = e.hand"
        " AND hp.ruleset = e.ruleset AND hp.month = e.month"
        f" WHERE {' AND '.join(where)}"
        " GROUP BY e.game_id, g.players, e.hand, e.seq, e.player, e.gift_to ORDER BY e.game_id, e.seq", params)
    gifts = GiftSet()
    index: dict[str, int] = {}
    game_index: dict[str, int] = {}
    for game, players, hand, seq, giver, target, seated in rows:
        if players:
            gifts.add_gift(game, players, hand, seq, giver, target, seated, index, game_index)
    return gifts


@dataclass
class PairScore:
    a: str
    b: str
    gifts_to_partner: int  # observed 2s from one to the other
    expected: float  # under a fair choice among the candidates
    score: float  # (expected - observed) / sd: positive when they spare each other
    p_value: float  # family-wise, from the permutation null of the highest score
    case: bool

    def to_json(self) -> dict[str, Any]:
        return {"players": [self.a, self.b], "gifts_to_partner": self.gifts_to_partner,
                "expected": self.expected, "score": self.score, "p_value": self.p_value,
                "case": self.case, "signals": {"twos_spared": self.score}}


@dataclass
class PairReport:
    level: float
    permutations: int
    gifts: int
    pairs_scored: int
    pairs: list[PairScore]
    null_max: list[float]
    steps: dict[tuple[str, str], list[dict[str, Any]]]

    @property
    def cases(self) -> list[PairScore]:
        return [p for p in self.pairs if p.case]

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "permutations": self.permutations, "gifts": self.gifts,
                "pairs_scored": self.pairs_scored,
                "signals": ["twos_spared"],
                "cases": [{**p.to_json(), "steps": self.steps.get((p.a, p.b), [])} for p in self.cases],
                "pairs": [p.to_json() for p in self.pairs]}


def _scores(pair_key: np.ndarray, hit: np.ndarray, chance: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pair key: observed gifts, expected, the score, and the key, for the pairs whose
    expected count reaches MIN_EXPECTED."""
    keys, inverse = np.unique(pair_key, return_inverse=True)
    observed = np.bincount(inverse, weights=hit, minlength=len(keys))
    expected = np.bincount(inverse, weights=chance, minlength=len(keys))
    variance = np.bincount(inverse, weights=chance * (1 - chance), minlength=len(keys))
    ok = (expected >= MIN_EXPECTED) & (variance > 0)
    score = (expected[ok] - observed[ok]) / np.sqrt(variance[ok])
    return observed[ok], expected[ok], score, keys[ok]


def audit_pairs(gifts: GiftSet, level: float = 0.01, permutations: int = PERMUTATIONS,
                seed: int = 0) -> PairReport:
    """Score every pair with enough 2s expected between them; the permutation null of the
    highest score gives each pair's family-wise p-value; the cases are those at most
    `level`."""
    if not gifts.row_game:
        return PairReport(level, permutations, len(gifts.gifts), 0, [], [], {})
    names = len(gifts.names)
    game = np.asarray(gifts.row_game, dtype=np.int64)
    giver = np.asarray(gifts.row_giver, dtype=np.int64)
    candidate = np.asarray(gifts.row_candidate, dtype=np.int64)
    hit = np.asarray(gifts.row_hit, dtype=float)
    chance = np.asarray(gifts.row_chance, dtype=float)
    sizes = np.asarray([len(p) for p in gifts.game_players], dtype=np.int64)
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    slots = np.asarray([n for p in gifts.game_players for n in p], dtype=np.int64)
    slot_game = np.repeat(np.arange(len(sizes)), sizes)

    def pair_keys(labels: np.ndarray) -> np.ndarray:
        a = labels[offsets[game] + giver]
        b = labels[offsets[game] + candidate]
        return np.minimum(a, b) * names + np.maximum(a, b)

    observed, expected, score, keys = _scores(pair_keys(slots), hit, chance)
    rng = np.random.default_rng(seed)
    null_max = []
    for _ in range(permutations):
        # relabel each game's players at random: a permutation within each game's slots
        order = np.lexsort((rng.random(len(slots)), slot_game))
        _, _, permuted, _ = _scores(pair_keys(slots[order]), hit, chance)
        null_max.append(float(permuted.max()) if len(permuted) else -math.inf)
    null = np.sort(np.asarray(null_max))
    pairs = []
    for o, e, z, k in zip(observed, expected, score, keys, strict=True):
        exceed = len(null) - int(np.searchsorted(null, z, side="left"))
        p = (1 + exceed) / (permutations + 1)
        a, b = gifts.names[int(k) // names], gifts.names[int(k) % names]
        pairs.append(PairScore(a, b, int(o), float(e), float(z), p, p <= level))
    pairs.sort(key=lambda s: -s.score)
    steps = {(c.a, c.b): _steps(gifts, c.a, c.b) for c in pairs if c.case}
    return PairReport(level, permutations, len(gifts.gifts), len(pairs), pairs, null_max, steps)


def _steps(gifts: GiftSet, a: str, b: str, limit: int = 20) -> list[dict[str, Any]]:
    """The 2s one of the pair gave to someone else while the partner sat in the hand: the
    steps that show the signal (game, hand, seq: a replay's deep link)."""
    out = []
    for g, hand, seq, giver, target in gifts.gifts:
        players = [gifts.names[n] for n in gifts.game_players[g]]
        if a in players and b in players and players[giver] in (a, b):
            partner = b if players[giver] == a else a
            if players[target] != partner:
                out.append({"game": gifts.game_ids[g], "hand": hand, "seq": seq, "giver": players[giver],
                            "target": players[target], "spared": partner,
                            "replay": f"replay?game={gifts.game_ids[g]}&hand={hand}&seq={seq}"})
                if len(out) >= limit:
                    break
    return out
