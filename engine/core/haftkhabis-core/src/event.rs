//! The haftkhabis/1 events as immutable values (notation.md, "Events").
//!
//! Fields the rules judge (a header's settings, a `suit`, a `target`, a `starter`) keep
//! what the log wrote so the machine can say what is wrong with it; everything else is
//! already in notation form (cards as `Card`, suits as `Suit`).

use crate::cards::{Card, Suit};
use crate::json::{Text, Value};

/// Fields every line carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Common {
    pub game: Text,
    pub seq: u64,
    /// the `ts` as written, when it is a valid RFC 3339 timestamp with offset
    pub ts: Option<Text>,
}

/// A claimed number in `scores`/`totals`: JSON integers and fractions compare by value
/// (a claim of `5.0` equals a computed 5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Points {
    Int(i128),
    Float(f64),
}

impl Points {
    pub fn equals(self, computed: i64) -> bool {
        match self {
            Points::Int(n) => n == i128::from(computed),
            Points::Float(x) => x == computed as f64,
        }
    }
}

/// A `penalty` reason (notation.md: `misplay` · `missed_call` · `out_of_turn` · `delay` · `other`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PenaltyReason {
    Misplay,
    MissedCall,
    OutOfTurn,
    Delay,
    Other,
}

impl PenaltyReason {
    pub const ALL: [PenaltyReason; 5] = [
        PenaltyReason::Misplay,
        PenaltyReason::MissedCall,
        PenaltyReason::OutOfTurn,
        PenaltyReason::Delay,
        PenaltyReason::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PenaltyReason::Misplay => "misplay",
            PenaltyReason::MissedCall => "missed_call",
            PenaltyReason::OutOfTurn => "out_of_turn",
            PenaltyReason::Delay => "delay",
            PenaltyReason::Other => "other",
        }
    }

    pub fn parse(text: &str) -> Option<PenaltyReason> {
        PenaltyReason::ALL
            .iter()
            .copied()
            .find(|r| r.name() == text)
    }
}

/// `game`: the header. Its settings are judged by `machine::read_header`, so they keep
/// the values the log wrote (absent or `null` is `None`).
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub format: Option<Value>,
    pub ruleset: Option<Value>,
    pub players: Option<Value>,
    pub options: Option<Value>,
    pub mode: Option<Value>,
    pub decks: Option<Value>,
    pub r#match: Option<Value>,
    pub meta: Option<Value>,
}

impl Header {
    /// Each field by its name in the notation, in the field table's order
    /// (`notation::EVENT_FIELDS`' `game`; a test holds the two together).
    pub fn fields(&self) -> [(&'static str, &Option<Value>); 8] {
        [
            ("format", &self.format),
            ("ruleset", &self.ruleset),
            ("players", &self.players),
            ("options", &self.options),
            ("mode", &self.mode),
            ("decks", &self.decks),
            ("match", &self.r#match),
            ("meta", &self.meta),
        ]
    }
}

/// `deal`: starts a hand.
#[derive(Clone, Debug, PartialEq)]
pub struct Deal {
    pub hand: u64,
    pub dealer: Text,
    /// player → cards, in the order written
    pub hands: Vec<(Text, Vec<Card>)>,
    pub starter: Option<Card>,
    /// the starter field was present but could not be read as a card
    pub starter_unreadable: bool,
    /// the rest of the deck, top first
    pub stock: Option<Vec<Card>>,
}

/// `play`: a card onto the pile.
#[derive(Clone, Debug, PartialEq)]
pub struct Play {
    pub player: Text,
    pub card: Card,
    pub suit: Option<Suit>,
    /// a `suit` field was present but unreadable (judged as bad_suit by the rules)
    pub suit_unreadable: bool,
    pub target: Option<Text>,
    /// a `target` field was present (possibly not a string: then `target` is None)
    pub target_given: bool,
}

/// `draw`: cards from the stock into a player's hand, for any reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Draw {
    pub player: Text,
    pub cards: Vec<Card>,
}

/// `penalty`: a table-imposed penalty draw (persian).
#[derive(Clone, Debug, PartialEq)]
pub struct Penalty {
    pub player: Text,
    pub cards: Vec<Card>,
    pub reason: PenaltyReason,
}

/// `end`: closes a hand; its claims are checked.
#[derive(Clone, Debug, PartialEq)]
pub struct End {
    pub hand: u64,
    pub winners: Option<Vec<String>>,
    pub scores: Option<Vec<(String, Points)>>,
    pub order: Option<Vec<String>>,
}

/// `result`: closes the game; its claims are checked.
#[derive(Clone, Debug, PartialEq)]
pub struct GameResult {
    pub totals: Option<Vec<(String, Points)>>,
    pub winners: Option<Vec<String>>,
}

/// What a line records.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// boxed: a header's eight settings would make every event as large as it
    Header(Box<Header>),
    Deal(Deal),
    Play(Play),
    Draw(Draw),
    Pass {
        player: Text,
    },
    Announce {
        player: Text,
        call: String,
    },
    Penalty(Penalty),
    Reshuffle {
        stock: Option<Vec<Card>>,
    },
    End(End),
    Result(GameResult),
    Abort {
        reason: Option<String>,
    },
}

/// One decoded line.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub common: Common,
    pub kind: Kind,
}

impl Kind {
    /// The event's `type` in the notation.
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Header(_) => "game",
            Kind::Deal(_) => "deal",
            Kind::Play(_) => "play",
            Kind::Draw(_) => "draw",
            Kind::Pass { .. } => "pass",
            Kind::Announce { .. } => "announce",
            Kind::Penalty(_) => "penalty",
            Kind::Reshuffle { .. } => "reshuffle",
            Kind::End(_) => "end",
            Kind::Result(_) => "result",
            Kind::Abort { .. } => "abort",
        }
    }

    /// "Turn event: a `play`, `draw` or `pass` line." (rules.md, "Words used here")
    pub fn is_turn_event(&self) -> bool {
        matches!(self, Kind::Play(_) | Kind::Draw(_) | Kind::Pass { .. })
    }

    /// The acting player, for events that have one.
    pub fn actor(&self) -> Option<&str> {
        match self {
            Kind::Play(p) => Some(&p.player),
            Kind::Draw(d) => Some(&d.player),
            Kind::Pass { player } | Kind::Announce { player, .. } => Some(player),
            Kind::Penalty(p) => Some(&p.player),
            _ => None,
        }
    }
}

/// The event types, in the order notation.md lists them.
pub const EVENT_TYPES: [&str; 11] = [
    "game",
    "deal",
    "play",
    "draw",
    "pass",
    "announce",
    "penalty",
    "reshuffle",
    "end",
    "result",
    "abort",
];
