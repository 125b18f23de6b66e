//! The closed list of violation codes (notation.md, "Violation codes"), and the value a
//! breach is recorded as.

use std::sync::Arc;

/// A violation code. The list is closed: a message says the specifics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    MalformedJson,
    Schema,
    Sequence,
    NoHeader,
    UnknownRuleset,
    BadDeal,
    UnexpectedEvent,
    NotYourTurn,
    CardNotInHand,
    IllegalCard,
    MustPlay,
    IllegalDraw,
    StockMismatch,
    IllegalPass,
    BadSuit,
    BadTarget,
    UnjustifiedPenalty,
    MissedCall,
    ScoreMismatch,
    WinnerMismatch,
}

impl Code {
    pub const ALL: [Code; 20] = [
        Code::MalformedJson,
        Code::Schema,
        Code::Sequence,
        Code::NoHeader,
        Code::UnknownRuleset,
        Code::BadDeal,
        Code::UnexpectedEvent,
        Code::NotYourTurn,
        Code::CardNotInHand,
        Code::IllegalCard,
        Code::MustPlay,
        Code::IllegalDraw,
        Code::StockMismatch,
        Code::IllegalPass,
        Code::BadSuit,
        Code::BadTarget,
        Code::UnjustifiedPenalty,
        Code::MissedCall,
        Code::ScoreMismatch,
        Code::WinnerMismatch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Code::MalformedJson => "malformed_json",
            Code::Schema => "schema",
            Code::Sequence => "sequence",
            Code::NoHeader => "no_header",
            Code::UnknownRuleset => "unknown_ruleset",
            Code::BadDeal => "bad_deal",
            Code::UnexpectedEvent => "unexpected_event",
            Code::NotYourTurn => "not_your_turn",
            Code::CardNotInHand => "card_not_in_hand",
            Code::IllegalCard => "illegal_card",
            Code::MustPlay => "must_play",
            Code::IllegalDraw => "illegal_draw",
            Code::StockMismatch => "stock_mismatch",
            Code::IllegalPass => "illegal_pass",
            Code::BadSuit => "bad_suit",
            Code::BadTarget => "bad_target",
            Code::UnjustifiedPenalty => "unjustified_penalty",
            Code::MissedCall => "missed_call",
            Code::ScoreMismatch => "score_mismatch",
            Code::WinnerMismatch => "winner_mismatch",
        }
    }

    pub fn parse(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// A player's own fouls, which justify a persian `misplay` penalty (rules.md: "Fouls
    /// are the player's own: `not_your_turn`, `card_not_in_hand`, `illegal_card`,
    /// `must_play`, `illegal_draw`, `illegal_pass`, `bad_suit`, `bad_target`,
    /// `missed_call` (not `schema`, `stock_mismatch`, `unexpected_event`)"). This is also
    /// what counts as "a player's violations" everywhere (the CLI, the warehouse, the
    /// dashboard).
    pub fn is_foul(self) -> bool {
        matches!(
            self,
            Code::NotYourTurn
                | Code::CardNotInHand
                | Code::IllegalCard
                | Code::MustPlay
                | Code::IllegalDraw
                | Code::IllegalPass
                | Code::BadSuit
                | Code::BadTarget
                | Code::MissedCall
        )
    }

    /// One line of explanation, for people.
    pub fn explanation(self) -> &'static str {
        match self {
            Code::MalformedJson => "The line is not a JSON object (or not UTF-8).",
            Code::Schema => "A field is missing, unknown, or of the wrong type or spelling.",
            Code::Sequence => "A seq number is missing, or two different lines share one.",
            Code::NoHeader => "The game has no `game` header line at seq 0.",
            Code::UnknownRuleset => {
                "The header names a ruleset, option or mode the engine does not know."
            }
            Code::BadDeal => "The deal is wrong: hand sizes, cards, starter or stock.",
            Code::UnexpectedEvent => "This event cannot come at this point of the game.",
            Code::NotYourTurn => "Someone other than the player the rules expect acted.",
            Code::CardNotInHand => "The player played a card they did not hold.",
            Code::IllegalCard => "The card may not be played here.",
            Code::MustPlay => "The player drew or passed while the rules oblige them to play.",
            Code::IllegalDraw => "A draw not allowed now, or of the wrong number of cards.",
            Code::StockMismatch => "The drawn cards are not the stock's top (or not unseen cards).",
            Code::IllegalPass => "A pass where the rules give no choice.",
            Code::BadSuit => "A J without the suit it must declare, or a suit the ruleset forbids.",
            Code::BadTarget => "A 2 without a valid target, or a target on a card that takes none.",
            Code::UnjustifiedPenalty => "A table penalty whose reason does not hold.",
            Code::MissedCall => "A player left with one card did not announce it.",
            Code::ScoreMismatch => "The claimed scores or totals differ from the computed ones.",
            Code::WinnerMismatch => "The claimed winners or order differ from the computed ones.",
        }
    }
}

/// One breach found on one line. `file`/`line` are filled in by the validator.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub seq: Option<u64>,
    pub code: Code,
    pub player: Option<String>,
    pub message: String,
    pub file: Option<Arc<str>>,
    pub line: Option<u64>,
}

impl Violation {
    pub fn new(seq: Option<u64>, code: Code, player: Option<String>, message: String) -> Self {
        Violation {
            seq,
            code,
            player,
            message,
            file: None,
            line: None,
        }
    }
}
