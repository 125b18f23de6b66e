"""What-if at a step: replace the move recorded at `seq` by another and play the branch on.

`what_if(lines, game, seq, moves)` replays the game up to the line before `seq`, then
plays `moves` — each a legal choice of the player to move, in the core's legality view —
one after another, with the same checks the validator makes (a move the core flags is
refused, with the rule that forbids it, and the branch stops before it). The cards a draw
takes are known when the deal's (or the last reshuffle's) `stock` is in the log; without
it the branch stops at the first draw and says which cards it could be. Last-card calls
due in the branch are made for the player (the branch plays correctly). When the hand is
decided, its outcome is compared with the recorded one.

In a player's view (`viewer=`) the branch is what that player could explore: their own
moves only, stopping before a draw, every state as they would see it
(`engine.player_view`, which decides all of it).

It is a plain function of the log's lines, so the CLI, the dashboard's replay page and
the HTTP API (`GET /v1/games/{id}/steps/{seq}/whatif?move=…`) call the same code;
`WhatIf.to_json()` is its wire form. Moves are written `7C`, `JS/H` (a J declaring
hearts), `2D>lale` (a 2 whose gift goes to lale), `draw`, `pass`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine import _core
from engine.cards import RANKS, SUIT_SYMBOLS, SUITS, pack, pretty
from engine.infer import GameLog, Line, collect_games, read_paths
from engine.player_view import branch_stop, public_whatif
from engine.profiles import ruleset_infos


class WhatIfError(ValueError):
    """The what-if cannot be asked: no such game, step or player, or a bad move."""


class BadMove(WhatIfError):
    """A move that cannot be read (`Move.parse`)."""


@dataclass(frozen=True, slots=True)
class Move:
    """A choice of the player to move: play a card (a J's declared suit, a 2's target),
    draw what the rules say, or pass."""

    kind: str  # play · draw · pass
    card: str | None = None
    suit: str | None = None
    target: str | None = None

    @classmethod
    def parse(cls, text: str) -> Move:
        word = text.strip()
        if word.lower() in ("draw", "pass"):
            return cls(word.lower())
        card, _, target = word.partition(">")
        card, _, suit = card.partition("/")
        card = card.strip().upper()
        if len(card) != 2 or card[0] not in "A23456789TJQK" or card[1] not in "CDHS":
            raise BadMove(f"a move is a card like 7C (JS/H, 2D>lale), draw or pass; not {text!r}")
        return cls("play", card, suit.strip().upper() or None, target.strip() or None)

    def __str__(self) -> str:
        if self.kind != "play":
            return self.kind
        return f"{self.card}{'/' + self.suit if self.suit else ''}{'>' + self.target if self.target else ''}"

    def words(self, draws: int | None = None) -> str:
        """The move as people read it: `10♥`, `J♠ declaring ♥`, `2♦ to lale`, `draw 2`,
        `pass` (`draws`: how many cards the draw takes, when known)."""
        if self.kind == "draw":
            return f"draw {draws}" if draws else "draw"
        if self.kind != "play" or self.card is None:
            return self.kind
        text = pretty(self.card)
        if self.suit:
            text += f" declaring {SUIT_SYMBOLS.get(self.suit, self.suit)}"
        if self.target:
            text += f" to {self.target}"
        return text

    def line(self, game: str, seq: int, player: str, cards: Sequence[str] = ()) -> dict[str, Any]:
        """The log line this move is, for `player` at `seq`."""
        out: dict[str, Any] = {"game": game, "seq": seq, "type": self.kind, "player": player}
        if self.kind == "play":
            out["card"] = self.card
            if self.suit:
                out["suit"] = self.suit
            if self.target:
                out["target"] = self.target
        elif self.kind == "draw":
            out["cards"] = list(cards)
        return out


@dataclass(frozen=True, slots=True)
class BranchStep:
    """One move of the branch and the table after it."""

    seq: int
    player: str
    move: Move
    line: dict[str, Any]
    drawn: tuple[str, ...]
    state: dict[str, Any]
    card_count: int | None


@dataclass(frozen=True, slots=True)
class Refusal:
    """A move the rules forbid here: the violations the core reports for it."""

    move: Move
    player: str
    violations: tuple[_core.ViolationInfo, ...]

    def reason(self) -> str:
        return "; ".join(str(v["code"]) + (f": {v['message']}" if v["message"] else "")
                         for v in self.violations)


@dataclass(frozen=True, slots=True)
class WhatIf:
    game: str
    seq: int
    hand: int | None
    recorded: dict[str, Any] | None  # the line recorded at `seq`
    recorded_violations: tuple[_core.ViolationInfo, ...]
    before: dict[str, Any] | None  # the state before `seq`
    alternatives: tuple[Move, ...]  # what was legal at `seq`
    steps: tuple[BranchStep, ...]
    refused: Refusal | None
    next_moves: tuple[Move, ...]  # legal at the branch's end (empty when it stopped)
    stopped: str | None  # why the branch cannot go on, if it cannot
    unknown_cards: tuple[str, ...]  # the cards a draw could take when the stock is unknown
    stock_known: bool
    outcome: dict[str, Any] | None  # the branch's hand outcome, once decided
    recorded_outcome: dict[str, Any] | None
    expected_cards: int | None = None
    notes: list[str] = field(default_factory=list)
    viewer: str | None = None  # whose player view this is (None: support)

    @property
    def state(self) -> dict[str, Any] | None:
        """The state at the branch's end."""
        return self.steps[-1].state if self.steps else self.before

    def draws(self, *, at_end: bool) -> int | None:
        """How many cards a draw takes at `seq` (or at the branch's end): the legality
        view's count."""
        state = self.state if at_end else self.before
        legal = (state or {}).get("legal") or {}
        count = legal.get("draw")
        return count if isinstance(count, int) and count > 0 else None

    def offered(self, *, at_end: bool) -> list[tuple[Move, str]]:
        """The moves legal at `seq` (or at the branch's end), each with its words."""
        moves = self.next_moves if at_end else self.alternatives
        count = self.draws(at_end=at_end)
        return [(move, move.words(count)) for move in moves]

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game, "seq": self.seq, "hand": self.hand,
            "recorded": self.recorded, "recorded_violations": list(self.recorded_violations),
            "before": self.before,
            "alternatives": [str(m) for m in self.alternatives],
            "steps": [{"seq": s.seq, "player": s.player, "move": str(s.move), "line": s.line,
                       "drawn": list(s.drawn), "state": s.state, "card_count": s.card_count}
                      for s in self.steps],
            "refused": None if self.refused is None else {
                "move": str(self.refused.move), "player": self.refused.player,
                "violations": list(self.refused.violations), "reason": self.refused.reason()},
            "next_moves": [str(m) for m in self.next_moves],
            "stopped": self.stopped, "unknown_cards": list(self.unknown_cards),
            "stock_known": self.stock_known, "outcome": self.outcome,
            "recorded_outcome": self.recorded_outcome, "notes": self.notes,
            "viewer": self.viewer,
        }


def legal_moves(view: dict[str, Any] | None, state: dict[str, Any] | None,
                settings: dict[str, Any]) -> list[Move]:
    """Every move the legality view allows, a J once per suit it may declare and a 2 once
    per player its gift may go to."""
    if view is None or state is None:
        return []
    info = ruleset_infos()[settings["ruleset"]]
    effects = info["effects"]
    player = view["player"]
    held = state["hands"].get(player, [])
    others = [p for p in state["active"] if p != player and p not in state["finished"]]
    moves: list[Move] = []
    opening = view["phase"] == "opening"
    for card in view["play"]:
        effect = effects[card[0]]
        if effect == "declare" and not opening:
            current = state["current_suit"]
            for suit in "CDHS":
                if not (info["jack_suit_must_differ"] and suit == current):
                    moves.append(Move("play", card, suit))
        elif effect == "gift" and not opening and len(held) > 1 and others and not view["gift"]:
            moves.extend(Move("play", card, target=p) for p in others)
        else:
            moves.append(Move("play", card))
    if view["draw"] is not None and not view["obliged"]:
        moves.append(Move("draw"))
    if view["pass"] and not view["obliged"]:
        moves.append(Move("pass"))
    return moves


def _ordered(log: GameLog) -> list[tuple[int, bytes, str | None, int | None]]:
    """The game's lines in seq order, identical repeats dropped, the first of two
    conflicting lines kept (as the validator does)."""
    seen: dict[int, tuple[int, bytes, str | None, int | None]] = {}
    for e in log.entries:
        if e.seq is not None and e.seq not in seen:
            seen[e.seq] = (e.seq, e.raw, e.file, e.line)
    return [seen[s] for s in sorted(seen)]


class _Stock:
    """The stock's order (top first) as far as the log tells it."""

    def __init__(self) -> None:
        self.cards: list[str] | None = None

    def copy(self) -> _Stock:
        kept = _Stock()
        kept.cards = list(self.cards) if self.cards is not None else None
        return kept

    def after(self, event: dict[str, Any] | None) -> None:
        if event is None:
            return
        kind = event.get("type")
        if kind in ("deal", "reshuffle"):
            self.cards = list(event["stock"]) if event.get("stock") is not None else None
        elif kind in ("draw", "penalty") and self.cards is not None:
            for card in event.get("cards") or ():
                if card in self.cards:
                    self.cards.remove(card)
                else:
                    self.cards = None  # the log drew a card the stock did not hold
                    return


def _unseen(state: dict[str, Any], decks: int) -> list[str]:
    """The cards no hand holds and nobody has played: the stock's, when its order is not
    known (a support view: every hand is in `state`)."""
    seen: Counter[str] = Counter()
    for cards in state["hands"].values():
        seen.update(cards)
    seen.update(state["pile"])
    seen.update(state["laid_aside"])
    return sorted((pack(decks) - seen).elements(), key=lambda c: (SUITS.index(c[1]), RANKS.index(c[0])))


def what_if(
    lines: Iterable[Line], game: str, seq: int, moves: Sequence[Move | str] = (),
    viewer: str | None = None,
) -> WhatIf:
    """At the step `seq` of `game`, play `moves` instead of the recorded line (see the
    module's docstring), in `viewer`'s player view (None: the support view). WhatIfError
    when the game or the step is not in the log, or `viewer` did not play it."""
    logs = collect_games(lines, [game])
    log = logs.get(game)
    if log is None:
        raise WhatIfError(f"no line of the log names game {game!r}")
    ordered = _ordered(log)
    if seq < 1 or not any(s == seq for s, *_ in ordered):
        raise WhatIfError(f"game {game} has no step at seq {seq}")
    chosen = [m if isinstance(m, Move) else Move.parse(m) for m in moves]

    # the game up to the step, which each branch starts from a copy of, and the stock's
    # order as those lines tell it
    prefix_run, prefix_stock = _core.GameRun(game, record=True), _Stock()
    for s, raw, _, number in ordered:
        if s < seq:
            prefix_run.feed(raw, number)
    prefix_steps = prefix_run.steps(states=False)
    for step in prefix_steps:
        if step["applied"]:
            prefix_stock.after(step["event"])
    # the recorded game (the prefix and the rest as logged), for the line at seq (the
    # rest's first: only its step is converted) and the hand's recorded outcome
    recorded_run = prefix_run.copy()
    at: _core.StepInfo | None = None
    for s, raw, _, number in ordered:
        if s >= seq:
            recorded_run.feed(raw, number)
            if s == seq:
                made = recorded_run.steps(states=False, start=len(prefix_steps))
                at = made[0] if made else None

    def replay_prefix() -> tuple[_core.GameRun, _Stock]:
        return prefix_run.copy(), prefix_stock.copy()

    run, stock = replay_prefix()
    if run.invalid:
        raise WhatIfError(f"game {game} has no usable header: nothing to replay")
    settings = run.settings()
    if viewer is not None and viewer not in settings["players"]:
        raise WhatIfError(f"{viewer!r} is not a player of game {game} "
                          f"(players: {', '.join(settings['players'])})")
    decks = settings["decks"]
    before = run.snapshot()
    hand = before["hand"] if before else None
    alternatives = tuple(legal_moves(run.options(), before, settings))
    recorded_outcome = None
    if hand is not None:
        recorded_outcome = next((o for o in recorded_run.decided_outcomes() if o["hand"] == hand), None)

    steps: list[BranchStep] = []
    refused: Refusal | None = None
    stopped: str | None = None
    unknown: tuple[str, ...] = ()
    fed: list[bytes] = []  # the branch's lines so far, to rebuild it after a refusal
    next_seq = seq
    for move in chosen:
        view, state = run.options(), run.snapshot()
        if view is None or state is None:
            stopped = "the hand is decided: nobody is to move"
            break
        player = view["player"]
        drawn: tuple[str, ...] = ()
        count = view["draw"] or 1
        hidden = branch_stop(viewer, player, move.kind, count)
        if hidden is not None:
            stopped = hidden
            break
        if move.kind == "draw":
            if stock.cards is None or len(stock.cards) != state["stock_size"]:
                unknown = tuple(_unseen(state, decks))
                stopped = (f"{player} draws {count} card(s), but the log does not tell the stock's "
                           f"order: any of the {len(unknown)} unseen cards")
                break
            if len(stock.cards) < count:
                stopped = (f"{player} would draw {count} card(s) from a stock of {len(stock.cards)}: "
                           "the pile is turned, and the new stock's order is not known")
                break
            drawn = tuple(stock.cards[:count])
        line = move.line(game, next_seq, player, drawn)
        raw = orjson.dumps(line)
        found = run.feed(raw)
        if found:
            refused = Refusal(move, player, tuple(found))
            run, stock = replay_prefix()  # undo: the branch without the refused move
            for done in fed:
                run.feed(done)
                stock.after(orjson.loads(done))
            break
        fed.append(raw)
        stock.after(line)
        next_seq += 1
        # the last-card calls the move made due: the branch plays correctly
        for caller in (run.snapshot() or {}).get("call_due", []):
            call = orjson.dumps({"game": game, "seq": next_seq, "type": "announce",
                                 "player": caller, "call": "last_card"})
            if not run.feed(call):
                fed.append(call)
                next_seq += 1
        after = run.snapshot()
        assert after is not None
        steps.append(BranchStep(line["seq"], player, move, line, drawn, after, run.card_count()))
    end_state = run.snapshot()
    outcome = end_state.get("outcome") if end_state else None
    if outcome is not None and stopped is None and refused is None:
        stopped = "the hand is decided"
    if stopped is None and refused is None and (view := run.options()) is not None:
        stopped = branch_stop(viewer, view["player"], "play", 0)  # another's turn: hidden
    next_moves = () if stopped or refused else tuple(legal_moves(run.options(), end_state, settings))
    return public_whatif(WhatIf(
        game=game, seq=seq, hand=hand,
        recorded=at["raw"] if at else None,
        recorded_violations=tuple(at["violations"]) if at else (),
        before=before, alternatives=alternatives, steps=tuple(steps), refused=refused,
        next_moves=next_moves, stopped=stopped, unknown_cards=unknown,
        stock_known=stock.cards is not None, outcome=outcome,
        recorded_outcome=recorded_outcome, expected_cards=52 * decks,
    ), viewer)


def what_if_paths(paths: list[str], game: str, seq: int, moves: Sequence[Move | str] = (),
                  viewer: str | None = None) -> WhatIf:
    """`what_if` over log files and directories."""
    return what_if(read_paths(paths), game, seq, moves, viewer)
