"""Cards as Python shows them: the ranks and suits, a pack, and a card in words (`10♥`).

A card is its two-character notation string, rank then suit (`"7C"`, `"TH"`), as the core
hands it over: reading and repairing a log's spellings is the core's (`cards.rs`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RED_SUITS = frozenset("DH")

ONE_DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)


def pack(decks: int = 1) -> Counter[str]:
    """The full pack as a multiset: one or two 52-card decks."""
    return Counter({card: decks for card in ONE_DECK})


def pretty(card: str) -> str:
    """A card for people: rank and suit symbol (`10♥` for `TH`)."""
    r = "10" if card[0] == "T" else card[0]
    return r + SUIT_SYMBOLS.get(card[1], card[1])


def pretty_cards(cards: Iterable[str]) -> str:
    return " ".join(pretty(c) for c in cards)
