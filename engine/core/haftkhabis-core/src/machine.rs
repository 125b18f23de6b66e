//! The one state machine: a table replaying a game event by event under a ruleset profile.
//!
//! `Table::apply` judges one event against the rules, records every breach, then applies
//! the event as the table recorded it (the cards really moved) so later breaches are found
//! too. `Table::options` is the legality view of the state (what the player to move may
//! do); the validator, the replay, the dashboard and the simulator all use that same code.

use crate::cards::{Card, Suit};
use crate::event::{Event, Header};
use crate::ruleset::{Mode, Ruleset};
use crate::violation::{Code, Violation};

/// "Every player is dealt 7 cards."
pub const HAND_SIZE: usize = 7;

/// Where a hand stands; the player to move is the hand's mover (or the gift's target).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// pis-yedili: the opener must lay a club onto the empty pile
    Opening,
    /// a normal turn, nothing drawn yet
    Turn,
    /// a normal turn after a draw
    Drawn,
    /// facing a pending 7 total
    Seven,
    /// the follow after an 8, a pis-yedili A or a bonus A
    Follow,
    /// persian: the failed-follow draw brought a playable card
    FollowDrawn,
    /// persian `ace_deflect`: the player an A would skip
    Deflect,
    /// persian points: decided; losers draw for their 7s
    Settlement,
    /// decided and settled: the hand's `end` is due
    Over,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Opening => "opening",
            Phase::Turn => "turn",
            Phase::Drawn => "drawn",
            Phase::Seven => "seven",
            Phase::Follow => "follow",
            Phase::FollowDrawn => "follow_drawn",
            Phase::Deflect => "deflect",
            Phase::Settlement => "settlement",
            Phase::Over => "over",
        }
    }
}

/// A usable header, read once: the profile with its options, players and match.
#[derive(Clone, Debug)]
pub struct Settings {
    pub ruleset: Ruleset,
    pub players: Vec<String>,
    pub mode: Mode,
    pub decks: u8,
    pub match_hands: Option<u64>,
    pub match_target: Option<u64>,
}

/// What `read_header` made of a header: the settings to replay with (None when the
/// header is unusable) and what is wrong with it.
#[derive(Clone, Debug, Default)]
pub struct HeaderReading {
    pub settings: Option<Settings>,
    pub violations: Vec<(Code, String)>,
}

/// How a hand was decided (notation.md: `out` · `blocked` · `elimination`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutcomeReason {
    Out,
    Blocked,
    Elimination,
}

impl OutcomeReason {
    pub fn name(self) -> &'static str {
        match self {
            OutcomeReason::Out => "out",
            OutcomeReason::Blocked => "blocked",
            OutcomeReason::Elimination => "elimination",
        }
    }
}

/// A decided hand.
#[derive(Clone, Debug, PartialEq)]
pub struct HandOutcome {
    pub hand: u64,
    pub winners: Vec<String>,
    /// points per player in seat order (None in elimination play, or while settling)
    pub scores: Option<Vec<(String, i64)>>,
    pub reason: OutcomeReason,
    /// the finishing order (elimination play)
    pub order: Option<Vec<String>>,
    pub winning_card: Option<Card>,
    pub multiplier: u32,
}

/// How the game was closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closure {
    Result,
    Abort,
}

/// What the player to move may do now: the legality view of the state.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnOptions {
    pub player: String,
    pub phase: Phase,
    /// cards held that may be played now, sorted, distinct
    pub playable: Vec<Card>,
    /// how many cards a draw must take now; None: no draw allowed
    pub draw: Option<u32>,
    pub may_pass: bool,
    /// drawing or passing now is `must_play`
    pub obliged: bool,
    /// the move owed is a 2's gift draw
    pub gift: bool,
}

/// A table replaying one game. Feed it events in `seq` order with `apply`.
pub struct Table {
    pub game: String,
    pub settings: Settings,
}

/// Judge a `game` header: the settings to replay with, or None when unusable.
pub fn read_header(_header: &Header) -> HeaderReading {
    todo!("read_header")
}

impl Table {
    pub fn new(settings: Settings, game: &str) -> Table {
        Table {
            game: game.to_string(),
            settings,
        }
    }

    /// Judge `event`, apply it as recorded, and return the breaches found on it.
    pub fn apply(&mut self, _event: &Event) -> Vec<Violation> {
        todo!("apply")
    }

    /// What the player expected to act may do now (None when nobody is to move).
    pub fn options(&self) -> Option<TurnOptions> {
        todo!("options")
    }

    /// The player the rules expect to act next.
    pub fn expected_actor(&self) -> Option<&str> {
        todo!()
    }

    /// The match is over and its last hand has its `end` (or a result closed it).
    pub fn is_complete(&self) -> bool {
        todo!()
    }

    pub fn closed_by(&self) -> Option<Closure> {
        todo!()
    }

    /// A hand is dealt and not yet closed by its `end`.
    pub fn hand_open(&self) -> bool {
        todo!()
    }

    pub fn match_over(&self) -> bool {
        todo!()
    }

    pub fn elimination(&self) -> bool {
        self.settings.mode == Mode::Elimination
    }

    pub fn players(&self) -> &[String] {
        &self.settings.players
    }

    /// The match winners: the lowest total, or in elimination play the most first places.
    pub fn match_winners(&self) -> Vec<String> {
        todo!()
    }

    /// Hands with an outcome: those closed by an end, and the running one if decided.
    pub fn decided_outcomes(&self) -> Vec<HandOutcome> {
        todo!()
    }

    /// The phase before the next line, in the words the warehouse stores (`gift` while a
    /// 2's gift is owed); None when no hand runs.
    pub fn phase_name(&self) -> Option<&'static str> {
        todo!()
    }

    /// Forget a closed hand's cards (the validator calls this when no replay is recorded).
    pub fn free_closed_hand(&mut self) {
        todo!()
    }

    /// The current suit, for views.
    pub fn current_suit(&self) -> Option<Suit> {
        todo!()
    }
}
