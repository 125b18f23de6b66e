"""Small random games for the dashboard's tests: legal play chosen at random among the
engine's own legal moves, so the logs replay compliant; `corrupt` then plants violations.

Test support only (the project's simulator is `engine/simulate.py`); each candidate line is
tried on a copy of the table and kept only when the engine finds nothing wrong with it.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

from engine.cards import ONE_DECK, SUITS
from engine.events import decode_line
from engine.machine import Phase, Table, read_header
from engine.rulesets import RULESETS

Line = dict[str, Any]


def _apply(table: Table, obj: Line) -> list[Any]:
    decoded = decode_line(obj, obj["game"], obj["seq"])
    if decoded.issues or decoded.event is None:
        return ["schema"]
    return table.apply(decoded.event)


class _Builder:
    def __init__(self, game: str, ruleset: str, players: list[str], rng: random.Random,
                 ts: str, **header: Any) -> None:
        self.game = game
        self.rng = rng
        self.lines: list[Line] = []
        self.players = players
        self.ts = ts
        head = {"format": "haftkhabis/1", "ruleset": ruleset, "players": players, **header}
        obj = self._line("game", **head)
        decoded = decode_line(obj, game, 0)
        assert decoded.event is not None
        settings = read_header(decoded.event, RULESETS).settings  # type: ignore[arg-type]
        assert settings is not None
        self.table = Table(settings, game)
        self.lines.append(obj)
        self.stock: list[str] = []

    def _line(self, type_: str, **fields: Any) -> Line:
        return {"game": self.game, "seq": len(self.lines), "type": type_, "ts": self.ts, **fields}

    def emit(self, type_: str, **fields: Any) -> bool:
        obj = self._line(type_, **fields)
        # the settings and ruleset are frozen (and hold mappingproxies): share them
        shared = {id(self.table.settings): self.table.settings, id(self.table.rules): self.table.rules}
        trial = copy.deepcopy(self.table, shared)
        if _apply(trial, obj):
            return False
        self.table = trial
        self.lines.append(obj)
        return True

    def deal(self, number: int) -> None:
        rules = self.table.rules
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
        hand = self.table.hand
        assert hand is not None
        if not self.stock and hand.stock_size() == 0 and self.table.rules.reshuffles and len(hand.pile) > 1:
            under = list(hand.pile[:-1])
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
        table = self.table
        hand = table.hand
        assert hand is not None
        for player in sorted(hand.call_due):
            self.emit("announce", player=player, call="last_card")
        opts = table.options()
        if opts is None:
            return False
        player = opts.player
        if opts.gift or hand.phase is Phase.SETTLEMENT:
            return self.draw(player, opts.draw or 1)
        moves: list[tuple[str, Any]] = [("play", c) for c in opts.playable]
        if opts.draw is not None and not opts.obliged:
            moves.append(("draw", opts.draw))
        if opts.may_pass:
            moves.append(("pass", None))
        self.rng.shuffle(moves)
        # prefer playing: games then end in a sensible number of lines
        moves.sort(key=lambda m: m[0] != "play")
        for kind, arg in moves:
            if kind == "play":
                others = [p for p in hand.active if p != player]
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
    number = 0
    while len(b.lines) < max_lines:
        table = b.table
        if table.hand is None or not table.hand_open:
            if table.is_complete() or (number and table.match_over):
                break
            number += 1
            b.deal(number)
            continue
        hand = table.hand
        if hand.phase is Phase.OVER:
            outcome = hand.outcome
            assert outcome is not None
            ok = b.emit("end", hand=hand.number, winners=outcome.winners)
            assert ok, "end refused"
            if table.settings.match_hands is None and table.settings.match_target is None \
                    and table.rules.default_hands is None:
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
