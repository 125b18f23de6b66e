"""Card accounting for the hand-made persian scenario logs (not a validator).

Replays only where the cards go: the deal (7 cards each, no card more often than
the decks allow, a starter, a `stock` that is exactly the rest of the deck), each
`play` (the card must be in the player's hand), each `draw` / `penalty` (the stock's
top when the deal gave a stock, else a card not yet seen).  It knows nothing of
turns, matches or penalties' justification; the rules are judged by reading.

    python _check_cards.py [--trace] [FILE.jsonl ...]   (default: every case here)

`--trace` prints every line with the actor's hand and the pile's top, and at each
`end` the face value left in every hand (persian points: 7s count 0, so 7s laid
aside in settlement need no bookkeeping here; a J finish doubling is not applied).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

RANKS = "A23456789TJQK"
SUITS = "CDHS"
POINTS = {"A": 14, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 0, "8": 8, "9": 9,
          "T": 10, "J": 20, "Q": 12, "K": 13}


def pack(decks: int) -> Counter[str]:
    return Counter({r + s: decks for r in RANKS for s in SUITS})


def check_game(lines: list[dict], trace: bool) -> list[str]:
    problems: list[str] = []
    header = lines[0]
    game = header.get("game")
    if header.get("type") != "game":
        return [f"{game}: no header at seq 0"]
    players = header.get("players", [])
    decks = header.get("decks") if header.get("decks") in (1, 2) else (2 if len(players) > 5 else 1)
    hands: dict[str, list[str]] = {}
    pile: list[str] = []
    stock: list[str] | None = None
    suit = None

    def unseen() -> Counter[str]:
        rest = pack(decks)
        for h in hands.values():
            rest.subtract(h)
        rest.subtract(pile)
        return rest

    def take(who: str, cards: list[str], seq: int) -> None:
        nonlocal stock
        for c in cards:
            if stock is not None:
                if not stock or stock[0] != c:
                    problems.append(f"{game} seq {seq}: {who} draws {c}, stock top is {stock[:1]}")
                else:
                    stock.pop(0)
            elif unseen()[c] <= 0:
                problems.append(f"{game} seq {seq}: {who} draws {c}, not an unseen card")
            hands.setdefault(who, []).append(c)

    for ev in lines:
        seq, kind = ev["seq"], ev["type"]
        who = ev.get("player")
        if seq != lines.index(ev):
            problems.append(f"{game}: seq {seq} out of place")
        if kind == "deal":
            hands = {p: list(cs) for p, cs in ev["hands"].items()}
            pile = [ev["starter"]] if ev.get("starter") else []
            suit = ev["starter"][1] if ev.get("starter") else None
            dealt = Counter()
            for p, cs in hands.items():
                if len(cs) != 7:
                    problems.append(f"{game} seq {seq}: {p} dealt {len(cs)} cards")
                dealt.update(cs)
            dealt.update(pile)
            over = [c for c, n in dealt.items() if n > decks]
            if over:
                problems.append(f"{game} seq {seq}: dealt too often for {decks} deck(s): {over}")
            if set(hands) != set(players):
                problems.append(f"{game} seq {seq}: hands for {sorted(hands)}, players {players}")
            stock = list(ev["stock"]) if "stock" in ev else None
            if stock is not None and Counter(stock) != unseen():
                problems.append(f"{game} seq {seq}: stock is not the rest of the deck")
        elif kind == "play":
            card = ev["card"]
            if card in hands.get(who, []):
                hands[who].remove(card)
            else:
                problems.append(f"{game} seq {seq}: {who} plays {card}, not in hand {hands.get(who)}")
            pile.append(card)
            suit = ev.get("suit") or card[1]
        elif kind in ("draw", "penalty"):
            take(who, ev["cards"], seq)
        if trace:
            top = pile[-1] if pile else "--"
            mine = f"{who}={' '.join(hands.get(who, []))} ({len(hands.get(who, []))})" if who else ""
            extra = {k: v for k, v in ev.items() if k not in ("game", "seq", "type", "player", "hands", "stock")}
            print(f"  {seq:3} {kind:9} {mine:40} top={top}/{suit} {extra if kind != 'deal' else ''}")
            if kind == "end":
                vals = {p: sum(POINTS[c[0]] for c in h) for p, h in hands.items()}
                print(f"       face values left: {vals}")
    return problems


def main(argv: list[str]) -> int:
    trace = "--trace" in argv
    files = [Path(a) for a in argv if a != "--trace"] or sorted(Path(__file__).parent.glob("*.jsonl"))
    bad = 0
    for f in files:
        games: dict[str, list[dict]] = {}
        for raw in f.read_text(encoding="utf-8").splitlines():
            if raw.strip():
                ev = json.loads(raw)
                games.setdefault(ev["game"], []).append(ev)
        for gid, evs in games.items():
            evs.sort(key=lambda e: e["seq"])
            if trace:
                print(f"{f.name} :: {gid}")
            for p in check_game(evs, trace):
                bad += 1
                print(f"{f.name}: {p}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
