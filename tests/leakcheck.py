"""The player-view leak checker: which cards each player could have seen at each moment of
a game, and every card an output (HTML, JSON, text, a page's DOM) shows that they could not.

It does not read the code under test. Where the cards are comes from the support view's
replay (the engine's states, every hand shown) and from the log's own lines; what a player
sees is this module's own reading of the rule (docs/api.md, "A player's view"):

- their own hand at every moment, and every card the log says they drew, were dealt or
  took as a penalty;
- every card played (the discard pile, the starter, any `play` line's card) and the 7s laid
  aside in a settlement: the whole table sees those;
- a card once seen stays seen for the rest of the hand (a move list is history).

A card mention is any spelling an output uses: notation (`TH`), pretty (`10♥`), and an HTML
card whose rank and suit are in separate elements (`<span>10</span><span>♥</span>`), which
reads as `10 ♥` once the tags are gone. With two decks a card's copies are not told apart
(a player who saw one 7♥ may be shown the other), and a card seen earlier in a hand (played,
reshuffled, then drawn by someone else) is not flagged when it shows up again: both are
noted limits, not the common case.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine import _core
from engine.replay import GameReplay, build_replay
from engine.simulate import SimConfig, simulate

NOTATION = re.compile(r"(?<![0-9A-Za-z])([2-9TJQKA])([CDHS])(?![0-9A-Za-z])")
PRETTY = re.compile(r"(?<![0-9A-Za-z])(10|[2-9JQKA])\s*([♣♦♥♠])")
SUIT_OF = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
TAG = re.compile(r"<[^>]*>")


def cards_in(text: str) -> set[str]:
    """Every card `text` names, in notation (`TH`), whatever the spelling; HTML is read as
    its source (attributes) and as its text (tags removed)."""
    found: set[str] = set()
    for body in (text, html.unescape(TAG.sub(" ", text))):
        found |= {rank + suit for rank, suit in NOTATION.findall(body)}
        found |= {("T" if rank == "10" else rank) + SUIT_OF[suit] for rank, suit in PRETTY.findall(body)}
    return found


def as_text(value: Any) -> str:
    """An output as text: a string as it is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return orjson.dumps(value, default=str).decode()


@dataclass
class Sight:
    """What each player of one game could have seen, after each of its replayed lines."""

    game: str
    players: tuple[str, ...]
    after: list[dict[str, frozenset[str]]]  # by the step's index in the game
    index_of: dict[int, int]  # seq -> the index of its replayed line
    hand_of: list[int]  # by index
    last_of_hand: dict[int, int] = field(default_factory=dict)  # hand -> its last index

    def at(self, player: str, seq: int) -> frozenset[str]:
        """Everything `player` could have seen once the line `seq` was played."""
        return self.after[self.index_of[seq]][player]

    def before(self, player: str, seq: int) -> frozenset[str]:
        """Everything `player` could have seen just before the line `seq` (a deal's: by the
        end of the hand before it)."""
        index = self.index_of[seq]
        return self.after[index - 1][player] if index else frozenset()

    def in_hand(self, player: str, hand: int) -> frozenset[str]:
        """Everything `player` could have seen in `hand`, by its last line."""
        return self.after[self.last_of_hand[hand]][player] if hand in self.last_of_hand else frozenset()

    def in_game(self, player: str) -> frozenset[str]:
        seen: set[str] = set()
        for hand in self.last_of_hand:
            seen |= self.in_hand(player, hand)
        return frozenset(seen)

    @classmethod
    def of(cls, replay: GameReplay) -> Sight:
        """Built from the support view's replay (`replay.viewer` is None)."""
        assert replay.viewer is None, "the truth comes from the support view"
        players = replay.players
        after: list[dict[str, frozenset[str]]] = []
        hand_of: list[int] = []
        index_of: dict[int, int] = {}
        last_of_hand: dict[int, int] = {}
        seen: dict[str, set[str]] = {p: set() for p in players}
        current: int | None = None
        for index, step in enumerate(replay.steps):
            if step.hand != current:
                current = step.hand
                seen = {p: set() for p in players}
            raw = step.raw or {}
            kind, actor = raw.get("type"), raw.get("player")
            public: set[str] = set()
            if kind == "play" and isinstance(raw.get("card"), str):
                public.add(raw["card"])
            if kind == "deal":
                if isinstance(raw.get("starter"), str):
                    public.add(raw["starter"])
                for p, cards in (raw.get("hands") or {}).items():
                    if p in seen and isinstance(cards, list):
                        seen[p] |= {c for c in cards if isinstance(c, str)}
            if kind in ("draw", "penalty") and actor in seen:
                seen[actor] |= {c for c in raw.get("cards") or () if isinstance(c, str)}
            state = step.after or {}
            if state.get("hand") is not None:
                for p, cards in (state.get("hands") or {}).items():
                    if p in seen:
                        seen[p] |= set(cards or ())
                public |= set(state.get("pile") or ()) | set(state.get("laid_aside") or ())
            for p in players:
                seen[p] |= public
            after.append({p: frozenset(cards) for p, cards in seen.items()})
            hand_of.append(step.hand)
            index_of.setdefault(step.seq, index)
            last_of_hand[step.hand] = index
        return cls(replay.game, players, after, index_of, hand_of, last_of_hand)


@dataclass(frozen=True)
class Leak:
    where: str
    player: str
    cards: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: shown to {self.player}: {' '.join(self.cards)}"


def leaks(output: Any, allowed: Iterable[str], player: str, where: str) -> list[Leak]:
    """The cards `output` shows that are not in `allowed` (empty: nothing leaked)."""
    extra = cards_in(as_text(output)) - set(allowed)
    return [Leak(where, player, tuple(sorted(extra)))] if extra else []


#: a report's step sections: <section class="hk-step …" id="step-HAND-NUMBER">…</section>
SECTION = re.compile(r'<section class="hk-step[^"]*" id="step-(\d+)-(\d+)">(.*?)</section>', re.S)


def report_leaks(document: str, replay: GameReplay, sight: Sight, player: str, hand: int,
                 where: str) -> list[Leak]:
    """A hand's dispute report: the whole document against what `player` saw in the hand,
    and each step's section against what they had seen once that step was played."""
    found = leaks(document, sight.in_hand(player, hand), player, where)
    sections = SECTION.findall(document)
    assert sections, f"{where}: no step sections in the report"
    for in_hand, number, body in sections:
        step = replay.step_at(int(in_hand), int(number))
        assert step is not None, f"{where}: no step {in_hand}/{number}"
        found += leaks(body, sight.at(player, step.seq), player, f"{where} step {in_hand}/{number}")
    return found


# ---------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Corpus:
    """The games the leak tests render: their lines, and their support-view replays."""

    lines: list[bytes]
    replays: dict[str, GameReplay]

    @property
    def games(self) -> list[str]:
        return list(self.replays)

    def lines_of(self, game: str) -> list[tuple[bytes, str, int]]:
        """`game`'s lines as (raw, file, line number), the file named `leaks.jsonl`."""
        marker = orjson.dumps(game)
        return [(raw, "leaks.jsonl", n) for n, raw in enumerate(self.lines, 1) if marker in raw]


#: (ruleset, mode, players, seed): every ruleset, both persian modes, three games each
TABLES: Sequence[tuple[str, str | None, tuple[int, int], int]] = (
    ("bazito", None, (4, 4), 31), ("bazito", None, (4, 4), 32), ("bazito", None, (4, 4), 33),
    ("persian", "points", (3, 4), 41), ("persian", "points", (3, 5), 42), ("persian", "points", (4, 6), 43),
    ("persian", "elimination", (3, 4), 51), ("persian", "elimination", (4, 5), 52),
    ("persian", "elimination", (3, 3), 53),
    ("pis-yedili", None, (2, 4), 61), ("pis-yedili", None, (3, 5), 62), ("pis-yedili", None, (4, 7), 63),
)


def _games() -> Iterable[tuple[str, list[dict[str, Any]]]]:
    for ruleset, mode, players, seed in TABLES:
        match = {"hands": 2} if ruleset == "persian" else None
        config = SimConfig(ruleset, games=1, seed=seed, players=players, mode=mode, match=match,
                           fault_rate=1.0, stock_in_deal=1.0)
        for game in simulate(config):
            objects = []
            for line in game.lines:
                try:
                    obj = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue  # a garbled line the fault put in: no game's
                if isinstance(obj, dict):
                    objects.append(obj)
            yield f"leak-{ruleset}-{mode or 'points'}-{seed}", objects


def _plant(lines: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Faults that name hidden cards in their messages or set a line aside: a drawn card
    changed to one the stock does not have on top (`stock_mismatch`, whose message names
    the stock's top), and a second, different draw line with a drawn line's seq."""
    draws = [i for i, line in enumerate(lines) if line.get("type") == "draw" and line.get("cards")]
    if len(draws) < 4:
        return lines
    out = [dict(line) for line in lines]
    changed = out[draws[len(draws) // 3]]
    held = {c for line in lines if line.get("type") == "deal" for cards in (line.get("hands") or {}).values()
            for c in cards or ()}
    choices = sorted(held - set(changed["cards"]))
    changed["cards"] = [rng.choice(choices), *changed["cards"][1:]]
    twin = dict(out[draws[2 * len(draws) // 3]])
    twin["cards"] = [rng.choice(choices) for _ in twin["cards"]]
    out.insert(draws[2 * len(draws) // 3] + 1, twin)
    return out


def corpus() -> Corpus:
    """A dozen simulated games, every ruleset and both persian modes, each with one injected
    fault and two planted ones; every line's `game` renamed so the games are told apart."""
    rng = random.Random(2812)
    lines: list[bytes] = []
    for name, objects in _games():
        for obj in _plant(objects, rng):
            obj["game"] = name
            lines.append(orjson.dumps(obj))
    replays: dict[str, GameReplay] = {}
    validator = _core.Validator(record={name for name, _ in _games_names()}, facts=True)
    for number, raw in enumerate(lines, 1):
        validator.feed_line(raw, "leaks.jsonl", number)
    verdicts = validator.take_verdicts() + validator.finish()
    errors = validator.take_errors()
    by_number = dict(enumerate(lines, 1))
    for verdict in verdicts:
        replays[verdict.game] = build_replay(verdict, errors,
                                             lambda _file, line: by_number.get(line or 0))
    return Corpus(lines, dict(sorted(replays.items())))


def _games_names() -> Iterable[tuple[str, None]]:
    for ruleset, mode, _, seed in TABLES:
        yield f"leak-{ruleset}-{mode or 'points'}-{seed}", None


def sights(replays: Mapping[str, GameReplay]) -> dict[str, Sight]:
    return {game: Sight.of(replay) for game, replay in replays.items()}
