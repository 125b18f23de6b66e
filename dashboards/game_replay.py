"""One game's replay as people look at it: steps grouped by hand, each with the state before
and after it and the violations found on it, and each hand's scoring explained.

Pure Python on top of `engine.validate`; the dashboard pages, the HTML report and the CLI
share it. Nothing here imports Streamlit or DuckDB.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine.cards import SUIT_NAMES, pretty
from engine.events import Event
from engine.machine import HandOutcome
from engine.narrate import describe_event
from engine.validate import ErrorRecord, GameRun, GameVerdict, Validator
from engine.violations import Violation

#: the pseudo-hand that holds the lines before the first deal (the header)
SETUP_HAND = 0


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One line of the game, replayed."""

    index: int  # 0-based position in the game
    hand: int  # the hand it fell in (SETUP_HAND before the first deal)
    number: int  # 1-based within its hand, as `haftkhabis replay --hand H --step N`
    seq: int
    file: str | None
    line: int | None
    event: Event | None
    raw: dict[str, Any] | None
    text: str
    violations: tuple[Violation, ...]
    before: dict[str, Any] | None  # the state the event was judged against
    after: dict[str, Any] | None  # the state after it

    @property
    def kind(self) -> str:
        if self.event is not None:
            return self.event.type
        kind = self.raw.get("type") if self.raw else None
        return kind if isinstance(kind, str) else "?"

    @property
    def actor(self) -> str | None:
        player = getattr(self.event, "player", None)
        return player if isinstance(player, str) else None


@dataclass(frozen=True, slots=True)
class CardPoints:
    card: str
    points: int


@dataclass(frozen=True, slots=True)
class PlayerScore:
    player: str
    place: int
    cards: tuple[CardPoints, ...]  # cards left in hand with their face value
    laid_aside: tuple[str, ...]  # persian settlement: 7s laid aside, worth 0
    face_value: int  # the cards' points before the multiplier
    score: int | None  # the hand's points (None in elimination play)
    winner: bool


@dataclass(frozen=True, slots=True)
class HandScore:
    """A decided hand's scoring, with the reasons a person needs."""

    hand: int
    reason: str  # out · blocked · elimination
    winners: tuple[str, ...]
    winning_card: str | None
    multiplier: int
    why: str  # the multiplier's reason, in words
    players: tuple[PlayerScore, ...]  # in ranking order
    order: tuple[str, ...] | None


@dataclass(slots=True)
class GameReplay:
    """A game replayed step by step, ready to be shown."""

    game: str
    ruleset: str | None
    status: str
    players: tuple[str, ...]
    meta: dict[str, Any]
    steps: list[ReplayStep]
    violations: list[Violation]
    game_violations: list[Violation]  # not attached to a replayed line
    scores: list[HandScore]
    totals: dict[str, int] | None
    match_winners: list[str]
    errors: list[ErrorRecord] = field(default_factory=list)
    _by_hand: dict[int, list[ReplayStep]] = field(default_factory=dict)

    @property
    def hands(self) -> list[int]:
        """Hand numbers with steps, in order; the setup pseudo-hand only when it matters."""
        numbers = sorted(self._by_hand)
        if SETUP_HAND in numbers and len(numbers) > 1 and not any(
            s.violations for s in self._by_hand[SETUP_HAND]
        ):
            numbers.remove(SETUP_HAND)
        return numbers

    def hand_steps(self, hand: int) -> list[ReplayStep]:
        return self._by_hand.get(hand, [])

    def step_at(self, hand: int, number: int) -> ReplayStep | None:
        """The `number`-th (1-based) step of `hand`, or None."""
        steps = self._by_hand.get(hand, [])
        return steps[number - 1] if 1 <= number <= len(steps) else None

    def next_violation(self, after: ReplayStep | None) -> ReplayStep | None:
        """The first step with a violation after `after` (from the start when None)."""
        start = 0 if after is None else after.index + 1
        for step in self.steps[start:]:
            if step.violations:
                return step
        return None

    def previous_violation(self, before: ReplayStep) -> ReplayStep | None:
        for step in reversed(self.steps[: before.index]):
            if step.violations:
                return step
        return None

    def score_of(self, hand: int) -> HandScore | None:
        for score in self.scores:
            if score.hand == hand:
                return score
        return None


class UploadTooLarge(ValueError):
    """A compressed upload that inflates past the cap."""


def inflate(data: bytes, limit: int) -> bytes:
    """The upload's text: gunzipped when it starts with gzip's magic bytes, refusing to
    inflate past `limit` bytes."""
    if data[:2] != b"\x1f\x8b":
        return data
    out = bytearray()
    inflater = zlib.decompressobj(wbits=31)
    chunk = data
    while chunk:
        out += inflater.decompress(chunk, limit + 1 - len(out))
        if len(out) > limit:
            raise UploadTooLarge(f"the file inflates to more than {limit / 1_048_576:.0f} MB")
        chunk = inflater.unconsumed_tail
        if inflater.eof and inflater.unused_data[:2] == b"\x1f\x8b":  # concatenated members
            chunk = inflater.unused_data
            inflater = zlib.decompressobj(wbits=31)
    return bytes(out)


def parse_lines(data: bytes) -> list[bytes]:
    """Split a JSON-lines blob into lines (no decoding: the validator judges each)."""
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return data.splitlines()


def game_ids(lines: Iterable[bytes]) -> list[str]:
    """The game ids the lines name, in first-seen order (unreadable lines skipped)."""
    seen: dict[str, None] = {}
    for raw in lines:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("game"), str):
            seen.setdefault(obj["game"], None)
    return list(seen)


def validate_lines(
    lines: Sequence[bytes], file: str = "upload"
) -> tuple[list[GameVerdict], list[ErrorRecord]]:
    """Every game's verdict (nothing recorded): the first look at an uploaded log."""
    validator = Validator()
    for number, raw in enumerate(lines, 1):
        if raw.strip():
            validator.feed_line(raw, file, number)
    return list(validator.finish()), validator.errors


def replay_lines(
    lines: Iterable[tuple[bytes, str | None, int | None]], game: str
) -> GameReplay | None:
    """Replay `game` from (raw line, file, line number) triples, every step recorded.

    The lines may hold other games and come in any order: the validator routes and
    orders them exactly as `haftkhabis validate` does. None when `game` has no line.
    """
    validator = Validator(record={game}, only={game})
    for raw, file, line in lines:
        if raw.strip():
            validator.feed_line(raw, file or "warehouse", line or 0)
    pending = validator.games.get(game)
    if pending is None:
        return None
    run = pending.run
    verdict = validator.finish_game(game)
    return build_replay(run, verdict, validator.errors)


def replay_blob(data: bytes, game: str, file: str = "upload") -> GameReplay | None:
    """Replay `game` from one JSON-lines blob (an upload, a file read whole)."""
    return replay_lines(((raw, file, n) for n, raw in enumerate(parse_lines(data), 1)), game)


def build_replay(run: GameRun, verdict: GameVerdict, errors: list[ErrorRecord]) -> GameReplay:
    """Group a recorded run's steps by hand and explain its scores."""
    recorded = {id(v) for s in run.steps for v in s.violations}
    notes = [v for v in run.violations if id(v) not in recorded]
    by_seq: dict[int, list[Violation]] = {}
    game_violations: list[Violation] = []
    seqs = {s.seq for s in run.steps}
    for v in notes:
        if v.seq is not None and v.seq in seqs:
            by_seq.setdefault(v.seq, []).append(v)
        else:
            game_violations.append(v)

    steps: list[ReplayStep] = []
    by_hand: dict[int, list[ReplayStep]] = {}
    before: dict[str, Any] | None = None
    for index, s in enumerate(run.steps):
        hand = (s.state or {}).get("hand") or SETUP_HAND
        bucket = by_hand.setdefault(hand, [])
        violations = tuple(s.violations) + tuple(by_seq.pop(s.seq, []))
        step = ReplayStep(
            index, hand, len(bucket) + 1, s.seq, s.file, s.line, s.event, s.raw,
            describe_event(s.event, s.raw), violations, before, s.state,
        )
        bucket.append(step)
        steps.append(step)
        before = s.state

    header = run.header
    players = header.players if header is not None and isinstance(header.players, tuple) else ()
    meta = header.meta if header is not None and isinstance(getattr(header, "meta", None), dict) else {}
    scores = _hand_scores(run, by_hand)
    return GameReplay(
        game=run.game,
        ruleset=verdict.ruleset,
        status=verdict.status,
        players=tuple(players),
        meta=dict(meta or {}),
        steps=steps,
        violations=list(verdict.violations),
        game_violations=game_violations,
        scores=scores,
        totals=verdict.totals,
        match_winners=verdict.winners,
        errors=list(errors),
        _by_hand=by_hand,
    )


def _hand_scores(run: GameRun, by_hand: dict[int, list[ReplayStep]]) -> list[HandScore]:
    table = run.table
    if table is None:
        return []
    rules = table.rules
    out = []
    for outcome in table.decided_outcomes():
        steps = by_hand.get(outcome.hand, [])
        state = _last_state_of(steps, outcome)
        hands: dict[str, list[str]] = state.get("hands", {}) if state else {}
        laid_aside = _laid_aside_by_player(steps)
        out.append(_score_hand(outcome, hands, laid_aside, rules.points, table.players))
    return out


def _laid_aside_by_player(steps: list[ReplayStep]) -> dict[str, list[str]]:
    """Persian settlement lays 7s aside; the state lists them, this says whose they were."""
    out: dict[str, list[str]] = {}
    for step in steps:
        before, after = step.before, step.after
        if not before or not after or before.get("hand") != after.get("hand"):
            continue
        new = Counter(after.get("laid_aside", [])) - Counter(before.get("laid_aside", []))
        if not new:
            continue
        for player, cards in before.get("hands", {}).items():
            lost = (Counter(cards) - Counter(after["hands"].get(player, []))) & new
            if lost:
                out.setdefault(player, []).extend(sorted(lost.elements()))
                new -= lost
    return out


def _last_state_of(steps: list[ReplayStep], outcome: HandOutcome) -> dict[str, Any] | None:
    """The state at which the hand's outcome (and settlement) was final."""
    for step in reversed(steps):
        after = step.after
        if after and after.get("hand") == outcome.hand and after.get("outcome") is not None:
            return after
    return None


def _score_hand(
    outcome: HandOutcome,
    hands: dict[str, list[str]],
    laid_aside: dict[str, list[str]],
    points: Mapping[str, int],
    players: Sequence[str],
) -> HandScore:
    winners = set(outcome.winners)
    rows = []
    for player in players:
        cards = tuple(CardPoints(c, int(points[c[0]])) for c in hands.get(player, []))
        face = sum(c.points for c in cards)
        score = None if outcome.scores is None else outcome.scores.get(player)
        rows.append((player, cards, face, score))
    if outcome.order is not None:
        rank = {p: i for i, p in enumerate(outcome.order)}
        rows.sort(key=lambda r: rank.get(r[0], len(rank)))
    else:
        rows.sort(key=lambda r: (r[0] not in winners, r[3] if r[3] is not None else 0))
    ranked: list[PlayerScore] = []
    place = 0
    previous: object = object()
    for i, (player, cards, face, score) in enumerate(rows, 1):
        key = score if outcome.order is None else i
        if key != previous:
            place = i
            previous = key
        ranked.append(PlayerScore(
            player, place, cards, tuple(laid_aside.get(player, [])), face, score, player in winners))
    return HandScore(
        hand=outcome.hand,
        reason=outcome.reason,
        winners=tuple(outcome.winners),
        winning_card=outcome.winning_card,
        multiplier=outcome.multiplier,
        why=multiplier_reason(outcome.reason, outcome.winning_card, outcome.multiplier),
        players=tuple(ranked),
        order=tuple(outcome.order) if outcome.order is not None else None,
    )


def multiplier_reason(reason: str | None, winning_card: str | None, multiplier: int | None) -> str:
    """Why the others' points are multiplied (or not), in words."""
    if reason == "elimination":
        return "elimination play: no points, only the finishing order"
    if reason == "blocked":
        return "blocked hand: the lowest hand value wins, no multiplier"
    if winning_card is None:
        return "no multiplier"
    if multiplier and multiplier > 1:
        return f"went out with {pretty(winning_card)}: the others' points ×{multiplier}"
    return f"went out with {pretty(winning_card)}: no multiplier"


def score_from_rows(
    hand: dict[str, Any], players: Sequence[dict[str, Any]], points: Mapping[str, int]
) -> HandScore:
    """A hand's scoring from the warehouse's `hands` row and its `hand_players` rows."""
    ranked = sorted(players, key=lambda p: (p.get("finishing_position") or 99, p.get("seat") or 0))
    rows = []
    for p in ranked:
        cards = tuple(CardPoints(c, int(points.get(c[0], 0))) for c in p.get("left_cards") or [])
        rows.append(PlayerScore(
            p["player"], p.get("finishing_position") or 0, cards, (), sum(c.points for c in cards),
            p.get("points"), bool(p.get("won")),
        ))
    order = None
    if hand.get("reason") == "elimination":
        order = tuple(r.player for r in rows)
    multiplier = int(hand.get("multiplier") or 1)
    return HandScore(
        hand=int(hand["hand"]),
        reason=hand.get("reason") or "undecided",
        winners=tuple(hand.get("winners") or ()),
        winning_card=hand.get("winning_card"),
        multiplier=multiplier,
        why=multiplier_reason(hand.get("reason"), hand.get("winning_card"), multiplier),
        players=tuple(rows),
        order=order,
    )


def suit_name(suit: str | None) -> str:
    return SUIT_NAMES.get(suit or "", "-")
