"""One replayed game in, the rows of every game table out.

`game_rows` takes a game's raw lines (as received, in input order) and the engine's replay
of them (`GameRun` with facts, and its `GameVerdict`) and returns one tuple per row, in the
column order of each table's Parquet files (`schema.TableSpec.file_schema`). It decides
nothing about the rules: hands, phases, outcomes and violations all come from the engine;
this module only counts and lays them out.

Which line the engine accepted at each `seq` is mirrored from notation.md ("Reading"): the
first line seen at a seq is replayed, an identical repeat is dropped, a different one (or a
line without a usable seq) is set aside. Set-aside lines are kept too (`set_aside` true),
so the warehouse holds every line of the game and can replay it alone.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from engine import ENGINE_VERSION
from engine.cards import CARD_SET, SUITS, CardSpellingError, repair_card, repair_suit
from engine.events import TS_RE
from engine.machine import HandRecord, Table
from engine.rulesets import RULESETS
from engine.validate import EventFact, GameRun, GameVerdict
from ingest.schema import UNKNOWN_MONTH, UNKNOWN_RULESET

#: one line as received: raw bytes (no line ending), file, physical line number
RawLine = tuple[bytes, str, int]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_META_BUILD_KEYS = ("server_build", "build", "server_version", "version", "server")


@dataclass(slots=True)
class GameRows:
    """A game's rows for every game table, and what the batch needs to know of it."""

    game_id: str
    ruleset: str
    month: str
    content_hash: str
    status: str
    violations: int
    lines: int
    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)


def fingerprint(obj: Any) -> int:
    """A stable 64-bit id of a line's JSON value (key order and spacing ignored)."""
    canonical = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    return int.from_bytes(hashlib.blake2b(canonical, digest_size=8).digest(), "big", signed=True)


def content_hash(fingerprints: Iterable[int]) -> str:
    """The game's content hash: over the multiset of its distinct lines, so the order
    in which files deliver them does not matter."""
    digest = hashlib.blake2b(digest_size=16)
    for fp in sorted(fingerprints):
        digest.update(fp.to_bytes(8, "big", signed=True))
    return digest.hexdigest()


def parse_ts(value: Any) -> int | None:
    """Microseconds since the epoch for an RFC 3339 timestamp the notation accepts."""
    if not isinstance(value, str) or TS_RE.fullmatch(value) is None:
        return None
    try:
        moment = datetime.fromisoformat(value.upper())
    except ValueError:
        return None
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def month_of(micros: int | None) -> str:
    """The partition month (UTC) of a game starting at `micros`."""
    if micros is None:
        return UNKNOWN_MONTH
    days = micros // 86_400_000_000
    year, month = _civil_from_days(days)
    return f"{year:04d}-{month:02d}"


def _civil_from_days(days: int) -> tuple[int, int]:
    """(year, month) of a day count since 1970-01-01 (Howard Hinnant's algorithm)."""
    z = days + 719_468
    era = (z if z >= 0 else z - 146_096) // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if month <= 2 else 0), month


def _card(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value in CARD_SET:
        return value
    try:
        return repair_card(value)
    except CardSpellingError:
        return str(value)


def _suit(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and len(value) == 1 and value in SUITS:
        return value
    try:
        return repair_suit(value)
    except CardSpellingError:
        return str(value)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _json_text(value: Any) -> str | None:
    if value is None:
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def server_build(meta: Any) -> str | None:
    """The server build a header's `meta` names, under the usual key spellings."""
    if not isinstance(meta, dict):
        return None
    for key in _META_BUILD_KEYS:
        value = meta.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            return str(value)
    return None


def sort_lines(buffered: Sequence[RawLine]) -> list[tuple[int | None, int, dict[str, Any], RawLine, int, bool]]:
    """Parse a game's lines and mark which the engine replays (see the module doc):
    (seq, ordinal, object, line, fingerprint, set aside) for every line kept."""
    kept: list[tuple[int | None, int, dict[str, Any], RawLine, int, bool]] = []
    accepted_fp: dict[int, int] = {}
    distinct: set[int] = set()
    dumps, blake2b, sort_keys = orjson.dumps, hashlib.blake2b, orjson.OPT_SORT_KEYS
    for entry in buffered:
        obj = orjson.loads(entry[0])
        fp = int.from_bytes(blake2b(dumps(obj, option=sort_keys), digest_size=8).digest(),
                            "big", signed=True)
        if fp in distinct:  # an identical repeat: the engine drops it, or sets it aside again
            continue
        distinct.add(fp)
        seq = obj.get("seq")
        if type(seq) is not int or seq < 0:
            kept.append((None, len(kept), obj, entry, fp, True))
            continue
        seen = accepted_fp.get(seq)
        if seen is None:
            accepted_fp[seq] = fp
            kept.append((seq, len(kept), obj, entry, fp, False))
        elif seen != fp:
            kept.append((seq, len(kept), obj, entry, fp, True))
    return kept


class _HandTally:
    """Per-player counts over the lines of one hand."""

    __slots__ = ("events", "first_ts", "last_ts", "per_player", "violations")

    def __init__(self) -> None:
        self.events = 0
        self.violations = 0
        self.first_ts: int | None = None
        self.last_ts: int | None = None
        # player → [played, drawn, penalty, sevens, seven totals, seven cards, twos given,
        #           twos received, jacks, violations]
        self.per_player: dict[str, list[int]] = defaultdict(lambda: [0] * 10)


def game_rows(
    game_id: str, buffered: Sequence[RawLine], run: GameRun, verdict: GameVerdict, batch: int
) -> GameRows:
    """Every row of the game `game_id` (see the module doc)."""
    lines = sort_lines(buffered)
    codes_at: dict[tuple[str | None, int | None], list[str]] = defaultdict(list)
    for v in verdict.violations:
        codes_at[(v.file, v.line)].append(v.code.value)
    facts: dict[int, EventFact] = {f.seq: f for f in (run.facts or ())}
    header = verdict.header
    table = verdict.table

    first_ts: int | None = None
    last_ts: int | None = None
    tallies: dict[int, _HandTally] = defaultdict(_HandTally)
    events_rows: list[tuple[Any, ...]] = []
    hand_of_line: dict[tuple[str | None, int | None], int | None] = {}
    ordered = True
    previous = -1
    cards_known = CARD_SET
    for seq, ordinal, obj, (raw, file, line), fp, set_aside in lines:
        stamp = obj.get("ts")
        ts = parse_ts(stamp) if stamp is not None else None
        if ts is not None:
            if first_ts is None or ts < first_ts:
                first_ts = ts
            if last_ts is None or ts > last_ts:
                last_ts = ts
        codes = codes_at.get((file, line)) if codes_at else None
        fact = facts.get(seq) if seq is not None and not set_aside else None
        hand = phase = None
        if fact is not None:
            hand, phase = fact.hand, fact.phase
            if hand is not None:
                tally = tallies[hand]
                tally.events += 1
                if ts is not None:
                    if tally.first_ts is None or ts < tally.first_ts:
                        tally.first_ts = ts
                    if tally.last_ts is None or ts > tally.last_ts:
                        tally.last_ts = ts
                if codes:
                    tally.violations += len(codes)
                    actor = obj.get("player")
                    if isinstance(actor, str):
                        tally.per_player[actor][9] += len(codes)
                _count_event(tally, obj, phase, codes)
        hand_of_line[(file, line)] = hand
        type_ = obj.get("type")
        card = obj.get("starter") if type_ == "deal" else obj.get("card")
        if card is not None and not (type(card) is str and card in cards_known):
            card = _card(card)
        cards = obj.get("cards")
        if cards is not None:
            cards = [c if type(c) is str and c in cards_known else _card(c) for c in cards] \
                if type(cards) is list else None
        suit = obj.get("suit")
        if suit is not None:
            suit = _suit(suit)
        player = obj.get("player")
        target = obj.get("target")
        if set_aside or seq is None or seq < previous:
            ordered = False
        else:
            previous = seq
        events_rows.append((
            game_id, seq, ordinal, hand, ts, type_ if type(type_) is str else None,
            player if type(player) is str else None, card, suit,
            target if type(target) is str else None, cards, phase,
            codes[0] if codes else None, codes, set_aside, fp, raw.decode("utf-8"), file, line,
            batch,
        ))
    if not ordered:
        events_rows.sort(key=_event_order)

    ruleset_declared = _text(header.ruleset) if header is not None else None
    ruleset = ruleset_declared if ruleset_declared in RULESETS else UNKNOWN_RULESET
    assert ruleset is not None
    month = month_of(first_ts)
    hash_ = content_hash(item[4] for item in lines)

    violation_rows = [
        (game_id, v.seq, hand_of_line.get((v.file, v.line)), v.code.value, v.player, v.message,
         v.file, v.line, batch)
        for v in verdict.violations
    ]

    hand_rows: list[tuple[Any, ...]] = []
    player_rows: list[tuple[Any, ...]] = []
    if table is not None:
        for record in table.hand_records():
            tally = tallies.get(record.number) or _HandTally()
            hand_rows.append(_hand_row(game_id, record, tally, len(table.players), batch))
            player_rows.extend(_player_rows(game_id, record, tally, table, batch))

    complete = table is not None and verdict.status != "invalid" and table.is_complete()
    totals = list(verdict.totals.items()) if verdict.totals is not None else None
    settings = table.settings if table is not None else None
    games_row = (
        game_id,
        ruleset_declared,
        settings.mode.value if settings is not None else _text(header.mode) if header else None,
        settings.decks if settings is not None else None,
        settings.match_hands if settings is not None else None,
        settings.match_target if settings is not None else None,
        _json_text(header.options) if header is not None else None,
        list(table.players) if table is not None else (
            [p for p in header.players if isinstance(p, str)]
            if header is not None and isinstance(header.players, tuple) else None),
        first_ts,
        last_ts,
        verdict.status,
        complete,
        len(table.hand_records()) if table is not None else 0,
        len(verdict.hands or ()),
        verdict.winners if complete else None,
        totals,
        _json_text(header.meta) if header is not None else None,
        server_build(header.meta) if header is not None else None,
        sorted({item[3][1] for item in lines}),
        len(lines),
        len(verdict.violations),
        hash_,
        batch,
        ENGINE_VERSION,
    )
    return GameRows(
        game_id, ruleset, month, hash_, verdict.status, len(verdict.violations), len(lines),
        {
            "games": [games_row],
            "hands": hand_rows,
            "hand_players": player_rows,
            "events": events_rows,
            "violations": violation_rows,
        },
    )


def _event_order(row: tuple[Any, ...]) -> tuple[bool, int, int]:
    """Replayed lines by seq, then the set-aside ones in input order."""
    return (row[14], row[1] if row[1] is not None else -1, row[2])


def _count_event(tally: _HandTally, obj: dict[str, Any], phase: str | None,
                 codes: list[str] | None) -> None:
    type_ = obj.get("type")
    player = obj.get("player")
    if not isinstance(player, str):
        return
    counts = tally.per_player[player]
    if type_ == "play":
        card = _card(obj.get("card")) or "?"
        counts[0] += 1
        rank = card[0]
        if rank == "7":
            counts[3] += 1
        elif rank == "J":
            counts[8] += 1
        elif rank == "2":
            target = obj.get("target")
            if isinstance(target, str) and not (codes and "bad_target" in codes):
                counts[6] += 1
                tally.per_player[target][7] += 1
    elif type_ == "draw":
        cards = obj.get("cards")
        n = len(cards) if isinstance(cards, list) else 0
        counts[1] += n
        if phase == "seven":
            counts[4] += 1
            counts[5] += n
    elif type_ == "penalty":
        cards = obj.get("cards")
        counts[2] += len(cards) if isinstance(cards, list) else 0


def _hand_row(game_id: str, record: HandRecord, tally: _HandTally, players: int,
              batch: int) -> tuple[Any, ...]:
    outcome = record.outcome
    duration = (tally.last_ts - tally.first_ts
                if tally.first_ts is not None and tally.last_ts is not None else None)
    return (
        game_id, record.number, record.dealer, record.first_player, players,
        list(outcome.winners) if outcome is not None else None,
        outcome.reason if outcome is not None else None,
        outcome.winning_card if outcome is not None else None,
        outcome.multiplier if outcome is not None else None,
        list(outcome.scores.items()) if outcome is not None and outcome.scores is not None else None,
        outcome is not None, record.closed, tally.events,
        tally.first_ts, tally.last_ts, duration // 1000 if duration is not None else None,
        record.reshuffles, tally.violations, batch,
    )


def _player_rows(game_id: str, record: HandRecord, tally: _HandTally, table: Table,
                 batch: int) -> list[tuple[Any, ...]]:
    outcome = record.outcome
    players = table.players
    n = len(players)
    first_seat = table.seat.get(record.first_player)
    positions = _positions(record, players)
    rows = []
    for seat, player in enumerate(players):
        counts = tally.per_player.get(player) or [0] * 10
        left = record.cards_left.get(player)
        points = outcome.scores.get(player) if outcome is not None and outcome.scores else None
        rows.append((
            game_id, record.number, player, seat,
            (seat - first_seat) % n if first_seat is not None else None,
            points,
            (player in outcome.winners) if outcome is not None else None,
            positions.get(player),
            len(left) if left is not None else None,
            list(left) if left is not None else None,
            *counts, batch,
        ))
    return rows


def _positions(record: HandRecord, players: Sequence[str]) -> dict[str, int]:
    """Finishing positions (1 = best): the elimination order, or winners first and the
    others by the points they took (fewer is better), ties sharing a place."""
    outcome = record.outcome
    if outcome is None:
        return {}
    if outcome.order is not None:
        return {p: i for i, p in enumerate(outcome.order, 1)}
    winners = set(outcome.winners)
    scores = outcome.scores or {}
    others = [p for p in players if p not in winners]
    places = {p: 1 for p in winners}
    for p in others:
        mine = scores.get(p, 0)
        places[p] = 1 + len(winners) + sum(1 for q in others if scores.get(q, 0) < mine)
    return places
