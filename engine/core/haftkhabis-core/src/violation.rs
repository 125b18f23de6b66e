//! The closed list of violation codes (notation.md, "Violation codes"), and the value a
//! breach is recorded as.

use std::sync::Arc;

/// Declares [`Code`] and [`CODES`] from one table, a row per code in the contract's order
/// (notation.md, "Violation codes"): its variant, its name in the verdict, whether it is a
/// player's foul, and one line of explanation for people. Nothing else declares a code:
/// `engine._core.violation_codes()` exports the table, `engine._core.Code` is built from it,
/// and `docs/notation.md`'s table of codes is generated from that.
macro_rules! violation_codes {
    ($($variant:ident = $name:literal, foul: $foul:literal, $explanation:literal;)*) => {
        /// A violation code. The list is closed: a message says the specifics.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($variant,)*
        }

        /// Every code, in the contract's order (the order of [`Code`]'s variants, so that
        /// `CODES[code as usize]` is the code's own row).
        pub const CODES: &[CodeInfo] = &[
            $(CodeInfo {
                code: Code::$variant,
                name: $name,
                foul: $foul,
                explanation: $explanation,
            },)*
        ];
    };
}

/// What is known of one violation code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    pub code: Code,
    /// the code as the verdict writes it
    pub name: &'static str,
    /// a player's own foul ([`Code::is_foul`])
    pub foul: bool,
    /// one line of explanation, for people (the dashboard, the report, the API)
    pub explanation: &'static str,
}

violation_codes! {
    MalformedJson = "malformed_json", foul: false,
        "The line is not a JSON object (or not UTF-8).";
    Schema = "schema", foul: false,
        "A field is missing, unknown, or of the wrong type or spelling.";
    Sequence = "sequence", foul: false,
        "A seq number is missing, or two different lines share one.";
    NoHeader = "no_header", foul: false,
        "The game has no `game` header line at seq 0.";
    UnknownRuleset = "unknown_ruleset", foul: false,
        "The header names a ruleset, option or mode the engine does not know.";
    BadDeal = "bad_deal", foul: false,
        "The deal is wrong: hand sizes, cards, starter or stock.";
    UnexpectedEvent = "unexpected_event", foul: false,
        "This event cannot come at this point of the game.";
    NotYourTurn = "not_your_turn", foul: true,
        "Someone other than the player the rules expect acted.";
    CardNotInHand = "card_not_in_hand", foul: true,
        "The player played a card they did not hold.";
    IllegalCard = "illegal_card", foul: true,
        "The card may not be played here.";
    MustPlay = "must_play", foul: true,
        "The player drew or passed while the rules oblige them to play.";
    IllegalDraw = "illegal_draw", foul: true,
        "A draw not allowed now, or of the wrong number of cards.";
    StockMismatch = "stock_mismatch", foul: false,
        "The drawn cards are not the stock's top (or not unseen cards).";
    IllegalPass = "illegal_pass", foul: true,
        "A pass where the rules give no choice.";
    BadSuit = "bad_suit", foul: true,
        "A J without the suit it must declare, or a suit the ruleset forbids.";
    BadTarget = "bad_target", foul: true,
        "A 2 without a valid target, or a target on a card that takes none.";
    UnjustifiedPenalty = "unjustified_penalty", foul: false,
        "A table penalty whose reason does not hold.";
    MissedCall = "missed_call", foul: true,
        "A player left with one card did not announce it.";
    ScoreMismatch = "score_mismatch", foul: false,
        "The claimed scores or totals differ from the computed ones.";
    WinnerMismatch = "winner_mismatch", foul: false,
        "The claimed winners or order differ from the computed ones.";
}

impl Code {
    fn info(self) -> &'static CodeInfo {
        &CODES[self as usize]
    }

    /// The code as the verdict writes it.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn parse(name: &str) -> Option<Code> {
        CODES.iter().find(|c| c.name == name).map(|c| c.code)
    }

    /// A player's own fouls, which justify a persian `misplay` penalty (rules.md: "Fouls
    /// are the player's own: `not_your_turn`, `card_not_in_hand`, `illegal_card`,
    /// `must_play`, `illegal_draw`, `illegal_pass`, `bad_suit`, `bad_target`,
    /// `missed_call` (not `schema`, `stock_mismatch`, `unexpected_event`)"). This is also
    /// what counts as "a player's violations" everywhere (the CLI, the warehouse, the
    /// dashboard).
    pub fn is_foul(self) -> bool {
        self.info().foul
    }

    /// One line of explanation, for people.
    pub fn explanation(self) -> &'static str {
        self.info().explanation
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_code_has_its_own_row() {
        for (index, info) in CODES.iter().enumerate() {
            assert_eq!(info.code as usize, index, "{} is out of place", info.name);
            assert_eq!(Code::parse(info.name), Some(info.code));
            assert_eq!(info.code.name(), info.name);
            assert!(!info.explanation.is_empty() && info.explanation.ends_with('.'));
        }
        let mut names: Vec<&str> = CODES.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CODES.len(), "two codes share a name");
        assert_eq!(Code::parse("must play"), None);
    }

    #[test]
    fn fouls_are_the_contracts_list() {
        // rules.md, "Table penalties": "Fouls are the player's own: …"
        let fouls: Vec<&str> = CODES.iter().filter(|c| c.foul).map(|c| c.name).collect();
        assert_eq!(
            fouls,
            [
                "not_your_turn",
                "card_not_in_hand",
                "illegal_card",
                "must_play",
                "illegal_draw",
                "illegal_pass",
                "bad_suit",
                "bad_target",
                "missed_call"
            ]
        );
    }
}
