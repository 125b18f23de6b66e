"""The API's response types (pydantic), from which its OpenAPI document is generated.

A violation is the engine's own `engine.violations.Violation` (its `Code` the contract's
closed list), used as it is; the verdict's envelope follows `validate --json` field for
field, and tests/service/test_models.py holds every line `validate --json` writes for the
sample logs against `VerdictLine` / `LineError` (round trip, byte for byte). The rest
mirror the warehouse's columns (docs/warehouse.md) and the engine's state snapshot; a
state field the core adds later stays out of responses until it is named here, so
nothing reaches a player-scoped token unvetted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from engine.violations import Code, Violation

Status = Literal["compliant", "violations", "incomplete", "aborted", "invalid"]


class Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Problem(Model):
    """Every error response: the HTTP status, a short code and a sentence for people."""

    status: int
    error: str = Field(examples=["not_found"])
    message: str = Field(examples=["no game 't-08-bz101-99999' in the warehouse"])


# ---------------------------------------------------------------------------- verdicts


class HandOutcome(Model):
    """A decided hand in a verdict (`scores` null and `order` the finishing order in
    elimination play)."""

    hand: int
    winners: list[str]
    scores: dict[str, int] | None
    reason: str
    order: list[str] | None


class VerdictLine(Model):
    """One game's verdict: a `{"kind": "game", …}` line of `POST /v1/validate`, exactly
    as `haftkhabis validate --json` writes it."""

    kind: Literal["game"]
    game: str
    ruleset: str | None
    status: Status
    violations: list[Violation]
    hands: list[HandOutcome] | None
    totals: dict[str, int] | None


class LineError(Model):
    """A line that belongs to no game (not JSON, no usable `game`, an unreadable stream):
    a `{"kind": "error", …}` line of `POST /v1/validate`."""

    kind: Literal["error"]
    file: str
    line: int | None
    code: Code
    message: str


# ---------------------------------------------------------------------------- ingest


class BatchFile(Model):
    path: str
    size: int | None
    sha256: str | None
    lines: int | None
    status: str = Field(description="ok · truncated · failed · skipped (already ingested whole)")
    error: str | None


class BatchOutcome(Model):
    """The warehouse's `batches` row for the batch: what it read and what it changed."""

    batch: int
    kind: str
    started: datetime | None
    ended: datetime | None
    lines: int
    games_new: int
    games_updated: int
    games_unchanged: int
    violations: int = Field(description="violations in the new and updated games")
    errors: int = Field(description="quarantined lines plus failed or truncated files")
    workers: int | None
    files: list[BatchFile]


class BatchStatus(Model):
    """A pushed batch: queued, running, then committed (with the warehouse's record of it)
    or failed (with the reason; the warehouse is then as it was before)."""

    id: str
    status: Literal["queued", "running", "committed", "failed"]
    received_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    size: int | None = Field(default=None, description="the body's size in bytes, decompressed")
    sha256: str | None = Field(default=None, description="of the decompressed body")
    batch: int | None = Field(default=None, description="the warehouse batch that committed it")
    error: str | None = None
    outcome: BatchOutcome | None = None
    links: dict[str, str] = Field(default_factory=dict)


# ---------------------------------------------------------------------------- a game


class ViolationView(Model):
    """A violation as the warehouse holds it, with the rule's explanation. `message` is
    null in a player's view when it is about another player (it may name their cards)."""

    seq: int | None
    hand: int | None = None
    code: Code
    player: str | None
    message: str | None
    file: str | None = None
    line: int | None = None
    explanation: str


class HandPlayerView(Model):
    player: str
    seat: int | None
    turn_order: int | None
    points: int | None
    won: bool | None
    finishing_position: int | None
    cards_left: int | None
    left_cards: list[str] | None = Field(description="null: another player's, in a player's view")


class HandView(Model):
    hand: int
    dealer: str | None
    first_player: str | None
    winners: list[str] | None
    reason: str | None
    winning_card: str | None
    multiplier: int | None
    decided: bool | None
    closed: bool | None
    events: int | None
    reshuffles: int | None
    violations: int | None
    players: list[HandPlayerView]


class GameVerdict(Model):
    """A game's verdict as the warehouse holds it."""

    status: Status
    complete: bool | None
    winners: list[str] | None
    totals: dict[str, int] | None
    violations: int


class GameView(Model):
    """One game as the warehouse holds it: the verdict, every hand with its scores, and
    every violation."""

    game: str
    ruleset: str
    ruleset_declared: str | None
    mode: str | None
    decks: int | None
    players: list[str]
    options: dict[str, Any] | None
    server_build: str | None
    start_time: datetime | None
    end_time: datetime | None
    hands_dealt: int | None
    hands_decided: int | None
    lines: int | None
    ingest_batch: int | None
    source_files: list[str] | None = Field(description="null in a player's view")
    verdict: GameVerdict
    hands: list[HandView]
    violations: list[ViolationView]
    viewer: str | None = Field(description="the player whose view this is (null: support)")
    links: dict[str, str]


class Options(Model):
    """What the player to move may do (the engine's legality view)."""

    player: str
    phase: str
    play: list[str] = Field(description="cards they may play now")
    draw: int | None = Field(description="cards a draw must take now; null: no draw allowed")
    may_pass: bool = Field(alias="pass")
    obliged: bool = Field(description="drawing or passing now would be `must_play`")
    gift: bool = Field(description="the move owed is a 2's gift draw")
    text: str


class Outcome(Model):
    hand: int
    winners: list[str]
    scores: dict[str, int] | None
    reason: str
    order: list[str] | None
    winning_card: str | None = None
    multiplier: int | None = None


class TableState(Model):
    """The table after a line. In a player's view `hands` holds only their own cards
    (the others are null; `hand_sizes` still counts them)."""

    hand: int | None
    open: bool | None = None
    dealer: str | None = None
    phase: str | None = None
    hands: dict[str, list[str] | None] = Field(default_factory=dict)
    hand_sizes: dict[str, int] = Field(default_factory=dict)
    pile_top: str | None = None
    pile_size: int | None = None
    pile_recent: list[str] = Field(default_factory=list)
    pile: list[str] = Field(default_factory=list)
    current_suit: str | None = None
    direction: str | None = None
    stock_size: int | None = None
    active: list[str] = Field(default_factory=list)
    mover: str | None = Field(None, description="whose move it is")
    turn: str | None = None
    pending_total: int | None = None
    follow_card: str | None = None
    gift_target: str | None = None
    call_due: list[str] = Field(default_factory=list)
    finished: list[str] = Field(default_factory=list)
    waiting_sevens: list[str] = Field(default_factory=list)
    laid_aside: list[str] = Field(default_factory=list)
    outcome: Outcome | None = None


class Decision(Model):
    """The move's moment: whose turn it was, what they could legally do, whether the
    rules left them one kind of move, and why the move happened."""

    expected: str | None = Field(description="the player whose move it was")
    actor: str | None = Field(description="who acted")
    options: Options | None = Field(description="the options the expected player had "
                                    "(null in a player's view of another's turn)")
    forced: bool | None = Field(description="the legal moves left one kind of move: a play "
                                "was obliged, or only a draw or only a pass was allowed (null: "
                                "another player's options, in a player's view)")
    why: str | None = Field(description="why the move happened, in the engine's words "
                            "(`engine.narrate.MoveReasons`, as the dashboard and the dispute "
                            "report say it); null when there is nothing to explain, or in a "
                            "player's view of another's draw")
    draw_kind: str | None = Field(description="what a draw was: seven_total · gift · "
                                  "failed_follow · settlement · penalty · voluntary · "
                                  "opening · not_allowed")


class StepView(Model):
    """One line of a game, replayed: the event, its verdict, the state after it, and who
    moves next with their legal moves."""

    game: str
    seq: int
    hand: int = Field(description="the hand it fell in (0: before the first deal)")
    step: int = Field(description="1-based within its hand, as the dashboard numbers it")
    steps_in_hand: int
    file: str | None
    line: int | None
    kind: str
    actor: str | None
    text: str
    event: dict[str, Any] | None = Field(description="the line as logged (cards another "
                                         "player holds are null in a player's view)")
    violations: list[ViolationView]
    decision: Decision | None
    table: TableState | None
    to_move: Options | None = Field(description="who moves next and what they may do "
                                    "(null in a player's view when it is someone else)")
    viewer: str | None
    links: dict[str, str]


class BranchStep(Model):
    """One move of a what-if branch and the table after it."""

    seq: int
    player: str
    move: str = Field(description="the move, written as asked (`7C`, `JS/H`, `2D>lale`, `draw`, `pass`)")
    line: dict[str, Any] = Field(description="the log line the move would have been")
    drawn: list[str] = Field(description="the cards a draw took (from the logged stock order)")
    table: TableState
    card_count: int | None = Field(description="cards on the table in all (a conservation check)")


class Refusal(Model):
    move: str
    player: str
    violations: list[ViolationView]
    reason: str


class AnalysisView(Model):
    """A hand's decisions rated by rollouts from each decider's information set (issue 32;
    docs/analysis.md): every legal move's expected points at the hand's end, the best move,
    the chosen move's loss with its standard error; each deal's expected points. In a
    player's view only that player's decisions and deal."""

    game: str
    players: list[str]
    hand: int
    rollouts: int
    seed: int
    search: str = Field(description="flat or ismcts (docs/analysis.md)")
    policy: str
    engine_version: str
    viewer: str | None
    decisions: list[dict[str, Any]] = Field(description="per decision: seq, player, moves (each "
                                            "with mean, se, visits, loss, loss_se, significant), best, "
                                            "chosen, loss, mistake, summary")
    deals: list[dict[str, Any]] = Field(description="per player: the deal's expected points and se")
    luck: list[dict[str, Any]] = Field(description="per player: luck and play (empty in a player's view)")


class WhatIfView(Model):
    """What if the move at `seq` had been another: the branch played on from the state
    before it, with the same checks the validator makes. In a player's view the branch
    plays only that player's moves and stops before a draw (the stock's order is not
    theirs to see)."""

    game: str
    seq: int
    hand: int | None
    moves: list[str] = Field(description="the moves asked for, in order")
    recorded: dict[str, Any] | None = Field(description="the line the log holds at `seq`")
    recorded_violations: list[ViolationView]
    before: TableState | None = Field(description="the table before the move at `seq`")
    alternatives: list[str] = Field(description="every legal move at `seq` (empty in a "
                                    "player's view of another's move)")
    steps: list[BranchStep]
    refused: Refusal | None = Field(description="a move the rules forbid: the branch stops before it")
    next_moves: list[str] = Field(description="the legal moves at the branch's end")
    stopped: str | None = Field(description="why the branch cannot go on, if it cannot")
    unknown_cards: list[str] = Field(description="the cards a draw could take, when which is not known")
    stock_known: bool
    outcome: Outcome | None = Field(description="the branch's hand outcome, once decided")
    recorded_outcome: Outcome | None
    viewer: str | None
    links: dict[str, str]


# ---------------------------------------------------------------------------- aggregates


class PlayerRanking(Model):
    ruleset: str
    rank: int
    games: int
    games_won: int
    hands: int
    wins: int
    win_rate: float | None
    mean_points: float | None
    total_points: int | None
    violations: int


class PlayerViolations(Model):
    ruleset: str
    code: Code
    violations: int
    games: int


class PlayerView(Model):
    player: str
    rulesets: list[PlayerRanking]
    violations: list[PlayerViolations]
    links: dict[str, str]


class LeaderboardRow(PlayerRanking):
    player: str


class ComplianceRow(Model):
    code: Code
    ruleset: str
    server_build: str
    period: str | None = Field(description="day, week (its Monday) or month of the games' "
                               "start, when grouped by period")
    violations: int
    games: int


class BuildRow(Model):
    server_build: str
    ruleset: str
    games: int
    with_violations: int
    violations: int
    violation_rate: float | None


class ViolationRow(Model):
    game: str
    start_time: datetime | None
    ruleset: str
    server_build: str
    hand: int | None
    seq: int | None
    code: Code
    player: str | None
    message: str
    file: str | None
    line: int | None
    explanation: str


T = TypeVar("T")


class Page(Model, Generic[T]):
    """One page; pass `next_cursor` back as `cursor` for the next (null: the last page)."""

    items: list[T]
    next_cursor: str | None
    batch: int = Field(description="the warehouse batch the page was read at")


class IngestHealth(Model):
    """The push queue: what waits, and how the committer keeps up."""

    waiting: int = Field(description="pushes accepted and not yet being committed")
    waiting_lines: int
    waiting_bytes: int
    oldest_age: float = Field(description="seconds the oldest push still waiting has waited")
    committing: int = Field(description="pushes in the group being committed now")
    batches: int = Field(description="groups committed since the service started")
    pushes_committed: int
    last_batch: int | None
    last_commit_seconds: float | None
    last_commit_lines: int
    lines_per_second: float | None = Field(description="the recent commit rate")
    failures: int
    compactions: int = Field(description="merge passes that joined some of the groups' small parts, "
                                         "since the start (each a batch of kind `compact`)")
    last_compact_seconds: float | None = Field(description="the last such pass's seconds")


class Health(Model):
    """The service is up (no key needed): the engine's version and the warehouse's batch."""

    status: Literal["ok"]
    engine_version: str
    batch: int | None = Field(description="the committed batch read (null: no warehouse yet)")
    games_indexed: bool = Field(description="steps find their game's lines by the game index of "
                                "the batch read (false while it is built after a start or a "
                                "commit: they scan the game's partition meanwhile)")
    keys_unread_change: bool = Field(description="the keys file changed and could not be read as "
                                     "keys: the keys read before are in force (the server's log says why)")
    ingest: IngestHealth


# ---------------------------------------------------------------------------- live and alerts


class LiveGame(Model):
    """A `game` event of `GET /v1/live`: one committed game's verdict summary."""

    id: str = Field(description="`BATCH:POSITION`: the warehouse batch and the game's place among "
                    "the games it added or changed (also the event's SSE `id`)", examples=["17:0"])
    batch: int
    position: int
    game: str
    ruleset: str | None
    server_build: str | None
    status: Status
    complete: bool
    hands: int
    codes: list[Code] = Field(description="the violation codes the game has (each once)")
    players: list[str]
    end_time: datetime | None


class LiveDropped(Model):
    """A `dropped` event of `GET /v1/live`: the client read too slowly, and this many
    games, from `first` to `last` (ids), were dropped from its queue."""

    dropped: int
    first: str | None
    last: str | None


class AlertView(Model):
    """One rule's alert for one server build (`build` null: the service's own)."""

    rule: str
    kind: Literal["violation_rate", "rules_changed", "ingest_lag", "quarantine_rate"]
    build: str | None
    state: Literal["firing", "clear"]
    since: datetime = Field(description="when it went into this state")
    value: float | None = Field(description="the last measure, in `unit` (null: none yet)")
    threshold: float
    unit: Literal["percent", "seconds"]
    observed: int = Field(description="games, lines or pushes the measure is taken over")
    window: str
    message: str


class Deliveries(Model):
    """The webhook's deliveries since the start."""

    pending: int
    delivered: int
    failed: int
    retries: int


class AlertsView(Model):
    """The alerts (firing first) and how their deliveries went."""

    configured: bool = Field(description="whether the service was started with `--alerts FILE`")
    source: str | None
    evaluated_batch: int | None = Field(description="the last batch the alerts have taken in")
    alerts: list[AlertView]
    deliveries: Deliveries | None = Field(description="null without a webhook")
class AuditTest(Model):
    """One test of the deal audit (docs/fairplay.md): what it is about, on how much, its
    effect size with a 95 % interval, p and its Benjamini–Hochberg q."""

    family: str = Field(examples=["hand.special"])
    scope: dict[str, str | int] = Field(description="ruleset, build, decks, and the seat, "
                                        "position, player, month or card the test is about")
    concerns: str = Field(description="the scope in words")
    n: int = Field(description="hands, deals or stock places the test rests on")
    status: str = Field(description="`tested`, or `not enough games` (not made)")
    effect_name: str
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    statistic: float | None
    df: int | None
    p_value: float | None
    q_value: float | None
    finding: bool
    observed: float | None
    expected: float | None
    detail: str


class DealAudit(Model):
    """The deal audit of the warehouse's deals: every test, and those that are findings
    at `level` after Benjamini–Hochberg over the `tests_made`."""

    level: float
    correction: str
    deals: int
    hands: int
    tests_made: int
    not_enough_games: int
    findings: list[AuditTest]
    tests: list[AuditTest]


class PairStep(Model):
    """A decision where one of the pair did the other a favour (no card is shown)."""

    signal: str = Field(description="the signal it shows (twos_spared, sevens_spared, jacks_suited, soft_play)")
    game: str
    hand: int
    seq: int
    player: str = Field(description="who decided")
    partner: str = Field(description="the other of the pair, whom the decision favoured")
    what: str
    replay: str = Field(description="the dashboard's replay deep link (relative)")


class PairSignal(Model):
    decisions: int = Field(description="decisions of this signal between the two (co_seating: games together)")
    observed: float
    expected: float = Field(description="under the player's own behaviour towards the others (co_seating: "
                                        "from each one's activity)")
    z: float | None = Field(description="signed so that positive is a favour; null: too few decisions")


class PairCase(Model):
    players: list[str]
    score: float = Field(description="the Stouffer sum of the signals' z (co-seating clipped to ±2)")
    p_value: float = Field(description="family-wise, from the permutation null")
    case: bool
    signals: dict[str, float] = Field(description="each signal's z, where the pair has enough decisions")
    drivers: list[str] = Field(description="the signals with z >= 1, largest first")
    detail: dict[str, PairSignal]
    steps: list[PairStep] = []


class PairAudit(Model):
    """The pair audit (docs/fairplay.md): every pair scored and the case queue at `level`."""

    level: float
    permutations: int
    games: int
    gifts: int
    decisions: dict[str, int] = Field(description="decisions read per behaviour signal")
    pairs_scored: int
    signals: list[str]
    cases: list[PairCase]
    pairs: list[PairCase]


# ---------------------------------------------------------------------------- the support desk's cases


class CaseNote(Model):
    at: datetime
    by: str = Field(description="who wrote it: the API key's name, or the desk agent's")
    text: str


class CaseRevision(Model):
    """One write to a case: who made it, when, and the decision as it then stood."""

    revision: int
    updated_by: str
    updated_at: datetime
    decision: str | None
    tags: list[str]
    notes: int = Field(description="how many notes the case held after it")


class CaseView(Model):
    """A case as its latest revision holds it (`revision` counts its writes)."""

    case: str = Field(examples=["case-3f9a0c2e71d8"])
    status: Literal["open", "decided"]
    game: str
    hand: int | None
    seq: int | None
    player: str | None = Field(description="whose complaint it is: the bundle's report is their view")
    tags: list[str]
    notes: list[CaseNote]
    decision: str | None
    decided_by: str | None
    decided_at: datetime | None
    opened_by: str
    opened_at: datetime
    updated_by: str
    updated_at: datetime
    revision: int
    batch: int = Field(description="the warehouse batch that committed this revision")
    history: list[CaseRevision] | None = Field(
        default=None, description="every revision, the first first (`GET /v1/cases/{id}` only)")
    links: dict[str, str]


#: a case's tag, as `ingest.cases.TAG` takes it (stored in lower case)
Tag = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,40}$")]


class CaseOpen(Model):
    """A case to open on a game's line: `seq` names the line (its hand is found from it),
    or `hand` alone (its first flagged line); neither: the game's first violation. `player`
    (whose complaint it is) defaults to the player that line's violation names, else the
    line's mover."""

    model_config = ConfigDict(json_schema_extra={"not": {"required": ["seq", "hand"]}})

    game: str = Field(min_length=1, max_length=256)
    seq: int | None = Field(default=None, ge=0, le=2**53)
    hand: int | None = Field(default=None, ge=0, le=2**31, description="without `seq` only")
    player: str | None = Field(default=None, min_length=1, max_length=256)
    tags: list[Tag] = Field(default_factory=list, max_length=16)
    note: str | None = Field(default=None, max_length=4000)

    @model_validator(mode="after")
    def _one_place(self) -> CaseOpen:
        if self.seq is not None and self.hand is not None:
            raise ValueError("name the line by `seq` (its hand is found from it) or `hand`, not both")
        return self


class CaseChange(Model):
    """A change to a case: a note added, its tags replaced, a decision taken (who took it
    is the caller's key). At least one of them."""

    model_config = ConfigDict(json_schema_extra={"anyOf": [
        {"required": ["decision"]}, {"required": ["note"]}, {"required": ["tags"]}]})

    decision: str = Field(default=None, min_length=1, max_length=1000,  # type: ignore[assignment]
                          pattern=r"\S")
    note: str = Field(default=None, min_length=1, max_length=4000, pattern=r"\S")  # type: ignore[assignment]
    tags: list[Tag] = Field(default=None, max_length=16)  # type: ignore[arg-type]

    @model_validator(mode="after")
    def _something(self) -> CaseChange:
        if self.decision is None and self.note is None and self.tags is None:
            raise ValueError("a change adds a `note`, sets the `tags` or takes a `decision`; none was given")
        return self
