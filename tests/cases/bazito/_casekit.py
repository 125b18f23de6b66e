"""Card-accounting helper for writing scenario cases by hand.

It knows no rules: it only numbers the lines, keeps every player's hand, the pile and the
stock, refuses a play of a card the player does not hold and a draw that is not the
stock's top (or, without a stock, not an unseen card) unless the call says the fault is
intended, and prints the state after each line so the author can check each move.
The rules reasoning stays in the case scripts' comments.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re

RANKS = "A23456789TJQK"
SUITS = "CDHS"
DECK = [r + s for s in SUITS for r in RANKS]

BAZITO_POINTS = {"7": 0, "J": 20, "A": 11, "K": 4, "Q": 3, "T": 10}
PIS_POINTS = {"J": 25, "7": 20, "A": 15, "K": 10, "Q": 10, "T": 10}

VERBOSE = os.environ.get("CASEKIT_VERBOSE") == "1"


def cards(text: str) -> list[str]:
    return text.split()


def bazito_value(hand: list[str]) -> int:
    return sum(BAZITO_POINTS.get(c[0], int(c[0]) if c[0].isdigit() else 0) for c in hand)


def pis_value(hand: list[str]) -> int:
    return sum(PIS_POINTS.get(c[0], int(c[0]) if c[0].isdigit() else 0) for c in hand)


class Game:
    def __init__(self, gid: str, ruleset: str | None, players: list[str], header: bool = True,
                 **extra: object) -> None:
        self.gid = gid
        self.players = list(players)
        self.lines: list[dict] = []
        self.seq = 0
        self.hands: dict[str, list[str]] = {}
        self.pile: list[str] = []
        self.stock: list[str] | None = None
        self.aside: list[str] = []
        self.log: list[str] = []
        if header:
            h = {"format": "haftkhabis/1", "ruleset": ruleset, "players": players}
            h.update(extra)
            self.add("game", **h)
        else:
            self.seq = 1

    # ---- lines -------------------------------------------------------------
    def add(self, type_: str, **fields: object) -> dict:
        d = {"game": self.gid, "seq": self.seq, "type": type_}
        d.update(fields)
        self.lines.append(d)
        self.seq += 1
        self._show(d)
        return d

    def _show(self, d: dict) -> None:
        top = self.pile[-1] if self.pile else "--"
        sizes = " ".join(f"{p}:{''.join(self.hands.get(p, []))}" for p in self.players)
        msg = f"  {d['seq']:>3} {d['type']:<8} {json.dumps({k: v for k, v in d.items() if k not in ('game', 'seq', 'type', 'hands', 'stock')}, ensure_ascii=False):<60} top={top} st={len(self.stock) if self.stock is not None else '?'} | {sizes}"
        self.log.append(msg)
        if VERBOSE:
            print(msg)

    def seen(self) -> set[str]:
        s = set(self.pile) | set(self.aside)
        for h in self.hands.values():
            s |= set(h)
        return s

    def unseen(self) -> list[str]:
        s = self.seen()
        return [c for c in DECK if c not in s]

    def deal(self, hand: int, dealer: str, hands: dict[str, str], starter: str | None = None,
             stock_top: str = "", with_stock: bool = True, seed: int = 7, check: bool = True,
             **extra: object) -> dict:
        hs = {p: cards(v) for p, v in hands.items()}
        allc = [c for h in hs.values() for c in h] + ([starter] if starter else [])
        if check:
            assert len(allc) == len(set(allc)), f"duplicate card in deal: {allc}"
            for p, h in hs.items():
                assert len(h) == 7, f"{p} has {len(h)} cards"
            assert all(c in DECK for c in allc)
        top = cards(stock_top)
        rest = [c for c in DECK if c not in allc and c not in top]
        random.Random(seed).shuffle(rest)
        stock = top + rest
        if check:
            assert len(set(stock) | set(allc)) == 52 and len(stock) + len(allc) == 52
        self.hands = {p: list(h) for p, h in hs.items()}
        self.pile = [starter] if starter else []
        self.aside = []
        fields: dict = {"hand": hand, "dealer": dealer}
        if starter:
            fields["starter"] = starter
        fields["hands"] = hs
        if with_stock:
            fields["stock"] = stock
            self.stock = list(stock)
        else:
            self.stock = None
        fields.update(extra)
        return self.add("deal", **fields)

    def play(self, p: str, card: str, suit: str | None = None, target: str | None = None,
             not_held: bool = False, **extra: object) -> dict:
        if not_held:
            assert card not in self.hands[p], f"{p} does hold {card}"
        else:
            assert card in self.hands[p], f"{p} does not hold {card}: {self.hands[p]}"
            self.hands[p].remove(card)
        if not_held and self.stock is not None and card in self.stock:
            self.stock.remove(card)
        self.pile.append(card)
        f: dict = {"player": p, "card": card}
        if suit is not None:
            f["suit"] = suit
        if target is not None:
            f["target"] = target
        f.update(extra)
        return self.add("play", **f)

    def _take(self, p: str, cs: list[str], off: bool) -> None:
        if self.stock is not None:
            if not off:
                assert self.stock[: len(cs)] == cs, f"{cs} is not the stock top {self.stock[:len(cs)]}"
            for c in cs:
                if c in self.stock:
                    self.stock.remove(c)
        elif not off:
            un = set(self.unseen())
            for c in cs:
                assert c in un, f"{c} is not unseen"
        self.hands[p].extend(cs)

    def draw(self, p: str, cs: str | None = None, n: int | None = None, off: bool = False,
             **extra: object) -> dict:
        if cs is None:
            assert self.stock is not None and n
            lst = self.stock[:n]
        else:
            lst = cards(cs)
        self._take(p, lst, off)
        return self.add("draw", player=p, cards=lst, **extra)

    def penalty(self, p: str, c: str, reason: str = "misplay", off: bool = False) -> dict:
        self._take(p, [c], off)
        return self.add("penalty", player=p, cards=[c], reason=reason)

    def pass_(self, p: str, **extra: object) -> dict:
        return self.add("pass", player=p, **extra)

    def announce(self, p: str) -> dict:
        return self.add("announce", player=p, call="last_card")

    def reshuffle(self, order: str | None = None, write: bool = True) -> dict:
        under = self.pile[:-1]
        self.pile = self.pile[-1:]
        assert self.stock is None or self.stock == [], "stock not empty"
        if order is not None:
            new = cards(order)
            assert sorted(new) == sorted(under), f"{new} vs {under}"
            self.stock = list(new)
        else:
            self.stock = None  # order unknown: later draws are checked as unseen cards
        if write and order is not None:
            return self.add("reshuffle", stock=new)
        return self.add("reshuffle")

    def end(self, hand: int, **claims: object) -> dict:
        return self.add("end", hand=hand, **claims)

    def result(self, **claims: object) -> dict:
        return self.add("result", **claims)

    def abort(self, reason: str | None = None) -> dict:
        return self.add("abort", **({"reason": reason} if reason else {}))

    def raw(self, d: dict, bump: bool = True) -> dict:
        self.lines.append(d)
        if bump:
            self.seq += 1
        self._show(d)
        return d

    # ---- helpers for the author --------------------------------------------
    def none_of(self, p: str, suits: str = "", ranks: str = "") -> None:
        """Assert p holds no card of these suits or ranks (the author's 'no legal card')."""
        for c in self.hands[p]:
            assert c[1] not in suits and c[0] not in ranks, f"{p} holds {c} ({self.hands[p]})"

    def holds(self, p: str, cs: str) -> None:
        assert sorted(self.hands[p]) == sorted(cards(cs)), f"{p} holds {self.hands[p]}"

    def scores(self, winner_or_winners: str | list[str], value, mult: int = 1) -> dict:
        ws = [winner_or_winners] if isinstance(winner_or_winners, str) else winner_or_winners
        return {p: 0 if p in ws else value(self.hands[p]) * mult for p in self.players}


def dumps(d: dict) -> str:
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def write_lines(path: str, lines: list) -> None:
    """lines: dicts or raw str; written with \\n."""
    text = "".join((ln if isinstance(ln, str) else dumps(ln)) + "\n" for ln in lines)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def write_bytes(path: str, data: bytes) -> None:
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)


def write_expect(path: str, description: str, games: dict, errors: list | None = None) -> None:
    d: dict = {"description": description, "games": games}
    if errors is not None:
        d["errors"] = errors
    text = json.dumps(d, ensure_ascii=False, indent=2)
    # keep innermost lists (violations, winners, errors) on one line
    text = re.sub(r"\[\s*([^\[\]{}]*?)\s*\]",
                  lambda m: "[" + re.sub(r",\s*", ", ", m.group(1).strip()) + "]", text)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def hand_out(hand: int, winner: str | list[str], scores: dict, reason: str = "out") -> dict:
    ws = [winner] if isinstance(winner, str) else winner
    return {"hand": hand, "winners": ws, "scores": scores, "reason": reason, "order": None}


def totals(*score_dicts: dict) -> dict:
    t: dict = {}
    for s in score_dicts:
        for p, v in s.items():
            t[p] = t.get(p, 0) + v
    return t
