"""Group commits: many small inputs — pushed bodies, lines appended to followed files —
committed together as one warehouse batch by a long-lived writer.

`commit_files` runs in the writer's process (the service keeps one alive, so its imports
and caches are paid once): the warehouse's own ingest over the group's files, in that
process (no worker processes for a batch this size), without looking up which files the
warehouse has read before (a pushed body is named by its receipt; a body sent twice is
two receipts, and its games, the same, are left unchanged). Every guarantee of
`ingest.pipeline.ingest` holds: all or nothing, a game completed when its rest arrives,
unusable lines quarantined verbatim, readers never see half a batch.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

#: a content hash as the engine writes it (`content_hash` in the core's rows.rs)
_CONTENT_HASH = re.compile(r"[0-9a-f]{32}")
#: seconds a group waits for the warehouse's lock held by another writer
LOCK_WAIT = 60.0


class GamesIndex:
    """Every committed game's content hash and partition, kept by the writer between its
    batches: a batch asks it which of its games are stored (to replace or to leave them)
    instead of scanning `games`' ids, a cost that grows with the warehouse.

    It follows `games` by its parts: brought from the version it knows to a newer one, it
    reads the game ids and hashes of the parts added in between (this writer's batches, or
    another writer's: a replica, `haftkhabis ingest`, `compact` re-adding merged rows) and
    takes them as they are; a game is never deleted, only replaced by rows in a new part.
    Its first use reads every part once.

    Memory: the games read lately are kept as they are read (about 250 bytes a game);
    past `FOLD_AT` of them they are folded into sorted columns of 34 bytes a game — a
    128-bit BLAKE2b digest of the id (two games' digests alike: odds of about 10^-27 in a
    warehouse of a million games), the 128-bit content hash, the partition's number — so
    a million games take about 37 MB, not 250 (`bench/bench_live_memory.py`; a fold at a
    million games about 0.1 s)."""

    #: games kept as read before they are folded into the columns
    FOLD_AT = 16_384

    def __init__(self) -> None:
        self.version: int | None = None
        self._parts: set[str] = set()
        self._root: str | None = None
        self._clear()

    def _clear(self) -> None:
        self._recent: dict[str, tuple[str, str, str]] = {}
        self._places: list[tuple[str, str]] = []  # a partition's (ruleset, month), by number
        self._place_of: dict[tuple[str, str], int] = {}
        empty = np.zeros(0, np.uint64)
        self._id_high, self._id_low, self._hash_high, self._hash_low = empty, empty, empty, empty
        self._place = np.zeros(0, np.uint32)

    def __len__(self) -> int:
        """Games held."""
        return len(self._id_high) + sum(1 for game in self._recent if self._folded(game) is None)

    def at(self, store: Any, version: int) -> Any:
        from ingest.store import read_part

        if self._root != store.root or self.version is None or version < self.version:
            self._parts, self._root = set(), store.root  # anew
            self._clear()
        if version != self.version:
            parts = store.committed_files("games", version) if version else []
            for part in parts:
                if part.path in self._parts:
                    continue
                where = dict(part.partition)
                place = (where.get("ruleset") or "", where.get("month") or "")
                data = read_part(store, "games", part, ["game_id", "content_hash"])
                for game, content in zip(data["game_id"].to_pylist(), data["content_hash"].to_pylist(),
                                         strict=True):
                    self._recent[game] = (content, *place)
                if len(self._recent) >= self.FOLD_AT:
                    self._fold()
            self._parts = {p.path for p in parts}
            self.version = version
        return self._lookup

    def _lookup(self, ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        found: dict[str, tuple[str, str, str]] = {}
        for game in ids:
            held = self._recent.get(game) or self._folded(game)
            if held is not None:
                found[game] = held
        return found

    def _folded(self, game: str) -> tuple[str, str, str] | None:
        high, low = id_digest(game)
        at = int(np.searchsorted(self._id_high, np.uint64(high)))
        if at == len(self._id_high) or int(self._id_high[at]) != high or int(self._id_low[at]) != low:
            return None
        content = f"{int(self._hash_high[at]):016x}{int(self._hash_low[at]):016x}"
        return (content, *self._places[int(self._place[at])])

    def _fold(self) -> None:
        """The games read lately into the sorted columns, in time proportional to the
        columns' length (a sort of the new games, then one insertion): a game read again
        replaces its row. The columns hold one row per 64-bit high half of a digest: a
        game whose digest shares another's high half (odds of about 3 in 10^8 at a
        million games) stays in the dictionary, as does a content hash not of the
        engine's form (32 hex digits)."""
        games: list[str] = []
        highs, lows, hash_highs, hash_lows, places = [], [], [], [], []
        kept: dict[str, tuple[str, str, str]] = {}
        for game, (content, ruleset, month) in self._recent.items():
            if not isinstance(content, str) or not _CONTENT_HASH.fullmatch(content):
                kept[game] = (content, ruleset, month)
                continue
            place = self._place_of.setdefault((ruleset, month), len(self._places))
            if place == len(self._places):
                self._places.append((ruleset, month))
            id_high, id_low = id_digest(game)
            games.append(game)
            highs.append(id_high)
            lows.append(id_low)
            hash_highs.append(int(content[:16], 16))
            hash_lows.append(int(content[16:], 16))
            places.append(place)
        order = np.argsort(np.array(highs, np.uint64), kind="stable")
        high = np.array(highs, np.uint64)[order]
        low = np.array(lows, np.uint64)[order]
        hash_high = np.array(hash_highs, np.uint64)[order]
        hash_low = np.array(hash_lows, np.uint64)[order]
        place_of = np.array(places, np.uint32)[order]
        # one row a high half among the new games, then against the columns
        alone = np.ones(len(high), np.bool_)
        alone[1:] = high[1:] != high[:-1]
        at: np.ndarray[Any, np.dtype[np.intp]] = np.searchsorted(self._id_high, high)
        inside = at < len(self._id_high)
        there = np.zeros(len(high), np.bool_)
        there[inside] = self._id_high[at[inside]] == high[inside]
        same = np.zeros(len(high), np.bool_)
        same[there] = self._id_low[at[there]] == low[there]
        for k in np.flatnonzero(~alone | (there & ~same)):
            game = games[int(order[k])]
            kept[game] = self._recent[game]
        again = alone & same  # a game read again: its row replaced
        self._hash_high[at[again]], self._hash_low[at[again]] = hash_high[again], hash_low[again]
        self._place[at[again]] = place_of[again]
        new = alone & ~there
        where = at[new]
        self._id_high = np.insert(self._id_high, where, high[new])
        self._id_low = np.insert(self._id_low, where, low[new])
        self._hash_high = np.insert(self._hash_high, where, hash_high[new])
        self._hash_low = np.insert(self._hash_low, where, hash_low[new])
        self._place = np.insert(self._place, where, place_of[new])
        self._recent = kept


def id_digest(game: str) -> tuple[int, int]:
    """A game id's 128-bit BLAKE2b digest, as two 64-bit halves: how the writer's index
    and the service's (`service.places`) key a game in their columns."""
    digest = hashlib.blake2b(game.encode(), digest_size=16).digest()
    return int.from_bytes(digest[:8], "big"), int.from_bytes(digest[8:], "big")


#: the writer process's index (one warehouse a writer)
_INDEX = GamesIndex()


def commit_files(paths: Sequence[str], warehouse: str,
                 storage_options: Mapping[str, str] | None = None,
                 digests: Mapping[str, tuple[int, str]] | None = None, *,
                 max_line_bytes: int | None = None,
                 ranges: Mapping[str, tuple[str, int, int]] | None = None) -> dict[str, Any]:
    """One group's files as one batch: its number, each file's status and error, and the
    batch's figures. `digests`: each file's size and sha256, when known (not read again).
    `ranges`: every path's bytes as a range of another file, `(source, offset, size)`
    (the service's pushed bodies, read from its journal: `ingest.pipeline.ingest`)."""
    from engine._core import DEFAULT_MAX_LINE_BYTES
    from ingest.pipeline import ingest

    # another writer (a replica's, `haftkhabis ingest`, `compact`) holds the warehouse for
    # one batch at a time: wait for it rather than fail and come back
    summary = ingest(list(paths), warehouse, workers=1, force=True, storage_options=storage_options,
                     digests=digests, wait=LOCK_WAIT, games_index=_INDEX,
                     max_line_bytes=max_line_bytes or DEFAULT_MAX_LINE_BYTES, ranges=ranges)
    return {
        "games_committed": committed_games(warehouse, storage_options, summary.written),
        "batch": int(summary.batch),
        "files": {f["path"]: {"status": f["status"], "error": f["error"], "lines": f["lines"]}
                  for f in summary.files},
        "lines": summary.lines,
        "games": summary.games_new + summary.games_updated,
        "violations": summary.violations,
        "quarantined": summary.quarantined,
        "seconds": summary.seconds,
    }


def merge_small_parts(warehouse: str, storage_options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One pass of `ingest.merge.merge_parts` over the groups' small parts (files are
    deleted by the scheduled `haftkhabis compact`, past the retention window); what it
    merged."""
    from ingest.merge import merge_parts

    summary = merge_parts(warehouse, storage_options, wait=LOCK_WAIT)
    return {"batch": summary.batch, "removed": sum(summary.removed.values()),
            "added": sum(summary.added.values()), "bytes": summary.bytes_copied,
            "skipped": summary.skipped}


def committed_games(warehouse: str, storage_options: Mapping[str, str] | None,
                    written: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Each game the batch added or changed, as a live feed shows it: its id, ruleset,
    server build, status, players, hands, violation codes and how many of each (its whole
    set: a game completed by a later push brings all its violations again), read back from
    the parts the batch wrote, a few kilobytes."""
    from ingest.store import Warehouse, read_part

    store = Warehouse(warehouse, storage_options)
    codes: dict[str, list[str]] = {}
    for part in written.get("violations", ()):
        data = read_part(store, "violations", part, ["game_id", "code"])
        for game, code in zip(data["game_id"].to_pylist(), data["code"].to_pylist(), strict=True):
            codes.setdefault(game, []).append(code)
    out: list[dict[str, Any]] = []
    columns = ["game_id", "status", "players", "server_build", "hands", "complete", "end_time"]
    for part in written.get("games", ()):
        ruleset = dict(part.partition).get("ruleset")
        for row in read_part(store, "games", part, columns).to_pylist():
            end = row["end_time"]
            out.append({"game": row["game_id"], "ruleset": ruleset, "server_build": row["server_build"],
                        "status": row["status"], "complete": row["complete"], "players": row["players"] or [],
                        "hands": row["hands"], "codes": sorted(set(codes.get(row["game_id"], []))),
                        "violations": dict(Counter(codes.get(row["game_id"], []))),
                        "end_time": end.isoformat() if end is not None else None})
    return out


def writer_started() -> None:
    """In the writer process, first: it dies with the process that started it (a server
    killed must not leave its writer committing behind its back), and imports what a
    commit needs, so the first group does not pay for it."""
    from ingest.lifetime import die_with_parent, return_freed_memory

    die_with_parent()  # first: a server killed while this starts must not leave it behind
    return_freed_memory()
    import duckdb  # noqa: F401 - the summaries' queries

    import ingest.pipeline
    import ingest.summaries  # noqa: F401
    from ingest.schema import TABLES

    # an empty table, as a commit's summaries make: pyarrow imports pandas for the first
    # (about a second and a half, measured in the first commit's profile)
    TABLES["player_stats"].file_schema.empty_table()
