"""Cards, suits, packs and the spellings the notation accepts.

A card is its two-character notation string, rank then suit (`"7C"`, `"TH"`). Strings
are cheap to hash, compare and serialise, and they are exactly what a log carries.
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
CARD_SET = frozenset(ONE_DECK)

_SYMBOL_TO_SUIT = {
    "♣": "C", "♧": "C", "♦": "D", "♢": "D", "♥": "H", "♡": "H", "♠": "S", "♤": "S",
}
_SUIT_WORDS = {
    "club": "C", "clubs": "C", "diamond": "D", "diamonds": "D",
    "heart": "H", "hearts": "H", "spade": "S", "spades": "S",
}
_NUMERIC_RANKS = {"10": "T", "1": "A", "11": "J", "12": "Q", "13": "K"}


def rank(card: str) -> str:
    return card[0]


def suit(card: str) -> str:
    return card[1]


def pack(decks: int = 1) -> Counter[str]:
    """The full pack as a multiset: one or two 52-card decks."""
    return Counter({card: decks for card in ONE_DECK})


def is_card(value: object) -> bool:
    return isinstance(value, str) and value in CARD_SET


class CardSpellingError(ValueError):
    """A value that cannot be read as a card or a suit."""


def repair_card(value: object) -> str:
    """Read a card spelled in a repairable way (`10H`, `7c`, `7♣`), or raise.

    The caller has already found `value` is not a canonical card; the returned card is
    the spelling the log should have used.
    """
    if not isinstance(value, str):
        raise CardSpellingError(f"{value!r} is not a card (expected a string like '7C')")
    text = value.strip()
    if len(text) < 2:
        raise CardSpellingError(f"{value!r} is not a card (expected rank then suit, like '7C')")
    suit_part = text[-1]
    rank_part = text[:-1]
    suit_letter = _SYMBOL_TO_SUIT.get(suit_part, suit_part.upper())
    rank_letter = _NUMERIC_RANKS.get(rank_part, rank_part.upper())
    if len(rank_letter) != 1 or rank_letter not in RANKS or suit_letter not in SUITS:
        raise CardSpellingError(
            f"{value!r} is not a card (expected rank {' '.join(RANKS)} then suit C D H S, like '7C')"
        )
    return rank_letter + suit_letter


def repair_suit(value: object) -> str:
    """Read a suit spelled in a repairable way (`h`, `♥`, `hearts`), or raise."""
    if isinstance(value, str):
        text = value.strip()
        if text.upper() in SUITS and len(text) == 1:
            return text.upper()
        if text in _SYMBOL_TO_SUIT:
            return _SYMBOL_TO_SUIT[text]
        if text.lower() in _SUIT_WORDS:
            return _SUIT_WORDS[text.lower()]
    raise CardSpellingError(f"{value!r} is not a suit (expected one of C D H S)")


def pretty(card: str) -> str:
    """A card for people: rank and suit symbol (`10♥` for `TH`)."""
    r = "10" if card[0] == "T" else card[0]
    return r + SUIT_SYMBOLS.get(card[1], card[1])


def pretty_cards(cards: Iterable[str]) -> str:
    return " ".join(pretty(c) for c in cards)
