"""Small random games for the dashboard's tests: legal play chosen at random among the
engine's own legal moves, so the logs replay compliant; `corrupt` then plants violations.

Test support only (the project's simulator is `engine/simulate.py`). The engine is the
native core: every line goes to one `engine._core.GameRun`, whose `options()` (the legality
view) and `snapshot()` the moves are chosen from. A candidate line the engine finds anything
wrong with is not kept: the run is then rebuilt from the lines kept so far.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import orjson

from engine import _core
from engine.cards import ONE_DECK, SUITS
from engine.rulesets import RULESETS, Ruleset

Line = dict[str, Any]


class _Builder:
    def __init__(self, game: str, ruleset: str, players: list[str], rng: random.Random,
                 ts: str, **header: Any) -> None:
        self.game = game
        self.rng = rng
        self.lines: list[Line] = []
        self.raws: list[bytes] = []  # the lines kept, as fed to the run
        self.players = players
        self.ts = ts
        self.run = _core.GameRun(game)
        head = {"format": "haftkhabis/1", "ruleset": ruleset, "players": players, **header}
        assert self.emit("game", **head), "header refused"
        assert not self.run.invalid
        self.settings = self.run.settings()
        # the profile with the header's options
        self.rules: Ruleset = RULESETS[self.settings["ruleset"]].with_options(self.settings["options"])
        self.stock: list[str] = []

    def _line(self, type_: str, **fields: Any) -> Line:
        return {"game": self.game, "seq": len(self.lines), "type": type_, "ts": self.ts, **fields}

    def hand(self) -> dict[str, Any]:
        state = self.run.snapshot()
        assert state is not None, "no hand dealt"
        return state

    def emit(self, type_: str, **fields: Any) -> bool:
        """Keep the line when the engine finds nothing wrong with it."""
        obj = self._line(type_, **fields)
        raw = orjson.dumps(obj)
        if self.run.feed(raw, len(self.raws) + 1):
            # refused: the run has seen the line, so replay the kept lines afresh
            self.run = _core.GameRun(self.game)
            for number, kept in enumerate(self.raws, 1):
                assert self.run.feed(kept, number) == [], "a kept line is refused on replay"
            return False
        self.lines.append(obj)
        self.raws.append(raw)
        return True

    def deal(self, number: int) -> None:
        rules = self.rules
        deck = list(ONE_DECK)
        self.rng.shuffle(deck)
        n = len(self.players)
        dealer = self.players[(number - 2) % n] if number > 1 else self.players[-1]
        hands = {p: deck[i * 7:(i + 1) * 7] for i, p in enumerate(self.players)}
        rest = deck[7 * n:]
        starter = None
        if rules.has_starter:
            for i, card in enumerate(rest):
                if card[0] not in rules.forbidden_starter_ranks:
                    starter = rest.pop(i)
                    break
        self.stock = rest
        fields: dict[str, Any] = {"hand": number, "dealer": dealer, "hands": hands, "stock": rest}
        if starter is not None:
            fields["starter"] = starter
        assert self.emit("deal", **fields), "deal refused"

    def draw(self, player: str, count: int) -> bool:
        hand = self.hand()
        if not self.stock and hand["stock_size"] == 0 and self.rules.reshuffles and len(hand["pile"]) > 1:
            under = list(hand["pile"][:-1])
            self.rng.shuffle(under)
            if self.emit("reshuffle", stock=under):
                self.stock = under
        take = self.stock[:count]
        if not take:
            return False
        if self.emit("draw", player=player, cards=take):
            self.stock = self.stock[len(take):]
            return True
        return False

    def turn(self) -> bool:
        """One line (or two: a call); False when nothing legal could be found."""
        for player in sorted(self.hand()["call_due"]):
            self.emit("announce", player=player, call="last_card")
        opts = self.run.options()
        if opts is None:
            return False
        hand = self.hand()
        player = opts["player"]
        if opts["gift"] or hand["phase"] == "settlement":
            return self.draw(player, opts["draw"] or 1)
        moves: list[tuple[str, Any]] = [("play", c) for c in sorted(opts["play"])]
        if opts["draw"] is not None and not opts["obliged"]:
            moves.append(("draw", opts["draw"]))
        if opts["pass"]:
            moves.append(("pass", None))
        self.rng.shuffle(moves)
        # prefer playing: games then end in a sensible number of lines
        moves.sort(key=lambda m: m[0] != "play")
        for kind, arg in moves:
            if kind == "play":
                others = [p for p in hand["active"] if p != player]
                variants: list[dict[str, Any]] = [{}]
                if arg[0] == "J":
                    variants = [{"suit": s} for s in self.rng.sample(SUITS, 4)] + [{}]
                if arg[0] == "2":
                    variants = [{"target": t} for t in self.rng.sample(others, len(others))] + [{}]
                for extra in variants:
                    if self.emit("play", player=player, card=arg, **extra):
                        return True
            elif kind == "draw":
                if self.draw(player, arg):
                    return True
            elif self.emit("pass", player=player):
                return True
        return False


def random_game(
    game: str,
    ruleset: str = "bazito",
    players: list[str] | None = None,
    *,
    seed: int = 0,
    hands: int | None = None,
    ts: str = "2026-11-29T18:00:00Z",
    max_lines: int = 600,
    **header: Any,
) -> list[Line]:
    """A compliant random game (or an incomplete one if it runs past `max_lines`)."""
    rng = random.Random(seed)
    players = players or ["sara", "omid", "lale", "reza"]
    if hands is not None:
        header["match"] = {"hands": hands}
    b = _Builder(game, ruleset, players, rng, ts, **header)
    open_ended = b.settings["match_hands"] is None and b.settings["match_target"] is None \
        and b.rules.default_hands is None
    number = 0
    while len(b.lines) < max_lines:
        run = b.run  # rebuilt when a candidate line was refused
        if not run.hand_open:
            if run.is_complete() or (number and run.match_over):
                break
            number += 1
            b.deal(number)
            continue
        hand = b.hand()
        if hand["phase"] == "over":
            outcome = hand["outcome"]
            assert outcome is not None
            ok = b.emit("end", hand=hand["hand"], winners=outcome["winners"])
            assert ok, "end refused"
            if open_ended:
                break  # persian open-ended: one hand is a game
            continue
        if not b.turn():
            break
    return b.lines


def corrupt(lines: list[Line], seed: int = 1, count: int = 2) -> list[Line]:
    """Plant violations: a play of a card the player does not hold, a wrong turn."""
    rng = random.Random(seed)
    out = [dict(line) for line in lines]
    plays = [i for i, line in enumerate(out) if line["type"] == "play"]
    for i in sorted(rng.sample(plays, min(count, len(plays)))):
        line = out[i]
        if rng.random() < 0.5:
            others = [p for p in _players(out) if p != line["player"]]
            line["player"] = rng.choice(others)
        else:
            line["card"] = "KH" if line["card"] != "KH" else "KS"
    return out


def _players(lines: list[Line]) -> list[str]:
    return list(lines[0]["players"])


def dump(lines: list[Line]) -> Iterator[str]:
    import json

    for line in lines:
        yield json.dumps(line, separators=(",", ":"))
