"""The one state machine: a table replaying a game event by event under a ruleset profile.

`Table.apply(event)` judges one event against the rules, records every breach, then applies
the event as the table recorded it (the cards really moved) so later breaches are found too.
`Table.options()` is the legality view of the state (what the player to move may do); the
validator, the replay, the dashboard and the simulator all use that same code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, cast

from engine.cards import SUIT_NAMES, pack, pretty, pretty_cards
from engine.events import (
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
)
from engine.rulesets import AceRule, AfterDraw, EightRule, JackRule, Mode, MustPlay, Ruleset
from engine.violations import FOULS, Code, Violation

HAND_SIZE = 7


class Phase(Enum):
    """Where a hand stands; the player to move is `Hand.mover` (or the gift's target)."""

    OPENING = "opening"  # pis-yedili: the opener must lay a club onto the empty pile
    TURN = "turn"  # a normal turn, nothing drawn yet
    DRAWN = "drawn"  # a normal turn after a draw
    SEVEN = "seven"  # facing a pending 7 total
    FOLLOW = "follow"  # the follow after an 8, a pis-yedili A or a bonus A
    FOLLOW_DRAWN = "follow_drawn"  # persian: the failed-follow draw brought a playable card
    DEFLECT = "deflect"  # persian ace_deflect: the player an A would skip
    SETTLEMENT = "settlement"  # persian points: decided; losers draw for their 7s
    OVER = "over"  # decided and settled: the hand's `end` is due


@dataclass(frozen=True, slots=True)
class Settings:
    """A usable header, read once: the profile with its options, players and match."""

    ruleset: Ruleset
    players: tuple[str, ...]
    mode: Mode
    decks: int
    match_hands: int | None
    match_target: int | None


@dataclass(slots=True)
class HandOutcome:
    hand: int
    winners: list[str]
    scores: dict[str, int] | None
    reason: str  # out · blocked · elimination
    order: list[str] | None
    winning_card: str | None = None
    multiplier: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "hand": self.hand,
            "winners": self.winners,
            "scores": self.scores,
            "reason": self.reason,
            "order": self.order,
        }


@dataclass(slots=True)
class HandRecord:
    """What the warehouse and the scoring views need of each hand dealt."""

    number: int
    dealer: str
    first_player: str
    outcome: HandOutcome | None = None
    cards_left: dict[str, list[str]] = field(default_factory=dict)
    reshuffles: int = 0
    closed: bool = False


@dataclass(frozen=True, slots=True)
class TurnOptions:
    """What the player to move may do now: the legality view of the state."""

    player: str
    phase: Phase
    playable: tuple[str, ...]  # cards held that may be played now
    draw: int | None  # how many cards a draw must take now; None: no draw allowed
    may_pass: bool
    obliged: bool  # drawing or passing now is `must_play`
    gift: bool = False  # the move owed is a 2's gift draw

    def describe(self) -> str:
        parts = []
        if self.gift:
            return f"{self.player} draws the 2's gift (1 card)"
        if self.playable:
            parts.append("play " + pretty_cards(self.playable))
        if self.draw is not None and not self.obliged:
            parts.append(f"draw {self.draw}")
        if self.may_pass:
            parts.append("pass")
        if not parts:
            return f"{self.player}: nothing ({self.phase.value})"
        return f"{self.player} may " + " or ".join(parts)


class Hand:
    """The mutable state of one hand."""

    __slots__ = (
        "active",
        "call_due",
        "current_suit",
        "dealer",
        "direction",
        "drawn_card",
        "draws_this_turn",
        "finished",
        "first_player",
        "follow_card",
        "gift_from",
        "gift_target",
        "hands",
        "laid_aside",
        "mover",
        "number",
        "outcome",
        "pending_total",
        "phase",
        "pile",
        "settle_owed",
        "settle_player",
        "settle_queue",
        "stock",
        "stock_count",
        "stock_order",
        "total_drawn",
        "waiting_cards",
        "waiting_sevens",
    )

    def __init__(self, number: int, dealer: str, players: Iterable[str]) -> None:
        self.number = number
        self.dealer = dealer
        self.active: list[str] = list(players)  # seat order, players still in the hand
        self.hands: dict[str, list[str]] = {p: [] for p in self.active}
        self.pile: list[str] = []  # the discard pile, top last
        self.stock: Counter[str] = Counter()  # unseen cards
        self.stock_count = 0  # kept beside the multiset: it is asked for on every turn
        self.stock_order: list[str] | None = None  # the stock top first, when the log told it
        self.laid_aside: list[str] = []
        self.current_suit: str | None = None
        self.direction = 1
        self.mover = ""
        self.first_player = ""
        self.phase = Phase.TURN
        self.pending_total = 0
        self.total_drawn = 0
        self.follow_card: str | None = None
        self.gift_target: str | None = None
        self.gift_from: str | None = None
        self.waiting_cards: dict[str, str] = {}
        self.drawn_card: str | None = None
        self.draws_this_turn = 0
        self.call_due: dict[str, int] = {}
        self.finished: list[str] = []
        self.waiting_sevens: list[str] = []
        self.settle_queue: list[str] = []
        self.settle_player: str | None = None
        self.settle_owed = 0
        self.outcome: HandOutcome | None = None

    @property
    def top(self) -> str | None:
        return self.pile[-1] if self.pile else None

    @property
    def decided(self) -> bool:
        return self.outcome is not None

    def stock_size(self) -> int:
        return self.stock_count

    def no_card_anywhere(self) -> bool:
        return self.stock_size() == 0 and len(self.pile) <= 1

    def card_count(self) -> int:
        return (
            sum(len(h) for h in self.hands.values())
            + len(self.pile) + self.stock_size() + len(self.laid_aside)
        )


class Table:
    """A game being replayed. Feed it events in `seq` order with `apply`."""

    def __init__(self, settings: Settings, game: str = "") -> None:
        self.game = game
        self.settings = settings
        self.rules = settings.ruleset
        self.players = settings.players
        self.seat = {p: i for i, p in enumerate(self.players)}
        self.hand: Hand | None = None
        self.hand_open = False  # a hand is dealt and not yet closed by its `end`
        self.last_hand_number = 0
        self.outcomes: list[HandOutcome] = []
        self.totals: dict[str, int] = dict.fromkeys(self.players, 0)
        self.first_places: Counter[str] = Counter()
        self.previous_winner: str | None = None
        self.match_over = False
        self.closed_by: str | None = None  # "result" or "abort"
        self.premature_result = False  # the result came before the match was over
        self.fouls: dict[str, set[Code]] = {p: set() for p in self.players}
        self.last_type: str | None = None
        self.hand_log: list[HandRecord] = []
        self.elimination = settings.mode is Mode.ELIMINATION
        self._out: list[Violation] = []
        self._seq: int | None = None

    # ----------------------------------------------------------------- public API

    def apply(self, event: Event) -> list[Violation]:
        """Judge `event`, apply it as recorded, and return the breaches found on it."""
        self._out = []
        self._seq = event.seq
        if self.closed_by is not None:
            self._flag(Code.UNEXPECTED_EVENT, _actor(event),
                       f"{event.type} after the game's {self.closed_by}: nothing may follow it")
        elif event.is_turn_event:
            self._turn_event(cast(Play | Draw | Pass, event))
        elif isinstance(event, Header):
            self._flag(Code.UNEXPECTED_EVENT, None, "a game header may only stand at seq 0")
        elif isinstance(event, Deal):
            self._deal(event)
        elif isinstance(event, Announce):
            self._announce(event)
        elif isinstance(event, Penalty):
            self._penalty(event)
        elif isinstance(event, Reshuffle):
            self._reshuffle(event)
        elif isinstance(event, End):
            self._end(event)
        elif isinstance(event, Result):
            self._result(event)
        elif isinstance(event, Abort):
            self.closed_by = "abort"
        self.last_type = event.type
        for violation in self._out:
            if violation.code in FOULS and violation.player in self.fouls:
                self.fouls[violation.player].add(violation.code)
        return self._out

    def expected_actor(self) -> str | None:
        hand = self.hand
        if hand is None or not self.hand_open:
            return None
        if hand.phase is Phase.SETTLEMENT:
            return hand.settle_player
        if hand.phase is Phase.OVER:
            return None
        return hand.gift_target or hand.mover

    def options(self) -> TurnOptions | None:
        """What the player expected to act may do now (None when nobody is to move)."""
        hand = self.hand
        if hand is None or not self.hand_open or hand.phase is Phase.OVER:
            return None
        if hand.phase is Phase.SETTLEMENT:
            assert hand.settle_player is not None
            stock = hand.stock_size()
            owed = min(hand.settle_owed, stock) if stock else hand.settle_owed
            return TurnOptions(hand.settle_player, hand.phase, (), owed, False, False)
        if hand.gift_target is not None:
            return TurnOptions(hand.gift_target, hand.phase, (), 1, False, False, gift=True)
        return self._options_for(hand, hand.mover)

    def is_complete(self) -> bool:
        """The match is over and its last hand has its `end` (or a result closed it).
        A `result` before the match was over closes the game unfinished: not complete."""
        if self.closed_by == "result":
            return not self.premature_result
        if self.hand_open:
            return False
        if self.match_over:
            return True
        # a persian open-ended game is complete when its log ends right after an end
        return (
            self.settings.match_hands is None
            and self.settings.match_target is None
            and self.last_type == "end"
        )

    def match_winners(self) -> list[str]:
        if self.elimination:
            if not self.first_places:
                return []
            best = max(self.first_places.values())
            return sorted(p for p in self.players if self.first_places[p] == best)
        best_total = min(self.totals.values())
        return [p for p in self.players if self.totals[p] == best_total]

    def decided_outcomes(self) -> list[HandOutcome]:
        """Hands with an outcome: those closed by an end, and the running one if decided."""
        hands = list(self.outcomes)
        if self.hand_open and self.hand is not None and self.hand.outcome is not None:
            hands.append(self.hand.outcome)
        return hands

    # ----------------------------------------------------------------- helpers

    def _flag(self, code: Code, player: str | None, message: str) -> None:
        self._out.append(Violation(self._seq, code, player, message))

    def _next_player(self, hand: Hand, player: str, steps: int = 1) -> str:
        """The player `steps` seats on from `player` in the current direction, among
        those still in the hand (`player` itself may have just left it)."""
        order = self.players
        n = len(order)
        i = self.seat[player]
        active = set(hand.active)
        while steps:
            i = (i + hand.direction) % n
            if order[i] in active:
                steps -= 1
        return order[i]

    def _is_match(self, hand: Hand, card: str) -> bool:
        top = hand.top
        if top is None:
            return True
        return card[1] == hand.current_suit or card[0] == top[0]

    def _legal(self, hand: Hand, phase: Phase, card: str, held: list[str]) -> bool:
        """Whether `card` may be played now by a player holding `held`."""
        rules = self.rules
        if phase is Phase.OPENING:
            return card[1] == rules.opening_suit
        if phase is Phase.SEVEN:
            return card[0] == "7" and hand.total_drawn == 0
        if phase is Phase.DEFLECT:
            return card[0] == "A"
        top = hand.top
        if phase in (Phase.FOLLOW, Phase.FOLLOW_DRAWN):
            if self._is_match(hand, card):
                return card[0] != "J" or rules.jack is not JackRule.NOT_ON_JACK or card[1] == hand.current_suit
            if card[0] == "J" and rules.jack is JackRule.NO_MATCH_HELD:
                return not any(self._is_match(hand, c) for c in held)
            return False
        # a normal turn
        if rules.jack is JackRule.NOT_ON_JACK and top is not None and top[0] == "J":
            return card[1] == hand.current_suit and card[0] != "J"
        if self._is_match(hand, card):
            return True
        if card[0] != "J":
            return False
        if rules.jack is JackRule.NO_MATCH_HELD:
            return not any(self._is_match(hand, c) for c in held)
        return True

    def _options_for(self, hand: Hand, player: str) -> TurnOptions:
        rules = self.rules
        phase = hand.phase
        held = hand.hands.get(player, [])
        playable = tuple(sorted({c for c in held if self._legal(hand, phase, c, held)}))
        draw: int | None = 1
        may_pass = False
        obliged = False
        if phase is Phase.OPENING:
            obliged = bool(playable)
        elif phase is Phase.TURN:
            if rules.must_play is MustPlay.ANY_LEGAL:
                obliged = bool(playable)
            elif rules.must_play is MustPlay.MATCH:
                obliged = any(self._is_match(hand, c) for c in playable)
        elif phase is Phase.DRAWN:
            if rules.after_draw is AfterDraw.FREE:
                may_pass = True
            else:
                draw = None
                obliged = (
                    rules.after_draw is AfterDraw.MUST_PLAY_MATCH
                    and hand.drawn_card is not None
                    and self._is_match(hand, hand.drawn_card)
                )
                may_pass = not obliged
        elif phase is Phase.SEVEN:
            draw = hand.pending_total - hand.total_drawn
            obliged = rules.seven_answer_compulsory and bool(playable)
        elif phase is Phase.FOLLOW:
            assert hand.follow_card is not None
            if hand.follow_card[0] == "8":
                optional = rules.option("eight_bonus_optional")
                may_pass = optional
                if rules.must_play is MustPlay.MATCH:
                    obliged = not optional and any(self._is_match(hand, c) for c in playable)
                else:
                    obliged = bool(playable)
            else:  # the A's follow (pis-yedili) or a bonus A: optional, never a draw
                draw = None
                may_pass = True
        elif phase is Phase.FOLLOW_DRAWN:
            draw = None
            obliged = hand.drawn_card is not None and self._is_match(hand, hand.drawn_card)
            may_pass = not obliged
        elif phase is Phase.DEFLECT:
            draw = None
            may_pass = True
        return TurnOptions(player, phase, playable, draw, may_pass, obliged)

    # ----------------------------------------------------------------- deal

    def _deal(self, event: Deal) -> None:
        rules = self.rules
        hand = self.hand
        if self.match_over and not self.hand_open:
            self._flag(Code.UNEXPECTED_EVENT, None, "a deal after the match is over")
        elif self.hand_open and hand is not None:
            # one unexpected_event, even when closing that hand ends the match
            if hand.decided:
                self._flag(Code.UNEXPECTED_EVENT, None,
                           f"a deal while hand {hand.number} is decided but has no end yet")
            else:
                self._flag(Code.UNEXPECTED_EVENT, None,
                           f"a deal while hand {hand.number} is still being played; it is abandoned")
            self._close_hand(hand)  # without an outcome when it was not decided
        if event.dealer not in self.seat:
            self._flag(Code.SCHEMA, None, f"deal: unknown dealer {event.dealer!r}")
            return
        expected_number = self.last_hand_number + 1
        if event.hand != expected_number:
            self._flag(Code.BAD_DEAL, None, f"deal: hand {event.hand}, expected hand {expected_number}")
        problems: list[str] = []
        for player in self.players:
            cards = event.hands.get(player)
            if cards is None:
                problems.append(f"no hand for {player}")
            elif len(cards) != HAND_SIZE:
                problems.append(f"{player} is dealt {len(cards)} cards, not {HAND_SIZE}")
        for player in event.hands:
            if player not in self.seat:
                problems.append(f"a hand for {player!r}, who is not at the table")
        dealt: Counter[str] = Counter()  # the cards dealt to the table (and the starter)
        phantom: Counter[str] = Counter()  # cards of hands for someone not at the table
        for holder, cards in event.hands.items():
            (dealt if holder in self.seat else phantom).update(cards)
        starter = event.starter
        if rules.has_starter:
            if starter is None:
                problems.append("the starter is " + ("unreadable" if event.starter_unreadable else "missing"))
            elif starter[0] in rules.forbidden_starter_ranks:
                problems.append(f"{pretty(starter)} may not be the starter in {rules.name}")
        elif starter is not None or event.starter_unreadable:
            problems.append(f"{rules.name} has no starter")
            starter = None
        if starter is not None:
            dealt[starter] += 1
        full = pack(self.settings.decks)
        over = sorted(c for c, n in (dealt + phantom).items() if n > full[c])
        if over:
            problems.append("too many of " + pretty_cards(over))
        # a phantom hand's cards are not dealt: they stay in the stock, so that the table
        # always holds the whole pack
        stock = full - dealt
        stock_order: list[str] | None = None
        if event.stock is not None:
            if Counter(event.stock) == stock:
                stock_order = list(event.stock)
            else:
                problems.append("the stock is not the rest of the pack")
        if problems:
            self._flag(Code.BAD_DEAL, None, "deal: " + "; ".join(problems))

        hand = Hand(event.hand, event.dealer, self.players)
        for player in self.players:
            hand.hands[player] = list(event.hands.get(player, ()))
        if starter is not None:
            hand.pile.append(starter)
            hand.current_suit = starter[1]
        hand.stock = stock
        hand.stock_count = stock.total()
        hand.stock_order = stock_order
        self.hand = hand
        self.hand_open = True
        self.last_hand_number = event.hand
        first = self._next_player(hand, event.dealer)
        if rules.first_player_previous_winner and event.hand > 1 and self.previous_winner in self.seat:
            first = self.previous_winner
        hand.first_player = first
        self.hand_log.append(HandRecord(event.hand, event.dealer, first))
        self._start_turn(hand, first, opening=not rules.has_starter)

    # ----------------------------------------------------------------- turn flow

    def _start_turn(self, hand: Hand, player: str, *, opening: bool = False) -> None:
        """Hand the turn to `player`, passing over (or blocking on) a player who has
        nothing to do but draw when no card can be drawn."""
        for _ in range(len(self.players) + 1):
            hand.mover = player
            hand.draws_this_turn = 0
            hand.drawn_card = None
            hand.follow_card = None
            hand.total_drawn = 0
            if opening or (not hand.pile and self.rules.opening_suit is not None):
                hand.phase = Phase.OPENING
            elif hand.pending_total:
                hand.phase = Phase.SEVEN
            else:
                hand.phase = Phase.TURN
            if not self._must_draw_but_cannot(hand, player):
                return
            if not self.rules.reshuffles:
                self._decide_blocked(hand)
                return
            if hand.phase is Phase.SEVEN:
                if hand.waiting_sevens:
                    self._total_drawn_by(hand, player)
                    return
                hand.pending_total = 0
            player = self._next_player(hand, player)
        # nobody can move: the hand is stalled; leave the turn where it is

    def _must_draw_but_cannot(self, hand: Hand, player: str) -> bool:
        stock_empty = hand.stock_size() == 0
        if not stock_empty:
            return False
        if self.rules.reshuffles and len(hand.pile) > 1:
            return False
        held = hand.hands[player]
        return not any(self._legal(hand, hand.phase, c, held) for c in held)

    def _end_turn(self, hand: Hand, player: str) -> None:
        """`player`'s turn is over: the next player in the current direction moves."""
        if hand.decided:
            return
        if not hand.hands[player] and player in hand.active and player not in hand.waiting_sevens:
            self._goes_out(hand, player, hand.top)
            if hand.decided:
                return
        self._start_turn(hand, self._next_player(hand, player))

    def _turn_event(self, event: Play | Draw | Pass) -> None:
        hand = self.hand
        player = event.player
        if player not in self.seat:
            self._flag(Code.SCHEMA, None, f"{event.type}: unknown player {player!r}")
            return
        if hand is None or not self.hand_open:
            self._flag(Code.UNEXPECTED_EVENT, player, f"{event.type} while no hand is being played")
            return
        if hand.phase is Phase.SETTLEMENT:
            self._settlement_event(hand, event)
            return
        if hand.decided:
            self._flag(Code.UNEXPECTED_EVENT, player,
                       f"{event.type} after hand {hand.number} is decided")
            return
        self._close_call_windows(hand, event)
        gift = hand.gift_target
        if gift is not None:
            if player == gift and isinstance(event, Draw):
                self._gift_draw(hand, event)
                return
            hand.gift_target = None  # forgone: another turn event took its place
            if player == gift and isinstance(event, Pass):
                self._flag(Code.ILLEGAL_PASS, player, f"{player} owes the 2's gift draw; a pass is not allowed")
                return
            if player == gift:  # the target plays instead of drawing
                self._flag(Code.UNEXPECTED_EVENT, player,
                           f"{player} owes the 2's gift draw of 1 card, not a play")
                if player != hand.mover:
                    self._flag(Code.NOT_YOUR_TURN, player, f"it is {hand.mover}'s turn after the gift")
                    self._take_over_turn(hand, player)
            else:
                self._flag(Code.NOT_YOUR_TURN, player, f"{gift} owes the 2's gift draw first")
                self._take_over_turn(hand, player)
        elif player != hand.mover:
            self._flag(Code.NOT_YOUR_TURN, player, f"it is {hand.mover}'s turn ({self._phase_words(hand)})")
            self._take_over_turn(hand, player)
        if isinstance(event, Play):
            self._play(hand, event)
        elif isinstance(event, Draw):
            self._draw(hand, event)
        else:
            self._pass(hand, event)

    def _take_over_turn(self, hand: Hand, player: str) -> None:
        """An out-of-turn actor: judge the event as their own normal turn; a pending
        total falls on them, a follow, a deflect or an owed gift is dropped."""
        hand.gift_target = None
        hand.mover = player
        hand.draws_this_turn = 0
        hand.drawn_card = None
        hand.follow_card = None
        hand.total_drawn = 0
        if hand.phase is Phase.OPENING:
            return
        hand.phase = Phase.SEVEN if hand.pending_total else Phase.TURN

    def _phase_words(self, hand: Hand) -> str:
        phase = hand.phase
        if phase is Phase.SEVEN:
            return f"facing a total of {hand.pending_total}"
        if phase in (Phase.FOLLOW, Phase.FOLLOW_DRAWN):
            return f"following {pretty(hand.follow_card or '')}"
        if phase is Phase.DEFLECT:
            return "may deflect the A"
        if phase is Phase.OPENING:
            return "the opening"
        return "a normal turn" if phase is Phase.TURN else "after drawing"

    # ----------------------------------------------------------------- play

    def _play(self, hand: Hand, event: Play) -> None:
        player, card = event.player, event.card
        phase = hand.phase
        held = hand.hands[player]
        in_hand = card in held
        if not in_hand:
            source = self._take_copy(hand, card, player)
            self._flag(Code.CARD_NOT_IN_HAND, player,
                       f"{player} does not hold {pretty(card)}; the card is taken from {source}")
        elif not self._legal(hand, phase, card, held):
            self._flag(Code.ILLEGAL_CARD, player, self._why_illegal(hand, card, player))
        if in_hand:
            held.remove(card)
        opening = phase is Phase.OPENING
        previous_suit = hand.current_suit
        hand.pile.append(card)
        hand.gift_target = None
        dropped = phase is Phase.SEVEN and card[0] != "7"
        if dropped:  # the table let a non-7 answer the total: it is gone
            hand.pending_total = 0
            hand.total_drawn = 0
        self._declare(hand, event, previous_suit, opening)
        last_card = not held
        self._judge_target(hand, event, takes_target=not opening and not last_card)
        if self.rules.last_card_call and len(held) == 1:
            exempt = card[0] == "8" and not self.elimination and not opening
            if not exempt:
                hand.call_due[player] = event.seq
        if dropped and self._end_chain(hand):
            return  # a tarkesh chain dropped: decided right after this line
        if opening:
            self._end_turn(hand, player)
            return
        if last_card:
            self._last_card(hand, player, card)
            return
        self._card_effect(hand, player, card, event)

    def _why_illegal(self, hand: Hand, card: str, player: str) -> str:
        phase = hand.phase
        top = hand.top
        if phase is Phase.SEVEN:
            return f"{player} faces a 7 total of {hand.pending_total}: only a 7 answers it, not {pretty(card)}"
        if phase is Phase.OPENING:
            return f"the opening card must be a club ({SUIT_NAMES['C']}), not {pretty(card)}"
        if phase is Phase.DEFLECT:
            return f"only an A deflects the skip, not {pretty(card)}"
        suit_name = SUIT_NAMES.get(hand.current_suit or "", "?")
        if phase in (Phase.FOLLOW, Phase.FOLLOW_DRAWN):
            basis = hand.follow_card or ""
            return (f"{pretty(card)} does not follow {pretty(basis)}: "
                    f"a follow is a {suit_name[:-1]} or another {basis[:1]}")
        if card[0] == "J":
            if self.rules.jack is JackRule.NOT_ON_JACK:
                return f"a J may not be laid on a J; only a {suit_name[:-1]} that is not a J"
            return f"{pretty(card)} is not wild while {player} holds a match for {pretty(top or '')}"
        if top is not None and top[0] == "J" and self.rules.jack is JackRule.NOT_ON_JACK:
            return f"after a J only the declared suit ({suit_name}) may be played, not {pretty(card)}"
        return (f"{pretty(card)} matches neither the current suit ({suit_name}) "
                f"nor the rank of {pretty(top or '')}")

    def _declare(self, hand: Hand, event: Play, previous_suit: str | None, opening: bool) -> None:
        card = event.card
        declares = card[0] == "J" and not opening
        if not declares:
            hand.current_suit = card[1]
            if event.suit is not None or event.suit_unreadable:
                what = "the opening card" if opening else pretty(card)
                self._flag(Code.BAD_SUIT, event.player, f"{what} declares no suit; 'suit' is not allowed")
            return
        if event.suit is None:
            hand.current_suit = card[1]
            why = "an unreadable suit" if event.suit_unreadable else "no suit"
            self._flag(Code.BAD_SUIT, event.player,
                       f"{pretty(card)} must declare a suit (C, D, H or S); {why} given")
            return
        if self.rules.jack_suit_must_differ and event.suit == previous_suit:
            self._flag(Code.BAD_SUIT, event.player,
                       f"a J must declare a suit other than the current one ({SUIT_NAMES[event.suit]})")
        hand.current_suit = event.suit

    def _judge_target(self, hand: Hand, event: Play, *, takes_target: bool) -> None:
        card, player = event.card, event.player
        if card[0] == "2" and self.rules.two_gives_gift:
            if not takes_target:
                if not hand.hands[player] and hand.phase is not Phase.OPENING:
                    return  # a target on a last-card 2 is allowed and ignored
                if event.target_given:
                    self._flag(Code.BAD_TARGET, player, f"{pretty(card)} here takes no target")
                return
            target = event.target
            if target is None:
                what = "an invalid target" if event.target_given else "no target"
                self._flag(Code.BAD_TARGET, player, f"{pretty(card)} must name a target player; {what} given")
            elif target == player:
                self._flag(Code.BAD_TARGET, player, f"{player} may not target themself with a 2")
            elif target not in self.seat:
                self._flag(Code.BAD_TARGET, player, f"the target {target!r} is not at the table")
            elif target not in hand.active or target in hand.finished:
                self._flag(Code.BAD_TARGET, player, f"the target {target} is no longer in the hand")
            elif hand.no_card_anywhere():
                return  # a gift owed with no card anywhere is simply short
            else:
                hand.gift_target = target
                hand.gift_from = player
            return
        if event.target_given:
            self._flag(Code.BAD_TARGET, player, f"{pretty(card)} takes no target")

    def _last_card(self, hand: Hand, player: str, card: str) -> None:
        rules = self.rules
        if player not in hand.active:
            self._goes_out(hand, player, card)
            return
        if card[0] == "8" and rules.option("last_eight_draws"):
            # not won yet: the player draws one card (the follow with an empty hand)
            self._enter_follow(hand, player, card)
            return
        if card[0] == "7" and rules.option("tarkesh"):
            if player not in hand.waiting_sevens:  # a waiting player's further 7 (a card
                hand.waiting_sevens.append(player)  # not held) only adds to the total
                hand.waiting_cards[player] = card
            hand.pending_total += rules.seven_total
            self._start_turn(hand, self._next_player(hand, player))
            return
        self._goes_out(hand, player, card)

    def _goes_out(self, hand: Hand, player: str, card: str | None) -> None:
        if player not in hand.active:  # a finished player acted again (not_your_turn)
            self._start_turn(hand, self._next_player(hand, player))
            return
        if not self.elimination:
            self._decide_out(hand, player, card)
            return
        hand.finished.append(player)
        hand.active.remove(player)
        hand.call_due.pop(player, None)
        if player in hand.waiting_sevens:  # never reached in practice; finish once only
            hand.waiting_sevens.remove(player)
        if card is not None and card[0] == "7" and not self.rules.option("tarkesh"):
            hand.pending_total = 0
        if len(hand.active) <= 1:
            self._decide_elimination(hand)
            return
        self._start_turn(hand, self._next_player(hand, player))

    def _card_effect(self, hand: Hand, player: str, card: str, event: Play) -> None:
        rules = self.rules
        rank = card[0]
        if rank == "7":
            hand.pending_total += rules.seven_total
            self._end_turn(hand, player)
        elif rank == "8" and rules.eight is EightRule.FOLLOW:
            self._enter_follow(hand, player, card)
        elif rank == "8":  # skip
            self._start_turn(hand, self._next_player(hand, player, 2))
        elif rank == "T":
            hand.direction = -hand.direction
            self._end_turn(hand, player)
        elif rank == "A":
            if rules.ace is AceRule.FOLLOW or (self.elimination and len(hand.active) == 2):
                held = hand.hands[player]
                hand.phase = Phase.FOLLOW
                hand.follow_card = card
                hand.mover = player
                if any(self._legal(hand, Phase.FOLLOW, c, held) for c in held):
                    hand.draws_this_turn = 0
                    hand.drawn_card = None
                else:
                    self._end_turn(hand, player)
            else:
                self._skip_from(hand, player)
        else:
            self._end_turn(hand, player)

    def _skip_from(self, hand: Hand, player: str) -> None:
        """An A skips the player after `player`, who may deflect it with an A."""
        skipped = self._next_player(hand, player)
        if self.rules.option("ace_deflect") and any(c[0] == "A" for c in hand.hands[skipped]):
            hand.mover = skipped
            hand.phase = Phase.DEFLECT
            hand.draws_this_turn = 0
            hand.drawn_card = None
            hand.follow_card = None
            return
        self._start_turn(hand, self._next_player(hand, skipped))

    def _enter_follow(self, hand: Hand, player: str, card: str) -> None:
        hand.mover = player
        hand.phase = Phase.FOLLOW
        hand.follow_card = card
        hand.draws_this_turn = 0
        hand.drawn_card = None
        held = hand.hands[player]
        if not hand.no_card_anywhere() or any(self._legal(hand, Phase.FOLLOW, c, held) for c in held):
            return
        # no follow held and nothing to draw: passed over (an empty hand goes out now)
        if not held:
            self._goes_out(hand, player, card)
        else:
            self._end_turn(hand, player)

    # ----------------------------------------------------------------- draw

    def _take_cards(self, hand: Hand, player: str, cards: Iterable[str]) -> None:
        """Move drawn cards from the stock into `player`'s hand, checking each is the
        stock's top (or an unseen card when the stock's order is unknown)."""
        problems: list[str] = []
        for card in cards:
            if hand.stock_size() == 0 and len(hand.pile) > 1 and self.rules.reshuffles:
                problems.append("the stock was empty and the pile was not turned with a reshuffle line")
                self._turn_pile(hand, None)
            order = hand.stock_order
            if order is not None and order and order[0] == card:
                order.pop(0)
                hand.stock[card] -= 1
                hand.stock_count -= 1
            elif hand.stock[card] > 0:
                if order is not None:
                    problems.append(f"{pretty(card)} is not the stock's top ({pretty(order[0])})")
                    order.remove(card)
                hand.stock[card] -= 1
                hand.stock_count -= 1
            else:
                source = self._take_copy(hand, card, player)
                problems.append(f"{pretty(card)} is not in the stock" + (
                    f" (its top is {pretty(order[0])})" if order else "") + f"; it is taken from {source}")
            hand.hands[player].append(card)
        if problems:
            self._flag(Code.STOCK_MISMATCH, player, "; ".join(dict.fromkeys(problems)))

    def _take_copy(self, hand: Hand, card: str, actor: str) -> str:
        """Take one copy of `card` from where the table has it, for a card played that its
        player does not hold or drawn that the stock does not hold, so that no card ever
        exists twice. Looked for in this order: the stock (an unseen copy), the discard pile
        under its top (nearest the top first), the other players' hands in seat order from
        the seat after `actor`, the pile's top, the laid-aside 7s, `actor`'s own hand.
        Returns where it came from (for the message)."""
        if hand.stock[card] > 0:
            hand.stock[card] -= 1
            hand.stock_count -= 1
            if hand.stock_order is not None:
                hand.stock_order.remove(card)  # the copy nearest the top
            return "the stock"
        pile = hand.pile
        for i in range(len(pile) - 2, -1, -1):
            if pile[i] == card:
                del pile[i]
                return "the discard pile"
        seat, n = self.seat[actor], len(self.players)
        for k in range(1, n):
            other = self.players[(seat + k) % n]
            held = hand.hands.get(other)
            if held is not None and card in held:
                held.remove(card)
                return f"{other}'s hand"
        if pile and pile[-1] == card:
            pile.pop()
            return "the top of the pile"
        if card in hand.laid_aside:
            hand.laid_aside.remove(card)
            return "the laid-aside 7s"
        own = hand.hands.get(actor)
        if own is not None and card in own:
            own.remove(card)
            return f"{actor}'s own hand"
        return "nowhere (no copy is left on the table)"

    def _turn_pile(self, hand: Hand, stock: tuple[str, ...] | None) -> None:
        """The discard pile but its top card becomes the stock (in `stock`'s order when
        the log gives it and it is exactly those cards)."""
        hand.stock.update(hand.pile[:-1])
        del hand.pile[:-1]
        hand.stock = +hand.stock
        hand.stock_count = hand.stock.total()
        if stock is not None and Counter(stock) == hand.stock:
            hand.stock_order = list(stock)
        else:
            hand.stock_order = None

    def _draw(self, hand: Hand, event: Draw) -> None:
        player = event.player
        cards = event.cards
        opts = self._options_for(hand, player)
        phase = hand.phase
        if phase is Phase.SEVEN:
            self._seven_draw(hand, event, opts)
            return
        if opts.obliged:
            self._flag(Code.MUST_PLAY, player,
                       f"{player} must play ({pretty_cards(opts.playable)}) instead of drawing")
        if opts.draw is None:
            # obliged to play a drawn match, one more card is just `must_play`; a draw of
            # any other count is a wrong count too, reported with it
            if not opts.obliged:
                self._flag(Code.ILLEGAL_DRAW, player, f"no draw is allowed now ({self._phase_words(hand)})")
            elif len(cards) != 1:
                self._flag(Code.ILLEGAL_DRAW, player,
                           f"a draw of {len(cards)} cards; even a single card would be wrong here")
        elif len(cards) != opts.draw:
            self._flag(Code.ILLEGAL_DRAW, player, f"a draw of {len(cards)} cards; {opts.draw} expected")
        self._take_cards(hand, player, cards)
        self._call_after_draw(hand, player, event.seq)
        drawn = cards[-1]
        hand.drawn_card = drawn
        hand.draws_this_turn += 1
        held = hand.hands[player]
        if phase is Phase.OPENING:
            if self._blocked_opening(hand, player):
                self._decide_blocked(hand)
            return
        if phase in (Phase.DEFLECT, Phase.FOLLOW_DRAWN) or (
            phase is Phase.FOLLOW and hand.follow_card is not None and hand.follow_card[0] != "8"
        ):
            if phase is Phase.DEFLECT:
                self._start_turn(hand, self._next_player(hand, player))
            else:
                self._end_turn(hand, player)
            return
        if phase is Phase.FOLLOW:  # the failed-follow draw after an 8
            if self.rules.failed_follow_ends_turn or not self._legal(hand, Phase.FOLLOW, drawn, held):
                self._end_turn(hand, player)
            else:
                hand.phase = Phase.FOLLOW_DRAWN
            return
        # a normal turn
        if self.rules.after_draw is AfterDraw.FREE:
            hand.phase = Phase.DRAWN
            return
        if self._legal(hand, Phase.DRAWN, drawn, held):
            hand.phase = Phase.DRAWN
        else:
            self._end_turn(hand, player)

    def _blocked_opening(self, hand: Hand, player: str) -> bool:
        return hand.stock_size() == 0 and not any(
            self._legal(hand, Phase.OPENING, c, hand.hands[player]) for c in hand.hands[player]
        )

    def _seven_draw(self, hand: Hand, event: Draw, opts: TurnOptions) -> None:
        player, cards = event.player, event.cards
        owed = hand.pending_total - hand.total_drawn
        if opts.obliged:
            self._flag(Code.MUST_PLAY, player,
                       f"{player} holds a 7 ({pretty_cards(opts.playable)}) and must play it")
        stock_before = hand.stock_size()
        can_turn = self.rules.reshuffles and len(hand.pile) > 1
        split = len(cards) < owed and len(cards) == stock_before and stock_before > 0
        if len(cards) != owed and not split:
            self._flag(Code.ILLEGAL_DRAW, player,
                       f"facing a total of {hand.pending_total}, {player} must draw {owed}, not {len(cards)}")
        self._take_cards(hand, player, cards)
        self._call_after_draw(hand, player, event.seq)
        hand.total_drawn += len(cards)
        if split and (can_turn or not self.rules.reshuffles):
            if not self.rules.reshuffles:
                self._decide_blocked(hand)  # the stock ran dry short of the total
                return
            return  # the rest is drawn after the reshuffle
        hand.pending_total = 0
        hand.total_drawn = 0
        self._total_drawn_by(hand, player)

    def _total_drawn_by(self, hand: Hand, player: str) -> None:
        """The total has been drawn (or could not be): tarkesh decides, else play goes on."""
        hand.pending_total = 0
        hand.total_drawn = 0
        if player in hand.waiting_sevens:
            hand.waiting_sevens.remove(player)  # the chain came back: play goes on
        if hand.waiting_sevens:
            if not self._end_chain(hand):
                self._start_turn(hand, self._next_player(hand, player))
            return
        self._end_turn(hand, player)

    def _end_chain(self, hand: Hand) -> bool:
        """A tarkesh chain is over (its total drawn, dropped without being drawn, or
        impossible to draw): in points play the earliest waiting 7-player wins (settlement
        follows); in elimination every waiting player finishes, in the order they went out,
        and a gift owed to one of them lapses. True when this decided the hand; False with
        nobody waiting, or when elimination play goes on."""
        waiting = list(hand.waiting_sevens)
        hand.waiting_sevens.clear()
        if not waiting:
            return False
        if not self.elimination:
            self._decide_out(hand, waiting[0], hand.waiting_cards.get(waiting[0]))
            return True
        for finisher in waiting:
            if finisher in hand.active:  # a player finishes once, never twice
                hand.finished.append(finisher)
                hand.active.remove(finisher)
                hand.call_due.pop(finisher, None)
        if hand.gift_target is not None and hand.gift_target not in hand.active:
            hand.gift_target = None
        if len(hand.active) <= 1:
            self._decide_elimination(hand)
            return True
        return False

    def _gift_draw(self, hand: Hand, event: Draw) -> None:
        if len(event.cards) != 1:
            self._flag(Code.ILLEGAL_DRAW, event.player,
                       f"the 2's gift is 1 card; {event.player} drew {len(event.cards)}")
        hand.gift_target = None
        self._take_cards(hand, event.player, event.cards)
        self._call_after_draw(hand, event.player, event.seq)

    def _call_after_draw(self, hand: Hand, player: str, seq: int) -> None:
        if self.rules.last_card_call and len(hand.hands[player]) == 1:
            hand.call_due[player] = seq

    # ----------------------------------------------------------------- pass

    def _pass(self, hand: Hand, event: Pass) -> None:
        player = event.player
        opts = self._options_for(hand, player)
        phase = hand.phase
        if not opts.may_pass:
            if phase is Phase.SEVEN:
                self._flag(Code.ILLEGAL_PASS, player,
                           f"facing a total of {hand.pending_total}: play a 7 or draw {hand.pending_total}")
            elif opts.obliged:
                self._flag(Code.MUST_PLAY, player,
                           f"{player} must play ({pretty_cards(opts.playable)}) instead of passing")
            else:
                self._flag(Code.ILLEGAL_PASS, player,
                           f"a pass is not allowed here ({self._phase_words(hand)}); {player} must draw")
            hand.pending_total = 0
            hand.total_drawn = 0
            if phase is Phase.SEVEN and self._end_chain(hand):
                return  # a tarkesh chain dropped: decided right after this line
        if phase is Phase.DEFLECT:
            self._start_turn(hand, self._next_player(hand, player))
            return
        self._end_turn(hand, player)

    # ----------------------------------------------------------------- calls, penalties

    def _close_call_windows(self, hand: Hand, event: Play | Draw | Pass) -> None:
        if not hand.call_due:
            return
        for caller in list(hand.call_due):
            if isinstance(event, Draw) and event.player == hand.gift_target and hand.gift_from == caller:
                continue
            del hand.call_due[caller]
            self._flag(Code.MISSED_CALL, caller,
                       f"{caller} was left with one card and did not announce it before this move")

    def _announce(self, event: Announce) -> None:
        if event.player not in self.seat:
            self._flag(Code.SCHEMA, None, f"announce: unknown player {event.player!r}")
            return
        hand = self.hand
        if hand is not None and self.hand_open and event.call == "last_card":
            hand.call_due.pop(event.player, None)

    def _penalty(self, event: Penalty) -> None:
        player = event.player
        if player not in self.seat:
            self._flag(Code.SCHEMA, None, f"penalty: unknown player {player!r}")
            return
        hand = self.hand
        if hand is None or not self.hand_open or hand.decided:
            self._flag(Code.UNEXPECTED_EVENT, player,
                       "a penalty between hands or after the hand is decided")
            return
        fouls = self.fouls[player]
        why: str | None = None
        if not self.rules.table_penalties:
            why = f"{self.rules.name} has no table penalties"
        elif player in hand.finished:
            why = f"{player} has already gone out"
        else:
            extra = self.rules.option("extra_fouls")
            reason = event.reason
            if reason == "misplay" and not fouls:
                why = f"{player} committed no foul since their last penalty"
            elif reason == "missed_call" and (Code.MISSED_CALL not in fouls or not hand.hands[player]):
                why = (f"{player} holds no cards" if Code.MISSED_CALL in fouls
                       else f"{player} missed no call since their last penalty")
            elif reason == "out_of_turn" and not extra:
                why = "'out_of_turn' penalties need the extra_fouls sub-rule, which is off"
            elif reason == "out_of_turn" and Code.NOT_YOUR_TURN not in fouls:
                why = f"{player} did not act out of turn since their last penalty"
            elif reason in ("delay", "other") and not extra:
                why = f"'{reason}' penalties need the extra_fouls sub-rule, which is off"
        if why is not None:
            self._flag(Code.UNJUSTIFIED_PENALTY, player, f"penalty ({event.reason}): {why}")
        fouls.clear()
        self._take_cards(hand, player, event.cards)

    def _reshuffle(self, event: Reshuffle) -> None:
        hand = self.hand
        if hand is None or not self.hand_open or hand.phase is Phase.OVER:
            self._flag(Code.UNEXPECTED_EVENT, None, "a reshuffle while no hand is being played")
            return
        # reported and not applied: the stock and the pile stay as they were (its `stock`
        # is not checked either)
        if not self.rules.reshuffles:
            self._flag(Code.UNEXPECTED_EVENT, None,
                       f"{self.rules.name} never reshuffles the pile; the line is not applied")
            return
        if hand.stock_size() > 0:
            self._flag(Code.UNEXPECTED_EVENT, None,
                       f"a reshuffle while the stock still holds {hand.stock_size()} cards; not applied")
            return
        under = Counter(hand.pile[:-1])
        if event.stock is not None and Counter(event.stock) != under:
            self._flag(Code.STOCK_MISMATCH, None, "the reshuffled stock is not the discard pile less its top card")
        if self.hand_log:
            self.hand_log[-1].reshuffles += 1
        self._turn_pile(hand, event.stock)
        if hand.phase is Phase.SETTLEMENT:
            self._advance_settlement(hand)

    # ----------------------------------------------------------------- outcomes

    def _decide_out(self, hand: Hand, winner: str, card: str | None) -> None:
        hand.call_due.clear()
        hand.gift_target = None
        rules = self.rules
        multiplier = rules.multipliers.get(card[0], 1) if card else 1
        hand.outcome = HandOutcome(hand.number, [winner], None, "out", None, card, multiplier)
        if rules.settlement_sevens:
            seat = self.seat[winner]
            n = len(self.players)
            hand.settle_queue = [
                self.players[(seat + k) % n] for k in range(1, n) if self.players[(seat + k) % n] in hand.hands
            ]
            hand.phase = Phase.SETTLEMENT
            hand.settle_player = None
            hand.settle_owed = 0
            self._advance_settlement(hand)
        else:
            self._score(hand)

    def _score(self, hand: Hand) -> None:
        outcome = hand.outcome
        assert outcome is not None
        hand.phase = Phase.OVER
        points = self.rules.points
        winners = set(outcome.winners)
        outcome.scores = {
            p: 0 if p in winners else sum(points[c[0]] for c in hand.hands[p]) * outcome.multiplier
            for p in self.players
        }

    def _decide_blocked(self, hand: Hand) -> None:
        hand.call_due.clear()
        points = self.rules.points
        values = {p: sum(points[c[0]] for c in hand.hands[p]) for p in self.players}
        lowest = min(values.values())
        winners = [p for p in self.players if values[p] == lowest]
        hand.outcome = HandOutcome(hand.number, winners, None, "blocked", None, None, 1)
        hand.phase = Phase.OVER
        hand.outcome.scores = {p: 0 if values[p] == lowest else values[p] for p in self.players}

    def _decide_elimination(self, hand: Hand) -> None:
        hand.call_due.clear()
        hand.gift_target = None
        order = hand.finished + [p for p in hand.active]
        hand.outcome = HandOutcome(hand.number, order[:1], None, "elimination", order, None, 1)
        hand.phase = Phase.OVER

    def _advance_settlement(self, hand: Hand) -> None:
        while True:
            player = hand.settle_player
            if player is not None and hand.settle_owed > 0:
                if hand.no_card_anywhere():
                    hand.settle_queue.clear()
                    hand.settle_owed = 0
                    hand.settle_player = None
                    break
                return  # waiting for this loser's draw (or a reshuffle)
            if player is not None:
                sevens = [c for c in hand.hands[player] if c[0] == "7"]
                if sevens:
                    for card in sevens:
                        hand.hands[player].remove(card)
                    hand.laid_aside.extend(sevens)
                    hand.settle_owed = 2 * len(sevens)
                    continue
            if not hand.settle_queue:
                hand.settle_player = None
                break
            hand.settle_player = hand.settle_queue.pop(0)
            hand.settle_owed = 0
        self._score(hand)

    def _settlement_event(self, hand: Hand, event: Play | Draw | Pass) -> None:
        player = event.player
        if not isinstance(event, Draw):
            self._flag(Code.UNEXPECTED_EVENT, player,
                       f"{event.type} after hand {hand.number} is decided (settlement draws only)")
            return
        if player != hand.settle_player:
            # not applied: a loser whose draw is still to come is out of turn; the winner
            # and a loser who owes nothing (settled already, or holding no 7) draw nothing
            assert hand.outcome is not None
            due = f"it is {hand.settle_player}'s draw for their 7s"
            if player in hand.outcome.winners:
                self._flag(Code.UNEXPECTED_EVENT, player,
                           f"settlement: {player} won hand {hand.number} and draws nothing; {due}")
            elif player in hand.settle_queue and any(c[0] == "7" for c in hand.hands[player]):
                self._flag(Code.NOT_YOUR_TURN, player, f"settlement: {due}")
            else:
                why = "holds no 7" if player in hand.settle_queue else "is settled already"
                self._flag(Code.UNEXPECTED_EVENT, player,
                           f"settlement: {player} {why} and owes nothing; {due}")
            return
        owed = hand.settle_owed
        stock = hand.stock_size()
        split = len(event.cards) < owed and len(event.cards) == stock
        if len(event.cards) != owed and not split:
            self._flag(Code.ILLEGAL_DRAW, player, f"settlement: {player} owes {owed} cards, drew {len(event.cards)}")
        self._take_cards(hand, player, event.cards)
        hand.settle_owed = max(0, owed - len(event.cards)) if split else 0
        self._advance_settlement(hand)

    # ----------------------------------------------------------------- end, result

    def _close_hand(self, hand: Hand) -> None:
        """Close the hand (its `end`, or a `deal` that abandons it). A hand closed without
        an outcome still counts as one of the match's hands, with nothing added to totals."""
        self.hand_open = False
        self._record_hand(hand, closed=True)
        outcome = hand.outcome
        if outcome is None:
            self.previous_winner = None
        else:
            self.outcomes.append(outcome)
            if outcome.scores is not None:
                for player, points in outcome.scores.items():
                    self.totals[player] += points
            if outcome.winners and self.elimination:
                self.first_places[outcome.winners[0]] += 1
            self.previous_winner = outcome.winners[0] if outcome.winners else None
        settings = self.settings
        if settings.match_hands is not None and hand.number >= settings.match_hands:
            self.match_over = True
        if settings.match_target is not None and any(
            t >= settings.match_target for t in self.totals.values()
        ):
            self.match_over = True

    def _end(self, event: End) -> None:
        hand = self.hand
        if hand is None or not self.hand_open:
            self._flag(Code.UNEXPECTED_EVENT, None, "an end while no hand is being played")
            return
        if hand.phase is not Phase.OVER:
            self._flag(Code.UNEXPECTED_EVENT, None,
                       f"an end before hand {hand.number} is over; it is closed without an outcome")
            hand.outcome = None
            self._close_hand(hand)
            return
        if event.hand != hand.number:
            self._flag(Code.UNEXPECTED_EVENT, None, f"end of hand {event.hand}, but hand {hand.number} is being played")
        outcome = hand.outcome
        assert outcome is not None
        if event.winners is not None and set(event.winners) != set(outcome.winners):
            self._flag(Code.WINNER_MISMATCH, None,
                       f"claimed winners {sorted(event.winners)}, computed {sorted(outcome.winners)}")
        if event.order is not None and list(event.order) != (outcome.order or []):
            self._flag(Code.WINNER_MISMATCH, None,
                       f"claimed order {list(event.order)}, computed {outcome.order}")
        if event.scores is not None and dict(event.scores) != (outcome.scores or {}):
            self._flag(Code.SCORE_MISMATCH, None,
                       f"claimed scores {_fmt_scores(event.scores)}, computed {_fmt_scores(outcome.scores)}")
        self._close_hand(hand)

    def _result(self, event: Result) -> None:
        if self.hand_open or not self.is_match_over_for_result():
            # it closes the game all the same: every later line is unexpected_event, not
            # replayed; its claims are not checked (like those of an early end)
            self._flag(Code.UNEXPECTED_EVENT, None,
                       "a result before the match is over; the game is closed unfinished")
            self.closed_by = "result"
            self.premature_result = True
            return
        if event.totals is not None:
            computed: dict[str, int] | None = None if self.elimination else self.totals
            if computed is None or dict(event.totals) != computed:
                self._flag(Code.SCORE_MISMATCH, None,
                           f"claimed totals {_fmt_scores(event.totals)}, computed {_fmt_scores(computed)}")
        if event.winners is not None and set(event.winners) != set(self.match_winners()):
            self._flag(Code.WINNER_MISMATCH, None,
                       f"claimed match winners {sorted(event.winners)}, computed {self.match_winners()}")
        self.closed_by = "result"

    def is_match_over_for_result(self) -> bool:
        settings = self.settings
        if settings.match_hands is None and settings.match_target is None:
            return self.last_hand_number > 0
        return self.match_over

    def _record_hand(self, hand: Hand, *, closed: bool) -> None:
        if self.hand_log and self.hand_log[-1].number == hand.number:
            record = self.hand_log[-1]
            record.outcome = hand.outcome
            record.cards_left = {p: list(cs) for p, cs in hand.hands.items()}
            record.closed = closed

    def hand_records(self) -> list[HandRecord]:
        """Every hand dealt so far, the running one brought up to date."""
        if self.hand is not None and self.hand_open:
            self._record_hand(self.hand, closed=False)
        return self.hand_log

    # ----------------------------------------------------------------- views

    def snapshot(self) -> dict[str, Any]:
        """The state as plain data, for the replay views and golden tests."""
        hand = self.hand
        if hand is None:
            return {"hand": None}
        opts = self.options()
        return {
            "hand": hand.number,
            "open": self.hand_open,
            "dealer": hand.dealer,
            "phase": hand.phase.value,
            "hands": {p: list(cs) for p, cs in hand.hands.items()},
            "pile_top": hand.top,
            "pile_size": len(hand.pile),
            "stock_size": hand.stock_size(),
            "current_suit": hand.current_suit,
            "direction": "clockwise" if hand.direction == 1 else "counter-clockwise",
            "mover": self.expected_actor(),
            "pending_total": hand.pending_total,
            "follow_card": hand.follow_card,
            "gift_target": hand.gift_target,
            "call_due": sorted(hand.call_due),
            "finished": list(hand.finished),
            "waiting_sevens": list(hand.waiting_sevens),
            "laid_aside": list(hand.laid_aside),
            "legal": None if opts is None else {
                "player": opts.player, "play": list(opts.playable), "draw": opts.draw,
                "pass": opts.may_pass, "obliged": opts.obliged, "gift": opts.gift,
                "text": opts.describe(),
            },
            "outcome": None if hand.outcome is None else hand.outcome.to_json(),
        }


def _actor(event: Event) -> str | None:
    player = getattr(event, "player", None)
    return player if isinstance(player, str) else None


def _fmt_scores(scores: Mapping[str, Any] | None) -> str:
    if scores is None:
        return "none"
    return "{" + ", ".join(f"{p}: {v}" for p, v in scores.items()) + "}"


@dataclass(slots=True)
class HeaderReading:
    settings: Settings | None
    violations: list[tuple[Code, str]] = field(default_factory=list)


def read_header(header: Header, rulesets: Mapping[str, Ruleset]) -> HeaderReading:
    """Judge a `game` header: the settings to replay with, or None when unusable."""
    out: list[tuple[Code, str]] = []
    unusable = False
    if header.format != "haftkhabis/1":
        out.append((Code.SCHEMA, f"format must be 'haftkhabis/1', got {header.format!r}"))
        unusable = True
    players = header.players
    if (
        not isinstance(players, tuple)
        or not all(isinstance(p, str) and 1 <= len(p) <= 64 for p in players)
        or len(players) < 2
        or len(set(players)) != len(players)
    ):
        out.append((Code.SCHEMA, f"players must be 2 or more unique ids of 1-64 characters, got {players!r}"))
        unusable = True
    name = header.ruleset
    if name is None:
        out.append((Code.SCHEMA, "the required field 'ruleset' is missing"))
        return HeaderReading(None, out)
    if not isinstance(name, str) or name not in rulesets:
        out.append((Code.UNKNOWN_RULESET, f"unknown ruleset {name!r} (known: {', '.join(rulesets)})"))
        return HeaderReading(None, out)
    rules = rulesets[name]
    options = header.options
    overrides: dict[str, bool] = {}
    if options is not None:
        if not isinstance(options, dict):
            out.append((Code.SCHEMA, f"options must be an object, got {options!r}"))
        else:
            for key, value in options.items():
                if key not in rules.options:
                    known = ", ".join(rules.options) or "none"
                    out.append((Code.UNKNOWN_RULESET,
                                f"unknown option {key!r} for {rules.name} (known: {known})"))
                    unusable = True
                elif not isinstance(value, bool):
                    out.append((Code.SCHEMA, f"option {key!r} must be true or false, got {value!r}"))
                else:
                    overrides[key] = value
    mode = Mode.POINTS
    if header.mode is not None:
        try:
            mode = Mode(header.mode)
        except ValueError:
            out.append((Code.UNKNOWN_RULESET, f"unknown mode {header.mode!r}"))
            unusable = True
        else:
            if mode not in rules.modes:
                out.append((Code.UNKNOWN_RULESET, f"{rules.name} has no {mode.value} mode"))
                unusable = True
    if unusable:
        return HeaderReading(None, out)
    assert isinstance(players, tuple)
    if not rules.min_players <= len(players) <= rules.max_players:
        out.append((Code.SCHEMA, f"{rules.name} is played by {rules.min_players}"
                    + (f" to {rules.max_players}" if rules.max_players != rules.min_players else "")
                    + f" players, not {len(players)}"))
    decks = rules.decks_for(len(players))
    if header.decks is not None:
        allowed = (1, 2) if rules.two_decks_above is not None else (1,)
        if type(header.decks) is int and header.decks in allowed:
            decks = header.decks
        else:
            out.append((Code.SCHEMA, f"decks must be one of {allowed} for {rules.name}, got {header.decks!r}"))
    match_hands = rules.default_hands
    match_target: int | None = None
    match = header.match
    if match is not None:
        if isinstance(match, dict) and len(match) == 1 and type(next(iter(match.values()))) is int \
                and next(iter(match.values())) >= 1 and next(iter(match)) in ("hands", "target"):
            key, value = next(iter(match.items()))
            if key == "hands":
                match_hands = value
            elif mode is Mode.ELIMINATION:
                out.append((Code.SCHEMA, "a points target makes no sense in elimination play"))
                match_hands = None
            else:
                match_hands = None
                match_target = value
        else:
            out.append((Code.SCHEMA, f"match must be {{\"hands\": N}} or {{\"target\": N}}, got {match!r}"))
    if header.meta is not None and not isinstance(header.meta, dict):
        out.append((Code.SCHEMA, f"meta must be an object, got {header.meta!r}"))
    settings = Settings(rules.with_options(overrides), players, mode, decks, match_hands, match_target)
    return HeaderReading(settings, out)
