"""The warehouse's stored analyses: each game's decisions and deals rated once, by rollouts.

`refresh` analyses the games whose stored analysis is missing or stale — made from other
lines (the game's `content_hash`), by another engine, rollout policy or search, or with
other rollouts or seed — and keeps the rest, so a page view or `stats ratings` reads
stored rows instead of recomputing. One Parquet file per game under
`<warehouse>/analyses/`, a local folder or an `s3://` prefix alike: every file goes
through the warehouse's `Location` (ingest.storage), written atomically (`AtomicOutput`:
a temporary file renamed, or one object upload); the file's metadata carries the key it
was made with. `ratings_rows` turns the rows into one row per player (engine.skill).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from engine import ENGINE_VERSION
from engine.analysis import POLICY, AnalysisError, Search, analyse_replay
from engine.skill import HandResult, accuracy, luck, rate
from ingest import read
from ingest.storage import AtomicOutput, Location

FOLDER = "analyses"
SCHEMA = pa.schema([
    ("kind", pa.string()),  # decision · deal
    ("game_id", pa.string()),
    ("start_time", pa.timestamp("us", tz="UTC")),
    ("hand", pa.int64()),
    ("seq", pa.int64()),
    ("player", pa.string()),
    ("moves", pa.int64()),
    ("loss", pa.float64()),
    ("loss_se", pa.float64()),
    ("significant", pa.bool_()),
    ("mistake", pa.bool_()),
    ("best", pa.string()),  # the best move, in words
    ("summary", pa.string()),  # the decision in words (engine.analysis.Decision.summary)
    ("expected", pa.float64()),
    ("expected_se", pa.float64()),
    ("luck", pa.float64()),
    ("points", pa.float64()),
    ("content_hash", pa.string()),
    ("engine_version", pa.string()),
    ("policy", pa.string()),
    ("rollouts", pa.int64()),
    ("seed", pa.int64()),
    ("search", pa.string()),  # flat · ismcts (engine.analysis.Search)
])
#: the schema metadata key holding the key a file was made with
KEY = b"analysis_key"


class AnalysesUnavailable(Exception):
    """The warehouse's stored analyses cannot be read or written (its storage failed)."""


@dataclass(slots=True)
class RefreshCounts:
    games: int = 0
    analysed: int = 0
    kept: int = 0
    failed: int = 0


def _folder(reader: read.Reader) -> str:
    return reader.location.join(FOLDER)


def _file(folder: str, game: str) -> str:
    return f"{folder}/{hashlib.sha1(game.encode('utf-8')).hexdigest()}.parquet"


def _key(content_hash: str | None, rollouts: int, seed: int, search: Search) -> dict[str, Any]:
    return {"content_hash": content_hash, "engine_version": ENGINE_VERSION, "policy": POLICY,
            "rollouts": rollouts, "seed": seed, "search": str(search)}


def _stored_key(location: Location, uri: str) -> dict[str, Any] | None:
    """The key the file at `uri` was made with (None: no such file, or not one of ours)."""
    try:
        with location.filesystem.open_input_file(location.fs_path(uri)) as source:
            meta = pq.read_schema(source).metadata or {}
    except (OSError, pa.ArrowInvalid):
        return None
    raw = meta.get(KEY)
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _write(location: Location, uri: str, rows: list[dict[str, Any]], key: dict[str, Any]) -> None:
    table = pa.Table.from_pylist(rows, schema=SCHEMA).replace_schema_metadata({KEY: orjson.dumps(key)})
    out = AtomicOutput(location, uri)
    try:
        pq.write_table(table, out.stream)
        out.commit()
    except BaseException:
        out.abort()
        raise


def _read(location: Location, uris: list[str]) -> pa.Table:
    """The rows of the files at `uris`, in one read (parallel on S3)."""
    if not uris:
        return SCHEMA.empty_table()
    table = pq.read_table([location.fs_path(u) for u in uris], filesystem=location.filesystem,
                          schema=SCHEMA)
    return table.replace_schema_metadata(None)


def _rows(game: str, start: Any, key: dict[str, Any], reader: read.Reader, rollouts: int,
          seed: int, threads: int, search: Search) -> list[dict[str, Any]]:
    replay = read.game_replay(reader, game)
    if replay is None:
        return []
    result = analyse_replay(replay, rollouts=rollouts, seed=seed, threads=threads, search=search)
    common = {"game_id": game, "start_time": start, **key}
    rows: list[dict[str, Any]] = []
    for d in result.decisions:
        chosen = d.chosen_move
        if chosen is None:
            continue
        rows.append({**common, "kind": "decision", "hand": d.hand, "seq": d.seq, "player": d.player,
                     "moves": len(d.moves), "loss": max(chosen.loss, 0.0), "loss_se": chosen.loss_se,
                     "significant": chosen.significant, "mistake": d.mistake,
                     "best": d.best_move.text, "summary": d.summary()})
    for row in result.luck():
        rows.append({**common, "kind": "deal", "hand": row["hand"], "player": row["player"],
                     "expected": row["expected"], "expected_se": row["expected_se"],
                     "luck": row["luck"], "points": row["points"]})
    return rows


def refresh(reader: read.Reader, *, rollouts: int = 100, seed: int = 0, threads: int = 0,
            search: Search = Search.FLAT,
            on_game: Callable[[str, bool], None] | None = None) -> RefreshCounts:
    """Analyse every game of the snapshot whose stored analysis is missing or stale."""
    location = reader.location
    folder = _folder(reader)
    location.makedirs(folder)
    counts = RefreshCounts()
    games = reader.rows("SELECT game_id, content_hash, start_time FROM games ORDER BY start_time, game_id")
    for game, content_hash, start in games:
        counts.games += 1
        key = _key(content_hash, rollouts, seed, search)
        uri = _file(folder, game)
        if _stored_key(location, uri) == key:
            counts.kept += 1
            if on_game:
                on_game(game, False)
            continue
        try:
            rows = _rows(game, start, key, reader, rollouts, seed, threads, search)
        except AnalysisError:
            rows = []
            counts.failed += 1
        try:
            _write(location, uri, rows, key)
        except OSError as exc:
            raise AnalysesUnavailable(f"cannot store the analysis of game {game!r} at {uri}: {exc}") from exc
        counts.analysed += 1
        if on_game:
            on_game(game, True)
    location.synced()
    return counts


def stored(reader: read.Reader) -> pa.Table:
    """Every stored analysis row of the snapshot's games (stale files of games no longer
    in the warehouse are left out)."""
    location = reader.location
    folder = _folder(reader)
    try:
        present = {u for u in location.list(folder, suffix=".parquet") if not u.rsplit("/", 1)[-1].startswith(".")}
        if not present:  # (naming every game's file takes about 2 µs a game: 0.9 s at a million hands)
            return SCHEMA.empty_table()
        wanted = {_file(folder, g) for (g,) in reader.rows("SELECT game_id FROM games")}
        return _read(location, sorted(wanted & present))
    except OSError as exc:
        raise AnalysesUnavailable(f"cannot read the stored analyses at {folder}: {exc}") from exc


def decision_at(reader: read.Reader, game: str, seq: int) -> dict[str, Any] | None:
    """The stored analysis of the decision at `seq` of `game` (None: not stored, or no
    decision there)."""
    location = reader.location
    uri = _file(_folder(reader), game)
    try:
        if not location.exists(uri):
            return None
        rows = _read(location, [uri]).to_pylist()
    except OSError:
        return None
    for row in rows:
        if row["kind"] == "decision" and row["seq"] == seq:
            return row
    return None


def _hand_results(rows: list[dict[str, Any]]) -> list[HandResult]:
    """The analysed hands of points play, in the order their games started."""
    deals = [r for r in rows if r["kind"] == "deal" and r["points"] is not None]
    by_hand: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in deals:
        by_hand.setdefault((r["game_id"], r["hand"]), []).append(r)
    order = sorted(by_hand, key=lambda k: (by_hand[k][0]["start_time"] or 0, k))
    return [HandResult(g, h, {r["player"]: r["points"] for r in by_hand[(g, h)]},
                       {r["player"]: r["expected"] for r in by_hand[(g, h)]}) for g, h in order]


def rating_history(table: pa.Table, player: str) -> list[dict[str, Any]]:
    """`player`'s rating after each of their rated hands, plain and deal-adjusted."""
    results = _hand_results(table.to_pylist())
    plain: dict[str, list[tuple[str, int, float, float]]] = {}
    adjusted: dict[str, list[tuple[str, int, float, float]]] = {}
    rate(results, history=plain)
    rate(results, adjusted=True, history=adjusted)
    after = {(g, h): (mu, sigma) for g, h, mu, sigma in adjusted.get(player, [])}
    return [{"hand_index": i + 1, "game_id": g, "hand": h, "rating": mu, "uncertainty": sigma,
             "rating_adjusted": after.get((g, h), (None, None))[0]}
            for i, (g, h, mu, sigma) in enumerate(plain.get(player, []))]


def ratings_rows(table: pa.Table, *, min_hands: int = 0) -> list[dict[str, Any]]:
    """One row per player: the Plackett–Luce rating (mu) and its uncertainty (sigma), with
    and without the deal adjustment; games and hands; accuracy (mean loss per decision,
    its 95% interval, the share of clear mistakes); luck (mean per hand, its interval).
    Hands in the order the games started."""
    rows = table.to_pylist()
    deals = [r for r in rows if r["kind"] == "deal" and r["points"] is not None]
    results = _hand_results(rows)
    plain, adjusted = rate(results), rate(results, adjusted=True)
    acc = accuracy((r["player"], r["loss"], bool(r["mistake"])) for r in rows if r["kind"] == "decision")
    lucky = luck((r["player"], r["luck"]) for r in deals)
    out: list[dict[str, Any]] = []
    for player, rating in plain.items():
        if rating.hands < min_hands:
            continue
        adj = adjusted.get(player)
        a = acc.get(player)
        lk = lucky.get(player)
        out.append({
            "player": player, "rating": round(rating.mu, 3), "uncertainty": round(rating.sigma, 3),
            "rating_adjusted": None if adj is None else round(adj.mu, 3),
            "uncertainty_adjusted": None if adj is None else round(adj.sigma, 3),
            "games": rating.games, "hands": rating.hands,
            "decisions": None if a is None else a.mean_loss.n,
            "accuracy": None if a is None else round(a.mean_loss.estimate, 3),
            "accuracy_low": None if a is None else round(a.mean_loss.low, 3),
            "accuracy_high": None if a is None else round(a.mean_loss.high, 3),
            "mistake_share": None if a is None else round(a.mistakes.estimate, 4),
            "luck": None if lk is None else round(lk.estimate, 3),
            "luck_low": None if lk is None else round(lk.low, 3),
            "luck_high": None if lk is None else round(lk.high, 3),
        })
    out.sort(key=lambda r: (-(r["rating"] - 3 * r["uncertainty"]), r["player"]))
    return out
