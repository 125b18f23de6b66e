//! Cards, suits, packs and the spellings the notation accepts.
//!
//! A card is one byte: `suit * 13 + rank`, ranks in the notation's order
//! `A 2 3 4 5 6 7 8 9 T J Q K`, suits `C D H S` (notation.md, "Cards").

use std::fmt;

/// "rank `A 2 3 4 5 6 7 8 9 T J Q K`, then suit `C D H S`"
pub const RANK_LETTERS: &[u8; 13] = b"A23456789TJQK";
pub const SUIT_LETTERS: &[u8; 4] = b"CDHS";

/// A rank, in notation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Rank {
    Ace = 0,
    Two,
    Three,
    Four,
    Five,
    Six,
    Seven,
    Eight,
    Nine,
    Ten,
    Jack,
    Queen,
    King,
}

impl Rank {
    pub const ALL: [Rank; 13] = [
        Rank::Ace,
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn letter(self) -> char {
        RANK_LETTERS[self as usize] as char
    }

    pub fn from_letter(letter: u8) -> Option<Rank> {
        RANK_LETTERS
            .iter()
            .position(|&l| l == letter)
            .map(|i| Rank::ALL[i])
    }
}

/// A suit. Colour never matters, only suit (rules.md, "Common ground").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Suit {
    Clubs = 0,
    Diamonds,
    Hearts,
    Spades,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    pub fn letter(self) -> char {
        SUIT_LETTERS[self as usize] as char
    }

    pub fn from_letter(letter: u8) -> Option<Suit> {
        SUIT_LETTERS
            .iter()
            .position(|&l| l == letter)
            .map(|i| Suit::ALL[i])
    }

    /// The suit's name for people ("clubs").
    pub fn name(self) -> &'static str {
        match self {
            Suit::Clubs => "clubs",
            Suit::Diamonds => "diamonds",
            Suit::Hearts => "hearts",
            Suit::Spades => "spades",
        }
    }

    /// The name of one card of the suit ("club"), for messages.
    pub fn singular(self) -> &'static str {
        match self {
            Suit::Clubs => "club",
            Suit::Diamonds => "diamond",
            Suit::Hearts => "heart",
            Suit::Spades => "spade",
        }
    }

    pub fn symbol(self) -> char {
        match self {
            Suit::Clubs => '♣',
            Suit::Diamonds => '♦',
            Suit::Hearts => '♥',
            Suit::Spades => '♠',
        }
    }
}

/// One card of the pack.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card(u8);

impl Card {
    pub const COUNT: usize = 52;

    pub fn new(rank: Rank, suit: Suit) -> Card {
        Card(suit as u8 * 13 + rank as u8)
    }

    /// The card with index `index` (0..52), suit-major like `ONE_DECK` in Python.
    pub fn from_index(index: usize) -> Option<Card> {
        (index < Self::COUNT).then_some(Card(index as u8))
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub fn rank(self) -> Rank {
        Rank::ALL[(self.0 % 13) as usize]
    }

    pub fn suit(self) -> Suit {
        Suit::ALL[(self.0 / 13) as usize]
    }

    /// The card in notation (`"7C"`).
    pub fn notation(self) -> [u8; 2] {
        [
            RANK_LETTERS[(self.0 % 13) as usize],
            SUIT_LETTERS[(self.0 / 13) as usize],
        ]
    }

    pub fn code(self) -> String {
        let [r, s] = self.notation();
        let mut out = String::with_capacity(2);
        out.push(r as char);
        out.push(s as char);
        out
    }

    /// A canonical notation card (`"7C"`), or None.
    pub fn parse(text: &str) -> Option<Card> {
        let bytes = text.as_bytes();
        if bytes.len() != 2 {
            return None;
        }
        Some(Card::new(
            Rank::from_letter(bytes[0])?,
            Suit::from_letter(bytes[1])?,
        ))
    }

    /// The card for people: rank and suit symbol (`10♥` for `TH`).
    pub fn pretty(self) -> String {
        let mut out = String::with_capacity(6);
        if self.rank() == Rank::Ten {
            out.push_str("10");
        } else {
            out.push(self.rank().letter());
        }
        out.push(self.suit().symbol());
        out
    }

    /// Every card of one deck, suit-major.
    pub fn deck() -> impl Iterator<Item = Card> {
        (0..Self::COUNT as u8).map(Card)
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code())
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code())
    }
}

/// Cards for people, space-separated (`7♦ 8♦`).
pub fn pretty_cards<'a>(cards: impl IntoIterator<Item = &'a Card>) -> String {
    let mut out = String::new();
    for card in cards {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&card.pretty());
    }
    out
}

/// Why a value could not be read as a card or a suit (the message names the right spelling).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpellingError(pub String);

fn symbol_suit(symbol: char) -> Option<Suit> {
    match symbol {
        '♣' | '♧' => Some(Suit::Clubs),
        '♦' | '♢' => Some(Suit::Diamonds),
        '♥' | '♡' => Some(Suit::Hearts),
        '♠' | '♤' => Some(Suit::Spades),
        _ => None,
    }
}

/// Read a card spelled in a repairable way (`10H`, `7c`, `7♣`; surrounding spaces ignored)
/// — notation.md, "Repairable spellings". `shown` is the value as the log wrote it (for
/// the message).
pub fn repair_card(text: &str, shown: &str) -> Result<Card, SpellingError> {
    let trimmed = text.trim();
    let mut chars: Vec<char> = trimmed.chars().collect();
    if chars.len() < 2 {
        return Err(SpellingError(format!(
            "{shown} is not a card (expected rank then suit, like '7C')"
        )));
    }
    let suit_char = chars.pop().unwrap_or(' ');
    let rank_part: String = chars.into_iter().collect();
    let suit = symbol_suit(suit_char).or_else(|| {
        let upper: Vec<char> = suit_char.to_uppercase().collect();
        match upper.as_slice() {
            [c] if c.is_ascii() => Suit::from_letter(*c as u8),
            _ => None,
        }
    });
    let rank = match rank_part.as_str() {
        "10" => Some(Rank::Ten),
        "1" => Some(Rank::Ace),
        "11" => Some(Rank::Jack),
        "12" => Some(Rank::Queen),
        "13" => Some(Rank::King),
        other => {
            let upper: Vec<char> = other.to_uppercase().chars().collect();
            match upper.as_slice() {
                [c] if c.is_ascii() => Rank::from_letter(*c as u8),
                _ => None,
            }
        }
    };
    match (rank, suit) {
        (Some(rank), Some(suit)) => Ok(Card::new(rank, suit)),
        _ => Err(SpellingError(format!(
            "{shown} is not a card (expected rank A 2 3 4 5 6 7 8 9 T J Q K then suit C D H S, like '7C')"
        ))),
    }
}

/// Read a suit spelled in a repairable way (`h`, `♥`, `hearts`) — notation.md.
pub fn repair_suit(text: &str, shown: &str) -> Result<Suit, SpellingError> {
    let trimmed = text.trim();
    let mut chars = trimmed.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if let Some(suit) = symbol_suit(c) {
            return Ok(suit);
        }
        let upper: Vec<char> = c.to_uppercase().collect();
        if let [u] = upper.as_slice() {
            if u.is_ascii() {
                if let Some(suit) = Suit::from_letter(*u as u8) {
                    return Ok(suit);
                }
            }
        }
    }
    let word = trimmed.to_lowercase();
    let suit = match word.as_str() {
        "club" | "clubs" => Some(Suit::Clubs),
        "diamond" | "diamonds" => Some(Suit::Diamonds),
        "heart" | "hearts" => Some(Suit::Hearts),
        "spade" | "spades" => Some(Suit::Spades),
        _ => None,
    };
    suit.ok_or_else(|| SpellingError(format!("{shown} is not a suit (expected one of C D H S)")))
}

/// A multiset of cards: how many of each the pack (or the stock) holds.
#[derive(Clone, PartialEq, Eq)]
pub struct CardCounts {
    counts: [u8; Card::COUNT],
    total: u32,
}

impl Default for CardCounts {
    fn default() -> Self {
        CardCounts {
            counts: [0; Card::COUNT],
            total: 0,
        }
    }
}

impl fmt::Debug for CardCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.cards()).finish()
    }
}

impl CardCounts {
    /// The full pack: one or two 52-card decks.
    pub fn pack(decks: u8) -> CardCounts {
        CardCounts {
            counts: [decks; Card::COUNT],
            total: u32::from(decks) * Card::COUNT as u32,
        }
    }

    pub fn of<'a>(cards: impl IntoIterator<Item = &'a Card>) -> CardCounts {
        let mut out = CardCounts::default();
        for &card in cards {
            out.add(card);
        }
        out
    }

    pub fn get(&self, card: Card) -> u8 {
        self.counts[card.index()]
    }

    pub fn total(&self) -> u32 {
        self.total
    }

    pub fn add(&mut self, card: Card) {
        self.counts[card.index()] = self.counts[card.index()].saturating_add(1);
        self.total += 1;
    }

    /// Take one `card`; false (and nothing changes) when there is none.
    pub fn take(&mut self, card: Card) -> bool {
        let slot = &mut self.counts[card.index()];
        if *slot == 0 {
            return false;
        }
        *slot -= 1;
        self.total -= 1;
        true
    }

    /// Every card held, in pack order, repeated by its count.
    pub fn cards(&self) -> Vec<Card> {
        let mut out = Vec::with_capacity(self.total as usize);
        for card in Card::deck() {
            for _ in 0..self.get(card) {
                out.push(card);
            }
        }
        out
    }

    /// `self - other`, each count floored at zero (Python's `Counter` subtraction).
    pub fn minus(&self, other: &CardCounts) -> CardCounts {
        let mut out = CardCounts::default();
        for i in 0..Card::COUNT {
            let n = self.counts[i].saturating_sub(other.counts[i]);
            out.counts[i] = n;
            out.total += u32::from(n);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips() {
        for card in Card::deck() {
            assert_eq!(Card::parse(&card.code()), Some(card));
        }
        assert_eq!(Card::parse("10H"), None);
        assert_eq!(Card::parse("7c"), None);
    }

    #[test]
    fn repairs_follow_the_notation() {
        let r = |s: &str| repair_card(s, s).map(|c| c.code());
        assert_eq!(r("10H"), Ok("TH".into()));
        assert_eq!(r("7c"), Ok("7C".into()));
        assert_eq!(r("7♣"), Ok("7C".into()));
        assert_eq!(r(" 12♡ "), Ok("QH".into()));
        assert_eq!(r("1s"), Ok("AS".into()));
        assert!(r("XX").is_err());
        assert!(r("♥J").is_err());
        assert!(r("7").is_err());
        let s = |t: &str| repair_suit(t, t);
        assert_eq!(s("h"), Ok(Suit::Hearts));
        assert_eq!(s("♠"), Ok(Suit::Spades));
        assert_eq!(s("Clubs"), Ok(Suit::Clubs));
        assert!(s("x").is_err());
    }

    #[test]
    fn pretty_spells_ten() {
        assert_eq!(Card::parse("TH").map(|c| c.pretty()), Some("10♥".into()));
    }

    #[test]
    fn counts_subtract_like_a_counter() {
        let pack = CardCounts::pack(1);
        let dealt = CardCounts::of(&[Card::new(Rank::Seven, Suit::Clubs)]);
        let rest = pack.minus(&dealt);
        assert_eq!(rest.total(), 51);
        assert_eq!(rest.get(Card::new(Rank::Seven, Suit::Clubs)), 0);
    }
}
