"""The validator: lines in, one verdict per game out (notation.md, "The validator's verdict").

Lines of many games may be interleaved and spread over files in any order; `Validator`
routes each line to its game, drops identical repeats, sets aside conflicting ones, and
feeds each game's lines to its `GameRun` in `seq` order as soon as they are contiguous, so a
game in order costs no buffering. `finish()` replays what is left (reporting gaps) and
returns the verdicts.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine.events import Deal, Event, Header, decode_line, valid_game_id, valid_seq
from engine.machine import Table, read_header
from engine.reader import LineError, display_name, expand_paths, read_lines
from engine.rulesets import RULESETS
from engine.violations import Code, Violation

_DENSE_GAP = 4096  # a seq this far past the last one is kept in a dict, not the array


class ReplayError(Exception):
    """Raised by a strict replay at the first violation."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(f"seq {violation.seq}: {violation.code.value}: {violation.message}")
        self.violation = violation


@dataclass(slots=True)
class Step:
    """One replayed line: the event, what it broke, and the state after it."""

    seq: int
    file: str | None
    line: int | None
    event: Event | None
    raw: dict[str, Any] | None
    violations: list[Violation]
    state: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class EventFact:
    """What the engine knew of one replayed line: the hand it fell in and the phase
    before it (a draw in phase `seven` is a 7 total, in `gift` a 2's gift, …)."""

    seq: int
    hand: int | None
    phase: str | None
    codes: tuple[str, ...]


@dataclass(slots=True)
class GameVerdict:
    game: str
    ruleset: str | None
    status: str
    violations: list[Violation]
    hands: list[dict[str, Any]] | None
    totals: dict[str, int] | None
    header: Header | None = None
    table: Table | None = None
    files: list[str] = field(default_factory=list)
    lines: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "game",
            "game": self.game,
            "ruleset": self.ruleset,
            "status": self.status,
            "violations": [v.to_json() for v in self.violations],
            "hands": self.hands,
            "totals": self.totals,
        }

    @property
    def winners(self) -> list[str]:
        if self.table is None:
            return []
        return self.table.match_winners() if self.table.decided_outcomes() else []


@dataclass(frozen=True, slots=True)
class ErrorRecord:
    file: str
    line: int | None
    code: Code
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "error", "file": self.file, "line": self.line,
                "code": self.code.value, "message": self.message}


class GameRun:
    """One game's replay: header, table, violations; optionally every step's state."""

    __slots__ = (
        "facts",
        "files",
        "game",
        "header",
        "invalid",
        "lines",
        "record",
        "steps",
        "strict",
        "table",
        "violations",
    )

    def __init__(
        self, game: str, *, record: bool = False, strict: bool = False, facts: bool = False
    ) -> None:
        self.game = game
        self.header: Header | None = None
        self.table: Table | None = None
        self.violations: list[Violation] = []
        self.invalid = False
        self.record = record
        self.strict = strict
        self.steps: list[Step] = []
        self.files: dict[str, None] = {}
        self.lines = 0
        self.facts: list[EventFact] | None = [] if facts else None

    def _add(self, found: list[Violation], file: str | None, line: int | None) -> list[Violation]:
        if not found:
            return []
        placed = [
            Violation(v.seq, v.code, v.player, v.message, file, line) for v in found
        ]
        if placed and self.strict:
            raise ReplayError(placed[0])
        self.violations.extend(placed)
        return placed

    def note(self, violation: Violation) -> None:
        """A violation found by the reader (sequence, schema of an unusable seq)."""
        self._add([violation], violation.file, violation.line)

    def feed(self, seq: int, obj: dict[str, Any], file: str | None, line: int | None) -> None:
        """Replay the line at `seq` (lines must come in seq order)."""
        if self.invalid:
            return
        decoded = decode_line(obj, self.game, seq)
        found = [Violation(seq, Code.SCHEMA, _player_of(obj), msg) for msg in decoded.issues]
        event = decoded.event
        before: str | None = None
        if seq == 0 and self.table is None:
            if not isinstance(event, Header):
                found.append(Violation(seq, Code.NO_HEADER, None,
                                       f"the line at seq 0 is a {obj.get('type')!r}, not the game header"))
                self.invalid = True
            else:
                self.header = event
                reading = read_header(event, RULESETS)
                found.extend(Violation(seq, code, None, msg) for code, msg in reading.violations)
                if reading.settings is None:
                    self.invalid = True
                else:
                    self.table = Table(reading.settings, self.game)
        elif event is not None and self.table is not None:
            before = self._phase_name() if self.facts is not None else None
            found.extend(self.table.apply(event))
            if not self.record and not self.table.hand_open:
                self.table.hand = None  # a closed hand's cards are no longer needed: free them
        placed = self._add(found, file, line)
        if self.facts is not None and self.table is not None:
            hand = self.table.hand
            self.facts.append(EventFact(
                seq, hand.number if hand is not None else None,
                before,
                tuple(v.code.value for v in placed)))
        if self.record:
            state = self.table.snapshot() if self.table is not None else None
            self.steps.append(Step(seq, file, line, event, obj, placed, state))

    def _phase_name(self) -> str | None:
        table = self.table
        if table is None or table.hand is None or not table.hand_open:
            return None
        hand = table.hand
        if hand.gift_target is not None:
            return "gift"
        return hand.phase.value

    def verdict(self) -> GameVerdict:
        table = self.table
        header = self.header
        ruleset = header.ruleset if header is not None and isinstance(header.ruleset, str) else None
        violations = sorted(self.violations, key=lambda v: -1 if v.seq is None else v.seq)
        if self.invalid or table is None:
            status = "invalid"
            hands = totals = None
        else:
            outcomes = table.decided_outcomes()
            hands = [o.to_json() for o in outcomes]
            totals = None
            if not table.elimination:
                totals = dict.fromkeys(table.players, 0)
                for outcome in outcomes:
                    for player, points in (outcome.scores or {}).items():
                        totals[player] += points
            if violations:
                status = "violations"
            elif table.closed_by == "abort":
                status = "aborted"
            elif table.is_complete():
                status = "compliant"
            else:
                status = "incomplete"
        if violations and status != "invalid":
            status = "violations"
        return GameVerdict(self.game, ruleset, status, violations, hands, totals, header, table,
                           list(self.files), self.lines)


class _Pending:
    """The reader's book-keeping for one game: what seqs it has seen, what waits."""

    __slots__ = ("next_seq", "run", "seen", "seen_far", "waiting")

    def fingerprint_at(self, seq: int) -> int:
        if seq < len(self.seen):
            return self.seen[seq]
        return self.seen_far.get(seq, 0)

    def remember(self, seq: int, fingerprint: int) -> None:
        seen = self.seen
        if seq < len(seen):
            seen[seq] = fingerprint
        elif seq < len(seen) + _DENSE_GAP:
            seen.frombytes(bytes(seen.itemsize * (seq - len(seen))))  # zeros: not seen
            seen.append(fingerprint)
        else:
            self.seen_far[seq] = fingerprint

    def __init__(self, run: GameRun) -> None:
        self.run = run
        self.next_seq = 0
        # seq → fingerprint of the line accepted there: a flat array (8 bytes a line) for the
        # dense seqs a real log has, a dict for stray huge ones
        self.seen = array("q")
        self.seen_far: dict[int, int] = {}
        self.waiting: dict[int, tuple[dict[str, Any], str, int]] = {}


class Validator:
    """Feed it files (or lines); `finish()` returns the verdicts and line errors."""

    def __init__(
        self, *, record: set[str] | None = None, only: set[str] | None = None, facts: bool = False
    ) -> None:
        self.facts = facts
        self.games: dict[str, _Pending] = {}
        self.errors: list[ErrorRecord] = []
        self.record = record or set()
        self.only = only
        self.lines_read = 0

    # --------------------------------------------------------------- input

    def feed_paths(self, paths: list[str]) -> None:
        for file in expand_paths(paths):
            self.feed_file(file)

    def feed_file(self, file: str) -> None:
        name = display_name(file)
        for item in read_lines(file):
            if isinstance(item, LineError):
                self.errors.append(ErrorRecord(name, item.line, Code.MALFORMED_JSON, item.message))
                continue
            self.feed_line(item[1], name, item[0])

    def feed_line(self, raw: bytes, file: str, line: int) -> None:
        self.lines_read += 1
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            what = "not UTF-8" if "utf-8" in str(exc).lower() else "not valid JSON"
            self.errors.append(ErrorRecord(file, line, Code.MALFORMED_JSON, f"the line is {what}: {exc}"))
            return
        if not isinstance(obj, dict):
            self.errors.append(ErrorRecord(file, line, Code.MALFORMED_JSON,
                                           f"the line is JSON but not an object ({type(obj).__name__})"))
            return
        game = obj.get("game")
        # a game already known had its id checked when it was first seen
        pending = self.games.get(game) if isinstance(game, str) else None
        if pending is None:
            if not valid_game_id(game):
                self.errors.append(ErrorRecord(
                    file, line, Code.SCHEMA,
                    "the line has no usable 'game' id (1-128 characters of A-Z a-z 0-9 . _ : -)"
                    + (f", got {game!r}" if game is not None else "")))
                return
            assert isinstance(game, str)
            if self.only is not None and game not in self.only:
                return
            pending = self.games[game] = _Pending(
                GameRun(game, record=game in self.record, facts=self.facts))
        run = pending.run
        run.files[file] = None
        run.lines += 1
        seq = obj.get("seq")
        if not valid_seq(seq):
            run.note(Violation(None, Code.SCHEMA, _player_of(obj),
                               f"'seq' must be a whole number 0 or more, got {seq!r}; the line is set aside",
                               file, line))
            return
        assert isinstance(seq, int)
        # 0 marks "no line yet" in the array, so a fingerprint is never 0
        fingerprint = hash(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)) | 1
        seen = pending.fingerprint_at(seq)
        if seen:
            if seen != fingerprint:
                run.note(Violation(seq, Code.SEQUENCE, _player_of(obj),
                                   f"another, different line already has seq {seq}; this one is set aside",
                                   file, line))
            return
        pending.remember(seq, fingerprint)
        if seq != pending.next_seq:
            pending.waiting[seq] = (obj, file, line)
            return
        run.feed(seq, obj, file, line)
        pending.next_seq = seq + 1
        self._drain(pending)

    def _drain(self, pending: _Pending) -> None:
        waiting = pending.waiting
        while waiting and pending.next_seq in waiting:
            seq = pending.next_seq
            obj, file, line = waiting.pop(seq)
            pending.run.feed(seq, obj, file, line)
            pending.next_seq = seq + 1

    # --------------------------------------------------------------- output

    def finish_game(self, game: str) -> GameVerdict:
        pending = self.games.pop(game)
        run = pending.run
        waiting = pending.waiting
        if waiting:
            if pending.next_seq == 0:
                first = min(waiting)
                obj, file, line = waiting[first]
                run.note(Violation(first, Code.NO_HEADER, None,
                                   f"game {game} has no header line at seq 0", file, line))
                run.invalid = True
            else:
                for seq in sorted(waiting):
                    obj, file, line = waiting[seq]
                    if seq != pending.next_seq:
                        missing = (f"seq {pending.next_seq}" if seq == pending.next_seq + 1
                                   else f"seqs {pending.next_seq}-{seq - 1}")
                        run.note(Violation(seq, Code.SEQUENCE, None, f"{missing} missing before this line",
                                           file, line))
                    run.feed(seq, obj, file, line)
                    pending.next_seq = seq + 1
        return run.verdict()

    def finish(self) -> Iterator[GameVerdict]:
        for game in list(self.games):
            yield self.finish_game(game)


def validate_paths(paths: list[str]) -> tuple[list[GameVerdict], list[ErrorRecord]]:
    """Validate every game in `paths` (files, directories, '-')."""
    validator = Validator()
    validator.feed_paths(paths)
    verdicts = list(validator.finish())
    return verdicts, validator.errors


def replay_game(paths: list[str], game: str) -> tuple[GameRun | None, list[ErrorRecord]]:
    """Replay one game with every step recorded (for `replay`, the dashboard, reports)."""
    validator = Validator(record={game}, only={game})
    validator.feed_paths(paths)
    if game not in validator.games:
        return None, validator.errors
    run = validator.games[game].run
    validator.finish_game(game)
    return run, validator.errors


def replay_lines(lines: Iterable[dict[str, Any]], *, strict: bool = False, record: bool = False) -> GameRun:
    """Replay one game's decoded lines, already in seq order (simulator, tests).

    `strict=True` raises ReplayError at the first violation; otherwise violations are
    collected and the replay goes on.
    """
    run: GameRun | None = None
    for number, obj in enumerate(lines, 1):
        if run is None:
            run = GameRun(str(obj.get("game")), record=record, strict=strict)
        run.feed(obj["seq"], obj, None, number)
    if run is None:
        raise ValueError("no lines to replay")
    return run


def _player_of(obj: dict[str, Any]) -> str | None:
    player = obj.get("player")
    return player if isinstance(player, str) else None


__all__ = [
    "Deal", "ErrorRecord", "GameRun", "GameVerdict", "ReplayError", "Step", "Validator",
    "replay_game", "replay_lines", "validate_paths",
]
