"""Where each game's lines lie in `events`, as the service's game index keeps it
(`service.warehouse.GameIndex`): a game's places, each a part's number and the first and
last of its row groups that hold the game's rows.

A map is never changed once made: the index swaps a whole generation while steps read the
one before. `changed` makes the next map from what a new snapshot of `events` removed and
added, in time proportional to that change, not to the warehouse: the games added lately
are kept as read (a dictionary, copied at each change: at most `FOLD_AT` games), and every
`FOLD_AT` of them are folded into sorted columns of 28 bytes a game — a 128-bit BLAKE2b
digest of the id (`ingest.live.id_digest`, as the writer's own index keys its games) and
the place — which the next maps share until a fold or a removed part copies them
(`bench/bench_live_memory.py`). A game kept as read took about 140 bytes (its id, a
dictionary entry, the place), and the whole dictionary was copied at every commit.

Two games whose digests are alike (odds of about 10^-27 in a warehouse of a million
games) would share their places: a step filters the rows it reads by the game's id, so it
would read more row groups, not other lines; the partition named for the game could be the
other's, and the reads it prunes would then not find the game.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ingest import live

#: one place of a game's rows: (part number, first row group, last row group)
Place = tuple[int, int, int]

_U64 = np.dtype(np.uint64)
_U32 = np.dtype(np.uint32)


def _frozen(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    values.flags.writeable = False  # shared by the maps made after this one
    return values


@dataclass(frozen=True, slots=True)
class _Columns:
    """Places in rows sorted by the digest's high half (a game in two parts: two rows).
    Part numbers and row groups are 32-bit: the index numbers the parts it reads from 0
    at each start, four billion before it would overflow (a few a commit)."""

    high: np.ndarray[Any, np.dtype[np.uint64]]
    low: np.ndarray[Any, np.dtype[np.uint64]]
    number: np.ndarray[Any, np.dtype[np.uint32]]
    first: np.ndarray[Any, np.dtype[np.uint32]]
    last: np.ndarray[Any, np.dtype[np.uint32]]

    @classmethod
    def empty(cls) -> _Columns:
        return cls(*(_frozen(np.zeros(0, dtype)) for dtype in (_U64, _U64, _U32, _U32, _U32)))

    def __len__(self) -> int:
        return len(self.high)

    def places(self, game: str) -> tuple[Place, ...]:
        high, low = live.id_digest(game)
        key = np.uint64(high)
        start = int(np.searchsorted(self.high, key, "left"))
        stop = int(np.searchsorted(self.high, key, "right"))
        return tuple((int(self.number[k]), int(self.first[k]), int(self.last[k]))
                     for k in range(start, stop) if int(self.low[k]) == low)

    def without(self, numbers: Collection[int]) -> _Columns:
        """These columns without the rows of parts `numbers` (themselves when none is here)."""
        kept = ~np.isin(self.number, np.fromiter(numbers, _U32, len(numbers)))
        if kept.all():
            return self
        return _Columns(*(_frozen(column[kept]) for column in
                          (self.high, self.low, self.number, self.first, self.last)))

    def with_(self, recent: dict[str, tuple[Place, ...]]) -> _Columns:
        """These columns with the places of `recent`: the new rows sorted, then inserted
        (one pass over the columns, no sort of them)."""
        rows = [(*live.id_digest(game), *place) for game, places in recent.items() for place in places]
        if not rows:
            return self
        columns = list(zip(*rows, strict=True))
        high = np.array(columns[0], _U64)
        order = np.argsort(high, kind="stable")
        at = np.searchsorted(self.high, high[order])
        olds: tuple[np.ndarray[Any, Any], ...] = (self.high, self.low, self.number, self.first, self.last)
        return _Columns(*(_frozen(np.insert(old, at, np.array(new, old.dtype)[order]))
                          for old, new in zip(olds, columns, strict=True)))


class GamePlaces:
    """game id → the places of its rows; never changed once made (`changed` makes the next)."""

    #: games kept as read before they are folded into the columns
    FOLD_AT = 16_384

    __slots__ = ("_columns", "_recent")

    def __init__(self, recent: dict[str, tuple[Place, ...]] | None = None,
                 columns: _Columns | None = None) -> None:
        self._recent = recent if recent is not None else {}
        self._columns = columns if columns is not None else _Columns.empty()

    def __len__(self) -> int:
        """Places held (a game in two parts counts twice)."""
        return len(self._columns) + sum(map(len, self._recent.values()))

    def get(self, game: str) -> tuple[Place, ...]:
        """`game`'s places; () when it has none."""
        return self._recent.get(game, ()) + self._columns.places(game)

    def changed(self, removed: Collection[int], added: Sequence[tuple[str, Place]]) -> GamePlaces:
        """The next map: without the places in parts `removed`, with `added` (a game's
        place in a new part; a game already placed elsewhere then has both)."""
        if not removed and not added:
            return self
        gone = set(removed)
        if gone:
            columns = self._columns.without(gone)
            recent = {game: kept for game, places in self._recent.items()
                      if (kept := places if len(places) == 1 and places[0][0] not in gone
                          else tuple(p for p in places if p[0] not in gone))}
        else:
            columns, recent = self._columns, dict(self._recent)
        for game, place in added:
            recent[game] = (*recent.get(game, ()), place)
        if len(recent) >= self.FOLD_AT:
            columns, recent = columns.with_(recent), {}
        return GamePlaces(recent, columns)
