"""Move quality and deal strength of a replayed game, by rollouts on the native core.

At every decision of a game (a turn where the player to move had two legal moves or
more), the core estimates each legal move's expected hand outcome by determinized Monte
Carlo rollouts from that player's information set (`_core.GameRun.analyse`; the rule of
what a player sees is `engine.player_view`'s, and the rollouts never read the hidden cards
as they lay). After each deal it estimates every player's expected outcome of the hand
under the same policy (`_core.GameRun.position_value`): the deal's strength.

Two searches value a decision's moves (`Search`): `flat` Monte Carlo (every legal move
played out the same number of times in the same worlds, the default) and `ismcts`
(single-observer information-set MCTS: the same number of playouts spent by a tree search
whose worlds are drawn from the same information set). docs/analysis.md says which pays.

Outcomes are points at the hand's end, lower is better (elimination play: the finishing
place, 0 first). A move's *loss* is how many points worse its expected outcome is than the
best move's, estimated over paired rollouts with its standard error. docs/analysis.md
says what each number means and where it stops meaning it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import orjson

from engine import ENGINE_VERSION, _core

if TYPE_CHECKING:
    from engine.replay import GameReplay

#: the rollout policy's name and version (stored with every analysis)
POLICY = _core.ANALYSIS_POLICY
#: rollouts per legal move at a decision, unless asked otherwise
DEFAULT_ROLLOUTS = 500
#: a clear mistake: a loss significant at the rollouts used and at least this many points
CLEAR_MISTAKE_POINTS = 5.0
TURN_KINDS = frozenset({"play", "draw", "pass"})


class Search(StrEnum):
    """How a decision's moves are valued (the core's `analysis::Search`)."""

    #: every legal move played out `rollouts` times in shared worlds (paired estimates)
    FLAT = "flat"
    #: information-set MCTS spending the same playouts (rollouts x legal moves)
    ISMCTS = "ismcts"


class AnalysisError(ValueError):
    """The game cannot be analysed: no usable header, or no such hand."""


@dataclass(frozen=True, slots=True)
class MoveEstimate:
    """One legal move's expected hand outcome at a decision."""

    kind: str  # play · draw · pass
    card: str | None
    suit: str | None
    target: str | None
    text: str
    mean: float  # expected points at the hand's end (lower is better)
    se: float
    win_rate: float
    visits: int  # the playouts behind `mean` (flat: the rollouts; ismcts: root visits)
    loss: float  # mean (this move - the best move): flat over paired rollouts, ismcts unpaired
    loss_se: float
    significant: bool  # loss > 1.96 loss_se

    @property
    def notation(self) -> str:
        """The move as the what-if writes it: `7C`, `JS/H`, `2D>lale`, `draw`, `pass`."""
        if self.kind != "play":
            return self.kind
        return f"{self.card}{'/' + self.suit if self.suit else ''}{'>' + self.target if self.target else ''}"


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision of the game: the moves the player could make and the one they made."""

    seq: int
    hand: int
    player: str
    moves: tuple[MoveEstimate, ...]
    best: int
    chosen: int | None  # None: the recorded move is not one of the legal moves
    rollouts: int  # flat: per move; ismcts: the search's iterations
    seed: int
    search: Search = Search.FLAT

    @property
    def best_move(self) -> MoveEstimate:
        return self.moves[self.best]

    @property
    def chosen_move(self) -> MoveEstimate | None:
        return None if self.chosen is None else self.moves[self.chosen]

    @property
    def loss(self) -> float | None:
        """The chosen move's expected loss in points against the best move."""
        move = self.chosen_move
        return None if move is None else move.loss

    @property
    def mistake(self) -> bool:
        """A clear mistake: a significant loss of at least `CLEAR_MISTAKE_POINTS`."""
        move = self.chosen_move
        return move is not None and move.significant and move.loss >= CLEAR_MISTAKE_POINTS

    def summary(self) -> str:
        """The decision in words ("zeynep: draw; play 7♥ would score 4.1 ± 0.6 points
        fewer")."""
        chosen, best = self.chosen_move, self.best_move
        if chosen is None:
            return f"{self.player}: the recorded move is not a legal move here; best {best.text}"
        if chosen.loss <= 0 or self.chosen == self.best:
            return f"{self.player}: {chosen.text} — the best move found"
        verdict = "a clear mistake" if self.mistake else (
            "significant" if chosen.significant else "within the noise")
        return (f"{self.player}: {chosen.text}; {best.text} would score "
                f"{chosen.loss:.1f} ± {chosen.loss_se:.1f} points fewer ({verdict})")


@dataclass(frozen=True, slots=True)
class DealValue:
    """A player's expected outcome of a hand from what they were dealt (their information
    set right after the deal), every move made by the rollout policy."""

    hand: int
    player: str
    mean: float
    se: float
    win_rate: float
    rollouts: int


@dataclass(slots=True)
class GameAnalysis:
    """A game's decisions and deals, analysed."""

    game: str
    players: tuple[str, ...]
    rollouts: int
    seed: int
    search: Search = Search.FLAT
    policy: str = POLICY
    engine_version: str = ENGINE_VERSION
    decisions: list[Decision] = field(default_factory=list)
    deals: list[DealValue] = field(default_factory=list)
    #: hand -> player -> points at the hand's end, as recorded
    results: dict[int, dict[str, int]] = field(default_factory=dict)

    def luck(self) -> list[dict[str, Any]]:
        """Per hand and player: the deal's expected points, the table's mean of those,
        `luck` (table mean − the player's, points: positive is a better deal than the
        table's), the points scored and `play` (expected − scored: positive is better
        than the policy would have done with that deal)."""
        out: list[dict[str, Any]] = []
        by_hand: dict[int, list[DealValue]] = {}
        for deal in self.deals:
            by_hand.setdefault(deal.hand, []).append(deal)
        for hand, deals in sorted(by_hand.items()):
            table_mean = sum(d.mean for d in deals) / len(deals)
            scored = self.results.get(hand, {})
            for d in deals:
                points = scored.get(d.player)
                out.append({
                    "hand": hand, "player": d.player, "expected": d.mean, "expected_se": d.se,
                    "table_expected": table_mean, "luck": table_mean - d.mean,
                    "points": points, "play": None if points is None else d.mean - points,
                })
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game, "players": list(self.players), "rollouts": self.rollouts,
            "seed": self.seed, "search": str(self.search), "policy": self.policy, "engine_version": self.engine_version,
            "decisions": [
                {**{k: v for k, v in asdict(d).items() if k != "moves"},
                 "moves": [{**asdict(m), "notation": m.notation} for m in d.moves],
                 "loss": d.loss, "mistake": d.mistake, "summary": d.summary()}
                for d in self.decisions
            ],
            "deals": [asdict(d) for d in self.deals],
            "luck": self.luck(),
        }


def decision_seed(seed: int, seq: int) -> int:
    """Each decision's own seed, so one decision is reproduced without the others."""
    return (seed * 1_000_003 + seq) % (1 << 64)


def _chosen(moves: Sequence[MoveEstimate], raw: dict[str, Any]) -> int | None:
    kind = raw.get("type")
    for i, move in enumerate(moves):
        if move.kind != kind:
            continue
        if kind != "play":
            return i
        if move.card == raw.get("card") and move.suit == raw.get("suit") \
                and move.target == raw.get("target"):
            return i
    # a suit or target the rules ignore here was still written: match the card alone
    cards = [i for i, m in enumerate(moves) if m.kind == "play" and m.card == raw.get("card")]
    return cards[0] if kind == "play" and len(cards) == 1 else None


def analyse_lines(
    game: str,
    lines: Iterable[dict[str, Any]],
    *,
    hand: int | None = None,
    rollouts: int = DEFAULT_ROLLOUTS,
    seed: int = 0,
    threads: int = 0,
    deals: bool = True,
    decisions: bool = True,
    search: Search = Search.FLAT,
) -> GameAnalysis:
    """Analyse `game` from its lines (JSON objects in seq order, as replayed): every
    decision (of `hand` only, when given) and, with `deals`, every player's deal value.
    Decisions only where the player to move is the line's player and had two moves or
    more. `search` values the decisions; deal values are always flat rollouts (there is no
    choice to search)."""
    run = _core.GameRun(game)
    analysis: GameAnalysis | None = None
    current = 0
    for obj in lines:
        kind = obj.get("type")
        if analysis is not None and run.hand_open and kind in TURN_KINDS and decisions \
                and (hand is None or current == hand):
            options = run.options()
            if options is not None and options["player"] == obj.get("player"):
                seq = int(obj.get("seq", 0))
                found = run.analyse(rollouts=rollouts, seed=decision_seed(seed, seq), threads=threads,
                                    search=str(search))
                if found is not None:
                    moves = tuple(MoveEstimate(**m) for m in found["moves"])
                    analysis.decisions.append(Decision(
                        seq, current, options["player"], moves, found["best"],
                        _chosen(moves, obj), found["rollouts"], found["seed"], Search(found["search"])))
        run.feed(orjson.dumps(obj))
        if analysis is None and not run.invalid:
            analysis = GameAnalysis(game, tuple(run.players), rollouts, seed, Search(search))
        if analysis is None:
            continue
        if kind == "deal":
            current = int(obj.get("hand", 0)) if isinstance(obj.get("hand"), int) else current + 1
            if deals and run.hand_open and (hand is None or current == hand):
                for player in analysis.players:
                    value = run.position_value(player, rollouts=rollouts,
                                               seed=decision_seed(seed, -current - 1), threads=threads)
                    if value is not None:
                        analysis.deals.append(DealValue(current, player, value["mean"], value["se"],
                                                        value["win_rate"], value["rollouts"]))
    if analysis is None:
        raise AnalysisError(f"game {game!r} has no usable header: nothing to analyse")
    for outcome in run.decided_outcomes():
        scores = outcome.get("scores")
        if isinstance(scores, dict):
            analysis.results[int(outcome["hand"])] = {str(p): int(v) for p, v in scores.items()}
    if hand is not None and not any(d.hand == hand for d in analysis.decisions) \
            and not any(d.hand == hand for d in analysis.deals):
        raise AnalysisError(f"game {game!r} has no hand {hand} with a decision to analyse")
    return analysis


def analyse_replay(replay: GameReplay, **kwargs: Any) -> GameAnalysis:
    """`analyse_lines` over a replayed game's lines (support view: every line as logged;
    the analysis itself reads only each decider's information set)."""
    if replay.viewer is not None:
        raise AnalysisError("analyse the support view of a game; the rollouts keep to the "
                            "deciding player's information set themselves")
    lines = [s.raw for s in replay.steps if s.raw is not None]
    return analyse_lines(replay.game, lines, **kwargs)
