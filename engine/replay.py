"""One game's replay as people look at it: steps grouped by hand, each with the state before
and after it and the violations found on it, and each hand's scoring explained.

Built on the native core (`engine._core`, the engine `haftkhabis validate` judges with); the
dashboard pages, the HTML report and the CLI share it. Nothing here imports Streamlit or
DuckDB.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine import _core
from engine.cards import SUIT_NAMES, pretty
from engine.events import Event, from_encoded
from engine.narrate import MoveReasons, describe_event
from engine.rulesets import RULESETS
from engine.violations import Code, Violation

#: the pseudo-hand that holds the lines before the first deal (the header)
SETUP_HAND = 0

#: (file, line) -> the raw line, for the lines the engine set aside (None: not known)
LineLookup = Callable[[str | None, int | None], bytes | None]


@dataclass(frozen=True, slots=True)
class SetAsideLine:
    """A line the validator set aside instead of replaying — a second, different line with
    the seq of a replayed one (a duplicate-`seq` conflict) — shown beside the kept line."""

    seq: int | None
    file: str | None
    line: int | None
    raw: bytes | None  # the line as read, when the source still has it
    violations: tuple[Violation, ...]


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
    fact: dict[str, Any] | None = None  # what the engine knew of the line (`draw_kind`, …)
    why: str | None = None  # why the move happened, from the engine's facts (`MoveReasons`)
    set_aside: tuple[SetAsideLine, ...] = ()  # conflicting lines with this seq, set aside
    viewer: str | None = None  # whose player view this is (`engine.player_view`); None: support

    @property
    def flagged(self) -> bool:
        """Whether the step broke a rule, or a line with its seq was set aside."""
        return bool(self.violations or self.set_aside)

    @property
    def label(self) -> str:
        """How every view names the step: "hand 1 · step 2 · seq 2"."""
        where = "header" if self.hand == SETUP_HAND else f"hand {self.hand}"
        return f"{where} · step {self.number} · seq {self.seq}"

    @property
    def kind(self) -> str:
        if self.event is not None:
            return self.event.type
        kind = self.raw.get("type") if self.raw else None
        return kind if isinstance(kind, str) else "?"

    @property
    def actor(self) -> str | None:
        """The player who made the line (its event's, or the line's own `player` when the
        event is not shown: another's draw in a player view, a set-aside line)."""
        player = getattr(self.event, "player", None)
        if player is None and self.raw is not None:
            player = self.raw.get("player")
        return player if isinstance(player, str) else None


@dataclass(frozen=True, slots=True)
class CardPoints:
    card: str
    points: int


@dataclass(frozen=True, slots=True)
class PlayerScore:
    player: str
    place: int
    #: cards left in hand with their face value (None: hidden in this player view)
    cards: tuple[CardPoints, ...] | None
    held: int  # how many cards were left (shown even when the cards are hidden)
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
    errors: list[_core.ErrorInfo] = field(default_factory=list)  # the lines no game could use
    settings: dict[str, Any] = field(default_factory=dict)  # the ruleset's options as played
    digest: str | None = None  # sha256 of the game's lines (`lines_digest`), when known
    #: every replayed line in order, (seq, hand, file, line): all of them even when `steps`
    #: holds one hand (`build_replay(hand=…)`)
    outline: Sequence[tuple[int, int, str | None, int | None]] = field(default_factory=list)
    viewer: str | None = None  # whose player view this is (`engine.player_view`); None: support
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

    def hand_size(self, hand: int) -> int:
        """How many replayed lines `hand` has (from the outline: right even when only some
        steps were built)."""
        return sum(1 for _, in_hand, _, _ in self.outline if in_hand == hand)

    def step_at(self, hand: int, number: int) -> ReplayStep | None:
        """The `number`-th (1-based) step of `hand`, or None."""
        steps = self._by_hand.get(hand, [])
        return steps[number - 1] if 1 <= number <= len(steps) else None

    def by_seq(self, seq: int) -> ReplayStep | None:
        """The replayed step of the line numbered `seq` (the kept one of a conflict)."""
        return next((s for s in self.steps if s.seq == seq), None)

    def seq_span(self) -> str:
        """ "0–76": the seqs the game's replayed lines carry."""
        seqs = [s.seq for s in self.steps]
        return f"{min(seqs)}–{max(seqs)}" if seqs else "none"

    def next_violation(self, after: ReplayStep | None) -> ReplayStep | None:
        """The first flagged step after `after` (from the start when None)."""
        for step in self.steps:
            if step.flagged and (after is None or step.index > after.index):
                return step
        return None

    def previous_violation(self, before: ReplayStep) -> ReplayStep | None:
        for step in reversed(self.steps):
            if step.flagged and step.index < before.index:
                return step
        return None

    def neighbours(self, step: ReplayStep) -> tuple[int | None, int | None]:
        """The seqs of the replayed lines just before and just after `step` in the game."""
        previous = self.outline[step.index - 1][0] if step.index > 0 else None
        following = self.outline[step.index + 1][0] if step.index + 1 < len(self.outline) else None
        return previous, following

    def score_of(self, hand: int) -> HandScore | None:
        for score in self.scores:
            if score.hand == hand:
                return score
        return None


# ---------------------------------------------------------------------------- naming a line
#
# One rule for every way a person names a game's line (a deep link's `game`, `hand`,
# `step`, `seq`; the CLI's `--game`, `--hand`, `--step`, `--seq`): a game id is read as
# pasted, less the spaces and quotes around it; a step number counts within its hand, so a
# step without its hand names nothing and is refused, with how to name the line instead.


def clean_game_id(text: str) -> str:
    """A game id as pasted into a link, a box or a command line: the spaces and quotes
    around it trimmed (`"t-27-…"`, `'t-27-…' ` are `t-27-…`)."""
    return text.strip().strip("'\"").strip()


def step_without_hand(hand: str = "hand=N", seq: str = "seq=S") -> str:
    """What is wrong with a step number given without its hand, in the words of the place
    it was given (a link's parameters, the CLI's options)."""
    return f"a step number counts within its hand: name the hand too ({hand}), or the line by its seq ({seq})"


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
) -> tuple[list[_core.Verdict], list[_core.ErrorInfo]]:
    """Every game's verdict (nothing recorded) and the line errors: the first look at an
    uploaded log."""
    validator = _core.Validator()
    for number, raw in enumerate(lines, 1):
        if raw.strip():
            validator.feed_line(raw, file, number)
    verdicts = validator.take_verdicts()
    verdicts.extend(validator.finish())
    return verdicts, validator.take_errors()


def validate_lines_bounded(
    lines: Sequence[bytes], file: str = "upload", keep_errors: int = 1_000, *,
    max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES,
) -> tuple[list[_core.Verdict], list[_core.ErrorInfo], int]:
    """`validate_lines` keeping only the first `keep_errors` line errors (and the number of
    all of them): memory stays flat however many lines are unusable. A line longer than
    `max_line_bytes` is a `line_too_long` line error."""
    validator = _core.Validator(max_line_bytes=max_line_bytes)
    kept: list[_core.ErrorInfo] = []
    count = 0

    def collect() -> None:
        nonlocal count
        errors = validator.take_errors()
        count += len(errors)
        kept.extend(errors[: max(0, keep_errors - len(kept))])

    for number, raw in enumerate(lines, 1):
        if raw.strip():
            validator.feed_line(raw, file, number)
        if number % 4096 == 0:
            collect()
    verdicts = validator.take_verdicts()
    verdicts.extend(validator.finish())
    collect()
    return verdicts, kept, count


@dataclass(frozen=True, slots=True)
class RecordedGame:
    """One game replayed by the core with every step recorded, not yet turned into
    `ReplayStep`s: `build` makes the replay (of the whole game, or of one hand), `step`
    the replay of one line."""

    verdict: _core.Verdict
    errors: tuple[_core.ErrorInfo, ...]
    #: the raw lines by file, then line number: set-aside lines are shown as read, and the
    #: report digests them. (Not keyed by (file, line) tuples: a dict of strings, numbers and
    #: bytes is never tracked by the garbage collector, which would walk every line of every
    #: game kept at each full collection.)
    lines: dict[str, dict[int, bytes]]
    #: every replayed line, (seq, hand, file, line): `Verdict.outline()`, converted once
    outline: tuple[tuple[int, int, str | None, int | None], ...] = ()

    def line_of(self, file: str | None, line: int | None) -> bytes | None:
        return self.lines.get(file or "", {}).get(line or 0)

    def hand_of(self, seq: int) -> int | None:
        """The hand of the replayed line numbered `seq` (the kept one of a conflict)."""
        return next((hand for s, hand, _, _ in self.outline if s == seq), None)

    @property
    def players(self) -> tuple[str, ...]:
        players = (self.verdict.header() or {}).get("players")
        return tuple(players) if isinstance(players, list) else ()

    def seq_span(self) -> str:
        """ "0–76": the seqs the game's replayed lines carry."""
        seqs = [seq for seq, _, _, _ in self.outline]
        return f"{min(seqs)}–{max(seqs)}" if seqs else "none"

    def build(self, *, hand: int | None = None, digest: bool = True) -> GameReplay:
        return build_replay(self.verdict, self.errors, self.line_of, digest=digest, hand=hand)

    def step(self, seq: int) -> GameReplay | None:
        """The replay of the line numbered `seq` alone (`build_step`); None: no such line."""
        return build_step(self.verdict, self.errors, seq, self.line_of, self.outline)


def record_lines(
    lines: Iterable[tuple[bytes, str | None, int | None]], game: str, *, states: bool = True
) -> RecordedGame | None:
    """Replay `game` from (raw line, file, line number) triples in the core, every step
    recorded. The lines may hold other games and come in any order: the validator routes
    and orders them exactly as `haftkhabis validate` does. None when `game` has no line.
    `states=False` keeps no state per step: the core replays the steps for the states a
    view asks for (the same states; cheaper when one step of a long game is shown)."""
    validator = _core.Validator(record={game}, only={game}, facts=True, states=states)
    read: dict[str, dict[int, bytes]] = {}  # references to the lines, for set-aside ones
    for raw, file, line in lines:
        if raw.strip():
            name, number = file or "warehouse", line or 0
            in_file = read.get(name)
            if in_file is None:
                in_file = read[name] = {}
            in_file[number] = raw
            validator.feed_line(raw, name, number)
    done = [v for v in validator.take_verdicts() if v.game == game]
    verdict = done[0] if done else validator.finish_game(game)
    if verdict is None:
        return None
    return RecordedGame(verdict, tuple(validator.take_errors()), read, tuple(verdict.outline()))


def replay_lines(
    lines: Iterable[tuple[bytes, str | None, int | None]], game: str
) -> GameReplay | None:
    """Replay `game` from (raw line, file, line number) triples, every step built
    (`record_lines`, then the whole game's replay). None when `game` has no line."""
    recorded = record_lines(lines, game)
    return recorded.build() if recorded is not None else None


def replay_blob(data: bytes, game: str, file: str = "upload") -> GameReplay | None:
    """Replay `game` from one JSON-lines blob (an upload, a file read whole)."""
    return replay_lines(((raw, file, n) for n, raw in enumerate(parse_lines(data), 1)), game)


def _violation(info: _core.ViolationInfo) -> Violation:
    return Violation(info["seq"], Code(info["code"]), info["player"], info["message"],
                     info["file"], info["line"])


def lines_digest(lines: Iterable[bytes]) -> str:
    """sha256 of a game's lines, in seq order, each ended by one newline: the same
    whether they were read from a log file or from the warehouse's stored lines."""
    digest = hashlib.sha256()
    for raw in lines:
        digest.update(raw.rstrip(b"\r\n") + b"\n")
    return digest.hexdigest()


def build_replay(
    verdict: _core.Verdict, errors: Sequence[_core.ErrorInfo], line_of: LineLookup | None = None,
    *, digest: bool = True, hand: int | None = None,
) -> GameReplay:
    """Group a recorded verdict's steps by hand, say why each move happened and explain
    the scores. `line_of(file, line)` gives back a raw line: set-aside lines are shown as
    read, and (with `digest`) the game's lines are digested for the dispute report.

    With `hand`, only that hand's steps are built (an API answering for one line need not
    convert every state of a long game); their `index` is still the step's place in the
    whole game (`outline` has every step), and the hand's first step, its deal, has no
    state `before` it. (A step's why-text reads the hand's earlier steps, "neda's 7♦ and
    parisa's 7♠", so one hand is the smallest replay that tells it right; `build_step`
    builds one step and feeds the narration only what it reads of the lines before.)"""
    outline = verdict.outline()
    recorded = verdict.steps(hand)
    place = _places(outline)
    by_seq, aside, game_violations = _placed_notes(verdict, outline)
    reasons = _move_reasons(verdict.ruleset)
    digested: list[bytes] | None = [] if line_of is not None and digest else None
    first = 0 if hand is None else next((i for i, entry in enumerate(outline) if entry[1] == hand), 0)

    steps: list[ReplayStep] = []
    by_hand: dict[int, list[ReplayStep]] = {}
    laid_aside: dict[int, dict[str, list[str]]] = {}  # hand -> player -> 7s laid aside
    before: dict[str, Any] | None = None
    for index, s in enumerate(recorded, first):
        state: dict[str, Any] | None = s["state"]
        bucket = by_hand.setdefault(_hand_of_state(state), [])
        number = place[index] if index < len(place) else len(bucket) + 1
        why = reasons.why(s.get("fact"), s["raw"], before, state)
        step = _replay_step(index, number, s, before, why, by_seq, aside, line_of)
        if digested is not None and line_of is not None:
            raw_line = line_of(s["file"], s["line"])
            if raw_line is None:
                digested = None
            else:
                digested.append(raw_line)
        bucket.append(step)
        steps.append(step)
        before = state
        for player, cards in (s.get("fact") or {}).get("laid_aside") or ():
            laid_aside.setdefault(step.hand, {}).setdefault(player, []).extend(sorted(cards))

    return _game_replay(verdict, errors, outline, steps, by_hand, game_violations,
                        _hand_scores(verdict, by_hand, laid_aside),
                        lines_digest(digested) if digested else None)


def build_step(
    verdict: _core.Verdict, errors: Sequence[_core.ErrorInfo], seq: int,
    line_of: LineLookup | None = None,
    outline: Sequence[tuple[int, int, str | None, int | None]] | None = None,
) -> GameReplay | None:
    """The replay of one line, the replayed line numbered `seq` (the kept one of a
    conflict), with nothing else built: the step the whole game's replay has for it, word
    for word (its place, verdict, the states before and after it, why it happened), in a
    `GameReplay` whose `steps` hold that step alone. It has no `scores` and no `digest`;
    `outline` (`Verdict.outline()`, when the caller has it converted) links it to its
    neighbours. None when no replayed line has that seq.

    Only the step's own states are converted. Its why-text needs the plays before it in
    its hand ("neda's 7♦ and parisa's 7♠"): the narration is fed those lines from their
    last `deal` (where `MoveReasons` forgets everything, so the words are the whole game's)
    in the few fields it reads of them (`Verdict.narration`), not as whole states."""
    outline = verdict.outline() if outline is None else outline
    index = next((i for i, entry in enumerate(outline) if entry[0] == seq), None)
    recorded = verdict.step(index) if index is not None else None
    if index is None or recorded is None:
        return None
    before = verdict.state(index - 1) if index > 0 else None
    state: dict[str, Any] | None = recorded["state"]
    reasons = _move_reasons(verdict.ruleset)
    raw = recorded["raw"]
    if MoveReasons.explains(raw):  # other lines are not explained: no need of the lines before
        _narrate_before(reasons, verdict, outline, index)
    why = reasons.why(recorded.get("fact"), raw, before, state)
    by_seq, aside, game_violations = _placed_notes(verdict, outline)
    in_hand = outline[index][1]  # its place in its hand, as `_places` counts
    number = sum(1 for entry in outline[:index + 1] if entry[1] == in_hand)
    step = _replay_step(index, number, recorded, before, why, by_seq, aside, line_of)
    return _game_replay(verdict, errors, outline, [step], {step.hand: [step]}, game_violations,
                        [], None)


def _narrate_before(reasons: MoveReasons, verdict: _core.Verdict,
                    outline: Sequence[tuple[int, int, str | None, int | None]], index: int) -> None:
    """Feed `reasons` the lines before the one at `index`, from the last `deal` among them
    (or from the game's first line): what the whole game's narration knows at that line."""
    first = index  # the first line of the hand holding `index`: its deal, usually
    while first > 0 and outline[first - 1][1] == outline[index][1]:
        first -= 1
    notes = verdict.narration(first, index)
    start = _last_reset(notes)
    if start is None and first > 0:  # no deal in this hand's lines before it: look further back
        notes = verdict.narration(0, index)
        start = _last_reset(notes)
    before: dict[str, Any] | None = None  # a deal (or the game's first line) reads no state before it
    for raw, fact, state in notes[start or 0:]:
        reasons.why(fact, raw, before, state)
        before = state


def _last_reset(notes: Sequence[tuple[dict[str, Any] | None, Any, Any]]) -> int | None:
    """The place of the last line in `notes` where `MoveReasons` forgets everything."""
    return next((i for i in range(len(notes) - 1, -1, -1) if MoveReasons.resets(notes[i][0])), None)


def _hand_of_state(state: Mapping[str, Any] | None) -> int:
    """The hand a step falls in: its state's (SETUP_HAND before the first deal)."""
    return (state or {}).get("hand") or SETUP_HAND


def _places(outline: Sequence[tuple[int, int, str | None, int | None]]) -> list[int]:
    """Each step's place in its hand (1-based), from the outline: the same in every mode."""
    place: list[int] = []
    counted: dict[int, int] = {}
    for _, in_hand, _, _ in outline:
        counted[in_hand] = counted.get(in_hand, 0) + 1
        place.append(counted[in_hand])
    return place


#: the violations of a seq's kept line (by seq), those of its set-aside lines (by seq, then
#: (file, line)), and those of no replayed line
PlacedNotes = tuple[dict[int, list[Violation]],
                    dict[int, dict[tuple[str | None, int | None], list[Violation]]],
                    list[Violation]]


def _placed_notes(verdict: _core.Verdict,
                  outline: Sequence[tuple[int, int, str | None, int | None]]) -> PlacedNotes:
    """The verdict's violations no step carries (the reader's: sequence gaps, unusable
    seqs), placed on the replayed line of their seq, on a set-aside line, or on the game."""
    by_seq: dict[int, list[Violation]] = {}
    aside: dict[int, dict[tuple[str | None, int | None], list[Violation]]] = {}
    game_violations: list[Violation] = []
    notes = verdict.unplaced_violations()
    if not notes:
        return by_seq, aside, game_violations
    where = {seq: (file, line) for seq, _, file, line in outline}
    for note in (_violation(v) for v in notes):
        if note.seq is not None and note.seq in where:
            if note.line is not None and (note.file, note.line) != where[note.seq]:
                # another line with this seq, set aside: shown as itself, not on the kept line
                aside.setdefault(note.seq, {}).setdefault((note.file, note.line), []).append(note)
            else:
                by_seq.setdefault(note.seq, []).append(note)
        else:
            game_violations.append(note)
    return by_seq, aside, game_violations


def _move_reasons(ruleset: str | None) -> MoveReasons:
    effects = next((r["effects"] for r in _core.rulesets() if r["name"] == ruleset), {})
    return MoveReasons({str(rank): str(effect) for rank, effect in effects.items()})


def _replay_step(
    index: int, number: int, s: Mapping[str, Any], before: dict[str, Any] | None, why: str | None,
    by_seq: dict[int, list[Violation]],
    aside: dict[int, dict[tuple[str | None, int | None], list[Violation]]],
    line_of: LineLookup | None,
) -> ReplayStep:
    """One recorded step (`Verdict.steps()`'s) as shown; takes its seq's placed notes."""
    state: dict[str, Any] | None = s["state"]
    encoded = s["event"]
    event = from_encoded(encoded) if encoded is not None else None
    violations = tuple(_violation(v) for v in s["violations"]) + tuple(by_seq.pop(s["seq"], []))
    set_aside = tuple(
        SetAsideLine(s["seq"], file, line, line_of(file, line) if line_of else None, tuple(found))
        for (file, line), found in aside.pop(s["seq"], {}).items()
    )
    return ReplayStep(
        index, _hand_of_state(state), number, s["seq"], s["file"], s["line"], event, s["raw"],
        describe_event(event, s["raw"]), violations, before, state, s.get("fact"), why, set_aside,
    )


def _game_replay(
    verdict: _core.Verdict, errors: Sequence[_core.ErrorInfo],
    outline: Sequence[tuple[int, int, str | None, int | None]], steps: list[ReplayStep],
    by_hand: dict[int, list[ReplayStep]], game_violations: list[Violation],
    scores: list[HandScore], digest: str | None,
) -> GameReplay:
    header = verdict.header() or {}
    players = header.get("players")
    meta = header.get("meta")
    return GameReplay(
        game=verdict.game,
        ruleset=verdict.ruleset,
        status=verdict.status,
        players=tuple(players) if isinstance(players, list) else (),
        meta=dict(meta) if isinstance(meta, dict) else {},
        steps=steps,
        violations=[_violation(v) for v in verdict.violations],
        game_violations=game_violations,
        scores=scores,
        totals=verdict.totals,
        match_winners=list(verdict.winners),
        errors=list(errors),
        settings=dict(verdict.settings() or {}),
        digest=digest,
        outline=outline,
        _by_hand=by_hand,
    )


def _hand_scores(
    verdict: _core.Verdict,
    by_hand: dict[int, list[ReplayStep]],
    laid_aside: dict[int, dict[str, list[str]]],
) -> list[HandScore]:
    settings, ruleset = verdict.settings(), verdict.ruleset
    if settings is None or ruleset is None or ruleset not in RULESETS:
        return []
    points = RULESETS[ruleset].points
    players = settings["players"]
    out = []
    for outcome in verdict.hands or []:
        number = outcome["hand"]
        state = _last_state_of(by_hand.get(number, []), number)
        hands: dict[str, list[str]] = state.get("hands", {}) if state else {}
        out.append(_score_hand(outcome, hands, laid_aside.get(number, {}), points, players))
    return out


def _last_state_of(steps: list[ReplayStep], hand: int) -> dict[str, Any] | None:
    """The state at which the hand's outcome (and settlement) was final."""
    for step in reversed(steps):
        after = step.after
        if after and after.get("hand") == hand and after.get("outcome") is not None:
            return after
    return None


def _score_hand(
    outcome: Mapping[str, Any],
    hands: dict[str, list[str]],
    laid_aside: dict[str, list[str]],
    points: Mapping[str, int],
    players: Sequence[str],
) -> HandScore:
    winners = set(outcome["winners"])
    scores: Mapping[str, int] | None = outcome.get("scores")
    order: Sequence[str] | None = outcome.get("order")
    rows = []
    for player in players:
        cards = tuple(CardPoints(c, int(points[c[0]])) for c in hands.get(player, []))
        face = sum(c.points for c in cards)
        score = None if scores is None else scores.get(player)
        rows.append((player, cards, face, score))
    if order is not None:
        rank = {p: i for i, p in enumerate(order)}
        rows.sort(key=lambda r: rank.get(r[0], len(rank)))
    else:
        rows.sort(key=lambda r: (r[0] not in winners, r[3] if r[3] is not None else 0))
    ranked: list[PlayerScore] = []
    place = 0
    previous: object = object()
    for i, (player, cards, face, score) in enumerate(rows, 1):
        key = score if order is None else i
        if key != previous:
            place = i
            previous = key
        ranked.append(PlayerScore(player, place, cards, len(cards), tuple(laid_aside.get(player, [])),
                                  face, score, player in winners))
    reason: str = outcome["reason"]
    winning_card: str | None = outcome.get("winning_card")
    multiplier = int(outcome["multiplier"])
    return HandScore(
        hand=outcome["hand"],
        reason=reason,
        winners=tuple(outcome["winners"]),
        winning_card=winning_card,
        multiplier=multiplier,
        why=multiplier_reason(reason, winning_card, multiplier),
        players=tuple(ranked),
        order=tuple(order) if order is not None else None,
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
            p["player"], p.get("finishing_position") or 0, cards, len(cards), (), sum(c.points for c in cards),
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
