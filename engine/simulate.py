"""The simulator: seeded bots play whole games through the engine and write haftkhabis/1 logs.

The simulator owns the physical deck (shuffle, deal, starter, stock, reshuffles) and asks
the engine (the compiled core, `engine._core.GameRun`) only what the rules allow:
`GameRun.options()` is the legality view the bots choose from, `GameRun.snapshot()` the
state they read, and every event line is fed to the same run as the bytes written. A line
must carry exactly the violations the simulator meant it to (none for a bot's own move) —
a bot move the engine flags is a `SimulationError`, never a quiet log entry.

With a fault rate, a game may carry ONE injected fault (a realistic server or client bug);
the manifest says where it is and which violation codes the validator must report there.
The engine is still asked to confirm the fault's codes, so a manifest never lies about
what a replay of the log finds.
"""

from __future__ import annotations

import gzip
import io
import random
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, BinaryIO

import orjson

from engine import _core
from engine.cards import ONE_DECK, SUITS, pack
from engine.events import (
    FORMAT,
    Abort,
    Announce,
    Deal,
    Draw,
    End,
    Event,
    Header,
    Pass,
    Penalty,
    Play,
    Reshuffle,
    Result,
    encode,
)
from engine.rulesets import PERSIAN_OPTIONS, RULESETS, EightRule, Mode, Ruleset
from engine.violations import FOULS, Code

#: server builds seen in the header's meta: (name, share of games, fault-rate factor)
BUILDS: tuple[tuple[str, float, float], ...] = (
    ("hk-server/2.3.1", 0.40, 1.0),
    ("hk-server/2.4.0", 0.45, 0.4),
    ("hk-server/2.4.1-rc", 0.15, 3.0),
)
PLATFORMS = ("web", "android", "ios", "desktop")
NAMES = (
    "sara", "omid", "lale", "reza", "neda", "babak", "shirin", "kian", "mina", "arash",
    "parisa", "dariush", "yasmin", "farhad", "leila", "navid", "roya", "behnam", "azadeh",
    "kaveh", "nasrin", "sina", "golnar", "pouya", "ayla", "emre", "elif", "mehmet", "zeynep",
    "can", "deniz", "burak", "selin", "kerem", "ece", "murat", "hooman", "taraneh", "ali",
    "maryam",
)
#: cards dealt to each player
HAND_SIZE = 7
#: a hand longer than this many lines (more at big tables) is cut off with an `abort`
HAND_EVENT_LIMIT = 600
MATCH_HAND_LIMIT = 60
#: share of lines a log shipper sends twice (identical: the validator drops the repeat)
RETRY_RATE = 0.002
#: chance per move that a persian player says "last card" for no reason (harmless)
IDLE_CALL_RATE = 0.005

# the faults, by ruleset (see `_FaultPlan`); every kind names what the validator must say
COMMON_FAULTS = (
    "illegal_card", "card_not_held", "wrong_seven_total", "jack_without_suit",
    "wrong_winners", "dropped_line", "duplicate_seq", "malformed_json", "spelling_10",
)
GIFT_FAULTS = ("missing_gift", "self_target_two", "draw_holding_legal", "play_after_end")
FAULT_KINDS: Mapping[str, tuple[str, ...]] = {
    "bazito": COMMON_FAULTS + GIFT_FAULTS + ("wrong_scores", "forbidden_starter"),
    "persian": COMMON_FAULTS + GIFT_FAULTS + (
        "wrong_scores", "missed_call", "unjustified_penalty", "pass_drawn_match",
        "wild_jack_with_match",
    ),
    "pis-yedili": (
        *COMMON_FAULTS, "wrong_scores", "jack_on_jack", "same_suit_jack", "non_club_opening",
        "pass_before_draw", "play_after_blocked",
    ),
}
#: faults that need points play (claimed scores)
POINTS_ONLY_FAULTS = frozenset({"wrong_scores"})
#: faults with few opportunities in a game: taken more eagerly
RARE_FAULTS = frozenset({
    "missing_gift", "self_target_two", "wrong_seven_total", "jack_on_jack", "jack_without_suit",
    "same_suit_jack", "play_after_end", "play_after_blocked", "pass_drawn_match",
})
#: faults that go in at a deal or a hand's opening move
DEAL_FAULTS = frozenset({"forbidden_starter", "non_club_opening"})


SHUFFLE_BIASES = ("extra_special", "clock_seed", "stuck_card")


@dataclass(frozen=True, slots=True)
class ShuffleBias:
    """A rigged shuffle, planted so that the deal audit's power can be measured on known
    truth (docs/fairplay.md). `kind`:

    - `extra_special`: in `rate` of the deals the player in header seat `seat` gets one
      extra special card (a rank whose effect is not plain): a plain card of their hand is
      swapped with a special card of the rest of the deck;
    - `clock_seed`: in `rate` of the deals the deck is shuffled by a generator seeded from
      one of only `seeds` values (a clock's seconds), so decks repeat;
    - `stuck_card`: in `rate` of the deals `card` (its first copy) sticks at the bottom of
      the deck, so it is never dealt and sits last in the stock.
    """

    kind: str
    rate: float = 1.0
    seat: int = 0
    seeds: int = 86_400
    card: str = "AS"

    def __post_init__(self) -> None:
        if self.kind not in SHUFFLE_BIASES:
            raise ValueError(f"unknown shuffle bias {self.kind!r} (known: {', '.join(SHUFFLE_BIASES)})")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"the bias rate must be between 0 and 1, not {self.rate}")
        if self.seeds < 1 or self.seat < 0:
            raise ValueError("seeds must be 1 or more and seat 0 or more")
        if self.card not in ONE_DECK:
            raise ValueError(f"unknown card {self.card!r} (a rank then a suit, as 'AS')")


def deal_hands(rng: random.Random, rules: Ruleset, players: tuple[str, ...] | list[str], decks: int,
               bias: ShuffleBias | None = None) -> tuple[dict[str, list[str]], list[str]]:
    """Shuffle the pack and deal HAND_SIZE cards to each player in seat order: the hands
    and the rest of the deck (its top LAST). Fair unless `bias` plants a rigged shuffle."""
    deck = list(pack(decks).elements())
    if bias is not None and bias.kind == "clock_seed" and rng.random() < bias.rate:
        random.Random(rng.randrange(bias.seeds)).shuffle(deck)
    else:
        rng.shuffle(deck)  # deck[-1] is the top
    if bias is not None and bias.kind == "stuck_card" and rng.random() < bias.rate:
        deck.remove(bias.card)
        deck.insert(0, bias.card)
    hands = {p: [deck.pop() for _ in range(HAND_SIZE)] for p in players}
    if bias is not None and bias.kind == "extra_special" and bias.seat < len(players) \
            and rng.random() < bias.rate:
        special = {rank for rank, effect in rules.effects.items() if effect != "plain"}
        hand = hands[players[bias.seat]]
        plain = [i for i, c in enumerate(hand) if c[0] not in special]
        spare = [i for i, c in enumerate(deck) if c[0] in special]
        if plain and spare:
            i, j = rng.choice(plain), rng.choice(spare)
            hand[i], deck[j] = deck[j], hand[i]
    return hands, deck


def turn_starter(deck: list[str], forbidden: frozenset[str]) -> str:
    """Turn the starter up from the deck's top (its last card): a card of a forbidden rank
    is put back where it was and the next one turned."""
    at = len(deck) - 1
    while deck[at][0] in forbidden:
        at -= 1
    return deck.pop(at)


def simulate_deals(ruleset: str, deals: int, *, players: int = 4, decks: int = 1, seed: int = 0,
                   bias: ShuffleBias | None = None, hands_per_game: int = 10, stock_rate: float = 1.0
                   ) -> Iterator[dict[str, Any]]:
    """Deals only, no play: what `deal` lines tables of `players` seats would log (the
    dealer passing clockwise, a new game every `hands_per_game` hands), dealt by the same
    code as the simulated games' deals. Each is a dict: game, hand, seats, dealer, hands,
    starter, stock (top first, or None in 1 - `stock_rate` of the deals). For the deal
    audit's bench and tests, where playing the hands out would only cost time."""
    rng = random.Random(seed)
    rules = RULESETS[ruleset]
    seats = tuple(f"p{i}" for i in range(players))
    for index in range(deals):
        hand = index % hands_per_game
        hands, deck = deal_hands(rng, rules, seats, decks, bias)
        starter = turn_starter(deck, rules.forbidden_starter_ranks) if rules.has_starter else None
        logged = list(reversed(deck)) if rng.random() < stock_rate else None
        yield {"game": f"sim-{seed}-{index // hands_per_game:06d}", "hand": hand + 1, "seats": seats,
               "dealer": seats[(hand + players - 1) % players], "hands": hands, "starter": starter,
               "stock": logged}


class SimulationError(RuntimeError):
    """The engine flagged a move the simulator meant to be legal (or disagreed with an
    injected fault's codes): the simulator or the engine is wrong."""


@dataclass(frozen=True, slots=True)
class SimConfig:
    """What to simulate. `None` fields are drawn at random per game."""

    ruleset: str
    games: int = 100
    seed: int = 0
    players: tuple[int, int] | None = None  # an inclusive range of player counts
    options: Mapping[str, bool] | None = None  # persian sub-rule overrides
    mode: str | None = None  # persian: points or elimination
    match: Mapping[str, int] | None = None  # {"hands": N} or {"target": N}
    fault_rate: float = 0.0
    stock_in_deal: float = 0.5
    shuffle: ShuffleBias | None = None  # a rigged shuffle planted on purpose (None: fair)
    build: str | None = None  # every game's server_build (None: drawn from BUILDS)
    names: tuple[str, ...] | None = None  # the players drawn for each table (None: NAMES)
    # a colluding pair (planted truth for the pair audit): at each chance, with probability
    # `collusion`, each spares the other from its 2s' gifts when someone else could take
    # it, does not put a 7 total on the other when it could do something else (draw the
    # total itself, or play another card), holds back a 7 or a skipping card when the
    # other is next and on one card, and declares with a J a suit the other holds
    colluders: tuple[str, str] | None = None
    collusion: float = 0.0
    # the pair seek each other's tables (planted truth for the co-seating signal): with
    # probability `seeking`, a table drawn with one of `colluders` and not the other seats
    # the other too, in the seat of a player drawn at random among the rest
    seeking: float = 0.0

    def __post_init__(self) -> None:
        rules = RULESETS.get(self.ruleset)
        if rules is None:
            raise ValueError(f"unknown ruleset {self.ruleset!r} (known: {', '.join(RULESETS)})")
        if self.games < 0:
            raise ValueError(f"games must be 0 or more, not {self.games}")
        if self.players is not None:
            low, high = self.players
            if not rules.min_players <= low <= high <= rules.max_players:
                span = (f"{rules.min_players}" if rules.min_players == rules.max_players
                        else f"{rules.min_players}-{rules.max_players}")
                asked = f"{low}" if low == high else f"{low}-{high}"
                raise ValueError(f"{rules.name} is played by {span} players, not {asked}")
        if self.options is not None:
            unknown = sorted(set(self.options) - set(rules.options))
            if unknown:
                known = ", ".join(rules.options) or "none"
                raise ValueError(f"unknown option(s) {', '.join(unknown)} for {rules.name} (known: {known})")
        if self.mode is not None:
            try:
                mode = Mode(self.mode)
            except ValueError:
                raise ValueError(f"unknown mode {self.mode!r} (points or elimination)") from None
            if mode not in rules.modes:
                raise ValueError(f"{rules.name} has no {mode.value} mode")
        if self.match is not None:
            if len(self.match) != 1 or next(iter(self.match)) not in ("hands", "target") \
                    or next(iter(self.match.values())) < 1:
                raise ValueError(f"match must be hands=N or target=N with N >= 1, not {dict(self.match)}")
            if "target" in self.match and self.mode == Mode.ELIMINATION.value:
                raise ValueError("a points target makes no sense in elimination play")
        if self.names is not None and len(set(self.names)) < (self.players or (rules.max_players,))[-1]:
            raise ValueError(f"{len(set(self.names))} names cannot seat {(self.players or (0, rules.max_players))[1]} players")
        for name, rate in (("fault rate", self.fault_rate), ("stock-in-deal rate", self.stock_in_deal),
                           ("collusion", self.collusion), ("seeking", self.seeking)):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"the {name} must be between 0 and 1, not {rate}")
        if self.seeking and self.colluders is None:
            raise ValueError("seeking needs the pair who seek each other (colluders)")


def seat_table(rng: random.Random, config: SimConfig, pool: Sequence[str], count: int) -> list[str]:
    """The players of a table of `count`, in seat order, drawn from `pool`; with
    `config.seeking`, a table drawn with exactly one of `config.colluders` seats the other
    too (with that probability), in a seat drawn at random among the rest. Draws nothing
    more from `rng` when `seeking` is 0, so seeded pools stay as they were."""
    players = rng.sample(list(pool), count)
    pair = config.colluders
    if not config.seeking or pair is None or pair[0] not in pool or pair[1] not in pool:
        return players
    seated = [p for p in pair if p in players]
    if len(seated) != 1 or rng.random() >= config.seeking:
        return players
    partner = pair[1] if seated[0] == pair[0] else pair[0]
    rest = [i for i, p in enumerate(players) if p != seated[0]]
    players[rng.choice(rest)] = partner
    return players


def simulate_seatings(config: SimConfig) -> Iterator[list[str]]:
    """The tables of `config.games` games, seated as `simulate` seats them (`seat_table`,
    table sizes drawn from `config.players` or the ruleset's), without playing them: what
    the co-seating signal reads, cheap enough for its power at thousands of games."""
    rules = RULESETS[config.ruleset]
    low, high = config.players or (rules.min_players, rules.max_players)
    rng = random.Random(config.seed)
    pool = config.names or NAMES
    for _ in range(config.games):
        yield seat_table(rng, config, pool, rng.randint(low, high))


@dataclass(slots=True)
class InjectedFault:
    """One fault put into a log on purpose: where, and what the validator must report.

    `record` is "violation" (a game violation at `seq`) or "error" (a line that belongs to
    no game, reported as an error record at `file_line`; `seq` is then the seq of the line
    it garbles)."""

    game: str
    seq: int | None
    kind: str
    expected_codes: list[str]
    file_line: int | None = None
    record: str = "violation"

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game, "seq": self.seq, "kind": self.kind,
            "expected_codes": self.expected_codes, "file_line": self.file_line,
            "record": self.record,
        }


@dataclass(slots=True)
class SimulatedGame:
    """One game's log lines (bytes, without line endings) and what it holds."""

    game: str
    lines: list[bytes]
    faults: list[InjectedFault]
    aborted: str | None
    hands: int
    blocked_hands: int


@dataclass(slots=True)
class SimSummary:
    games: int = 0
    lines: int = 0
    hands: int = 0
    blocked_hands: int = 0
    aborted: int = 0
    abort_reasons: dict[str, int] = field(default_factory=dict)
    faults: list[InjectedFault] = field(default_factory=list)

    def add(self, game: SimulatedGame) -> None:
        self.games += 1
        self.lines += len(game.lines)
        self.hands += game.hands
        self.blocked_hands += game.blocked_hands
        if game.aborted is not None:
            self.aborted += 1
            self.abort_reasons[game.aborted] = self.abort_reasons.get(game.aborted, 0) + 1
        self.faults.extend(game.faults)


def simulate(config: SimConfig) -> Iterator[SimulatedGame]:
    """The games of `config`, one after another; `file_line`s count from the first line
    of the first game, as they are written."""
    rng = random.Random(config.seed)
    start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randrange(330 * 86400))
    clock_ms = int(start.timestamp() * 1000)
    line_offset = 0
    for index in range(1, config.games + 1):
        game_rng = random.Random(rng.getrandbits(64))
        clock_ms += rng.randrange(20_000, 900_000)
        sim = _GameSim(config, index, game_rng, clock_ms, line_offset)
        game = sim.run()
        line_offset += len(game.lines)
        yield game


def open_output(path: str | None) -> BinaryIO:
    """A binary stream for the log: gzip when the name ends with .gz (mtime 0, so the
    bytes depend on the seed only)."""
    if path is None or path == "-":
        return sys.stdout.buffer
    raw = open(path, "wb")  # noqa: SIM115 - closed by the caller via the returned stream
    if path.endswith(".gz"):
        return _GzipOut(raw)  # type: ignore[return-value]
    return raw


class _GzipOut(gzip.GzipFile):
    """A gzip stream (no name, mtime 0) that also closes the file under it: GzipFile
    leaves a given `fileobj` open."""

    def __init__(self, under: BinaryIO) -> None:
        super().__init__(filename="", mode="wb", fileobj=under, mtime=0)
        self.under = under

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.under.close()


def write_simulation(
    config: SimConfig,
    out: BinaryIO,
    *,
    on_game: Callable[[SimulatedGame], None] | None = None,
) -> SimSummary:
    """Simulate and write every game's lines to `out`; the summary holds the faults."""
    summary = SimSummary()
    for game in simulate(config):
        out.write(b"".join(line + b"\n" for line in game.lines))
        summary.add(game)
        if on_game is not None:
            on_game(game)
    out.flush()
    return summary


def manifest_bytes(faults: list[InjectedFault]) -> bytes:
    return orjson.dumps([f.to_json() for f in faults], option=orjson.OPT_INDENT_2) + b"\n"


def simulate_bytes(config: SimConfig) -> bytes:
    """The whole log as bytes (tests, small runs)."""
    buffer = io.BytesIO()
    write_simulation(config, buffer)
    return buffer.getvalue()


# --------------------------------------------------------------------------- internals


#: a faulty move ready to be made, or None when this is no opportunity for it
_Move = Callable[[], None] | None


@dataclass(frozen=True, slots=True)
class _Options:
    """What the player to move may do now: the core's legality view (`GameRun.options()`)."""

    player: str
    phase: str  # opening · turn · drawn · seven · follow · follow_drawn · deflect · settlement
    playable: tuple[str, ...]  # cards held that may be played now, sorted
    draw: int | None  # how many cards a draw must take now; None: no draw allowed
    may_pass: bool
    obliged: bool  # drawing or passing now is `must_play`
    gift: bool  # the move owed is a 2's gift draw

    @classmethod
    def of(cls, view: Mapping[str, Any]) -> _Options:
        return cls(view["player"], view["phase"], tuple(sorted(view["play"])), view["draw"],
                   view["pass"], view["obliged"], view["gift"])


class _HandView:
    """The running hand as the core's `GameRun.snapshot()` shows it: read afresh after
    every line fed (like a live hand object), or `frozen` at one moment (the core frees a
    hand's cards once its `end` is fed)."""

    __slots__ = ("_frozen", "_sim")

    def __init__(self, sim: _GameSim, frozen: dict[str, Any] | None = None) -> None:
        self._sim = sim
        self._frozen = frozen

    @property
    def state(self) -> dict[str, Any]:
        if self._frozen is not None:
            return self._frozen
        state = self._sim.snapshot()
        assert state is not None, "no hand dealt"
        return state

    def frozen(self) -> _HandView:
        return _HandView(self._sim, self.state)

    @property
    def number(self) -> int:
        return int(self.state["hand"])

    @property
    def phase(self) -> str:
        return str(self.state["phase"])

    @property
    def hands(self) -> dict[str, list[str]]:
        return self.state["hands"]

    @property
    def pile(self) -> list[str]:
        return self.state["pile"]

    @property
    def top(self) -> str | None:
        return self.state["pile_top"]

    @property
    def current_suit(self) -> str | None:
        return self.state["current_suit"]

    @property
    def mover(self) -> str:
        return self.state["mover"] or ""

    @property
    def gift_target(self) -> str | None:
        return self.state["gift_target"]

    @property
    def pending_total(self) -> int:
        return int(self.state["pending_total"])

    @property
    def active(self) -> list[str]:
        return self.state["active"]

    @property
    def finished(self) -> list[str]:
        return self.state["finished"]

    @property
    def outcome(self) -> dict[str, Any] | None:
        return self.state["outcome"]

    @property
    def decided(self) -> bool:
        return self.state["outcome"] is not None


@dataclass(slots=True)
class _Action:
    kind: str  # play · draw · pass
    card: str | None = None
    suit: str | None = None
    target: str | None = None


@dataclass(slots=True)
class _FaultPlan:
    """The one fault a game carries: its kind, the earliest line it may go in at, and the
    chance it goes in at each opportunity after that."""

    kind: str
    after_line: int
    chance: float
    done: bool = False


@dataclass(slots=True)
class _MissedCall:
    player: str
    gift_target: str | None  # the caller's own 2 made this player owe a gift draw


class _GameSim:
    """One game: header, hands, result; bots at every seat."""

    def __init__(
        self, config: SimConfig, index: int, rng: random.Random, clock_ms: int, line_offset: int
    ) -> None:
        self.config = config
        self.rng = rng
        self.clock_ms = clock_ms
        self.line_offset = line_offset
        self.rules: Ruleset = RULESETS[config.ruleset]
        self.table_name = f"t-{rng.randrange(1, 41):02d}"
        tag = {"bazito": "bz", "persian": "fa", "pis-yedili": "py"}.get(config.ruleset, "x")
        self.game = f"{self.table_name}-{tag}{config.seed}-{index:05d}"
        self.lines: list[bytes] = []
        self.seq = 0
        self.faults: list[InjectedFault] = []
        self.stock: list[str] = []  # the physical stock, top LAST
        self.hands_played = 0
        self.blocked = 0
        self.aborted: str | None = None
        self.plan: _FaultPlan | None = None
        self.missed: _MissedCall | None = None
        self.pending_penalty: tuple[str, str] | None = None  # (player, reason) to charge
        self.late_call: tuple[str, str] | None = None  # (caller, their 2's gift target)
        self.eager_reshuffle = False  # this server turns the pile as soon as the stock is empty
        self.extensions = False  # this server adds x_ fields to turn events
        self._day = -1
        self._day_text = ""
        self.replay: _core.GameRun  # set by _header
        self.settings: dict[str, Any] = {}  # the header's settings as the core read them
        self._state: dict[str, Any] | None = None  # the last snapshot read
        self._state_stale = True  # a line was fed since
        self.bots: dict[str, str] = {}  # player → "greedy" or "random"
        self.build_factor = 1.0  # how buggy the header's server build is

    # ----------------------------------------------------------------- the engine

    def snapshot(self) -> dict[str, Any] | None:
        """The core's state after the last line fed (read once per line)."""
        if self._state_stale:
            self._state = self.replay.snapshot()
            self._state_stale = False
        return self._state

    def _hand(self) -> _HandView:
        return _HandView(self)

    def _options(self) -> _Options | None:
        view = self.replay.options()
        return None if view is None else _Options.of(view)

    def _feed(self, raw: bytes) -> list[dict[str, Any]]:
        """Feed one line, as written, to the game's run: the violations found on it."""
        self._state_stale = True
        found = self.replay.feed(raw, self.line_offset + len(self.lines) + 1)
        return [dict(v) for v in found]

    # ----------------------------------------------------------------- the game

    def run(self) -> SimulatedGame:
        rng = self.rng
        players = self._header()
        self._plan_fault()
        open_ended = self.settings["match_hands"] is None and self.settings["match_target"] is None
        stop_after = rng.randint(1, 5) if open_ended else MATCH_HAND_LIMIT
        dealer_seat = rng.randrange(len(players))
        number = 0
        while self.aborted is None:
            number += 1
            if number > MATCH_HAND_LIMIT:
                self._abort(f"the match ran past {MATCH_HAND_LIMIT} hands", "long match")
                break
            self._deal(number, players[dealer_seat])
            dealer_seat = (dealer_seat + 1) % len(players)
            if not self._play_hand():
                break
            self._end_hand(last=number >= stop_after or self._match_ends_with_this_hand())
            self.hands_played += 1
            if self.replay.match_over or number >= stop_after:
                self._result()
                break
        return SimulatedGame(self.game, self.lines, self.faults, self.aborted,
                             self.hands_played, self.blocked)

    def _match_ends_with_this_hand(self) -> bool:
        """Whether the match is over once the decided hand has its `end`."""
        settings, hand = self.settings, self._hand()
        outcome = hand.outcome
        assert outcome is not None
        if settings["match_hands"] is not None and hand.number >= settings["match_hands"]:
            return True
        if settings["match_target"] is not None:
            scores = outcome["scores"] or {}
            return any(total + scores.get(p, 0) >= settings["match_target"]
                       for p, total in self.replay.totals().items())
        return False

    def _header(self) -> list[str]:
        rng, config, rules = self.rng, self.config, self.rules
        low, high = config.players or (rules.min_players, rules.max_players)
        count = rng.randint(low, high)
        pool = config.names or NAMES
        players = seat_table(rng, config, pool, count)
        if config.names is None and rng.random() < 0.2:
            players = [f"{p}{rng.randrange(10, 100)}" for p in players]
        options: dict[str, bool] | None = None
        mode: str | None = config.mode
        decks: int | None = None
        if rules.options:
            if config.options is not None:
                options = dict(config.options)
            else:
                chosen = {name: rng.random() < 0.5 for name in rules.options}
                style = rng.random()
                if style < 0.4:  # only what differs from the defaults
                    options = {k: v for k, v in chosen.items() if v != PERSIAN_OPTIONS[k]}
                elif style < 0.8:
                    options = chosen
                else:
                    options = {k: v for k, v in chosen.items()
                               if v != PERSIAN_OPTIONS[k] or rng.random() < 0.5}
                if not options and rng.random() < 0.5:
                    options = None
        if mode is None and len(rules.modes) > 1:
            mode = Mode.ELIMINATION.value if rng.random() < 0.35 else Mode.POINTS.value
        if mode == Mode.POINTS.value and config.mode is None and rng.random() < 0.5:
            mode = None  # points is the default: often not written
        if rules.two_decks_above is not None:
            roll = rng.random()
            if roll < 0.1:
                decks = rules.decks_for(count)
            elif roll < 0.15 and count <= rules.two_decks_above:
                decks = 2
        match: dict[str, int] | None = dict(config.match) if config.match is not None else None
        if config.match is None:
            match = self._random_match(mode)
        build = _pick_build(rng)
        if config.build is not None:
            build = (config.build, 1.0, 1.0)
        meta = {"table": self.table_name, "platform": rng.choice(PLATFORMS), "server_build": build[0]}
        self.build_factor = build[2]
        self.eager_reshuffle = rng.random() < 0.3
        self.extensions = build[0].endswith("-rc") and rng.random() < 0.5
        header = Header(
            self.game, 0, self._ts(0), FORMAT, rules.name, tuple(players),
            options=options, mode=mode, decks=decks, match=match, meta=meta,
        )
        # collecting, not strict: a faulty line must carry exactly its fault's codes, and
        # `_emit` checks every line's violations against what it meant (none for a bot's move)
        self.replay = _core.GameRun(self.game)
        line = orjson.dumps(encode(header))
        found = self._feed(line)
        if found or self.replay.invalid:
            raise SimulationError(f"{self.game}: the simulator wrote a bad header: {found}")
        self.settings = self.replay.settings()
        # the profile with the header's options
        self.rules = RULESETS[self.settings["ruleset"]].with_options(self.settings["options"])
        self.lines.append(line)
        self.seq = 1
        self.bots = {p: ("greedy" if rng.random() < 0.5 else "random") for p in players}
        return players

    def _random_match(self, mode: str | None) -> dict[str, int] | None:
        rng, rules = self.rng, self.rules
        roll = rng.random()
        elimination = mode == Mode.ELIMINATION.value
        if rules.name == "bazito":
            return None if roll < 0.8 else {"hands": rng.randint(2, 3)}
        if rules.name == "pis-yedili":
            if roll < 0.7:
                return None
            return {"hands": rng.randint(1, 3)} if roll < 0.85 else {"target": rng.randint(60, 200)}
        if elimination:
            return None if roll < 0.6 else {"hands": rng.randint(1, 3)}
        if roll < 0.5:
            return None
        return {"hands": rng.randint(1, 4)} if roll < 0.75 else {"target": rng.randint(80, 250)}

    def _plan_fault(self) -> None:
        config, rng = self.config, self.rng
        if config.fault_rate <= 0 or rng.random() >= min(1.0, config.fault_rate * self.build_factor):
            return
        kinds = [k for k in FAULT_KINDS[self.rules.name]
                 if not (k in POINTS_ONLY_FAULTS and self.replay.elimination)]
        kind = rng.choice(kinds)
        if kind in DEAL_FAULTS:  # a deal or an opening: most games have few of them
            self.plan = _FaultPlan(kind, 0, 1.0 if rng.random() < 0.7 else 0.5)
            return
        after = 0 if rng.random() < 0.3 else rng.randrange(1, 30)
        chance = rng.choice((0.6, 0.9) if kind in RARE_FAULTS else (0.2, 0.35, 0.6))
        self.plan = _FaultPlan(kind, after, chance)

    def _armed(self, kind: str) -> bool:
        """Whether the planned fault is `kind`, still to go in, and may go in by now."""
        plan = self.plan
        return plan is not None and not plan.done and plan.kind == kind \
            and len(self.lines) >= plan.after_line

    def _roll(self) -> bool:
        """At an opportunity for the armed fault: does it go in here?"""
        assert self.plan is not None
        return self.rng.random() < self.plan.chance

    def _due(self, kind: str) -> bool:
        return self._armed(kind) and self._roll()

    def _due_at_end(self, kind: str, last: bool) -> bool:
        """An end-of-hand fault goes in at the last hand at the latest."""
        plan = self.plan
        if plan is None or plan.done or plan.kind != kind:
            return False
        return last or (len(self.lines) >= plan.after_line and self._roll())

    # ----------------------------------------------------------------- deal

    def _deal(self, number: int, dealer: str) -> None:
        rng, rules = self.rng, self.rules
        players = self.replay.players
        hands, deck = deal_hands(rng, rules, players, self.settings["decks"], self.config.shuffle)
        starter: str | None = None
        fault: tuple[str, list[str]] | None = None
        expect: frozenset[Code] = frozenset()
        if rules.has_starter:
            forbidden = rules.forbidden_starter_ranks
            if forbidden and self._due("forbidden_starter"):
                picks = [i for i, c in enumerate(deck) if c[0] in forbidden]
                starter = deck.pop(rng.choice(picks))
                fault = ("forbidden_starter", [Code.BAD_DEAL.value])
                expect = frozenset({Code.BAD_DEAL})
            else:
                starter = turn_starter(deck, forbidden)
        self.stock = deck
        stock = tuple(reversed(deck)) if rng.random() < self.config.stock_in_deal else None
        event = Deal(
            self.game, self.seq, self._ts(self._between_hands() if number > 1 else rng.randrange(2000, 20000)),
            number, dealer, {p: tuple(cs) for p, cs in hands.items()}, starter, stock,
        )
        self._emit(event, expect=expect, fault=fault)

    # ----------------------------------------------------------------- a hand

    def _play_hand(self) -> bool:
        """Play the dealt hand until it is over; False when the game was aborted."""
        run = self.replay
        # elimination plays on until one player is left: far longer hands at a big table
        limit = max(HAND_EVENT_LIMIT, (100 if run.elimination else 60) * len(run.players))
        first_line = len(self.lines)
        hand = self._hand()  # live: it reads the state after the last line fed
        while True:
            if len(self.lines) - first_line > limit:
                self._abort(f"hand {hand.number} ran past {limit} lines", "long hand")
                return False
            if self.pending_penalty is not None:
                self._charge_penalty()
                continue
            if self.rules.last_card_call and self.missed is None and self.rng.random() < IDLE_CALL_RATE:
                self._announce(self.rng.choice(run.players))
            if self.eager_reshuffle and not self.stock and self.rules.reshuffles \
                    and len(hand.pile) > 1 and hand.phase != "over":
                self._reshuffle()  # this server turns the pile as soon as the stock runs dry
                continue
            opts = self._options()
            if self.late_call is not None and not (opts is not None and opts.gift
                                                   and opts.player == self.late_call[1]):
                self._announce(self.late_call[0])  # the gift is not owed any more: call now
                self.late_call = None
                continue
            if opts is None:
                if hand.outcome is not None and hand.outcome["reason"] == "blocked":
                    self.blocked += 1
                self._maybe_play_after_end(before_end=True)
                return True
            if self._inject_turn_fault(hand, opts):
                continue
            action = self._choose(hand, opts)
            if action is None:
                self._abort(f"hand {hand.number} stalled: {opts.player} can neither play, draw nor pass",
                            "stalled")
                return False
            if action.kind == "draw":
                if not self.stock:
                    self._reshuffle()  # _choose only draws when the pile can be turned
                    continue
                assert opts.draw is not None
                self._draw(opts.player, min(opts.draw, len(self.stock)))
            elif action.kind == "play":
                assert action.card is not None
                self._play(opts.player, action.card, action.suit, action.target)
            else:
                self._pass(opts.player)

    def _drawable(self, hand: _HandView) -> int:
        """Cards a draw could take now: the stock, and the pile under its top if it may
        be turned."""
        turnable = len(hand.pile) - 1 if self.rules.reshuffles and len(hand.pile) > 1 else 0
        return len(self.stock) + turnable

    # ----------------------------------------------------------------- bots

    def _choose(self, hand: _HandView, opts: _Options) -> _Action | None:
        rng = self.rng
        if opts.gift or opts.phase == "settlement":
            return _Action("draw") if self._drawable(hand) else None
        player = opts.player
        held = hand.hands[player]
        can_draw = opts.draw is not None and not opts.obliged and self._drawable(hand) > 0
        plays = list(opts.playable)
        if self.bots[player] == "random":
            # any legal move; a card three times in four when there is one to play
            others = [_Action("draw")] * can_draw + [_Action("pass")] * opts.may_pass
            if plays and (not others or rng.random() < 0.75):
                return self._collude(hand, opts, self._play_action(hand, opts, rng.choice(plays), held,
                                                                   greedy=False), can_draw)
            return rng.choice(others) if others else None
        # greedy: play whenever it can, the card it most wants rid of
        if plays:
            only_wild_jacks = not opts.obliged and all(c[0] == "J" for c in plays) and can_draw \
                and opts.phase == "turn"
            if only_wild_jacks and len(held) > 3 and rng.random() < 0.5:
                return _Action("draw")  # keep the J as a later wild card
            card = max(plays, key=lambda c: (self._shed_value(hand, opts, c, held), rng.random()))
            return self._collude(hand, opts, self._play_action(hand, opts, card, held, greedy=True), can_draw)
        if can_draw:
            if opts.phase == "drawn" and opts.may_pass and rng.random() < 0.65:
                return _Action("pass")  # pis-yedili: one voluntary draw is enough
            return _Action("draw")
        if opts.may_pass:
            return _Action("pass")
        return None

    def _partner(self, player: str) -> str | None:
        """The other of the colluding pair, when `player` is one of them."""
        pair = self.config.colluders
        if pair is None or player not in pair:
            return None
        return pair[1] if player == pair[0] else pair[0]

    @staticmethod
    def _next_player(hand: _HandView, player: str) -> str | None:
        """The next player in the current direction among those still in the hand."""
        active = hand.active
        if player not in active or len(active) < 2:
            return None
        step = 1 if hand.state["direction"] == "clockwise" else -1
        return active[(active.index(player) + step) % len(active)]

    def _attacks(self, card: str) -> bool:
        """A card whose effect lands on the next player: a 7's total or a skip."""
        return self.rules.effects[card[0]] in ("stack", "skip")

    def _collude(self, hand: _HandView, opts: _Options, action: _Action, can_draw: bool) -> _Action:
        """A colluder's move (`SimConfig.colluders`): with probability `collusion`, the
        card chosen is not one that lands a 7 total or a skip on the partner when they
        are next and something else may be done (another card, or a draw that is no
        foul). Honest players' moves, and a colluder's when no partner is next, are not
        touched (and draw nothing from the game's random stream)."""
        partner = self._partner(opts.player)
        if partner is None or action.kind != "play" or action.card is None:
            return action
        if self._next_player(hand, opts.player) != partner or not self._attacks(action.card):
            return action
        if action.card[0] != "7" and len(hand.hands.get(partner, ())) != 1:
            return action  # a skip only matters when the partner could go out
        if self.rng.random() >= self.config.collusion:
            return action
        held = hand.hands[opts.player]
        others = [c for c in opts.playable if not self._attacks(c)]
        if others:
            card = max(others, key=lambda c: (self._shed_value(hand, opts, c, held), self.rng.random()))
            return self._play_action(hand, opts, card, held, greedy=True)
        if can_draw:
            return _Action("draw")  # e.g. draw the 7 total rather than pass it on
        return action

    def _shed_value(self, hand: _HandView, opts: _Options, card: str, held: list[str]) -> float:
        rules = self.rules
        rank = card[0]
        value = float(rules.points[rank])
        if rank == "7" and opts.phase != "seven":
            value -= 40  # keep 7s to answer totals
        if rank == "J":
            value = 60.0 if len(held) <= 2 else -25.0  # a wild card; going out on it doubles
        if rank == "2" and rules.two_gives_gift:
            value += 6
        if rank == "8" and rules.eight is EightRule.FOLLOW:
            value += 4 if sum(1 for c in held if c[1] == card[1]) > 1 else -4
        return value

    def _play_action(
        self, hand: _HandView, opts: _Options, card: str, held: list[str], *, greedy: bool
    ) -> _Action:
        suit = self._suit_for(hand, opts, card, held, greedy=greedy)
        target = self._target_for(hand, opts.player, card, held, greedy=greedy)
        return _Action("play", card, suit, target)

    def _declares(self, opts: _Options, card: str) -> bool:
        return card[0] == "J" and opts.phase != "opening"

    def _suit_for(
        self, hand: _HandView, opts: _Options, card: str, held: list[str], *, greedy: bool
    ) -> str | None:
        if not self._declares(opts, card):
            return None
        allowed = [s for s in SUITS
                   if not (self.rules.jack_suit_must_differ and s == hand.current_suit)]
        partner = self._partner(opts.player)
        if partner is not None and partner in hand.active and self.rng.random() < self.config.collusion:
            theirs = [c[1] for c in hand.hands.get(partner, ()) if c[0] != "J" and c[1] in allowed]
            if theirs:  # a suit the partner can follow
                return max(allowed, key=lambda s: (theirs.count(s), self.rng.random()))
        if not greedy:
            return self.rng.choice(allowed)
        rest = list(held)
        rest.remove(card)
        return max(allowed, key=lambda s: (sum(1 for c in rest if c[1] == s and c[0] != "J"),
                                           self.rng.random()))

    def _gift_applies(self, opts_phase: str, card: str, held: list[str]) -> bool:
        return (card[0] == "2" and self.rules.two_gives_gift and opts_phase != "opening"
                and len(held) > 1)

    def _target_for(
        self, hand: _HandView, player: str, card: str, held: list[str], *, greedy: bool
    ) -> str | None:
        others = [p for p in hand.active if p != player and p not in hand.finished]
        if not self._gift_applies(hand.phase, card, held):
            last_two = card[0] == "2" and self.rules.two_gives_gift and len(held) == 1 \
                and hand.phase != "opening"
            if last_two and others and not greedy and self.rng.random() < 0.3:
                return self.rng.choice(others)  # a target on a last-card 2: allowed, ignored
            return None
        if not others:
            return None
        pair = self.config.colluders
        if pair is not None and player in pair and len(others) > 1:
            partner = pair[1] if player == pair[0] else pair[0]
            if partner in others and self.rng.random() < self.config.collusion:
                others = [p for p in others if p != partner]  # spare the partner
        if greedy:
            return min(others, key=lambda p: (len(hand.hands[p]), self.rng.random()))
        return self.rng.choice(others)

    # ----------------------------------------------------------------- moves

    def _play(
        self, player: str, card: str, suit: str | None = None, target: str | None = None,
        *, expect: frozenset[Code] = frozenset(), fault: tuple[str, list[str]] | None = None,
    ) -> None:
        event = Play(self.game, self.seq, self._ts(self._think()), player, card, suit, target)
        self._emit(event, expect=expect, fault=fault)
        self._after_move(player, event)

    def _draw(
        self, player: str, count: int,
        *, expect: frozenset[Code] = frozenset(), fault: tuple[str, list[str]] | None = None,
    ) -> None:
        cards = tuple(self.stock.pop() for _ in range(count))
        event = Draw(self.game, self.seq, self._ts(self._think()), player, cards)
        self._emit(event, expect=expect, fault=fault)
        if self.late_call is not None and self.late_call[1] == player:
            self._announce(self.late_call[0])
            self.late_call = None
        self._after_move(player, event)

    def _pass(
        self, player: str,
        *, expect: frozenset[Code] = frozenset(), fault: tuple[str, list[str]] | None = None,
    ) -> None:
        event = Pass(self.game, self.seq, self._ts(self._think()), player)
        self._emit(event, expect=expect, fault=fault)

    def _reshuffle(self) -> None:
        assert not self.stock
        under = self._hand().pile[:-1]
        self.rng.shuffle(under)
        self.stock = under  # top last
        stock = tuple(reversed(under)) if self.rng.random() < 0.5 else None
        event = Reshuffle(self.game, self.seq, self._ts(self.rng.randrange(300, 1500)), stock)
        self._emit(event)

    def _after_move(self, player: str, event: Play | Draw) -> None:
        """A last-card call after a move that leaves one card (persian), maybe forgotten
        in a faulty game; bazito clients sometimes log their automatic indicator too."""
        hand = self._hand()
        if hand.decided or len(hand.hands.get(player, ())) != 1:
            return
        if not self.rules.last_card_call:
            if self.rules.name == "bazito" and self.rng.random() < 0.05:
                self._announce(player)
            return
        gift_target = hand.gift_target if isinstance(event, Play) else None
        # points play: an 8's follow comes first, no call is due for it (announcing is harmless)
        call_due = not (isinstance(event, Play) and event.card[0] == "8" and not self.replay.elimination)
        if call_due and self.missed is None and self._due("missed_call"):
            assert self.plan is not None
            self.plan.done = True
            self.missed = _MissedCall(player, gift_target)
            return
        if gift_target is not None and self.plan is None and self.rng.random() < 0.3:
            self.late_call = (player, gift_target)  # may wait for the gift draw of its own 2
            return
        self._announce(player)

    def _announce(self, player: str) -> None:
        event = Announce(self.game, self.seq, self._ts(self.rng.randrange(150, 1500)), player, "last_card")
        self._emit(event)

    def _charge_penalty(self) -> None:
        """A justified table penalty after a foul (persian), when the hand still runs."""
        assert self.pending_penalty is not None
        player, reason = self.pending_penalty
        self.pending_penalty = None
        hand = self._hand()
        if hand.decided or player in hand.finished or not hand.hands[player] or not self._drawable(hand):
            return
        if not self.stock:
            self._reshuffle()
        card = self.stock.pop()
        event = Penalty(self.game, self.seq, self._ts(self.rng.randrange(1000, 6000)), player, (card,), reason)
        self._emit(event)

    # ----------------------------------------------------------------- end, result, abort

    def _end_hand(self, *, last: bool) -> None:
        # the decided hand as it stands: the core lets go of its cards once the end is fed
        hand = self._hand().frozen()
        outcome = hand.outcome
        assert outcome is not None
        self.missed = None  # a call window the hand's end closed without a turn event
        winners = list(outcome["winners"])
        scores = dict(outcome["scores"]) if outcome["scores"] is not None else None
        order = list(outcome["order"]) if outcome["order"] is not None else None
        fault: tuple[str, list[str]] | None = None
        expect: frozenset[Code] = frozenset()
        players = list(self.replay.players)
        if scores is not None and self._due_at_end("wrong_scores", last):
            loser = self.rng.choice([p for p in players if p not in winners] or players)
            delta = self.rng.choice((1, 2, 5, 10, 20))
            lower = scores[loser] >= delta and self.rng.random() < 0.5
            scores[loser] += -delta if lower else delta
            fault = ("wrong_scores", [Code.SCORE_MISMATCH.value])
            expect = frozenset({Code.SCORE_MISMATCH})
        elif self._due_at_end("wrong_winners", last):
            claimed = set(winners)
            others = [p for p in players if p not in claimed]
            if len(claimed) > 1 and (not others or self.rng.random() < 0.5):
                claimed.discard(self.rng.choice(sorted(claimed)))
            elif self.rng.random() < 0.6:
                claimed = {self.rng.choice(others)}
            else:
                claimed.add(self.rng.choice(others))
            winners = [p for p in players if p in claimed]
            fault = ("wrong_winners", [Code.WINNER_MISMATCH.value])
            expect = frozenset({Code.WINNER_MISMATCH})
        event = End(self.game, self.seq, self._ts(self.rng.randrange(400, 2500)), hand.number,
                    tuple(winners), scores, tuple(order) if order is not None else None)
        self._emit(event, expect=expect, fault=fault)
        self._maybe_play_after_end(before_end=False, last=last, hand=hand)

    def _maybe_play_after_end(
        self, *, before_end: bool, last: bool = False, hand: _HandView | None = None
    ) -> None:
        """A client's play that arrives after the hand is decided (before its `end`) or
        after its `end` (`hand`: the decided hand as it was): `unexpected_event`, and not
        applied."""
        if hand is None:
            hand = self._hand()
        outcome = hand.outcome
        assert outcome is not None
        kind = "play_after_blocked" if self.rules.name == "pis-yedili" else "play_after_end"
        plan = self.plan
        if plan is None or plan.done or plan.kind != kind:
            return
        if kind == "play_after_blocked" and outcome["reason"] != "blocked":
            return
        holders = [p for p in self.replay.players if hand.hands.get(p)]
        if not holders:
            return
        forced = last and not before_end  # the game's last chance
        if not forced and (len(self.lines) < plan.after_line or not self._roll()):
            return
        if before_end and self.rng.random() < 0.5:
            return  # rather after the end
        player = self.rng.choice(holders)
        card = self.rng.choice(hand.hands[player])
        suit = self.rng.choice(SUITS) if card[0] == "J" else None
        event = Play(self.game, self.seq, self._ts(self._think()), player, card, suit, None)
        self._emit(event, expect=frozenset({Code.UNEXPECTED_EVENT}),
                   fault=(kind, [Code.UNEXPECTED_EVENT.value]))

    def _result(self) -> None:
        run = self.replay
        totals = None if run.elimination else dict(run.totals())
        event = Result(self.game, self.seq, self._ts(self.rng.randrange(500, 3000)), totals,
                       tuple(run.match_winners()))
        self._emit(event)

    def _abort(self, reason: str, kind: str) -> None:
        self.aborted = kind
        self._emit(Abort(self.game, self.seq, self._ts(self.rng.randrange(5000, 60000)), reason))

    # ----------------------------------------------------------------- turn faults

    def _inject_turn_fault(self, hand: _HandView, opts: _Options) -> bool:
        """Put the planned fault in place of the bot's move when this is an opportunity
        (and the dice say so)."""
        plan = self.plan
        if plan is None or not self._armed(plan.kind):
            return False
        finder = _TURN_FAULTS.get(plan.kind)
        if finder is None:
            return False
        move = finder(self, hand, opts)
        if move is None or not self._roll():
            return False
        plan.done = True
        move()
        return True

    def _fault_play(
        self, player: str, card: str, kind: str, codes: set[Code], suit: str | None = None,
        target: str | None = None,
    ) -> Callable[[], None]:
        def move() -> None:
            self._play(player, card, suit, target, expect=frozenset(codes),
                       fault=(kind, sorted(c.value for c in codes)))
            self._penalise(player, codes)
        return move

    def _penalise(self, player: str, codes: set[Code]) -> None:
        """Sometimes the table charges a foul right away (persian `misplay`)."""
        if self.rules.table_penalties and codes & FOULS and self.rng.random() < 0.4:
            self.pending_penalty = (player, "misplay")

    def _fault_illegal_card(self, hand: _HandView, opts: _Options) -> _Move:
        if opts.gift or opts.phase not in ("turn", "seven", "follow"):
            return None
        held = hand.hands[opts.player]
        wrong = sorted({c for c in held if c not in opts.playable and c[0] != "J"})
        if not wrong:
            return None
        card = self.rng.choice(wrong)
        target = self._target_for(hand, opts.player, card, held, greedy=False)
        return self._fault_play(opts.player, card, "illegal_card", {Code.ILLEGAL_CARD}, target=target)

    def _fault_card_not_held(self, hand: _HandView, opts: _Options) -> _Move:
        top = hand.top
        if opts.gift or opts.phase != "turn" or top is None:
            return None
        held = set(hand.hands[opts.player])
        fitting = [c for c in ONE_DECK
                   if c not in held and c[0] not in "J2" and c != top
                   and (c[1] == hand.current_suit or (c[0] == top[0] and top[0] != "J"))]
        if not fitting:
            return None
        card = self.rng.choice(fitting)
        play = self._fault_play(opts.player, card, "card_not_held", {Code.CARD_NOT_IN_HAND})

        def move() -> None:
            # the engine takes a card not held from the stock when a copy is there (else
            # from the pile or a hand, which it keeps itself): take the same copy here, the
            # one nearest the top (the physical stock has its top last)
            # (the engine's stock holds the same cards as the physical one: this is the
            # game's one fault, and every line before it was as the engine expected)
            if card in self.stock:
                del self.stock[len(self.stock) - 1 - self.stock[::-1].index(card)]
            play()
        return move

    def _fault_wrong_seven_total(self, hand: _HandView, opts: _Options) -> _Move:
        # a 7's total with nothing of it drawn yet (the rest is what a draw must take now)
        if opts.phase != "seven" or opts.gift or opts.draw is None or opts.draw != hand.pending_total:
            return None
        owed = opts.draw
        if len(self.stock) < owed + 2:
            return None
        count = owed + 1 if self.rng.random() < 0.5 else owed - 1
        codes = {Code.ILLEGAL_DRAW} | ({Code.MUST_PLAY} if opts.obliged else set())
        player = opts.player

        def move() -> None:
            self._draw(player, count, expect=frozenset(codes),
                       fault=("wrong_seven_total", sorted(c.value for c in codes)))
            self._penalise(player, codes)
        return move

    def _fault_jack_without_suit(self, hand: _HandView, opts: _Options) -> _Move:
        jacks = [c for c in opts.playable if c[0] == "J"]
        if opts.gift or opts.phase == "opening" or not jacks:
            return None
        return self._fault_play(opts.player, self.rng.choice(jacks), "jack_without_suit", {Code.BAD_SUIT})

    def _fault_missing_gift(self, hand: _HandView, opts: _Options) -> _Move:
        top = hand.top
        if not opts.gift or top is None:
            return None
        mover = self._mover_after_gift(hand)
        fitting = sorted({c for c in hand.hands[mover]
                          if c[0] not in "J2" and (c[1] == hand.current_suit or c[0] == top[0])})
        if not fitting:
            return None
        # the gift's target plays instead of drawing, or the next player just plays on
        code = Code.UNEXPECTED_EVENT if mover == opts.player else Code.NOT_YOUR_TURN
        return self._fault_play(mover, self.rng.choice(fitting), "missing_gift", {code})

    def _mover_after_gift(self, hand: _HandView) -> str:
        """Whose turn it is once the owed gift is drawn (the core's `turn`: the player
        after the 2's, behind its target)."""
        turn = hand.state["turn"]
        assert turn is not None, hand.state
        return str(turn)

    def _fault_self_target_two(self, hand: _HandView, opts: _Options) -> _Move:
        if opts.gift:
            return None
        held = hand.hands[opts.player]
        twos = [c for c in opts.playable if self._gift_applies(opts.phase, c, held)]
        if not twos:
            return None
        return self._fault_play(opts.player, self.rng.choice(twos), "self_target_two",
                                {Code.BAD_TARGET}, target=opts.player)

    def _fault_draw_holding_legal(self, hand: _HandView, opts: _Options) -> _Move:
        if opts.gift or opts.phase != "turn" or not opts.obliged or not self.stock:
            return None
        player = opts.player

        def move() -> None:
            self._draw(player, 1, expect=frozenset({Code.MUST_PLAY}),
                       fault=("draw_holding_legal", [Code.MUST_PLAY.value]))
            self._penalise(player, {Code.MUST_PLAY})
        return move

    def _fault_unjustified_penalty(self, hand: _HandView, opts: _Options) -> _Move:
        if hand.decided or not self.stock:
            return None
        candidates = [p for p in hand.active if hand.hands[p] and p not in hand.finished]
        if not candidates:
            return None
        player = self.rng.choice(candidates)
        reasons = ["misplay", "missed_call", "out_of_turn"]
        if not self.rules.option("extra_fouls"):
            reasons += ["delay", "other"]
        reason = self.rng.choice(reasons)

        def move() -> None:
            card = self.stock.pop()
            event = Penalty(self.game, self.seq, self._ts(self.rng.randrange(1000, 6000)), player,
                            (card,), reason)
            self._emit(event, expect=frozenset({Code.UNJUSTIFIED_PENALTY}),
                       fault=("unjustified_penalty", [Code.UNJUSTIFIED_PENALTY.value]))
        return move

    def _fault_pass_drawn_match(self, hand: _HandView, opts: _Options) -> _Move:
        if opts.gift or opts.phase not in ("drawn", "follow_drawn") or not opts.obliged:
            return None
        player = opts.player

        def move() -> None:
            self._pass(player, expect=frozenset({Code.MUST_PLAY}),
                       fault=("pass_drawn_match", [Code.MUST_PLAY.value]))
            self._penalise(player, {Code.MUST_PLAY})
        return move

    def _fault_wild_jack_with_match(self, hand: _HandView, opts: _Options) -> _Move:
        top = hand.top
        if opts.gift or opts.phase != "turn" or not opts.obliged or top is None:
            return None
        wild = sorted({c for c in hand.hands[opts.player]
                       if c[0] == "J" and c[1] != hand.current_suit and top[0] != "J"})
        if not wild:
            return None
        return self._fault_play(opts.player, self.rng.choice(wild), "wild_jack_with_match",
                                {Code.ILLEGAL_CARD}, suit=self.rng.choice(SUITS))

    def _fault_jack_on_jack(self, hand: _HandView, opts: _Options) -> _Move:
        top = hand.top
        if opts.phase not in ("turn", "drawn") or top is None or top[0] != "J":
            return None
        jacks = sorted({c for c in hand.hands[opts.player] if c[0] == "J"})
        if not jacks:
            return None
        suit = self.rng.choice([s for s in SUITS if s != hand.current_suit])
        return self._fault_play(opts.player, self.rng.choice(jacks), "jack_on_jack",
                                {Code.ILLEGAL_CARD}, suit=suit)

    def _fault_same_suit_jack(self, hand: _HandView, opts: _Options) -> _Move:
        jacks = [c for c in opts.playable if c[0] == "J"]
        if opts.phase == "opening" or not jacks or hand.current_suit is None:
            return None
        return self._fault_play(opts.player, self.rng.choice(jacks), "same_suit_jack",
                                {Code.BAD_SUIT}, suit=hand.current_suit)

    def _fault_non_club_opening(self, hand: _HandView, opts: _Options) -> _Move:
        if opts.phase != "opening":
            return None
        other = sorted({c for c in hand.hands[opts.player] if c[1] != self.rules.opening_suit})
        if not other:
            return None
        card = self.rng.choice(other)
        # an illegal card takes its normal effect: a J other than the opening club declares
        suit = self.rng.choice("CDHS") if card[0] == "J" else None
        return self._fault_play(opts.player, card, "non_club_opening", {Code.ILLEGAL_CARD},
                                suit=suit)

    def _fault_pass_before_draw(self, hand: _HandView, opts: _Options) -> _Move:
        if opts.phase != "turn":
            return None
        player = opts.player

        def move() -> None:
            self._pass(player, expect=frozenset({Code.ILLEGAL_PASS}),
                       fault=("pass_before_draw", [Code.ILLEGAL_PASS.value]))
        return move

    # ----------------------------------------------------------------- lines

    def _think(self) -> int:
        """A player's think time in ms: mostly quick, sometimes long (0.5-8 s)."""
        return min(8000, 500 + int(self.rng.expovariate(1 / 1800)))

    def _between_hands(self) -> int:
        return self.rng.randrange(3000, 12000)

    def _ts(self, delay_ms: int | float) -> str:
        """The clock moved on by `delay_ms`, as an RFC 3339 timestamp (UTC, ms)."""
        self.clock_ms += int(delay_ms)
        day, ms = divmod(self.clock_ms, 86_400_000)
        if day != self._day:
            self._day = day
            self._day_text = datetime.fromtimestamp(day * 86_400, tz=UTC).strftime("%Y-%m-%dT")
        seconds, ms = divmod(ms, 1000)
        minutes, seconds = divmod(seconds, 60)
        hours, minutes = divmod(minutes, 60)
        return f"{self._day_text}{hours:02d}:{minutes:02d}:{seconds:02d}.{ms:03d}Z"

    def _emit(
        self, event: Event, *, expect: frozenset[Code] = frozenset(),
        fault: tuple[str, list[str]] | None = None,
    ) -> None:
        """Write `event` and feed its line, as written, to the game's run (which must find
        exactly the `expect`ed codes there), with the line-level faults (a dropped seq, a
        duplicate, a garbled copy, a bad spelling) when one is due.

        Only the event's own line is fed: a shipper's identical retry, a duplicate seq and
        a garbled copy are the reader's business (it drops, flags or sets them aside before
        a game's replay sees them); fed to the run they would be applied twice."""
        if self.seq >= 2 and fault is None and self._due("dropped_line"):
            # a line lost on its way: the log skips a seq. No event is lost with it, so the
            # replay after the gap stays in step and only the gap itself is reported
            self.seq += 1
            event = _with_seq(event, self.seq)
            self._record("dropped_line", event.seq, [Code.SEQUENCE.value])
        assert event.seq == self.seq, (event.seq, self.seq)
        missed = self.missed
        if missed is not None and isinstance(event, Play | Draw | Pass):
            exempt = isinstance(event, Draw) and event.player == missed.gift_target
            if exempt:
                missed.gift_target = None  # the gift draw of the caller's own 2
            else:
                self.missed = None
                expect = expect | {Code.MISSED_CALL}
                self._record("missed_call", event.seq, [Code.MISSED_CALL.value])
                if self.rng.random() < 0.6:
                    self.pending_penalty = (missed.player, "missed_call")
        obj = encode(event)
        if self.extensions and event.is_turn_event:
            obj["x_latency_ms"] = self.rng.randrange(20, 400)  # producer extension: ignored
        respelled = fault is None and self._armed("spelling_10") and _has_ten(obj) and self._roll()
        if respelled:
            _respell_ten(obj, self.rng)  # read as the T card it means, with a `schema`
            expect = expect | {Code.SCHEMA}
        line = orjson.dumps(obj)
        found = self._feed(line)
        codes = {v["code"] for v in found}
        if codes != set(expect):
            detail = "; ".join(f"{v['code']}: {v['message']}" for v in found) or "nothing"
            raise SimulationError(
                f"{self.game} seq {event.seq} ({event.type}): the engine found {detail}; "
                f"expected {sorted(c.value for c in expect) or 'nothing'}")
        if fault is not None:
            self._record(fault[0], event.seq, fault[1])
        if respelled:
            self._record("spelling_10", event.seq, [Code.SCHEMA.value])
        self.seq += 1
        self.lines.append(line)
        if self.rng.random() < RETRY_RATE:
            self.lines.append(self.lines[-1])  # a shipper's retry: identical, dropped silently
        if fault is None and isinstance(event, Play | Draw | Pass) and self._due("duplicate_seq"):
            twin = dict(obj)
            if "ts" in twin and self.rng.random() < 0.5:
                twin["ts"] = self._ts(self.rng.randrange(1, 900))
            else:
                twin["x_retry"] = self.rng.randint(1, 3)
            self._record("duplicate_seq", event.seq, [Code.SEQUENCE.value])
            self._write_obj(twin)
        elif fault is None and event.seq >= 1 and self._due("malformed_json"):
            raw = self.lines[-1]
            cut = self.rng.randrange(1, len(raw) - 1)
            self._record("malformed_json", event.seq, [Code.MALFORMED_JSON.value], record="error")
            self.lines.append(raw[:cut])

    def _record(self, kind: str, seq: int | None, codes: list[str], *, record: str = "violation") -> None:
        """Note a fault on the line about to be written (the next physical line)."""
        if self.plan is not None:
            self.plan.done = True
        self.faults.append(InjectedFault(
            self.game, seq, kind, sorted(codes), self.line_offset + len(self.lines) + 1, record))

    def _write_obj(self, obj: dict[str, Any]) -> None:
        self.lines.append(orjson.dumps(obj))


def _with_seq(event: Event, seq: int) -> Event:
    return replace(event, seq=seq)


def _has_ten(obj: dict[str, Any]) -> bool:
    if obj["type"] == "play":
        return bool(obj["card"][0] == "T")
    if obj["type"] == "draw":
        return any(c[0] == "T" for c in obj["cards"])
    return False


def _respell_ten(obj: dict[str, Any], rng: random.Random) -> None:
    """Write one T card of a play or draw line the way some clients do: `10H`."""
    if obj["type"] == "play":
        obj["card"] = "10" + obj["card"][1]
        return
    cards = list(obj["cards"])
    i = rng.choice([i for i, c in enumerate(cards) if c[0] == "T"])
    cards[i] = "10" + cards[i][1]
    obj["cards"] = cards


def _pick_build(rng: random.Random) -> tuple[str, float, float]:
    roll = rng.random()
    for build in BUILDS:
        roll -= build[1]
        if roll < 0:
            return build
    return BUILDS[-1]


_TURN_FAULTS: dict[str, Callable[[_GameSim, _HandView, _Options], _Move]] = {
    "illegal_card": _GameSim._fault_illegal_card,
    "card_not_held": _GameSim._fault_card_not_held,
    "wrong_seven_total": _GameSim._fault_wrong_seven_total,
    "jack_without_suit": _GameSim._fault_jack_without_suit,
    "missing_gift": _GameSim._fault_missing_gift,
    "self_target_two": _GameSim._fault_self_target_two,
    "draw_holding_legal": _GameSim._fault_draw_holding_legal,
    "unjustified_penalty": _GameSim._fault_unjustified_penalty,
    "pass_drawn_match": _GameSim._fault_pass_drawn_match,
    "wild_jack_with_match": _GameSim._fault_wild_jack_with_match,
    "jack_on_jack": _GameSim._fault_jack_on_jack,
    "same_suit_jack": _GameSim._fault_same_suit_jack,
    "non_club_opening": _GameSim._fault_non_club_opening,
    "pass_before_draw": _GameSim._fault_pass_before_draw,
}
