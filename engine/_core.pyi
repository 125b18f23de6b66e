"""Typed stubs of `engine._core`, the compiled engine (engine/core/haftkhabis-py)."""

from collections.abc import Callable, Collection
from enum import StrEnum
from typing import Any, BinaryIO, Literal, TypedDict, final, type_check_only

__all__ = [
    "ANALYSIS_POLICY",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_OPEN_GAMES",
    "DEFAULT_MAX_WAITING_BYTES",
    "DEFAULT_MAX_WAITING_LINES",
    "ENGINE_VERSION",
    "Code",
    "ColumnBuffer",
    "GameRun",
    "Ingestor",
    "ParsedLines",
    "ReplayError",
    "SpoolError",
    "Validator",
    "Verdict",
    "card_codes",
    "concat_parquet",
    "event_specs",
    "expand_paths",
    "fingerprint",
    "replay_game",
    "route_files",
    "rulesets",
    "shard_of",
    "validate_each",
    "validate_json",
    "validate_to",
    "violation_codes",
    "warehouse_columns",
]

ENGINE_VERSION: str
#: the move-quality rollouts' policy and its version (haftkhabis_core::analysis::POLICY)
ANALYSIS_POLICY: str
#: the longest line read by default, in bytes (a longer one is a `line_too_long` error)
DEFAULT_MAX_LINE_BYTES: int
#: the most games a validation holds at once by default (`too_many_open_games` past it)
DEFAULT_MAX_OPEN_GAMES: int
#: the most lines one game holds waiting for a missing seq, by default
DEFAULT_MAX_WAITING_LINES: int
#: the most bytes of lines all games together hold waiting for a missing seq, by default
DEFAULT_MAX_WAITING_BYTES: int

_Rank = Literal["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"]
_Effect = Literal[
    "plain", "stack", "follow", "skip", "reverse", "gift", "declare", "optional_follow"
]

@type_check_only
class RulesetInfo(TypedDict):
    """One profile's parameters, as `haftkhabis_core::ruleset::Ruleset` holds them."""

    name: str
    min_players: int
    max_players: int
    two_decks_above: int | None
    has_starter: bool
    forbidden_starter_ranks: str
    opening_suit: str | None
    seven_total: int
    seven_answer_compulsory: bool
    must_play: Literal["any_legal", "match", "never"]
    jack: Literal["always", "no_match_held", "not_on_jack"]
    jack_suit_must_differ: bool
    after_draw: Literal["may_play_fit", "must_play_match", "free"]
    failed_follow_ends_turn: bool
    reshuffles: bool
    last_card_call: bool
    table_penalties: bool
    settlement_sevens: bool
    first_player_previous_winner: bool
    default_hands: int | None
    points: dict[_Rank, int]
    multipliers: dict[_Rank, int]
    effects: dict[_Rank, _Effect]
    option_names: list[str]
    options: dict[str, bool]
    modes: list[Literal["points", "elimination"]]

def card_codes() -> list[str]:
    """The card codes the warehouse stores (`hands.starter`, `hands.stock`,
    `hand_players.opening_cards`): the card of code `i` is `card_codes()[i]`, in
    notation (`"7C"`); one deck, suit-major (the core's `Card::index`)."""

def rulesets() -> list[RulesetInfo]:
    """Every ruleset profile's parameters, in the contract's order (bazito, persian,
    pis-yedili)."""

@type_check_only
class FieldSpec(TypedDict):
    """One field of an event type, as `notation::EVENT_FIELDS` declares it."""

    name: str
    required: bool
    kind: str
    policy: Literal["router", "reported", "header", "set_aside", "rules"]

@type_check_only
class EventSpec(TypedDict):
    type: str
    fields: list[FieldSpec]

@type_check_only
class SpecLimits(TypedDict):
    game_id_length: int
    player_id_length: int
    seq: int
    hand: int

@type_check_only
class EventSpecs(TypedDict):
    """The codec's field table and the value sets its kinds are checked against."""

    format: str
    extension_prefix: str
    common: list[FieldSpec]
    events: list[EventSpec]
    event_types: list[str]
    ranks: str
    suits: str
    calls: list[str]
    penalty_reasons: list[str]
    limits: SpecLimits

def event_specs() -> EventSpecs:
    """The codec's field table (`notation::EVENT_FIELDS`, `COMMON_FIELDS`): every event
    type's fields with their kind, and the limits and value sets the kinds are checked
    against; the JSON Schema is generated from it (`engine/schema.py`)."""

class Code(StrEnum):
    """A violation code (the contract's closed list; a message says the specifics). Made
    from the core's table when the module loads (`haftkhabis_core::violation::CODES`)."""

    MALFORMED_JSON = "malformed_json"
    SCHEMA = "schema"
    SEQUENCE = "sequence"
    NO_HEADER = "no_header"
    UNKNOWN_RULESET = "unknown_ruleset"
    BAD_DEAL = "bad_deal"
    UNEXPECTED_EVENT = "unexpected_event"
    NOT_YOUR_TURN = "not_your_turn"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    ILLEGAL_CARD = "illegal_card"
    MUST_PLAY = "must_play"
    ILLEGAL_DRAW = "illegal_draw"
    STOCK_MISMATCH = "stock_mismatch"
    ILLEGAL_PASS = "illegal_pass"
    BAD_SUIT = "bad_suit"
    BAD_TARGET = "bad_target"
    UNJUSTIFIED_PENALTY = "unjustified_penalty"
    MISSED_CALL = "missed_call"
    SCORE_MISMATCH = "score_mismatch"
    WINNER_MISMATCH = "winner_mismatch"
    LINE_TOO_LONG = "line_too_long"
    TOO_MANY_OPEN_GAMES = "too_many_open_games"

@type_check_only
class CodeInfo(TypedDict):
    """One violation code as the core declares it."""

    code: str
    foul: bool
    explanation: str

def violation_codes() -> list[CodeInfo]:
    """Every violation code in the contract's order: its name, whether it is a player's own
    foul (rules.md's list), and one line of explanation."""

@type_check_only
class ViolationInfo(TypedDict):
    seq: int | None
    code: str
    player: str | None
    message: str
    file: str | None
    line: int | None

_Phase = Literal[
    "opening", "turn", "drawn", "seven", "follow", "follow_drawn", "deflect", "settlement", "over"
]
#: the phase before a line, as facts and the warehouse name it (`gift` while a 2's gift is owed)
_LinePhase = Literal[
    "opening", "turn", "drawn", "seven", "follow", "follow_drawn", "deflect", "settlement", "over",
    "gift",
]
_Status = Literal["compliant", "violations", "incomplete", "aborted", "invalid"]
_DrawKind = Literal[
    "seven_total", "gift", "failed_follow", "settlement", "penalty", "voluntary", "opening",
    "not_allowed",
]

@type_check_only
class HandVerdict(TypedDict):
    """A decided hand as the verdict lists it."""

    hand: int
    winners: list[str]
    scores: dict[str, int] | None
    reason: Literal["out", "blocked", "elimination"]
    order: list[str] | None

@type_check_only
class OutcomeInfo(HandVerdict):
    """A decided hand, with what the warehouse records of it."""

    winning_card: str | None
    multiplier: int

@type_check_only
class VerdictJson(TypedDict):
    """The verdict object of `validate --json`."""

    kind: Literal["game"]
    game: str
    ruleset: str | None
    status: _Status
    violations: list[ViolationInfo]
    hands: list[HandVerdict] | None
    totals: dict[str, int] | None

# what the player to move may do (`pass` is a keyword: the functional form, which cannot
# be marked type-check-only, so a private name stubtest does not look for at run time)
_TurnOptionsInfo = TypedDict(
    "_TurnOptionsInfo",
    {
        "player": str,
        "phase": _Phase,
        "play": list[str],
        "draw": int | None,
        "pass": bool,
        "obliged": bool,
        "gift": bool,
        "text": str,
    },
)

@type_check_only
class StateInfo(TypedDict):
    """The state after a line, as the replay views show it."""

    hand: int
    open: bool
    dealer: str
    phase: _Phase
    hands: dict[str, list[str]]
    pile_top: str | None
    pile_size: int
    pile_recent: list[str]
    pile: list[str]
    active: list[str]
    stock_size: int
    current_suit: str | None
    direction: Literal["clockwise", "counter-clockwise"]
    mover: str | None
    turn: str | None
    pending_total: int
    follow_card: str | None
    gift_target: str | None
    call_due: list[str]
    finished: list[str]
    waiting_sevens: list[str]
    laid_aside: list[str]
    legal: _TurnOptionsInfo | None
    outcome: OutcomeInfo | None

@type_check_only
class SettingsInfo(TypedDict):
    """A header's settings as the engine read them."""

    ruleset: str
    players: list[str]
    mode: Literal["points", "elimination"]
    decks: int
    match_hands: int | None
    match_target: int | None
    options: dict[str, bool]

@type_check_only
class HeaderInfo(TypedDict):
    """A header's fields as the log wrote them (any JSON value, None when absent)."""

    format: Any
    ruleset: Any
    players: Any
    options: Any
    mode: Any
    decks: Any
    match: Any
    meta: Any

@type_check_only
class HandRecordInfo(TypedDict):
    """A hand dealt: who dealt and moved first, its outcome, the cards left."""

    hand: int
    dealer: str
    first_player: str
    outcome: OutcomeInfo | None
    cards_left: dict[str, list[str]]
    reshuffles: int
    closed: bool

@type_check_only
class LineFactInfo(TypedDict):
    """What the machine knew of an applied line (empty values when it was not applied)."""

    draw_kind: _DrawKind | None
    laid_aside: list[tuple[str, list[str]]]
    expected: str | None
    gift_to: str | None

@type_check_only
class EventFactInfo(LineFactInfo):
    """What the engine knew of one replayed line (`Validator(facts=True)`)."""

    seq: int
    hand: int | None
    phase: _LinePhase | None
    codes: list[str]
    applied: bool

@type_check_only
class StepFactInfo(LineFactInfo, total=False):
    """A step's facts: the hand and phase too when the line was applied."""

    hand: int | None
    phase: _LinePhase | None

@type_check_only
class StepInfo(TypedDict):
    """One replayed line of a recorded game, with the state after it."""

    seq: int
    file: str | None
    line: int | None
    event: dict[str, Any] | None
    raw: Any
    violations: list[ViolationInfo]
    state: StateInfo | None
    applied: bool
    fact: StepFactInfo

@type_check_only
class ErrorInfo(TypedDict):
    kind: Literal["error"]
    file: str
    line: int | None
    code: str
    message: str

@final
class Verdict:
    """One game's verdict and what the engine knew of it."""

    @property
    def game(self) -> str: ...
    @property
    def ruleset(self) -> str | None: ...
    @property
    def status(self) -> _Status: ...
    @property
    def lines(self) -> int: ...
    @property
    def files(self) -> list[str]: ...
    @property
    def violations(self) -> list[ViolationInfo]: ...
    @property
    def hands(self) -> list[OutcomeInfo] | None: ...
    @property
    def totals(self) -> dict[str, int] | None: ...
    @property
    def winners(self) -> list[str]: ...
    @property
    def complete(self) -> bool: ...
    def settings(self) -> dict[str, Any] | None: ...  # shape: SettingsInfo
    def header(self) -> dict[str, Any] | None: ...  # shape: HeaderInfo
    def hand_records(self) -> list[HandRecordInfo]: ...
    def facts(self) -> list[EventFactInfo] | None: ...
    def steps(self, hand: int | None = None) -> list[dict[str, Any]]: ...  # shape: StepInfo
    def step(self, index: int) -> dict[str, Any] | None: ...  # shape: StepInfo
    def state(self, index: int) -> dict[str, Any] | None: ...  # shape: StateInfo
    def narration(
        self, start: int, stop: int
    ) -> list[tuple[dict[str, Any] | None, dict[str, Any], dict[str, Any] | None]]: ...
    def outline(self) -> list[tuple[int, int, str | None, int | None]]: ...
    def unplaced_violations(self) -> list[ViolationInfo]: ...
    def to_json(self) -> VerdictJson: ...
    def json(self) -> bytes: ...

@final
class Validator:
    """Feed it files or lines; finished games' verdicts come out of `take_verdicts` as
    soon as they are due, the rest from `finish`."""

    def __new__(
        cls,
        *,
        record: Collection[str] | None = None,
        only: Collection[str] | None = None,
        facts: bool = False,
        hold_lines: int = 100000,
        states: bool = True,
        max_line_bytes: int = ...,
        max_open_games: int = ...,
        max_waiting_lines: int = ...,
        max_waiting_bytes: int = ...,
    ) -> Validator:
        """`states=False`: a recorded game keeps no state per step; `Verdict.steps`,
        `step`, `state` and `narration` work the states they show out again from the
        steps' events (far cheaper for a long game of which one step is shown)."""
        ...
    def feed_paths(self, paths: list[str]) -> None: ...
    def feed_file(self, path: str, *, stdin: BinaryIO | None = None) -> None: ...
    def feed_line(self, raw: bytes, file: str, line: int) -> None: ...
    def take_verdicts(self) -> list[Verdict]: ...
    def finish(self) -> list[Verdict]: ...
    def finish_game(self, game: str) -> Verdict | None: ...
    def take_errors(self) -> list[ErrorInfo]: ...
    @property
    def lines_read(self) -> int: ...
    @property
    def open_games(self) -> int: ...

def concat_parquet(inputs: list[str], output: str) -> int:
    """Parquet files joined into one at `output` by copying their column chunks as they
    are (no decoding): their row groups in the order given; the size written. Every input
    must have the first's schema and key-value metadata, else `ValueError`."""

def replay_game(paths: list[str], game: str) -> tuple[Verdict | None, list[ErrorInfo]]:
    """One game replayed with every step recorded, and the line errors met."""

def expand_paths(paths: list[str]) -> list[str]:
    """The files `paths` name, in input order (directories recursively)."""

def validate_json(paths: list[str]) -> bytes:
    """Every verdict, then every line error, as the JSON lines `validate --json` writes."""

@type_check_only
class ValidateCounts(TypedDict):
    """What `validate_to` wrote: games, lines read, line errors, violations, and games
    per status."""

    games: int
    lines: int
    errors: int
    violations: int
    statuses: dict[str, int]

def validate_to(
    paths: list[str],
    write: Callable[[bytes], object],
    *,
    stdin: BinaryIO | None = None,
    hold_lines: int = 100000,
    max_line_bytes: int = ...,
    max_open_games: int = ...,
    max_waiting_lines: int = ...,
    max_waiting_bytes: int = ...,
) -> ValidateCounts:
    """Validate `paths`, handing `write` the JSON lines of `validate --json` in chunks."""

def validate_each(
    paths: list[str],
    each: Callable[[list[Verdict | ErrorInfo]], object],
    *,
    stdin: BinaryIO | None = None,
    hold_lines: int = 100000,
    max_line_bytes: int = ...,
    max_open_games: int = ...,
    max_waiting_lines: int = ...,
    max_waiting_bytes: int = ...,
) -> ValidateCounts:
    """Validate `paths`, handing `each` the verdicts and line errors as they come, in
    order, at most 1,024 at a time and what is pending at the end of each file."""

class ReplayError(Exception):
    """A strict replay met a violation (its `violation` attribute holds it as a dict), or was
    given no line."""

    violation: ViolationInfo

class SpoolError(OSError):
    """A spool (a batch's lines routed to one worker) that cannot be read back: cut short, or
    naming a file the batch does not have."""

# The core's errors reach Python as typed exceptions (engine/core/haftkhabis-py/src/error.rs):
# an operating system's refusal is an OSError of the subclass its errno names, `errno` set
# (and `filename` when the file is known); a path given that does not exist is a
# FileNotFoundError with `errno` ENOENT; a strict replay's stop is a ReplayError.

@type_check_only
class LegalMoveInfo(TypedDict):
    """One legal move of the player to move (a J once per suit, a 2 once per target)."""

    kind: Literal["play", "draw", "pass"]
    card: str | None
    suit: str | None
    target: str | None
    text: str

@type_check_only
class MoveValueInfo(LegalMoveInfo):
    """One legal move's estimate at a decision (lower `mean` is better: the player's
    points at the hand's end, or their finishing place in elimination play)."""

    mean: float
    se: float
    win_rate: float
    #: the playouts behind `mean` (flat: the rollouts; ismcts: the move's root visits)
    visits: int
    #: this move's mean - the best move's (flat: over paired rollouts; ismcts: of the two
    #: means, unpaired), and its se
    loss: float
    loss_se: float
    #: loss > 1.96 * loss_se, from 2 visits or more
    significant: bool

@type_check_only
class DecisionAnalysisInfo(TypedDict):
    """A decision analysed by rollouts from the information set of the player to move."""

    player: str | None
    #: flat: rollouts per move; ismcts: the search's iterations (rollouts x moves)
    rollouts: int
    seed: int
    policy: str
    #: flat or ismcts
    search: str
    #: ismcts's root-parallel trees (None for flat)
    trees: int | None
    truncated: int
    faults: int
    #: the index in `moves` of the best move (flat: the lowest mean; ismcts: the most visited)
    best: int
    moves: list[MoveValueInfo]

@type_check_only
class PositionValueInfo(TypedDict):
    """A player's expected outcome of the running hand, the policy making every move."""

    player: str | None
    mean: float
    se: float
    win_rate: float
    rollouts: int
    truncated: int
    policy: str

@final
class ParsedLines:
    """One game's lines parsed once, to be replayed under many headers."""

    def __new__(cls, raws: list[bytes], lines: list[int | None]) -> ParsedLines: ...
    def __len__(self) -> int: ...
    def replay_bounded(
        self, game: str, header: bytes, bound: float
    ) -> tuple[int, ViolationInfo | None, bool]: ...

@final
class GameRun:
    """One game's replay, fed one line at a time in seq order."""

    def __new__(
        cls, game: str, *, strict: bool = False, record: bool = False, file: str | None = None
    ) -> GameRun: ...
    def copy(self) -> GameRun: ...
    def feed(self, raw: bytes, line: int | None = None) -> list[ViolationInfo]: ...
    def options(self) -> dict[str, Any] | None: ...  # shape: _TurnOptionsInfo
    def snapshot(self) -> dict[str, Any] | None: ...  # shape: StateInfo
    def expected_actor(self) -> str | None: ...
    @property
    def invalid(self) -> bool: ...
    @property
    def players(self) -> list[str]: ...
    @property
    def elimination(self) -> bool: ...
    @property
    def match_over(self) -> bool: ...
    @property
    def hand_open(self) -> bool: ...
    @property
    def closed_by(self) -> str | None: ...
    def is_complete(self) -> bool: ...
    def totals(self) -> dict[str, int]: ...
    def match_winners(self) -> list[str]: ...
    def decided_outcomes(self) -> list[dict[str, Any]]: ...  # shape: OutcomeInfo
    def settings(self) -> dict[str, Any]: ...  # shape: SettingsInfo
    def card_count(self) -> int | None: ...
    @property
    def violations(self) -> list[ViolationInfo]: ...
    def steps(self, *, states: bool = True, start: int = 0) -> list[StepInfo]: ...
    def analyse(
        self,
        *,
        rollouts: int = 1000,
        seed: int = 0,
        threads: int = 0,
        search: str = "flat",
        trees: int | None = None,
    ) -> DecisionAnalysisInfo | None: ...
    def position_value(
        self, player: str, *, rollouts: int = 1000, seed: int = 0, threads: int = 0
    ) -> PositionValueInfo | None: ...
    def legal_moves(self) -> list[LegalMoveInfo]: ...
    def policy_move(self) -> LegalMoveInfo | None: ...

# ---------------------------------------------------------------------------- ingest

@final
class ColumnBuffer:
    """One Arrow buffer owned by the core, lent read-only through the buffer protocol
    (`pyarrow.py_buffer` wraps it without a copy)."""

    def __len__(self) -> int: ...

#: one Arrow column as the core lays it out: (length, null_count, buffers, children)
_ColumnData = tuple[int, int, list[ColumnBuffer | None], list[Any]]
#: `sink(ruleset, month, {table: {column: ColumnData}})`
_RowSink = Callable[[str, str, dict[str, dict[str, _ColumnData]]], object]

@type_check_only
class LineProblem(TypedDict):
    line: int | None
    message: str

@type_check_only
class FileRead(TypedDict):
    file: str
    lines: int
    error: LineProblem | None

@type_check_only
class QuarantineInfo(TypedDict):
    kind: Literal["error"]
    file: str
    line: int | None
    code: str
    message: str
    raw: bytes | None

@type_check_only
class WarehouseColumn(TypedDict):
    """One column of a table the engine fills, as the binding declares it."""

    name: str
    type: str
    nullable: bool
    doc: str | None

def warehouse_columns() -> dict[str, list[WarehouseColumn]]:
    """The columns of every table the engine fills (games, hands, hand_players, events,
    violations), each table's in order: the one declaration `ingest/schema.py` builds the
    tables' Arrow schemas from."""

def shard_of(game: str, shards: int) -> int:
    """The shard (0..`shards`) of a game: a stable hash of its id."""

def route_files(
    files: list[str],
    spools: list[str],
    on_file: Callable[[FileRead, list[QuarantineInfo]], object],
    *,
    max_line_bytes: int = ...,
) -> list[int]:
    """Read `files` once, appending each game line to its shard's spool; `on_file` gets
    each file's report and its lines that belong to no game. Lines written per spool."""

def fingerprint(raw: bytes) -> int | None:
    """A line's fingerprint (signed 64-bit), None when it is not JSON."""

@final
class Ingestor:
    """Replays one shard of a batch and hands each judged game's rows to a sink."""

    def __new__(
        cls,
        *,
        batch: int,
        hold_lines: int = 100000,
        idle_lines: int = 250000,
        flush_rows: int = 65536,
    ) -> Ingestor: ...
    def feed_spool(
        self,
        spool: str,
        files: list[str],
        sink: _RowSink,
        progress: Callable[[int, int, int], object] | None = None,
    ) -> None: ...
    def feed_files(
        self,
        files: list[str],
        on_file: Callable[[FileRead, list[QuarantineInfo]], object],
        sink: _RowSink,
        progress: Callable[[int, int, int], object] | None = None,
        *,
        max_line_bytes: int = ...,
        ranges: list[tuple[str, int, int]] | None = None,
    ) -> None: ...
    def feed_lines(self, lines: list[tuple[bytes, str, int]], sink: _RowSink) -> None: ...
    def finish(self, sink: _RowSink) -> None: ...
    def take_late(self) -> list[tuple[str, bytes, str, int, int]]: ...
    def take_errors(self) -> list[QuarantineInfo]: ...
    @property
    def games(self) -> int: ...
    @property
    def violations(self) -> int: ...
    @property
    def lines_read(self) -> int: ...
    @property
    def open_games(self) -> int: ...
    @property
    def peak_open_games(self) -> int: ...
