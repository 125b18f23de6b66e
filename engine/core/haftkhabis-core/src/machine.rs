//! The one state machine: a table replaying a game event by event under a ruleset profile.
//!
//! `Table::apply` judges one event against the rules, records every breach, then applies
//! the event as the table recorded it (the cards really moved) so later breaches are found
//! too. `Table::options` is the legality view of the state (what the player to move may
//! do); the validator, the replay, the dashboard and the simulator all use that same code.
//!
//! Names follow `shared/rules.md`; every rule decision is one method, whose doc comment
//! quotes the rule it implements.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::cards::{pretty_cards, Card, CardCounts, Suit};
use crate::event::{
    Deal, Draw, End, Event, GameResult, Header, Kind, Penalty, PenaltyReason, Play, Points,
};
use crate::json::{same_text, Text, Value};
use crate::ruleset::{self, AfterDraw, Effect, JackRule, Mode, MustPlay, Ruleset};
use crate::violation::{Code, Violation};

mod info;
pub use info::PlayNeeds;

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
    /// the header's players, in seat order (inline text: cloning a name costs no
    /// allocation, and every hand's outcome names them)
    pub players: Vec<Text>,
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
    pub winners: Vec<Text>,
    /// points per player in seat order (None in elimination play, or while settling)
    pub scores: Option<Vec<(Text, i64)>>,
    pub reason: OutcomeReason,
    /// the finishing order (elimination play)
    pub order: Option<Vec<Text>>,
    pub winning_card: Option<Card>,
    pub multiplier: u32,
}

/// How the game was closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closure {
    Result,
    Abort,
}

impl Closure {
    pub fn name(self) -> &'static str {
        match self {
            Closure::Result => "result",
            Closure::Abort => "abort",
        }
    }
}

/// What the player to move may do now: the legality view of the state.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnOptions {
    pub player: Text,
    pub phase: Phase,
    /// cards held that may be played now, distinct, in notation order
    pub playable: Vec<Card>,
    /// how many cards a draw must take now; None: no draw allowed
    pub draw: Option<u32>,
    pub may_pass: bool,
    /// drawing or passing now is `must_play`
    pub obliged: bool,
    /// the move owed is a 2's gift draw
    pub gift: bool,
}

impl TurnOptions {
    /// The options in words ("sara may play 5♦ J♦ or draw 1").
    pub fn describe(&self) -> String {
        if self.gift {
            return format!("{} draws the 2's gift (1 card)", self.player);
        }
        let mut parts = Vec::new();
        if !self.playable.is_empty() {
            parts.push(format!("play {}", pretty_cards(&self.playable)));
        }
        if let Some(n) = self.draw {
            if !self.obliged {
                parts.push(format!("draw {n}"));
            }
        }
        if self.may_pass {
            parts.push("pass".to_string());
        }
        if parts.is_empty() {
            return format!("{}: nothing ({})", self.player, self.phase.name());
        }
        format!("{} may {}", self.player, parts.join(" or "))
    }
}

/// What a draw was, as the engine knows it (the warehouse's `draw_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawKind {
    /// the drawn 7 total
    SevenTotal,
    /// a 2's gift
    Gift,
    /// bazito/persian: the draw after an 8 without a follow
    FailedFollow,
    /// persian points: a loser's draw for their laid-aside 7s
    Settlement,
    /// a table penalty's card
    Penalty,
    /// a draw the player chose (or had to make without a playable card) in a normal turn
    Voluntary,
    /// pis-yedili: the opener's draws until a club
    Opening,
    /// a draw where none is allowed (after a pis-yedili A, a bonus A, a deflect, …)
    NotAllowed,
}

impl DrawKind {
    pub fn name(self) -> &'static str {
        match self {
            DrawKind::SevenTotal => "seven_total",
            DrawKind::Gift => "gift",
            DrawKind::FailedFollow => "failed_follow",
            DrawKind::Settlement => "settlement",
            DrawKind::Penalty => "penalty",
            DrawKind::Voluntary => "voluntary",
            DrawKind::Opening => "opening",
            DrawKind::NotAllowed => "not_allowed",
        }
    }
}

/// What the engine knew of one applied line: every fact the warehouse and the views
/// need, derived here once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineFact {
    /// the hand the line belongs to (a `deal` its new hand, an `end` the hand it closes)
    pub hand: Option<u64>,
    /// the phase before the line (`gift` while a 2's gift was owed)
    pub phase: Option<&'static str>,
    /// for a `draw` or `penalty`: what the draw was
    pub draw_kind: Option<DrawKind>,
    /// 7s laid aside in settlement right after this line: (player, cards)
    pub laid_aside: Vec<(Text, Vec<Card>)>,
    /// the player whose turn it was before the line (None between hands)
    pub expected: Option<Text>,
    /// a 2 whose gift applies: its target
    pub gift_to: Option<Text>,
    /// a turn event made by the player whose turn it was: what they faced
    pub decision: Option<Decision>,
}

/// What the player to move faced just before a turn event of theirs (`play`, `draw`,
/// `pass`), for the pair audit (docs/fairplay.md): their options, and the players their
/// move touches. "A played 7 puts `k` cards on the next player"; an A (a pis-yedili 8)
/// skips the next player; a J "sets the current suit" the others must match.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// the cards held that could be played, in notation order (the machine's options)
    pub playable: Vec<Card>,
    /// drawing or passing was `must_play`
    pub obliged: bool,
    /// a draw was allowed
    pub may_draw: bool,
    /// the next player in the current direction among those still in the hand
    pub next_player: Text,
    /// the cards the next player held
    pub next_cards: u32,
    /// for a J that declares a suit: every other player in the hand and the suits of the
    /// non-J cards they held, a bit a suit (C 1, D 2, H 4, S 8)
    pub suits_held: Vec<(Text, i64)>,
    /// for a J that declares a suit: the suits it could declare, bits as above
    pub suit_choices: Option<i64>,
}

/// What the warehouse and the scoring views need of each hand dealt.
#[derive(Clone, Debug, PartialEq)]
pub struct HandRecord {
    pub number: u64,
    pub dealer: Text,
    pub first_player: Text,
    pub outcome: Option<HandOutcome>,
    /// cards left per player in seat order
    pub cards_left: Vec<(Text, Vec<Card>)>,
    pub reshuffles: u32,
    pub closed: bool,
    /// what the hand's `deal` dealt, as the table took it
    pub deal: DealRecord,
}

/// What a `deal` line dealt, as the table took it (notation.md: "`hands` (player → list of
/// cards, every player in the hand), `starter` …, optional `stock` (the rest of the deck,
/// top first)"): the facts the deal audit reads (docs/fairplay.md), kept once here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DealRecord {
    /// the `deal` line's seq
    pub seq: Option<u64>,
    /// the dealer's seat (header order)
    pub dealer_seat: usize,
    /// each seat's cards as dealt, in the order written ("Every player is dealt 7 cards";
    /// a seat the deal gave no hand holds none)
    pub opening: Vec<Vec<Card>>,
    /// the starter the table turned (None where the ruleset has none)
    pub starter: Option<Card>,
    /// the stock as logged, top first, when the deal logged one that is the rest of the pack
    pub stock: Option<Vec<Card>>,
}

/// The state as plain data, for the replay views and golden tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub hand: u64,
    pub open: bool,
    pub dealer: Text,
    pub phase: Phase,
    pub hands: Vec<(Text, Vec<Card>)>,
    pub pile_top: Option<Card>,
    pub pile_size: usize,
    /// the last cards played, top last (at most `PILE_HISTORY`)
    pub pile_recent: Vec<Card>,
    /// the whole discard pile, top last
    pub pile: Vec<Card>,
    /// the players still in the hand, seat order
    pub active: Vec<Text>,
    pub stock_size: u32,
    pub current_suit: Option<Suit>,
    pub clockwise: bool,
    /// the player expected to act next (a 2's target while its gift is owed)
    pub mover: Option<Text>,
    /// the player whose turn it is (behind an owed gift: the one who moves after it);
    /// None once the hand is decided
    pub turn: Option<Text>,
    pub pending_total: u32,
    pub follow_card: Option<Card>,
    pub gift_target: Option<Text>,
    pub call_due: Vec<Text>,
    pub finished: Vec<Text>,
    pub waiting_sevens: Vec<Text>,
    pub laid_aside: Vec<Card>,
    pub legal: Option<TurnOptions>,
    pub outcome: Option<HandOutcome>,
}

impl Snapshot {
    /// The direction of play as the replay views name it.
    pub fn direction(&self) -> &'static str {
        if self.clockwise {
            "clockwise"
        } else {
            "counter-clockwise"
        }
    }
}

/// How many of the pile's last cards a snapshot shows.
pub const PILE_HISTORY: usize = 8;

/// Why a card may not be played now ([`Table::verify_card`]): the rule it breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Illegal {
    /// pis-yedili: "the seat after the dealer must play a **club**" (the opening suit)
    NotOpeningSuit,
    /// "Nothing else answers a pending total — not a J."
    SevenTotal,
    /// `ace_deflect`: "the player an A would skip may play any A to pass the skip on"
    NotDeflect,
    /// a follow (after an 8, or an A in pis-yedili) is of the follow card's suit or rank:
    /// "with a card of the 8's suit or another 8 (a J only if it is of the 8's suit; it
    /// then declares)"
    NoFollow,
    /// pis-yedili: "When the top card is a J, only a card of the declared suit — never a
    /// J on a J."
    JackOnJack,
    /// pis-yedili: "When the top card is a J, only a card of the declared suit"
    NotDeclaredSuit,
    /// persian: "A J that does not match is a **wild** card only when its player holds no
    /// match"
    JackNotWild,
    /// "a *match* is a card of the current suit or of the top card's rank"
    NoMatch,
}

/// The mutable state of one hand. Players are seat indices.
#[derive(Clone, Debug)]
struct Hand {
    number: u64,
    dealer: usize,
    /// seat → still in the hand (elimination play takes finishers out)
    active: Vec<bool>,
    hands: Vec<Vec<Card>>,
    /// the discard pile, top last
    pile: Vec<Card>,
    /// unseen cards
    stock: CardCounts,
    /// the stock top first, when the log told it
    stock_order: Option<VecDeque<Card>>,
    laid_aside: Vec<Card>,
    current_suit: Option<Suit>,
    direction: i8,
    mover: usize,
    first_player: usize,
    phase: Phase,
    pending_total: u32,
    total_drawn: u32,
    follow_card: Option<Card>,
    gift_target: Option<usize>,
    gift_from: Option<usize>,
    waiting_cards: Vec<(usize, Card)>,
    drawn_card: Option<Card>,
    draws_this_turn: u32,
    /// player → seq of the line that made the call due, in the order they fell due
    call_due: Vec<(usize, u64)>,
    finished: Vec<usize>,
    waiting_sevens: Vec<usize>,
    settle_queue: VecDeque<usize>,
    settle_player: Option<usize>,
    settle_owed: u32,
    outcome: Option<HandOutcome>,
    reshuffles: u32,
}

impl Hand {
    fn new(number: u64, dealer: usize, players: usize) -> Hand {
        Hand {
            number,
            dealer,
            active: vec![true; players],
            hands: vec![Vec::new(); players],
            pile: Vec::new(),
            stock: CardCounts::default(),
            stock_order: None,
            laid_aside: Vec::new(),
            current_suit: None,
            direction: 1,
            mover: 0,
            first_player: 0,
            phase: Phase::Turn,
            pending_total: 0,
            total_drawn: 0,
            follow_card: None,
            gift_target: None,
            gift_from: None,
            waiting_cards: Vec::new(),
            drawn_card: None,
            draws_this_turn: 0,
            call_due: Vec::new(),
            finished: Vec::new(),
            waiting_sevens: Vec::new(),
            settle_queue: VecDeque::new(),
            settle_player: None,
            settle_owed: 0,
            outcome: None,
            reshuffles: 0,
        }
    }

    fn top(&self) -> Option<Card> {
        self.pile.last().copied()
    }

    fn decided(&self) -> bool {
        self.outcome.is_some()
    }

    fn stock_size(&self) -> u32 {
        self.stock.total()
    }

    /// "No card anywhere: an empty stock and nothing under the pile's top card."
    fn no_card_anywhere(&self) -> bool {
        self.stock_size() == 0 && self.pile.len() <= 1
    }

    fn active_count(&self) -> usize {
        self.active.iter().filter(|&&a| a).count()
    }

    fn card_count(&self) -> usize {
        self.hands.iter().map(Vec::len).sum::<usize>()
            + self.pile.len()
            + self.stock_size() as usize
            + self.laid_aside.len()
    }
}

/// A table replaying one game. Feed it events in `seq` order with `apply`.
#[derive(Clone, Debug)]
pub struct Table {
    pub game: String,
    pub settings: Settings,
    /// boxed: a turn takes the hand out and puts it back, a pointer and not its cards
    hand: Option<Box<Hand>>,
    /// a hand is dealt and not yet closed by its `end`
    hand_open: bool,
    last_hand_number: u64,
    outcomes: Vec<HandOutcome>,
    totals: Vec<i64>,
    first_places: Vec<u32>,
    previous_winner: Option<usize>,
    match_over: bool,
    closed_by: Option<Closure>,
    /// a `result` came before the match was over (the game is closed, not complete)
    premature_result: bool,
    /// seat → the fouls committed since their last penalty
    fouls: Vec<Vec<Code>>,
    last_type: Option<&'static str>,
    hand_log: Vec<HandLogEntry>,
    /// player id → seat (tables may be large: a header can name any number of players)
    seats: HashMap<Text, usize>,
    out: Vec<Violation>,
    seq: Option<u64>,
    fact: LineFact,
    /// whether each turn event's [`Decision`] is derived (the warehouse's `decisions`
    /// rows: an ingest's replay sets it; a validation does not pay for it)
    pub decisions: bool,
}

/// What the table keeps of each hand dealt, by seat ([`Table::hand_records`] names them).
#[derive(Clone, Debug)]
struct HandLogEntry {
    number: u64,
    dealer: usize,
    first_player: usize,
    /// its outcome's place in `Table::outcomes`, once closed with one
    outcome_at: Option<usize>,
    /// cards left per seat, once the hand is closed
    cards_left: Vec<Vec<Card>>,
    reshuffles: u32,
    closed: bool,
    deal: DealRecord,
}

/// Up to this many players, [`Table::seat`] scans the seats instead of hashing the name.
const SCAN_SEATS: usize = 16;

fn quoted(text: &str) -> String {
    Value::from(text).repr()
}

fn fmt_points(points: Points) -> String {
    match points {
        Points::Int(n) => n.to_string(),
        Points::Float(x) => format!("{x:?}"),
    }
}

/// Names for a message, in the order given: `ali`, `ali and sara`, `ali, reza and sara`
/// (`nobody` for none).
fn names_text<S: AsRef<str>>(names: &[S]) -> String {
    match names {
        [] => "nobody".to_string(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} and {}", rest.join(", "), last.as_ref())
        }
    }
}

/// A finishing order for a message: `ali → reza → sara` (`none` when empty).
fn order_text<S: AsRef<str>>(names: &[S]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
        names.join(" → ")
    }
}

/// What differs between a claimed points map and the computed one, entry by entry (the
/// last value under a key counts): `sara claimed 10, computed 12; nima claimed 3 but is
/// not at the table; reza not claimed (computed 4)`. With nothing computed (elimination
/// play scores no points), the claim as written.
fn points_differences(claim: &[(String, Points)], computed: Option<&[(Text, i64)]>) -> String {
    let claimed = |player: &str| {
        claim
            .iter()
            .rev()
            .find(|(k, _)| k == player)
            .map(|(_, v)| *v)
    };
    let Some(computed) = computed else {
        let mut written: Vec<String> = Vec::new();
        for (player, _) in claim {
            if let Some(points) = claimed(player) {
                let entry = format!("{player} {}", fmt_points(points));
                if !written.contains(&entry) {
                    written.push(entry);
                }
            }
        }
        if written.is_empty() {
            return "claimed an empty score table, but this play scores no points".to_string();
        }
        return format!(
            "claimed {}, but this play scores no points",
            names_text(&written)
        );
    };
    let mut parts: Vec<String> = Vec::new();
    for (player, points) in computed {
        match claimed(player.as_str()) {
            None => parts.push(format!("{player} not claimed (computed {points})")),
            Some(claim) if !claim.equals(*points) => parts.push(format!(
                "{player} claimed {}, computed {points}",
                fmt_points(claim)
            )),
            Some(_) => {}
        }
    }
    let mut strangers: Vec<&str> = Vec::new();
    for (player, _) in claim {
        if !computed.iter().any(|(p, _)| p.as_str() == player.as_str())
            && !strangers.contains(&player.as_str())
        {
            strangers.push(player);
        }
    }
    for player in strangers {
        if let Some(points) = claimed(player) {
            parts.push(format!(
                "{player} claimed {} but is not at the table",
                fmt_points(points)
            ));
        }
    }
    parts.join("; ")
}

/// What differs between claimed and computed winners (compared as sets).
fn winners_differences(claimed: &[String], computed: &[Text]) -> String {
    let mut claimed = sorted_names(claimed);
    claimed.dedup();
    let mut computed = sorted_names(computed);
    computed.dedup();
    let not_winners: Vec<String> = claimed
        .iter()
        .filter(|p| !computed.contains(p))
        .cloned()
        .collect();
    let not_claimed: Vec<String> = computed
        .iter()
        .filter(|p| !claimed.contains(p))
        .cloned()
        .collect();
    let mut parts = vec![format!(
        "claimed {}, computed {}",
        names_text(&claimed),
        names_text(&computed)
    )];
    if !not_winners.is_empty() {
        parts.push(format!("{} did not win", names_text(&not_winners)));
    }
    if !not_claimed.is_empty() {
        parts.push(format!(
            "{} won but is not claimed",
            names_text(&not_claimed)
        ));
    }
    parts.join("; ")
}

/// What differs between a claimed and the computed finishing order: both orders, and the
/// first place where they part.
fn order_differences(claimed: &[String], computed: Option<&[Text]>) -> String {
    let Some(computed) = computed else {
        if claimed.is_empty() {
            return "claimed an empty order, but this hand has no finishing order".to_string();
        }
        return format!(
            "claimed {}, but this hand has no finishing order",
            order_text(claimed)
        );
    };
    let mut text = format!(
        "claimed {}, computed {}",
        order_text(claimed),
        order_text(computed)
    );
    let claimed_at = |i: usize| claimed.get(i).map(String::as_str);
    let computed_at = |i: usize| computed.get(i).map(Text::as_str);
    let place = (0..claimed.len().max(computed.len())).find(|&i| claimed_at(i) != computed_at(i));
    if let Some(i) = place {
        text.push_str(&format!(
            "; place {}: claimed {}, computed {}",
            i + 1,
            claimed_at(i).unwrap_or("nobody"),
            computed_at(i).unwrap_or("nobody")
        ));
    }
    text
}

fn sorted_names<S: AsRef<str>>(names: &[S]) -> Vec<String> {
    let mut out: Vec<String> = names.iter().map(|n| n.as_ref().to_string()).collect();
    out.sort();
    out
}

/// A claimed points map equals the computed one: every player, no extra key, equal values
/// (notation.md: "`scores`/`totals` as exact objects").
fn claim_equals(claim: &[(String, Points)], computed: &[(Text, i64)]) -> bool {
    // distinct keys, counted without a list (a table has a handful of players)
    let keys = (0..claim.len())
        .filter(|&i| !claim[..i].iter().any(|(k, _)| *k == claim[i].0))
        .count();
    if keys != computed.len() {
        return false;
    }
    computed.iter().all(|(player, points)| {
        // the last value under a key counts
        claim
            .iter()
            .rev()
            .find(|(k, _)| k.as_str() == player.as_str())
            .is_some_and(|(_, v)| v.equals(*points))
    })
}

/// Claimed and computed names compare as sets.
fn same_set<A: AsRef<str>, B: AsRef<str>>(a: &[A], b: &[B]) -> bool {
    let a_in_b = a.iter().all(|x| b.iter().any(|y| y.as_ref() == x.as_ref()));
    let b_in_a = b.iter().all(|y| a.iter().any(|x| x.as_ref() == y.as_ref()));
    a_in_b && b_in_a
}

/// Claimed and computed names compare as lists (a finishing order).
fn same_list<A: AsRef<str>, B: AsRef<str>>(a: &[A], b: &[B]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.as_ref() == y.as_ref())
}

/// Cards sorted the way the notation spells them (as Python sorts card strings).
fn notation_sorted(cards: impl IntoIterator<Item = Card>) -> Vec<Card> {
    let mut out: Vec<Card> = cards.into_iter().collect();
    out.sort_by_key(|c| c.notation());
    out.dedup();
    out
}

fn value_is_int(value: &Value) -> Option<i128> {
    match value {
        Value::Int(n) => Some(i128::from(*n)),
        Value::UInt(n) => Some(i128::from(*n)),
        _ => None,
    }
}

/// Judge a `game` header: the settings to replay with, or None when unusable
/// (notation.md: "The header is unusable (status `invalid`, nothing replayed) when
/// `format` is not `haftkhabis/1`, a required field is missing, `players` is not 2+
/// unique ids, or the ruleset, an option or a mode is unknown").
pub fn read_header(header: &Header) -> HeaderReading {
    let mut out: Vec<(Code, String)> = Vec::new();
    let mut unusable = false;
    let format_ok = matches!(&header.format, Some(Value::Str(s)) if s == "haftkhabis/1");
    if !format_ok {
        let shown = header
            .format
            .as_ref()
            .map_or("None".to_string(), Value::repr);
        out.push((
            Code::Schema,
            format!("format must be 'haftkhabis/1', got {shown}"),
        ));
        unusable = true;
    }
    let players: Option<Vec<String>> = match &header.players {
        Some(Value::Array(items)) => {
            let mut names = Vec::new();
            let mut ok = true;
            for item in items {
                match item {
                    Value::Str(s) if (1..=64).contains(&s.chars().count()) => {
                        names.push(s.to_string())
                    }
                    _ => ok = false,
                }
            }
            let mut seen = HashSet::with_capacity(names.len());
            let unique = names.iter().all(|n| seen.insert(n.as_str()));
            (ok && names.len() >= 2 && unique).then_some(names)
        }
        _ => None,
    };
    if players.is_none() {
        let shown = match &header.players {
            None => "None".to_string(),
            Some(Value::Array(items)) => {
                let inner: Vec<String> = items.iter().map(Value::repr).collect();
                format!(
                    "({}{})",
                    inner.join(", "),
                    if items.len() == 1 { "," } else { "" }
                )
            }
            Some(other) => other.repr(),
        };
        out.push((
            Code::Schema,
            format!("players must be 2 or more unique ids of 1-64 characters, got {shown}"),
        ));
        unusable = true;
    }
    let name = match &header.ruleset {
        None => {
            out.push((
                Code::Schema,
                "the required field 'ruleset' is missing".to_string(),
            ));
            return HeaderReading {
                settings: None,
                violations: out,
            };
        }
        Some(value) => value,
    };
    let rules = match name {
        Value::Str(s) => ruleset::ruleset(s),
        _ => None,
    };
    let Some(rules) = rules else {
        let known: Vec<&str> = ruleset::rulesets()
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        out.push((
            Code::UnknownRuleset,
            format!(
                "unknown ruleset {} (known: {})",
                name.repr(),
                known.join(", ")
            ),
        ));
        return HeaderReading {
            settings: None,
            violations: out,
        };
    };
    let mut options = rules.options;
    if let Some(given) = &header.options {
        match given {
            Value::Object(entries) => {
                for (key, value) in entries {
                    if !rules.has_option(key) {
                        let known = if rules.option_names.is_empty() {
                            "none".to_string()
                        } else {
                            rules.option_names.join(", ")
                        };
                        out.push((
                            Code::UnknownRuleset,
                            format!(
                                "unknown option {} for {} (known: {known})",
                                quoted(key),
                                rules.name
                            ),
                        ));
                        unusable = true;
                    } else if let Value::Bool(b) = value {
                        options.set(key, *b);
                    } else {
                        out.push((
                            Code::Schema,
                            format!(
                                "option {} must be true or false, got {}",
                                quoted(key),
                                value.repr()
                            ),
                        ));
                    }
                }
            }
            other => out.push((
                Code::Schema,
                format!("options must be an object, got {}", other.repr()),
            )),
        }
    }
    let mut mode = Mode::Points;
    if let Some(given) = &header.mode {
        match given {
            Value::Str(s) if Mode::parse(s).is_some() => {
                let parsed = Mode::parse(s).unwrap_or(Mode::Points);
                if rules.has_mode(parsed) {
                    mode = parsed;
                } else {
                    out.push((
                        Code::UnknownRuleset,
                        format!("{} has no {} mode", rules.name, parsed.name()),
                    ));
                    unusable = true;
                }
            }
            other => {
                out.push((
                    Code::UnknownRuleset,
                    format!("unknown mode {}", other.repr()),
                ));
                unusable = true;
            }
        }
    }
    let players = match (unusable, players) {
        (false, Some(players)) => players,
        _ => {
            return HeaderReading {
                settings: None,
                violations: out,
            }
        }
    };
    if !(rules.min_players..=rules.max_players).contains(&players.len()) {
        let range = if rules.max_players != rules.min_players {
            format!("{} to {}", rules.min_players, rules.max_players)
        } else {
            rules.min_players.to_string()
        };
        out.push((
            Code::Schema,
            format!(
                "{} is played by {range} players, not {}",
                rules.name,
                players.len()
            ),
        ));
    }
    let mut decks = rules.decks_for(players.len());
    if let Some(given) = &header.decks {
        let allowed: &[i128] = if rules.two_decks_above.is_some() {
            &[1, 2]
        } else {
            &[1]
        };
        match value_is_int(given) {
            Some(n) if allowed.contains(&n) => decks = n as u8,
            _ => {
                let shown: Vec<String> = allowed.iter().map(|n| n.to_string()).collect();
                let tuple = if shown.len() == 1 {
                    format!("({},)", shown[0])
                } else {
                    format!("({})", shown.join(", "))
                };
                out.push((
                    Code::Schema,
                    format!(
                        "decks must be one of {tuple} for {}, got {}",
                        rules.name,
                        given.repr()
                    ),
                ));
            }
        }
    }
    let mut match_hands = rules.default_hands.map(u64::from);
    let mut match_target = None;
    if let Some(given) = &header.r#match {
        let single = match given {
            Value::Object(entries) if entries.len() == 1 => {
                let (key, value) = &entries[0];
                match value_is_int(value) {
                    Some(n) if n >= 1 && (key == "hands" || key == "target") => {
                        Some((key.as_str(), u64::try_from(n).unwrap_or(u64::MAX)))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match single {
            Some(("hands", n)) => match_hands = Some(n),
            Some((_, n)) => {
                if mode == Mode::Elimination {
                    out.push((
                        Code::Schema,
                        "a points target makes no sense in elimination play".to_string(),
                    ));
                    match_hands = None;
                } else {
                    match_hands = None;
                    match_target = Some(n);
                }
            }
            None => out.push((
                Code::Schema,
                format!(
                    "match must be {{\"hands\": N}} or {{\"target\": N}}, got {}",
                    given.repr()
                ),
            )),
        }
    }
    if let Some(meta) = &header.meta {
        if !matches!(meta, Value::Object(_)) {
            out.push((
                Code::Schema,
                format!("meta must be an object, got {}", meta.repr()),
            ));
        }
    }
    let mut profile = rules.clone();
    profile.options = options;
    HeaderReading {
        settings: Some(Settings {
            ruleset: profile,
            players: players.iter().map(|p| Text::from(p.as_str())).collect(),
            mode,
            decks,
            match_hands,
            match_target,
        }),
        violations: out,
    }
}

impl Table {
    pub fn new(settings: Settings, game: &str) -> Table {
        let n = settings.players.len();
        // only a large table looks seats up by name (`Table::seat` scans a small one)
        let seats = if n > SCAN_SEATS {
            let named = settings.players.iter().enumerate();
            named.map(|(seat, p)| (p.clone(), seat)).collect()
        } else {
            HashMap::new()
        };
        Table {
            game: game.to_string(),
            settings,
            hand: None,
            hand_open: false,
            last_hand_number: 0,
            outcomes: Vec::new(),
            totals: vec![0; n],
            first_places: vec![0; n],
            previous_winner: None,
            match_over: false,
            closed_by: None,
            premature_result: false,
            fouls: vec![Vec::new(); n],
            last_type: None,
            hand_log: Vec::new(),
            seats,
            out: Vec::new(),
            seq: None,
            fact: LineFact::default(),
            decisions: false,
        }
    }

    // ------------------------------------------------------------------ public API

    /// Judge `event`, apply it as recorded, and return the breaches found on it.
    pub fn apply(&mut self, event: &Event) -> Vec<Violation> {
        self.out = Vec::new();
        self.seq = Some(event.common.seq);
        let open_before = self.hand_open;
        // the last line's `expected` text is reused: no allocation per line
        let mut expected = self.fact.expected.take();
        match self.expected_actor() {
            Some(actor) => {
                let text = expected.get_or_insert_with(Text::default);
                text.clear();
                text.push_str(actor);
            }
            None => expected = None,
        }
        self.fact = LineFact {
            hand: if open_before {
                self.hand.as_ref().map(|h| h.number)
            } else {
                None
            },
            phase: self.phase_name(),
            expected,
            ..LineFact::default()
        };
        let kind = &event.kind;
        if let Some(closure) = self.closed_by {
            self.flag(
                Code::UnexpectedEvent,
                kind.actor().map(str::to_string),
                format!(
                    "{} after the game's {}: nothing may follow it",
                    kind.type_name(),
                    closure.name()
                ),
            );
        } else {
            match kind {
                Kind::Play(_) | Kind::Draw(_) | Kind::Pass { .. } => self.turn_event(event),
                Kind::Header(_) => self.flag(
                    Code::UnexpectedEvent,
                    None,
                    "a game header may only stand at seq 0".to_string(),
                ),
                Kind::Deal(deal) => {
                    self.deal(deal);
                    if self.hand_open {
                        self.fact.hand = self.hand.as_ref().map(|h| h.number);
                    }
                }
                Kind::Announce { player, call } => self.announce(player, call),
                Kind::Penalty(penalty) => self.penalty(penalty),
                Kind::Reshuffle { stock } => self.reshuffle(stock.as_deref()),
                Kind::End(end) => self.end(end),
                Kind::Result(result) => self.result(result),
                Kind::Abort { .. } => self.closed_by = Some(Closure::Abort),
            }
        }
        self.last_type = Some(kind.type_name());
        let found = std::mem::take(&mut self.out);
        for violation in &found {
            if violation.code.is_foul() {
                if let Some(seat) = violation.player.as_deref().and_then(|p| self.seat(p)) {
                    if !self.fouls[seat].contains(&violation.code) {
                        self.fouls[seat].push(violation.code);
                    }
                }
            }
        }
        found
    }

    /// The facts of the line last applied.
    pub fn last_fact(&self) -> &LineFact {
        &self.fact
    }

    /// The player the rules expect to act next.
    pub fn expected_actor(&self) -> Option<&str> {
        let hand = self.open_hand()?;
        let seat = match hand.phase {
            Phase::Settlement => hand.settle_player?,
            Phase::Over => return None,
            _ => hand.gift_target.unwrap_or(hand.mover),
        };
        Some(&self.settings.players[seat])
    }

    /// What the player expected to act may do now (None when nobody is to move).
    pub fn options(&self) -> Option<TurnOptions> {
        let hand = self.open_hand()?;
        match hand.phase {
            Phase::Over => None,
            Phase::Settlement => {
                let player = hand.settle_player?;
                let stock = hand.stock_size();
                let owed = if stock > 0 {
                    hand.settle_owed.min(stock)
                } else {
                    hand.settle_owed
                };
                Some(TurnOptions {
                    player: self.name(player),
                    phase: hand.phase,
                    playable: Vec::new(),
                    draw: Some(owed),
                    may_pass: false,
                    obliged: false,
                    gift: false,
                })
            }
            _ => match hand.gift_target {
                Some(target) => Some(TurnOptions {
                    player: self.name(target),
                    phase: hand.phase,
                    playable: Vec::new(),
                    draw: Some(1),
                    may_pass: false,
                    obliged: false,
                    gift: true,
                }),
                None => Some(self.options_for(hand, hand.mover)),
            },
        }
    }

    /// The match is over and its last hand has its `end` (or a result closed it).
    pub fn is_complete(&self) -> bool {
        if self.closed_by == Some(Closure::Result) {
            return !self.premature_result;
        }
        if self.hand_open {
            return false;
        }
        if self.match_over {
            return true;
        }
        // "a persian open-ended game is complete when its log ends right after an end"
        self.settings.match_hands.is_none()
            && self.settings.match_target.is_none()
            && self.last_type == Some("end")
    }

    pub fn closed_by(&self) -> Option<Closure> {
        self.closed_by
    }

    /// A hand is dealt and not yet closed by its `end`.
    pub fn hand_open(&self) -> bool {
        self.hand_open
    }

    pub fn match_over(&self) -> bool {
        self.match_over
    }

    pub fn elimination(&self) -> bool {
        self.settings.mode == Mode::Elimination
    }

    pub fn players(&self) -> &[Text] {
        &self.settings.players
    }

    pub fn seat(&self, player: &str) -> Option<usize> {
        let players = &self.settings.players;
        if players.len() <= SCAN_SEATS {
            // at a real table a scan beats hashing; the last seat of a name, as the map has it
            return players.iter().rposition(|p| same_text(p, player));
        }
        self.seats.get(player).copied()
    }

    /// Match points per player, seat order (the hands closed so far).
    pub fn totals(&self) -> Vec<(Text, i64)> {
        self.settings
            .players
            .iter()
            .cloned()
            .zip(self.totals.iter().copied())
            .collect()
    }

    /// The match winners: the lowest total; in elimination play the most first places
    /// (rules.md: "In elimination play the match winners are the players with the most
    /// first places").
    pub fn match_winners(&self) -> Vec<Text> {
        let players = &self.settings.players;
        if self.elimination() {
            let best = self.first_places.iter().copied().max().unwrap_or(0);
            if best == 0 {
                return Vec::new();
            }
            let mut out: Vec<Text> = players
                .iter()
                .zip(&self.first_places)
                .filter(|(_, &n)| n == best)
                .map(|(p, _)| p.clone())
                .collect();
            out.sort();
            return out;
        }
        let best = self.totals.iter().copied().min().unwrap_or(0);
        players
            .iter()
            .zip(&self.totals)
            .filter(|(_, &t)| t == best)
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// Hands with an outcome: those closed by an end, and the running one if decided.
    pub fn decided_outcomes(&self) -> Vec<HandOutcome> {
        let mut hands = self.outcomes.clone();
        if let Some(outcome) = self.open_hand().and_then(|h| h.outcome.as_ref()) {
            hands.push(outcome.clone());
        }
        hands
    }

    /// The phase before the next line, in the words the warehouse stores (`gift` while a
    /// 2's gift is owed); None when no hand runs.
    pub fn phase_name(&self) -> Option<&'static str> {
        let hand = self.open_hand()?;
        if hand.gift_target.is_some() {
            return Some("gift");
        }
        Some(hand.phase.name())
    }

    /// Forget a closed hand's cards (the validator calls this when no replay is recorded).
    pub fn free_closed_hand(&mut self) {
        if !self.hand_open {
            self.hand = None;
        }
    }

    /// The current suit, for views.
    pub fn current_suit(&self) -> Option<Suit> {
        self.hand.as_ref().and_then(|h| h.current_suit)
    }

    /// Every card accounted for in the running hand: hands, pile, stock and laid-aside 7s.
    pub fn card_count(&self) -> Option<usize> {
        self.hand.as_deref().map(Hand::card_count)
    }

    /// Every hand dealt so far, the running one brought up to date.
    pub fn hand_records(&self) -> Vec<HandRecord> {
        let last = self.hand_log.len().saturating_sub(1);
        self.hand_log
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                let running = self
                    .hand
                    .as_deref()
                    .filter(|hand| index == last && self.hand_open && hand.number == entry.number);
                let (outcome, cards_left, reshuffles) = match running {
                    Some(hand) => (hand.outcome.clone(), self.cards_left(hand), hand.reshuffles),
                    None => {
                        let outcome = entry.outcome_at.and_then(|at| self.outcomes.get(at));
                        let left = self.settings.players.iter().cloned();
                        let left = left.zip(entry.cards_left.iter().cloned()).collect();
                        (outcome.cloned(), left, entry.reshuffles)
                    }
                };
                HandRecord {
                    number: entry.number,
                    dealer: self.name(entry.dealer),
                    first_player: self.name(entry.first_player),
                    outcome,
                    cards_left,
                    reshuffles,
                    closed: entry.closed && running.is_none(),
                    deal: entry.deal.clone(),
                }
            })
            .collect()
    }

    /// The number of the hand dealt last (None before the first deal).
    pub fn hand_number(&self) -> Option<u64> {
        self.hand.as_ref().map(|hand| hand.number)
    }

    /// The state after the last line, for the replay views (None before the first deal).
    pub fn snapshot(&self) -> Option<Snapshot> {
        let hand = self.hand.as_ref()?;
        let players = &self.settings.players;
        let start = hand.pile.len().saturating_sub(PILE_HISTORY);
        Some(Snapshot {
            hand: hand.number,
            open: self.hand_open,
            dealer: players[hand.dealer].clone(),
            phase: hand.phase,
            hands: self.cards_left(hand),
            pile_top: hand.top(),
            pile_size: hand.pile.len(),
            pile_recent: hand.pile[start..].to_vec(),
            pile: hand.pile.clone(),
            active: players
                .iter()
                .zip(&hand.active)
                .filter(|(_, &a)| a)
                .map(|(p, _)| p.clone())
                .collect(),
            stock_size: hand.stock_size(),
            current_suit: hand.current_suit,
            clockwise: hand.direction == 1,
            mover: self.expected_actor().map(Text::from),
            turn: (self.hand_open && !hand.decided()).then(|| players[hand.mover].clone()),
            pending_total: hand.pending_total,
            follow_card: hand.follow_card,
            gift_target: hand.gift_target.map(|s| players[s].clone()),
            call_due: {
                let mut names: Vec<Text> = hand
                    .call_due
                    .iter()
                    .map(|(s, _)| players[*s].clone())
                    .collect();
                names.sort();
                names
            },
            finished: hand.finished.iter().map(|s| players[*s].clone()).collect(),
            waiting_sevens: hand
                .waiting_sevens
                .iter()
                .map(|s| players[*s].clone())
                .collect(),
            laid_aside: hand.laid_aside.clone(),
            legal: self.options(),
            outcome: hand.outcome.clone(),
        })
    }

    /// What `player` faced before their turn event `kind`, when it was their turn in a
    /// running hand (not a gift draw, not settlement): the pair audit's facts.
    fn decision(&self, kind: &Kind, player: usize) -> Option<Decision> {
        let hand = self.open_hand()?;
        if hand.decided()
            || hand.gift_target.is_some()
            || hand.mover != player
            || matches!(hand.phase, Phase::Settlement | Phase::Over)
        {
            return None;
        }
        let options = self.options_for(hand, player);
        let next = self.next_player(hand, player, 1);
        let mut decision = Decision {
            playable: options.playable,
            obliged: options.obliged,
            may_draw: options.draw.is_some(),
            next_player: self.name(next),
            next_cards: u32::try_from(hand.hands[next].len()).unwrap_or(u32::MAX),
            ..Decision::default()
        };
        // "A J declares any suit" (pis-yedili: "a suit different from the current suit");
        // the opening club's effect is not applied
        if let Kind::Play(play) = kind {
            if self.effect(play.card) == Effect::Declare && hand.phase != Phase::Opening {
                let mut choices = 0;
                for suit in Suit::ALL {
                    if !(self.rules().jack_suit_must_differ && Some(suit) == hand.current_suit) {
                        choices |= suit_bit(suit);
                    }
                }
                decision.suit_choices = Some(choices);
                decision.suits_held = (0..self.settings.players.len())
                    .filter(|&seat| seat != player && hand.active[seat])
                    .map(|seat| {
                        let held = hand.hands[seat]
                            .iter()
                            .filter(|c| self.effect(**c) != Effect::Declare)
                            .fold(0, |bits, c| bits | suit_bit(c.suit()));
                        (self.name(seat), held)
                    })
                    .collect();
            }
        }
        Some(decision)
    }

    // ------------------------------------------------------------------ helpers

    fn open_hand(&self) -> Option<&Hand> {
        if self.hand_open {
            self.hand.as_deref()
        } else {
            None
        }
    }

    fn name(&self, seat: usize) -> Text {
        self.settings.players[seat].clone()
    }

    fn rules(&self) -> &Ruleset {
        &self.settings.ruleset
    }

    fn cards_left(&self, hand: &Hand) -> Vec<(Text, Vec<Card>)> {
        self.settings
            .players
            .iter()
            .cloned()
            .zip(hand.hands.iter().cloned())
            .collect()
    }

    fn flag(&mut self, code: Code, player: Option<String>, message: String) {
        self.out
            .push(Violation::new(self.seq, code, player, message));
    }

    fn flag_seat(&mut self, code: Code, seat: usize, message: String) {
        let player = Some(self.name(seat).into_string());
        self.flag(code, player, message);
    }

    fn effect(&self, card: Card) -> Effect {
        self.settings.ruleset.effect(card)
    }

    /// "'Next player' means the next seat in the current direction among players still in
    /// the hand." `player` itself may have just left it.
    fn next_player(&self, hand: &Hand, player: usize, steps: usize) -> usize {
        let n = self.settings.players.len();
        let mut i = player;
        let mut left = steps;
        let mut guard = n * (steps + 1) + n;
        while left > 0 && guard > 0 {
            guard -= 1;
            i = if hand.direction == 1 {
                (i + 1) % n
            } else {
                (i + n - 1) % n
            };
            if hand.active[i] {
                left -= 1;
            }
        }
        i
    }

    /// "a match is a card of the current suit or of the top card's rank"
    fn is_match(&self, hand: &Hand, card: Card) -> bool {
        match hand.top() {
            None => true,
            Some(top) => Some(card.suit()) == hand.current_suit || card.rank() == top.rank(),
        }
    }

    fn holds_match(&self, hand: &Hand, held: &[Card]) -> bool {
        held.iter().any(|&c| self.is_match(hand, c))
    }

    /// Whether `card` may be played now by a player holding `held` ("Legal / fits"), and
    /// if not, the rule it breaks: the one decision of a card's legality, whose success
    /// is [`Table::legal`] and whose reason is the `illegal_card` message
    /// ([`Table::illegal_message`]).
    fn verify_card(
        &self,
        hand: &Hand,
        phase: Phase,
        card: Card,
        held: &[Card],
    ) -> Result<(), Illegal> {
        let rules = self.rules();
        let declares = self.effect(card) == Effect::Declare;
        let allowed = |legal: bool, why: Illegal| if legal { Ok(()) } else { Err(why) };
        match phase {
            Phase::Opening => allowed(
                Some(card.suit()) == rules.opening_suit,
                Illegal::NotOpeningSuit,
            ),
            // "Nothing else answers a pending total — not a J."
            Phase::Seven => allowed(
                self.effect(card) == Effect::Stack && hand.total_drawn == 0,
                Illegal::SevenTotal,
            ),
            // "may play any A to pass the skip on"
            Phase::Deflect => allowed(self.effect(card) == Effect::Skip, Illegal::NotDeflect),
            Phase::Follow | Phase::FollowDrawn => {
                let follows = if self.is_match(hand, card) {
                    !declares
                        || rules.jack != JackRule::NotOnJack
                        || Some(card.suit()) == hand.current_suit
                } else {
                    declares && rules.jack == JackRule::NoMatchHeld && !self.holds_match(hand, held)
                };
                allowed(follows, Illegal::NoFollow)
            }
            _ => {
                let top = hand.top();
                if rules.jack == JackRule::NotOnJack
                    && top.is_some_and(|t| self.effect(t) == Effect::Declare)
                {
                    // "When the top card is a J, only a card of the declared suit — never a J on a J."
                    if declares {
                        return Err(Illegal::JackOnJack);
                    }
                    return allowed(
                        Some(card.suit()) == hand.current_suit,
                        Illegal::NotDeclaredSuit,
                    );
                }
                if self.is_match(hand, card) {
                    return Ok(());
                }
                if !declares {
                    return Err(Illegal::NoMatch);
                }
                if rules.jack == JackRule::NoMatchHeld {
                    return allowed(!self.holds_match(hand, held), Illegal::JackNotWild);
                }
                Ok(())
            }
        }
    }

    /// Whether `card` may be played now by a player holding `held` ([`Table::verify_card`]).
    fn legal(&self, hand: &Hand, phase: Phase, card: Card, held: &[Card]) -> bool {
        self.verify_card(hand, phase, card, held).is_ok()
    }

    fn any_legal(&self, hand: &Hand, phase: Phase, held: &[Card]) -> bool {
        held.iter().any(|&c| self.legal(hand, phase, c, held))
    }

    fn options_for(&self, hand: &Hand, player: usize) -> TurnOptions {
        let rules = self.rules();
        let phase = hand.phase;
        let held = &hand.hands[player];
        let playable = notation_sorted(
            held.iter()
                .copied()
                .filter(|&c| self.legal(hand, phase, c, held)),
        );
        let mut draw = Some(1);
        let mut may_pass = false;
        let mut obliged = false;
        match phase {
            Phase::Opening => obliged = !playable.is_empty(),
            Phase::Turn => match rules.must_play {
                MustPlay::AnyLegal => obliged = !playable.is_empty(),
                MustPlay::Match => obliged = playable.iter().any(|&c| self.is_match(hand, c)),
                MustPlay::Never => {}
            },
            Phase::Drawn => {
                if rules.after_draw == AfterDraw::Free {
                    may_pass = true;
                } else {
                    draw = None;
                    obliged = rules.after_draw == AfterDraw::MustPlayMatch
                        && hand.drawn_card.is_some_and(|c| self.is_match(hand, c));
                    may_pass = !obliged;
                }
            }
            Phase::Seven => {
                draw = Some(hand.pending_total.saturating_sub(hand.total_drawn));
                obliged = rules.seven_answer_compulsory && !playable.is_empty();
            }
            Phase::Follow => {
                if hand
                    .follow_card
                    .is_some_and(|c| self.effect(c) == Effect::Follow)
                {
                    let optional = rules.options.eight_bonus_optional;
                    may_pass = optional;
                    obliged = if rules.must_play == MustPlay::Match {
                        !optional && playable.iter().any(|&c| self.is_match(hand, c))
                    } else {
                        !playable.is_empty()
                    };
                } else {
                    // the A's follow (pis-yedili) or a bonus A: optional, never a draw
                    draw = None;
                    may_pass = true;
                }
            }
            Phase::FollowDrawn => {
                draw = None;
                obliged = hand.drawn_card.is_some_and(|c| self.is_match(hand, c));
                may_pass = !obliged;
            }
            Phase::Deflect => {
                draw = None;
                may_pass = true;
            }
            Phase::Settlement | Phase::Over => {}
        }
        TurnOptions {
            player: self.name(player),
            phase,
            playable,
            draw,
            may_pass,
            obliged,
            gift: false,
        }
    }

    fn phase_words(&self, hand: &Hand) -> String {
        match hand.phase {
            Phase::Seven => format!("facing a total of {}", hand.pending_total),
            Phase::Follow | Phase::FollowDrawn => format!(
                "following {}",
                hand.follow_card.map(Card::pretty).unwrap_or_default()
            ),
            Phase::Deflect => "may deflect the A".to_string(),
            Phase::Opening => "the opening".to_string(),
            Phase::Turn => "a normal turn".to_string(),
            _ => "after drawing".to_string(),
        }
    }

    // ------------------------------------------------------------------ deal

    fn deal(&mut self, event: &Deal) {
        let n = self.settings.players.len();
        // "Set aside after `schema` (the line is not replayed): … an unknown `player` or
        // `dealer`": judged before anything else, so a running hand goes on untouched
        let Some(dealer) = self.seat(&event.dealer) else {
            self.flag(
                Code::Schema,
                None,
                format!("deal: unknown dealer {}", quoted(&event.dealer)),
            );
            return;
        };
        if self.match_over && !self.hand_open {
            self.flag(
                Code::UnexpectedEvent,
                None,
                "a deal after the match is over".to_string(),
            );
        } else if self.hand_open {
            if let Some(mut hand) = self.hand.take() {
                if hand.decided() {
                    self.flag(
                        Code::UnexpectedEvent,
                        None,
                        format!(
                            "a deal while hand {} is decided but has no end yet",
                            hand.number
                        ),
                    );
                } else {
                    self.flag(
                        Code::UnexpectedEvent,
                        None,
                        format!(
                            "a deal while hand {} is still being played; it is abandoned",
                            hand.number
                        ),
                    );
                    hand.outcome = None;
                }
                self.close_hand(&hand);
                self.hand = Some(hand);
            }
        }
        let rules = self.settings.ruleset.clone();
        let expected_number = self.last_hand_number + 1;
        if event.hand != expected_number {
            self.flag(
                Code::BadDeal,
                None,
                format!("deal: hand {}, expected hand {expected_number}", event.hand),
            );
        }
        // player → cards dealt (a player named twice: the last hand counts, as in a dict);
        // at a real table a scan beats hashing the names
        let hands = &event.hands;
        let mut by_player: HashMap<&str, &Vec<Card>> = HashMap::new();
        let mut named: Vec<&str> = Vec::with_capacity(hands.len());
        if hands.len() <= SCAN_SEATS {
            for (i, (player, _)) in hands.iter().enumerate() {
                if !hands[..i].iter().any(|(p, _)| same_text(p, player)) {
                    named.push(player);
                }
            }
        } else {
            by_player.reserve(hands.len());
            for (player, cards) in hands {
                if by_player.insert(player.as_str(), cards).is_none() {
                    named.push(player);
                }
            }
        }
        let dealt_to = |player: &str| -> Option<&Vec<Card>> {
            if hands.len() <= SCAN_SEATS {
                hands
                    .iter()
                    .rev()
                    .find(|(p, _)| same_text(p, player))
                    .map(|(_, cards)| cards)
            } else {
                by_player.get(player).copied()
            }
        };
        let mut problems: Vec<String> = Vec::new();
        for player in &self.settings.players {
            match dealt_to(player) {
                None => problems.push(format!("no hand for {player}")),
                Some(cards) if cards.len() != HAND_SIZE => problems.push(format!(
                    "{player} is dealt {} cards, not {HAND_SIZE}",
                    cards.len()
                )),
                Some(_) => {}
            }
        }
        for player in &named {
            if self.seat(player).is_none() {
                problems.push(format!(
                    "a hand for {}, who is not at the table",
                    quoted(player)
                ));
            }
        }
        // the cards dealt to the table (and the starter), and those of hands for someone not
        // at the table: a phantom hand's cards are not dealt, they stay in the stock, so the
        // table always holds the whole pack (docs/decisions.md, card accounting)
        let mut dealt = CardCounts::default();
        let mut phantom = CardCounts::default();
        for player in &named {
            if let Some(cards) = dealt_to(player) {
                let into = if self.seat(player).is_some() {
                    &mut dealt
                } else {
                    &mut phantom
                };
                for &card in cards {
                    into.add(card);
                }
            }
        }
        let mut starter = event.starter;
        if rules.has_starter {
            match starter {
                None => problems.push(format!(
                    "the starter is {}",
                    if event.starter_unreadable {
                        "unreadable"
                    } else {
                        "missing"
                    }
                )),
                Some(card) if rules.forbidden_starter_ranks.contains(&card.rank()) => problems
                    .push(format!(
                        "{} may not be the starter in {}",
                        card.pretty(),
                        rules.name
                    )),
                Some(_) => {}
            }
        } else if starter.is_some() || event.starter_unreadable {
            problems.push(format!("{} has no starter", rules.name));
            starter = None;
        }
        if let Some(card) = starter {
            dealt.add(card);
        }
        let full = CardCounts::pack(self.settings.decks);
        let over = notation_sorted(Card::deck().filter(|&c| {
            u32::from(dealt.get(c)) + u32::from(phantom.get(c)) > u32::from(full.get(c))
        }));
        if !over.is_empty() {
            problems.push(format!("too many of {}", pretty_cards(&over)));
        }
        let stock = full.minus(&dealt);
        let mut stock_order = None;
        if let Some(order) = &event.stock {
            if CardCounts::of(order) == stock {
                stock_order = Some(order.iter().copied().collect::<VecDeque<Card>>());
            } else {
                problems.push("the stock is not the rest of the pack".to_string());
            }
        }
        if !problems.is_empty() {
            self.flag(
                Code::BadDeal,
                None,
                format!("deal: {}", problems.join("; ")),
            );
        }
        let mut hand = Hand::new(event.hand, dealer, n);
        for (seat, player) in self.settings.players.iter().enumerate() {
            hand.hands[seat] = dealt_to(player).cloned().unwrap_or_default();
        }
        if let Some(card) = starter {
            hand.pile.push(card);
            hand.current_suit = Some(card.suit());
        }
        let deal = DealRecord {
            seq: self.seq,
            dealer_seat: dealer,
            opening: hand.hands.clone(),
            starter,
            stock: stock_order
                .as_ref()
                .map(|order| order.iter().copied().collect()),
        };
        hand.stock = stock;
        hand.stock_order = stock_order;
        self.hand_open = true;
        self.last_hand_number = event.hand;
        let mut first = self.next_player(&hand, dealer, 1);
        // "later hands, the previous hand's winner (in elimination play, its first
        // finisher; after a hand closed without an outcome, the seat after the dealer)"
        if rules.first_player_previous_winner && event.hand > 1 {
            if let Some(winner) = self.previous_winner {
                first = winner;
            }
        }
        hand.first_player = first;
        self.hand_log.push(HandLogEntry {
            number: event.hand,
            dealer,
            first_player: first,
            outcome_at: None,
            cards_left: Vec::new(),
            reshuffles: 0,
            closed: false,
            deal,
        });
        self.start_turn(&mut hand, first, !rules.has_starter);
        self.hand = Some(Box::new(hand));
    }

    // ------------------------------------------------------------------ turn flow

    /// Hand the turn to `player`, passing over (or blocking on) a player who has nothing
    /// to do but draw when no card can be drawn ("a player who then has nothing to do
    /// but draw is passed over without a line"; pis-yedili: "the hand is blocked when the
    /// stock is empty and the player to move must draw").
    fn start_turn(&mut self, hand: &mut Hand, player: usize, opening: bool) {
        let mut player = player;
        let opening_suit = self.rules().opening_suit;
        for _ in 0..=self.settings.players.len() {
            hand.mover = player;
            hand.draws_this_turn = 0;
            hand.drawn_card = None;
            hand.follow_card = None;
            hand.total_drawn = 0;
            hand.phase = if opening || (hand.pile.is_empty() && opening_suit.is_some()) {
                Phase::Opening
            } else if hand.pending_total > 0 {
                Phase::Seven
            } else {
                Phase::Turn
            };
            if !self.must_draw_but_cannot(hand, player) {
                return;
            }
            if !self.rules().reshuffles {
                self.decide_blocked(hand);
                return;
            }
            if hand.phase == Phase::Seven {
                if !hand.waiting_sevens.is_empty() {
                    // "If the player facing the total cannot draw anything, the waiting
                    // 7-player wins as if it had been drawn."
                    self.total_drawn_by(hand, player);
                    return;
                }
                hand.pending_total = 0;
            }
            player = self.next_player(hand, player, 1);
        }
        // nobody can move: the hand is stalled; leave the turn where it is
    }

    fn must_draw_but_cannot(&self, hand: &Hand, player: usize) -> bool {
        if hand.stock_size() != 0 {
            return false;
        }
        if self.rules().reshuffles && hand.pile.len() > 1 {
            return false;
        }
        !self.any_legal(hand, hand.phase, &hand.hands[player])
    }

    /// `player`'s turn is over: the next player in the current direction moves.
    fn end_turn(&mut self, hand: &mut Hand, player: usize) {
        if hand.decided() {
            return;
        }
        if hand.hands[player].is_empty()
            && hand.active[player]
            && !hand.waiting_sevens.contains(&player)
        {
            let top = hand.top();
            self.goes_out(hand, player, top);
            if hand.decided() {
                return;
            }
        }
        let next = self.next_player(hand, player, 1);
        self.start_turn(hand, next, false);
    }

    fn turn_event(&mut self, event: &Event) {
        let kind = &event.kind;
        let (player_name, type_name) = match kind.actor() {
            Some(p) => (p, kind.type_name()),
            None => return,
        };
        let Some(player) = self.seat(player_name) else {
            self.flag(
                Code::Schema,
                None,
                format!("{type_name}: unknown player {}", quoted(player_name)),
            );
            return;
        };
        if self.decisions {
            self.fact.decision = self.decision(kind, player);
        }
        let Some(mut hand) = self.hand.take() else {
            self.flag(
                Code::UnexpectedEvent,
                Some(player_name.to_string()),
                format!("{type_name} while no hand is being played"),
            );
            return;
        };
        self.turn_event_in(&mut hand, event, player);
        self.hand = Some(hand);
    }

    fn turn_event_in(&mut self, hand: &mut Hand, event: &Event, player: usize) {
        let kind = &event.kind;
        let type_name = kind.type_name();
        if !self.hand_open {
            self.flag_seat(
                Code::UnexpectedEvent,
                player,
                format!("{type_name} while no hand is being played"),
            );
            return;
        }
        if hand.phase == Phase::Settlement {
            self.settlement_event(hand, kind, player);
            return;
        }
        if hand.decided() {
            self.flag_seat(
                Code::UnexpectedEvent,
                player,
                format!("{type_name} after hand {} is decided", hand.number),
            );
            return;
        }
        self.close_call_windows(hand, kind, player);
        if let Some(gift) = hand.gift_target {
            if player == gift {
                if let Kind::Draw(draw) = kind {
                    self.gift_draw(hand, draw, player);
                    return;
                }
            }
            // "The gift is forgone once another turn event takes its place."
            hand.gift_target = None;
            if player == gift {
                if let Kind::Pass { .. } = kind {
                    self.flag_seat(
                        Code::IllegalPass,
                        player,
                        format!(
                            "{} owes the 2's gift draw; a pass is not allowed",
                            self.name(player)
                        ),
                    );
                    if player == hand.mover {
                        // the target is also the player to move: "a wrong `pass` ends
                        // the turn" (docs/decisions.md)
                        self.end_turn(hand, player);
                    }
                    return;
                }
                // the target plays instead of drawing
                self.flag_seat(
                    Code::UnexpectedEvent,
                    player,
                    format!(
                        "{} owes the 2's gift draw of 1 card, not a play",
                        self.name(player)
                    ),
                );
                if player != hand.mover {
                    let mover = self.name(hand.mover);
                    self.flag_seat(
                        Code::NotYourTurn,
                        player,
                        format!("it is {mover}'s turn after the gift"),
                    );
                    self.take_over_turn(hand, player);
                }
            } else {
                let gift_name = self.name(gift);
                self.flag_seat(
                    Code::NotYourTurn,
                    player,
                    format!("{gift_name} owes the 2's gift draw first"),
                );
                self.take_over_turn(hand, player);
            }
        } else if player != hand.mover {
            let mover = self.name(hand.mover);
            let words = self.phase_words(hand);
            self.flag_seat(
                Code::NotYourTurn,
                player,
                format!("it is {mover}'s turn ({words})"),
            );
            self.take_over_turn(hand, player);
        }
        match kind {
            Kind::Play(play) => self.play(hand, play, player),
            Kind::Draw(draw) => self.draw(hand, draw, player, event.common.seq),
            _ => self.pass(hand, player),
        }
    }

    /// "an out-of-turn event is judged and applied as a normal turn of its actor, except
    /// that a pending total falls on them (a follow, a deflect or an owed gift is dropped)"
    fn take_over_turn(&self, hand: &mut Hand, player: usize) {
        hand.gift_target = None;
        hand.mover = player;
        hand.draws_this_turn = 0;
        hand.drawn_card = None;
        hand.follow_card = None;
        hand.total_drawn = 0;
        if hand.phase == Phase::Opening {
            return;
        }
        hand.phase = if hand.pending_total > 0 {
            Phase::Seven
        } else {
            Phase::Turn
        };
    }

    // ------------------------------------------------------------------ play

    fn play(&mut self, hand: &mut Hand, event: &Play, player: usize) {
        let card = event.card;
        let phase = hand.phase;
        let in_hand = hand.hands[player].contains(&card);
        if !in_hand {
            let source = self.take_copy(hand, card, player);
            let name = self.name(player);
            self.flag_seat(
                Code::CardNotInHand,
                player,
                format!(
                    "{name} does not hold {}; the card is taken from {source}",
                    card.pretty()
                ),
            );
        } else if let Err(why) = self.verify_card(hand, phase, card, &hand.hands[player]) {
            let message = self.illegal_message(hand, card, player, why);
            self.flag_seat(Code::IllegalCard, player, message);
        }
        if in_hand {
            if let Some(i) = hand.hands[player].iter().position(|&c| c == card) {
                hand.hands[player].remove(i);
            }
        }
        // "The opening club's effect is not applied"; any other opening card is illegal,
        // and "an illegal card takes its normal effect" (docs/decisions.md)
        let opening = phase == Phase::Opening && Some(card.suit()) == self.rules().opening_suit;
        let previous_suit = hand.current_suit;
        hand.pile.push(card);
        hand.gift_target = None;
        let dropped_total = phase == Phase::Seven && self.effect(card) != Effect::Stack;
        if dropped_total {
            // the table let a non-7 answer the total: it is gone
            hand.pending_total = 0;
            hand.total_drawn = 0;
        }
        self.declare(hand, event, player, previous_suit, opening);
        let last_card = hand.hands[player].is_empty();
        self.judge_target(hand, event, player, !opening && !last_card);
        if self.rules().last_card_call && hand.hands[player].len() == 1 {
            // "In points play, no call is due for an 8 (its follow comes first)"
            let exempt = self.effect(card) == Effect::Follow && !self.elimination() && !opening;
            if !exempt {
                self.call_due(hand, player, self.seq.unwrap_or(0));
            }
        }
        if dropped_total && self.end_chain(hand) {
            return; // a tarkesh chain dropped: decided right after this line
        }
        if opening {
            self.end_turn(hand, player);
            return;
        }
        if last_card {
            self.last_card(hand, player, card);
            return;
        }
        self.card_effect(hand, player, card);
    }

    /// Take one copy of `card` from where the table has it, for a card played that its
    /// player does not hold or drawn that the stock does not hold, so that no card ever
    /// exists twice (docs/decisions.md, card accounting). Looked for in this order: the
    /// stock (an unseen copy), the discard pile under its top (nearest the top first), the
    /// other players' hands in seat order from the seat after `actor`, the pile's top, the
    /// laid-aside 7s, `actor`'s own hand. Returns where it came from (for the message).
    fn take_copy(&self, hand: &mut Hand, card: Card, actor: usize) -> String {
        if hand.stock.take(card) {
            if let Some(order) = hand.stock_order.as_mut() {
                if let Some(i) = order.iter().position(|&c| c == card) {
                    order.remove(i);
                }
            }
            return "the stock".to_string();
        }
        let under = hand.pile.len().saturating_sub(1);
        if let Some(i) = hand.pile[..under].iter().rposition(|&c| c == card) {
            hand.pile.remove(i);
            return "the discard pile".to_string();
        }
        let n = self.settings.players.len();
        for k in 1..n {
            let other = (actor + k) % n;
            if let Some(i) = hand.hands[other].iter().position(|&c| c == card) {
                hand.hands[other].remove(i);
                return format!("{}'s hand", self.name(other));
            }
        }
        if hand.top() == Some(card) {
            hand.pile.pop();
            return "the top of the pile".to_string();
        }
        if let Some(i) = hand.laid_aside.iter().position(|&c| c == card) {
            hand.laid_aside.remove(i);
            return "the laid-aside 7s".to_string();
        }
        if let Some(i) = hand.hands[actor].iter().position(|&c| c == card) {
            hand.hands[actor].remove(i);
            return format!("{}'s own hand", self.name(actor));
        }
        "nowhere (no copy is left on the table)".to_string()
    }

    /// The `illegal_card` message of `card`, played by `player`, for the rule it breaks.
    fn illegal_message(&self, hand: &Hand, card: Card, player: usize, why: Illegal) -> String {
        let name = self.name(player);
        let suit_name = hand.current_suit.map_or("?", Suit::name);
        let singular = hand.current_suit.map_or("?", Suit::singular);
        let top_pretty = hand.top().map(Card::pretty).unwrap_or_default();
        match why {
            Illegal::SevenTotal => format!(
                "{name} faces a 7 total of {}: only a 7 answers it, not {}",
                hand.pending_total,
                card.pretty()
            ),
            Illegal::NotOpeningSuit => {
                let suit = self.rules().opening_suit.unwrap_or(Suit::Clubs);
                format!(
                    "the opening card must be a {} ({}), not {}",
                    suit.singular(),
                    suit.name(),
                    card.pretty()
                )
            }
            Illegal::NotDeflect => format!("only an A deflects the skip, not {}", card.pretty()),
            Illegal::NoFollow => {
                let basis = hand.follow_card;
                format!(
                    "{} does not follow {}: a follow is a {singular} or another {}",
                    card.pretty(),
                    basis.map(Card::pretty).unwrap_or_default(),
                    basis
                        .map(|c| c.rank().letter().to_string())
                        .unwrap_or_default()
                )
            }
            Illegal::JackOnJack => {
                format!("a J may not be laid on a J; only a {singular} that is not a J")
            }
            Illegal::JackNotWild => format!(
                "{} is not wild while {name} holds a match for {top_pretty}",
                card.pretty()
            ),
            Illegal::NotDeclaredSuit => format!(
                "after a J only the declared suit ({suit_name}) may be played, not {}",
                card.pretty()
            ),
            Illegal::NoMatch => format!(
                "{} matches neither the current suit ({suit_name}) nor the rank of {top_pretty}",
                card.pretty()
            ),
        }
    }

    /// "J: sets the current suit"; pis-yedili: "A J declares a suit different from the
    /// current suit before it … declaring the same suit is `bad_suit`"; notation.md: "a J
    /// without a suit leaves its own suit current".
    fn declare(
        &mut self,
        hand: &mut Hand,
        event: &Play,
        player: usize,
        previous_suit: Option<Suit>,
        opening: bool,
    ) {
        let card = event.card;
        let declares = self.effect(card) == Effect::Declare && !opening;
        if !declares {
            hand.current_suit = Some(card.suit());
            if event.suit.is_some() || event.suit_unreadable {
                let what = if opening {
                    "the opening card".to_string()
                } else {
                    card.pretty()
                };
                self.flag_seat(
                    Code::BadSuit,
                    player,
                    format!("{what} declares no suit; 'suit' is not allowed"),
                );
            }
            return;
        }
        let Some(suit) = event.suit else {
            hand.current_suit = Some(card.suit());
            let why = if event.suit_unreadable {
                "an unreadable suit"
            } else {
                "no suit"
            };
            self.flag_seat(
                Code::BadSuit,
                player,
                format!(
                    "{} must declare a suit (C, D, H or S); {why} given",
                    card.pretty()
                ),
            );
            return;
        };
        if self.rules().jack_suit_must_differ && Some(suit) == previous_suit {
            self.flag_seat(
                Code::BadSuit,
                player,
                format!(
                    "a J must declare a suit other than the current one ({})",
                    suit.name()
                ),
            );
        }
        hand.current_suit = Some(suit);
    }

    /// "2: the player names a target among the other players; the target draws 1 card at
    /// once"; "A `target` on a 2 that is its player's last card is allowed and ignored."
    fn judge_target(&mut self, hand: &mut Hand, event: &Play, player: usize, takes_target: bool) {
        let card = event.card;
        if self.effect(card) != Effect::Gift {
            if event.target_given {
                self.flag_seat(
                    Code::BadTarget,
                    player,
                    format!("{} takes no target", card.pretty()),
                );
            }
            return;
        }
        if !takes_target {
            if hand.hands[player].is_empty() && hand.phase != Phase::Opening {
                return;
            }
            if event.target_given {
                self.flag_seat(
                    Code::BadTarget,
                    player,
                    format!("{} here takes no target", card.pretty()),
                );
            }
            return;
        }
        let name = self.name(player);
        let Some(target) = &event.target else {
            let what = if event.target_given {
                "an invalid target"
            } else {
                "no target"
            };
            self.flag_seat(
                Code::BadTarget,
                player,
                format!("{} must name a target player; {what} given", card.pretty()),
            );
            return;
        };
        if *target == name {
            self.flag_seat(
                Code::BadTarget,
                player,
                format!("{name} may not target themself with a 2"),
            );
            return;
        }
        let Some(seat) = self.seat(target) else {
            self.flag_seat(
                Code::BadTarget,
                player,
                format!("the target {} is not at the table", quoted(target)),
            );
            return;
        };
        if !hand.active[seat] || hand.finished.contains(&seat) {
            self.flag_seat(
                Code::BadTarget,
                player,
                format!("the target {target} is no longer in the hand"),
            );
            return;
        }
        if hand.no_card_anywhere() {
            return; // a gift owed with no card anywhere is simply short
        }
        hand.gift_target = Some(seat);
        hand.gift_from = Some(player);
        self.fact.gift_to = Some(target.clone());
    }

    /// "a player who plays their last card wins the hand at once; the effects of that
    /// last card are not applied", except persian `last_eight_draws` and `tarkesh`.
    fn last_card(&mut self, hand: &mut Hand, player: usize, card: Card) {
        if !hand.active[player] {
            self.goes_out(hand, player, Some(card));
            return;
        }
        let options = self.rules().options;
        if self.effect(card) == Effect::Follow && options.last_eight_draws {
            // "a player whose last card is an 8 has not won yet: they draw 1 card"
            self.enter_follow(hand, player, card);
            return;
        }
        if self.effect(card) == Effect::Stack && options.tarkesh {
            // "a player whose last card is a 7 has not won yet. The chain runs on"
            if !hand.waiting_sevens.contains(&player) {
                // a waiting player's further 7 (a card not held) only adds to the total
                hand.waiting_sevens.push(player);
                hand.waiting_cards.retain(|(s, _)| *s != player);
                hand.waiting_cards.push((player, card));
            }
            hand.pending_total += self.rules().seven_total;
            let next = self.next_player(hand, player, 1);
            self.start_turn(hand, next, false);
            return;
        }
        self.goes_out(hand, player, Some(card));
    }

    /// Points play: the hand is decided; elimination: "A player who empties their hand
    /// finishes (1st, 2nd, …) and leaves the rotation".
    fn goes_out(&mut self, hand: &mut Hand, player: usize, card: Option<Card>) {
        if !hand.active[player] {
            // a finished player acted again (not_your_turn)
            let next = self.next_player(hand, player, 1);
            self.start_turn(hand, next, false);
            return;
        }
        if !self.elimination() {
            self.decide_out(hand, player, card);
            return;
        }
        self.finish(hand, player);
        hand.waiting_sevens.retain(|&s| s != player);
        // "with `tarkesh` off, a 7 that goes out drops any pending total"
        if card.is_some_and(|c| self.effect(c) == Effect::Stack) && !self.rules().options.tarkesh {
            hand.pending_total = 0;
        }
        if hand.active_count() <= 1 {
            self.decide_elimination(hand);
            return;
        }
        let next = self.next_player(hand, player, 1);
        self.start_turn(hand, next, false);
    }

    /// A player finishes (elimination play): they leave the rotation once.
    fn finish(&self, hand: &mut Hand, player: usize) {
        if hand.active[player] {
            hand.active[player] = false;
            hand.finished.push(player);
        }
        hand.call_due.retain(|(s, _)| *s != player);
    }

    fn card_effect(&mut self, hand: &mut Hand, player: usize, card: Card) {
        match self.effect(card) {
            Effect::Stack => {
                hand.pending_total += self.rules().seven_total;
                self.end_turn(hand, player);
            }
            Effect::Follow => self.enter_follow(hand, player, card),
            Effect::Skip => {
                // "While exactly two players remain, an A is a bonus card instead of skipping"
                if self.elimination() && hand.active_count() == 2 {
                    self.enter_optional_follow(hand, player, card);
                } else {
                    self.skip_from(hand, player);
                }
            }
            Effect::OptionalFollow => self.enter_optional_follow(hand, player, card),
            Effect::Reverse => {
                hand.direction = -hand.direction;
                self.end_turn(hand, player);
            }
            Effect::Gift | Effect::Declare | Effect::Plain => self.end_turn(hand, player),
        }
    }

    /// pis-yedili's A, persian's bonus A: "Holding such a card, the player plays it or
    /// `pass`es (a draw is `illegal_draw`); holding none, the turn ends by itself."
    fn enter_optional_follow(&mut self, hand: &mut Hand, player: usize, card: Card) {
        hand.phase = Phase::Follow;
        hand.follow_card = Some(card);
        hand.mover = player;
        if self.any_legal(hand, Phase::Follow, &hand.hands[player]) {
            hand.draws_this_turn = 0;
            hand.drawn_card = None;
        } else {
            self.end_turn(hand, player);
        }
    }

    /// "A: the next player is skipped"; `ace_deflect`: "the player an A would skip may
    /// play any A to pass the skip on … one without an A is skipped with no line".
    fn skip_from(&mut self, hand: &mut Hand, player: usize) {
        let skipped = self.next_player(hand, player, 1);
        let holds_deflect = hand.hands[skipped]
            .iter()
            .any(|&c| self.effect(c) == Effect::Skip);
        if self.rules().options.ace_deflect && holds_deflect {
            hand.mover = skipped;
            hand.phase = Phase::Deflect;
            hand.draws_this_turn = 0;
            hand.drawn_card = None;
            hand.follow_card = None;
            return;
        }
        let next = self.next_player(hand, skipped, 1);
        self.start_turn(hand, next, false);
    }

    /// "8: the same player follows, with a card of the 8's suit or another 8".
    fn enter_follow(&mut self, hand: &mut Hand, player: usize, card: Card) {
        hand.mover = player;
        hand.phase = Phase::Follow;
        hand.follow_card = Some(card);
        hand.draws_this_turn = 0;
        hand.drawn_card = None;
        if !hand.no_card_anywhere() || self.any_legal(hand, Phase::Follow, &hand.hands[player]) {
            return;
        }
        // no follow held and nothing to draw: passed over (an empty hand goes out now;
        // `last_eight_draws`: "With no card anywhere to draw, they win at once")
        if hand.hands[player].is_empty() {
            self.goes_out(hand, player, Some(card));
        } else {
            self.end_turn(hand, player);
        }
    }

    // ------------------------------------------------------------------ draw

    /// Move drawn cards from the stock into `player`'s hand, checking each is the stock's
    /// top (or an unseen card when the stock's order is unknown).
    fn take_cards(&mut self, hand: &mut Hand, player: usize, cards: &[Card]) {
        let mut problems: Vec<String> = Vec::new();
        for &card in cards {
            if hand.stock_size() == 0 && hand.pile.len() > 1 && self.rules().reshuffles {
                problems.push(
                    "the stock was empty and the pile was not turned with a reshuffle line"
                        .to_string(),
                );
                Self::turn_pile(hand, None);
            }
            let top_of_order = hand.stock_order.as_ref().and_then(|o| o.front().copied());
            if top_of_order == Some(card) {
                if let Some(order) = hand.stock_order.as_mut() {
                    order.pop_front();
                }
                hand.stock.take(card);
            } else if hand.stock.get(card) > 0 {
                if let Some(top) = top_of_order {
                    problems.push(format!(
                        "{} is not the stock's top ({})",
                        card.pretty(),
                        top.pretty()
                    ));
                }
                if let Some(order) = hand.stock_order.as_mut() {
                    if let Some(i) = order.iter().position(|&c| c == card) {
                        order.remove(i);
                    }
                }
                hand.stock.take(card);
            } else {
                let source = self.take_copy(hand, card, player);
                let mut text = format!("{} is not in the stock", card.pretty());
                if let Some(top) = top_of_order {
                    text.push_str(&format!(" (its top is {})", top.pretty()));
                }
                text.push_str(&format!("; it is taken from {source}"));
                problems.push(text);
            }
            hand.hands[player].push(card);
        }
        if !problems.is_empty() {
            let mut unique: Vec<String> = Vec::new();
            for p in problems {
                if !unique.contains(&p) {
                    unique.push(p);
                }
            }
            self.flag_seat(Code::StockMismatch, player, unique.join("; "));
        }
    }

    /// Every card a draw can still take: the stock, and the pile below its top card where
    /// the stock is refilled from it (by a `reshuffle` line, or turned implicitly, which
    /// is `stock_mismatch`). A draw owed that takes all of them is "simply short".
    fn reachable(hand: &Hand, reshuffles: bool) -> usize {
        let pile = if reshuffles {
            hand.pile.len().saturating_sub(1)
        } else {
            0
        };
        hand.stock_size() as usize + pile
    }

    /// "the discard pile, all but its top card, into a new stock" (in `stock`'s order
    /// when the log gives it and it is exactly those cards).
    fn turn_pile(hand: &mut Hand, stock: Option<&[Card]>) {
        let keep = hand.pile.len().saturating_sub(1);
        for card in hand.pile.drain(..keep) {
            hand.stock.add(card);
        }
        hand.stock_order = match stock {
            Some(order) if CardCounts::of(order) == hand.stock => {
                Some(order.iter().copied().collect())
            }
            _ => None,
        };
    }

    fn draw(&mut self, hand: &mut Hand, event: &Draw, player: usize, seq: u64) {
        let cards = &event.cards;
        let opts = self.options_for(hand, player);
        let phase = hand.phase;
        let follow_effect = hand.follow_card.map(|c| self.effect(c));
        self.fact.draw_kind = Some(match phase {
            Phase::Seven => DrawKind::SevenTotal,
            Phase::Turn | Phase::Drawn => DrawKind::Voluntary,
            Phase::Opening => DrawKind::Opening,
            Phase::Follow if follow_effect == Some(Effect::Follow) => DrawKind::FailedFollow,
            _ => DrawKind::NotAllowed,
        });
        if phase == Phase::Seven {
            self.seven_draw(hand, event, player, &opts, seq);
            return;
        }
        let name = self.name(player);
        if opts.obliged {
            self.flag_seat(
                Code::MustPlay,
                player,
                format!(
                    "{name} must play ({}) instead of drawing",
                    pretty_cards(&opts.playable)
                ),
            );
        }
        match opts.draw {
            None if !opts.obliged => {
                let words = self.phase_words(hand);
                self.flag_seat(
                    Code::IllegalDraw,
                    player,
                    format!("no draw is allowed now ({words})"),
                );
            }
            // "`must_play` with `illegal_draw` (a wrong count)": a draw takes one card
            None if cards.len() != 1 => self.flag_seat(
                Code::IllegalDraw,
                player,
                format!("a draw of {} cards; 1 expected", cards.len()),
            ),
            Some(expected) if cards.len() != expected as usize => self.flag_seat(
                Code::IllegalDraw,
                player,
                format!("a draw of {} cards; {expected} expected", cards.len()),
            ),
            _ => {}
        }
        self.take_cards(hand, player, cards);
        self.call_after_draw(hand, player, seq);
        let Some(&drawn) = cards.last() else {
            return;
        };
        hand.drawn_card = Some(drawn);
        hand.draws_this_turn += 1;
        if phase == Phase::Opening {
            if self.blocked_opening(hand, player) {
                self.decide_blocked(hand);
            }
            return;
        }
        if phase == Phase::FollowDrawn {
            // "After a draw, faulty or not: … in bazito and persian, the turn ends unless
            // the drawn card may be played now" (a second draw after the failed-follow
            // draw is `must_play`, and its card may still follow the 8)
            if !self.legal(hand, Phase::Follow, drawn, &hand.hands[player]) {
                self.end_turn(hand, player);
            }
            return;
        }
        let optional_follow = phase == Phase::Follow && follow_effect != Some(Effect::Follow);
        if phase == Phase::Deflect || optional_follow {
            if phase == Phase::Deflect {
                let next = self.next_player(hand, player, 1);
                self.start_turn(hand, next, false);
            } else {
                self.end_turn(hand, player);
            }
            return;
        }
        if phase == Phase::Follow {
            // the failed-follow draw after an 8
            if self.rules().failed_follow_ends_turn
                || !self.legal(hand, Phase::Follow, drawn, &hand.hands[player])
            {
                self.end_turn(hand, player);
            } else {
                hand.phase = Phase::FollowDrawn;
            }
            return;
        }
        // a normal turn
        if self.rules().after_draw == AfterDraw::Free {
            hand.phase = Phase::Drawn;
            return;
        }
        if self.legal(hand, Phase::Drawn, drawn, &hand.hands[player]) {
            hand.phase = Phase::Drawn;
        } else {
            self.end_turn(hand, player);
        }
    }

    /// pis-yedili: "the hand is blocked when … an opener without a club" faces an empty stock.
    fn blocked_opening(&self, hand: &Hand, player: usize) -> bool {
        hand.stock_size() == 0 && !self.any_legal(hand, Phase::Opening, &hand.hands[player])
    }

    /// "That player either plays any 7 … or draws the whole total in one `draw` and their
    /// turn ends"; "split only around a `reshuffle` when the stock runs dry mid-draw".
    fn seven_draw(
        &mut self,
        hand: &mut Hand,
        event: &Draw,
        player: usize,
        opts: &TurnOptions,
        seq: u64,
    ) {
        let cards = &event.cards;
        let owed = hand.pending_total.saturating_sub(hand.total_drawn) as usize;
        let name = self.name(player);
        if opts.obliged {
            self.flag_seat(
                Code::MustPlay,
                player,
                format!(
                    "{name} holds a 7 ({}) and must play it",
                    pretty_cards(&opts.playable)
                ),
            );
        }
        let stock_before = hand.stock_size() as usize;
        let reshuffles = self.rules().reshuffles;
        let can_turn = reshuffles && hand.pile.len() > 1;
        let split = cards.len() < owed && cards.len() == stock_before && stock_before > 0;
        // with a reshuffle (or the implicit turn) between, taking every card there is;
        // pis-yedili never reshuffles: its short draw is the split that blocks the hand
        let short =
            reshuffles && cards.len() < owed && cards.len() == Self::reachable(hand, reshuffles);
        if cards.len() != owed && !split && !short {
            self.flag_seat(
                Code::IllegalDraw,
                player,
                format!(
                    "facing a total of {}, {name} must draw {owed}, not {}",
                    hand.pending_total,
                    cards.len()
                ),
            );
        }
        self.take_cards(hand, player, cards);
        self.call_after_draw(hand, player, seq);
        hand.total_drawn += cards.len() as u32;
        if split && !short && (can_turn || !reshuffles) {
            if !reshuffles {
                // "a draw owed took the stock's last card short of its total"
                self.decide_blocked(hand);
            }
            return; // the rest is drawn after the reshuffle
        }
        hand.pending_total = 0;
        hand.total_drawn = 0;
        self.total_drawn_by(hand, player);
    }

    /// The total has been drawn (or could not be): `tarkesh` decides — "when another
    /// player draws the total, the hand is decided right after that draw with the
    /// earliest waiting 7-player as winner … If the chain comes back to them, they draw
    /// the total and play goes on" — else play goes on.
    fn total_drawn_by(&mut self, hand: &mut Hand, player: usize) {
        hand.pending_total = 0;
        hand.total_drawn = 0;
        hand.waiting_sevens.retain(|&s| s != player);
        if !hand.waiting_sevens.is_empty() {
            if !self.end_chain(hand) {
                let next = self.next_player(hand, player, 1);
                self.start_turn(hand, next, false);
            }
            return;
        }
        self.end_turn(hand, player);
    }

    /// A `tarkesh` chain is over (its total drawn, dropped without being drawn — "when
    /// the total is dropped without being drawn (a wrong `pass`, or a non-7 played against
    /// it), the chain is over too: the hand is decided right after that line, the same
    /// way" — or impossible to draw): in points play the earliest waiting 7-player wins
    /// (settlement follows); in elimination "waiting 7-players finish in the order they
    /// went out", and a gift owed to one of them lapses. True when this decided the
    /// hand; false with nobody waiting, or when elimination play goes on.
    fn end_chain(&mut self, hand: &mut Hand) -> bool {
        let waiting = std::mem::take(&mut hand.waiting_sevens);
        let Some(&earliest) = waiting.first() else {
            return false;
        };
        if !self.elimination() {
            let card = hand
                .waiting_cards
                .iter()
                .find(|(s, _)| *s == earliest)
                .map(|(_, c)| *c);
            self.decide_out(hand, earliest, card);
            return true;
        }
        for finisher in waiting {
            self.finish(hand, finisher);
        }
        if hand.gift_target.is_some_and(|t| !hand.active[t]) {
            hand.gift_target = None;
        }
        if hand.active_count() <= 1 {
            self.decide_elimination(hand);
            return true;
        }
        false
    }

    fn gift_draw(&mut self, hand: &mut Hand, event: &Draw, player: usize) {
        self.fact.draw_kind = Some(DrawKind::Gift);
        if event.cards.len() != 1 {
            let name = self.name(player);
            self.flag_seat(
                Code::IllegalDraw,
                player,
                format!("the 2's gift is 1 card; {name} drew {}", event.cards.len()),
            );
        }
        hand.gift_target = None;
        self.take_cards(hand, player, &event.cards);
        self.call_after_draw(hand, player, self.seq.unwrap_or(0));
    }

    fn call_due(&self, hand: &mut Hand, player: usize, seq: u64) {
        if let Some(entry) = hand.call_due.iter_mut().find(|(s, _)| *s == player) {
            entry.1 = seq;
        } else {
            hand.call_due.push((player, seq));
        }
    }

    /// "a play or draw that leaves a player holding exactly one card makes a call due"
    fn call_after_draw(&self, hand: &mut Hand, player: usize, seq: u64) {
        if self.rules().last_card_call && hand.hands[player].len() == 1 {
            self.call_due(hand, player, seq);
        }
    }

    // ------------------------------------------------------------------ pass

    fn pass(&mut self, hand: &mut Hand, player: usize) {
        let opts = self.options_for(hand, player);
        let phase = hand.phase;
        let name = self.name(player);
        if !opts.may_pass {
            if phase == Phase::Seven {
                self.flag_seat(
                    Code::IllegalPass,
                    player,
                    format!(
                        "facing a total of {}: play a 7 or draw {}",
                        hand.pending_total, hand.pending_total
                    ),
                );
            } else if opts.obliged {
                self.flag_seat(
                    Code::MustPlay,
                    player,
                    format!(
                        "{name} must play ({}) instead of passing",
                        pretty_cards(&opts.playable)
                    ),
                );
            } else {
                let words = self.phase_words(hand);
                self.flag_seat(
                    Code::IllegalPass,
                    player,
                    format!("a pass is not allowed here ({words}); {name} must draw"),
                );
            }
            // "a wrong `pass` ends the turn (dropping a pending total)"
            hand.pending_total = 0;
            hand.total_drawn = 0;
            if phase == Phase::Seven && self.end_chain(hand) {
                return; // a tarkesh chain dropped: decided right after this line
            }
        }
        if phase == Phase::Deflect {
            let next = self.next_player(hand, player, 1);
            self.start_turn(hand, next, false);
            return;
        }
        self.end_turn(hand, player);
    }

    // ------------------------------------------------------------------ calls, penalties

    /// "Their `announce` must come before the next turn event of anyone, except the gift
    /// draw forced by their own 2 … A missing call is the foul `missed_call`, reported at
    /// the turn event that closed the window."
    fn close_call_windows(&mut self, hand: &mut Hand, kind: &Kind, player: usize) {
        if hand.call_due.is_empty() {
            return;
        }
        let is_draw = matches!(kind, Kind::Draw(_));
        let due = std::mem::take(&mut hand.call_due);
        for (caller, seq) in due {
            if is_draw && Some(player) == hand.gift_target && hand.gift_from == Some(caller) {
                hand.call_due.push((caller, seq));
                continue;
            }
            let name = self.name(caller);
            self.flag_seat(
                Code::MissedCall,
                caller,
                format!("{name} was left with one card and did not announce it before this move"),
            );
        }
    }

    fn announce(&mut self, player: &str, call: &str) {
        let Some(seat) = self.seat(player) else {
            self.flag(
                Code::Schema,
                None,
                format!("announce: unknown player {}", quoted(player)),
            );
            return;
        };
        if self.hand_open && call == "last_card" {
            if let Some(hand) = self.hand.as_mut() {
                hand.call_due.retain(|(s, _)| *s != seat);
            }
        }
    }

    /// "A `penalty` … must be justified" (rules.md, "Table penalties").
    fn penalty(&mut self, event: &Penalty) {
        let Some(player) = self.seat(&event.player) else {
            self.flag(
                Code::Schema,
                None,
                format!("penalty: unknown player {}", quoted(&event.player)),
            );
            return;
        };
        self.fact.draw_kind = Some(DrawKind::Penalty);
        let decided = self.hand.as_deref().is_none_or(Hand::decided);
        if !self.hand_open || decided {
            self.flag_seat(
                Code::UnexpectedEvent,
                player,
                "a penalty between hands or after the hand is decided".to_string(),
            );
            return;
        }
        let Some(mut hand) = self.hand.take() else {
            return;
        };
        let name = self.name(player);
        let fouls = self.fouls[player].clone();
        let rules = self.rules();
        let extra = rules.options.extra_fouls;
        let reason = event.reason;
        let why: Option<String> = if !rules.table_penalties {
            Some(format!("{} has no table penalties", rules.name))
        } else if hand.finished.contains(&player) {
            Some(format!("{name} has already gone out"))
        } else {
            match reason {
                PenaltyReason::Misplay if fouls.is_empty() => {
                    Some(format!("{name} committed no foul since their last penalty"))
                }
                PenaltyReason::MissedCall
                    if !fouls.contains(&Code::MissedCall) || hand.hands[player].is_empty() =>
                {
                    Some(if fouls.contains(&Code::MissedCall) {
                        format!("{name} holds no cards")
                    } else {
                        format!("{name} missed no call since their last penalty")
                    })
                }
                PenaltyReason::OutOfTurn if !extra => Some(
                    "'out_of_turn' penalties need the extra_fouls sub-rule, which is off"
                        .to_string(),
                ),
                PenaltyReason::OutOfTurn if !fouls.contains(&Code::NotYourTurn) => Some(format!(
                    "{name} did not act out of turn since their last penalty"
                )),
                PenaltyReason::Delay | PenaltyReason::Other if !extra => Some(format!(
                    "'{}' penalties need the extra_fouls sub-rule, which is off",
                    reason.name()
                )),
                _ => None,
            }
        };
        if let Some(why) = why {
            self.flag_seat(
                Code::UnjustifiedPenalty,
                player,
                format!("penalty ({}): {why}", reason.name()),
            );
        }
        // "Any penalty of the player restarts 'since their last penalty'"
        self.fouls[player].clear();
        self.take_cards(&mut hand, player, &event.cards);
        self.hand = Some(hand);
    }

    /// "A `reshuffle` is allowed whenever the stock is empty (never in pis-yedili)"; a
    /// reshuffle while the stock still holds cards "is `unexpected_event` and is not
    /// applied (the stock and the pile stay as they were)".
    fn reshuffle(&mut self, stock: Option<&[Card]>) {
        let over = self.hand.as_ref().is_none_or(|h| h.phase == Phase::Over);
        if !self.hand_open || over {
            self.flag(
                Code::UnexpectedEvent,
                None,
                "a reshuffle while no hand is being played".to_string(),
            );
            return;
        }
        let Some(mut hand) = self.hand.take() else {
            return;
        };
        if !self.rules().reshuffles {
            let name = self.rules().name.clone();
            self.flag(
                Code::UnexpectedEvent,
                None,
                format!("{name} never reshuffles the pile"),
            );
            self.hand = Some(hand);
            return;
        }
        if hand.stock_size() > 0 {
            self.flag(
                Code::UnexpectedEvent,
                None,
                format!(
                    "a reshuffle while the stock still holds {} cards; it is not applied",
                    hand.stock_size()
                ),
            );
            self.hand = Some(hand);
            return;
        }
        let keep = hand.pile.len().saturating_sub(1);
        let under = CardCounts::of(&hand.pile[..keep]);
        if let Some(order) = stock {
            if CardCounts::of(order) != under {
                self.flag(
                    Code::StockMismatch,
                    None,
                    "the reshuffled stock is not the discard pile less its top card".to_string(),
                );
            }
        }
        hand.reshuffles += 1;
        Self::turn_pile(&mut hand, stock);
        if hand.phase == Phase::Settlement {
            self.advance_settlement(&mut hand);
        }
        self.hand = Some(hand);
    }

    // ------------------------------------------------------------------ outcomes

    fn decide_out(&mut self, hand: &mut Hand, winner: usize, card: Option<Card>) {
        hand.call_due.clear();
        hand.gift_target = None;
        let multiplier = card.map_or(1, |c| self.rules().multiplier_of(c));
        hand.outcome = Some(HandOutcome {
            hand: hand.number,
            winners: vec![self.name(winner)],
            scores: None,
            reason: OutcomeReason::Out,
            order: None,
            winning_card: card,
            multiplier,
        });
        if self.rules().settlement_sevens {
            // "Settlement, after the winning play, loser by loser in clockwise seat order
            // starting after the winner"
            let n = self.settings.players.len();
            hand.settle_queue = (1..n).map(|k| (winner + k) % n).collect();
            hand.phase = Phase::Settlement;
            hand.settle_player = None;
            hand.settle_owed = 0;
            self.advance_settlement(hand);
        } else {
            self.score(hand);
        }
    }

    /// "the winner scores 0; everyone else scores the sum of the cards left in hand …
    /// times the ruleset's multiplier for the winning card"
    fn score(&self, hand: &mut Hand) {
        hand.phase = Phase::Over;
        let rules = self.rules();
        let Some(outcome) = hand.outcome.as_mut() else {
            return;
        };
        let multiplier = i64::from(outcome.multiplier);
        let scores = self
            .settings
            .players
            .iter()
            .zip(&hand.hands)
            .map(|(p, held)| {
                let points = if outcome.winners.contains(p) {
                    0
                } else {
                    held.iter()
                        .map(|&c| i64::from(rules.points_of(c)))
                        .sum::<i64>()
                        * multiplier
                };
                (p.clone(), points)
            })
            .collect();
        outcome.scores = Some(scores);
    }

    /// pis-yedili: "Winners: every player with the lowest hand value (they score 0); the
    /// others score their hand value, no multiplier."
    fn decide_blocked(&self, hand: &mut Hand) {
        hand.call_due.clear();
        let rules = self.rules();
        let values: Vec<i64> = hand
            .hands
            .iter()
            .map(|held| held.iter().map(|&c| i64::from(rules.points_of(c))).sum())
            .collect();
        let lowest = values.iter().copied().min().unwrap_or(0);
        let players = &self.settings.players;
        hand.outcome = Some(HandOutcome {
            hand: hand.number,
            winners: players
                .iter()
                .zip(&values)
                .filter(|(_, &v)| v == lowest)
                .map(|(p, _)| p.clone())
                .collect(),
            scores: Some(
                players
                    .iter()
                    .zip(&values)
                    .map(|(p, &v)| (p.clone(), if v == lowest { 0 } else { v }))
                    .collect(),
            ),
            reason: OutcomeReason::Blocked,
            order: None,
            winning_card: None,
            multiplier: 1,
        });
        hand.phase = Phase::Over;
    }

    /// "The hand's `winners` is the first to finish; `order` lists all, last place last."
    fn decide_elimination(&self, hand: &mut Hand) {
        hand.call_due.clear();
        hand.gift_target = None;
        let mut order: Vec<Text> = hand.finished.iter().map(|&s| self.name(s)).collect();
        for (seat, &active) in hand.active.iter().enumerate() {
            if active {
                order.push(self.name(seat));
            }
        }
        hand.outcome = Some(HandOutcome {
            hand: hand.number,
            winners: order.first().cloned().into_iter().collect(),
            scores: None,
            reason: OutcomeReason::Elimination,
            order: Some(order),
            winning_card: None,
            multiplier: 1,
        });
        hand.phase = Phase::Over;
    }

    /// Persian settlement: "a loser holding n 7s lays them aside (0 points) and makes one
    /// `draw` of 2n cards; if that draw brought m 7s, those are laid aside too and the
    /// same loser makes one further `draw` of 2m cards … with no card anywhere,
    /// settlement ends and any 7 still held scores 0."
    fn advance_settlement(&mut self, hand: &mut Hand) {
        loop {
            let player = hand.settle_player;
            if let Some(p) = player {
                if hand.settle_owed > 0 {
                    if hand.no_card_anywhere() {
                        hand.settle_queue.clear();
                        hand.settle_owed = 0;
                        hand.settle_player = None;
                        break;
                    }
                    return; // waiting for this loser's draw (or a reshuffle)
                }
                let sevens: Vec<Card> = hand.hands[p]
                    .iter()
                    .copied()
                    .filter(|&c| self.effect(c) == Effect::Stack)
                    .collect();
                if !sevens.is_empty() {
                    hand.hands[p].retain(|&c| self.effect(c) != Effect::Stack);
                    hand.laid_aside.extend(&sevens);
                    hand.settle_owed = self.rules().seven_total * sevens.len() as u32;
                    self.fact.laid_aside.push((self.name(p), sevens));
                    continue;
                }
            }
            match hand.settle_queue.pop_front() {
                None => {
                    hand.settle_player = None;
                    break;
                }
                Some(next) => {
                    hand.settle_player = Some(next);
                    hand.settle_owed = 0;
                }
            }
        }
        self.score(hand);
    }

    /// A draw during settlement. "A wrong draw during settlement is reported and not
    /// applied: by a loser other than the one whose draw is due, `not_your_turn`; by the
    /// winner, or by a loser who owes nothing (already settled, or holding no 7),
    /// `unexpected_event`."
    fn settlement_event(&mut self, hand: &mut Hand, kind: &Kind, player: usize) {
        let name = self.name(player);
        let Kind::Draw(draw) = kind else {
            self.flag_seat(
                Code::UnexpectedEvent,
                player,
                format!(
                    "{} after hand {} is decided (settlement draws only)",
                    kind.type_name(),
                    hand.number
                ),
            );
            return;
        };
        if Some(player) != hand.settle_player {
            // not applied: a loser whose draw is still to come is out of turn; the winner
            // and a loser who owes nothing (settled already, or holding no 7) draw nothing
            let due = format!(
                "it is {}'s draw for their 7s",
                hand.settle_player.map(|s| self.name(s)).unwrap_or_default()
            );
            let is_winner = hand
                .outcome
                .as_ref()
                .is_some_and(|o| o.winners.contains(&name));
            let queued = hand.settle_queue.contains(&player);
            let holds_seven = hand.hands[player]
                .iter()
                .any(|&c| self.effect(c) == Effect::Stack);
            if is_winner {
                self.flag_seat(
                    Code::UnexpectedEvent,
                    player,
                    format!(
                        "settlement: {name} won hand {} and draws nothing; {due}",
                        hand.number
                    ),
                );
            } else if queued && holds_seven {
                self.flag_seat(Code::NotYourTurn, player, format!("settlement: {due}"));
            } else {
                let why = if queued {
                    "holds no 7"
                } else {
                    "is settled already"
                };
                self.flag_seat(
                    Code::UnexpectedEvent,
                    player,
                    format!("settlement: {name} {why} and owes nothing; {due}"),
                );
            }
            return;
        }
        self.fact.draw_kind = Some(DrawKind::Settlement);
        let owed = hand.settle_owed as usize;
        let stock = hand.stock_size() as usize;
        let count = draw.cards.len();
        let reachable = Self::reachable(hand, self.rules().reshuffles);
        // split around a reshuffle when the stock runs dry; short when it takes every
        // card there is ("with no card anywhere, settlement ends")
        let split = count < owed && count == stock;
        let short = count < owed && count == reachable;
        if count != owed && !split && !short {
            self.flag_seat(
                Code::IllegalDraw,
                player,
                format!("settlement: {name} owes {owed} cards, drew {count}"),
            );
        }
        self.take_cards(hand, player, &draw.cards);
        hand.settle_owed = if split && !short {
            (owed - count) as u32
        } else {
            0
        };
        self.advance_settlement(hand);
    }

    // ------------------------------------------------------------------ end, result

    /// Close the hand (its `end`, or a `deal` that replaced it): count it toward the
    /// match — "a hand closed without an outcome … still counts as one of the match's
    /// hands (`{"hands": N}`), with nothing added to `totals`".
    fn close_hand(&mut self, hand: &Hand) {
        self.hand_open = false;
        if let Some(record) = self.hand_log.last_mut() {
            if record.number == hand.number {
                record.outcome_at = hand.outcome.is_some().then_some(self.outcomes.len());
                record.cards_left.clone_from(&hand.hands);
                record.reshuffles = hand.reshuffles;
                record.closed = true;
            }
        }
        self.previous_winner = None;
        if let Some(outcome) = &hand.outcome {
            self.outcomes.push(outcome.clone());
            if let Some(scores) = &outcome.scores {
                for (seat, (_, points)) in scores.iter().enumerate() {
                    self.totals[seat] += points;
                }
            }
            if let Some(first) = outcome.winners.first().and_then(|w| self.seat(w)) {
                if self.elimination() {
                    self.first_places[first] += 1;
                }
                self.previous_winner = Some(first);
            }
        }
        let settings = &self.settings;
        if settings.match_hands.is_some_and(|n| hand.number >= n) {
            self.match_over = true;
        }
        if let Some(target) = settings.match_target {
            // compared without a cast: a target beyond i64 is never reached
            if self
                .totals
                .iter()
                .any(|&t| i128::from(t) >= i128::from(target))
            {
                self.match_over = true;
            }
        }
    }

    fn end(&mut self, event: &End) {
        let Some(hand) = self.hand.take() else {
            self.flag(
                Code::UnexpectedEvent,
                None,
                "an end while no hand is being played".to_string(),
            );
            return;
        };
        if !self.hand_open {
            self.flag(
                Code::UnexpectedEvent,
                None,
                "an end while no hand is being played".to_string(),
            );
            self.hand = Some(hand);
            return;
        }
        let mut hand = hand;
        if hand.phase != Phase::Over {
            self.flag(
                Code::UnexpectedEvent,
                None,
                format!(
                    "an end before hand {} is over; it is closed without an outcome",
                    hand.number
                ),
            );
            hand.outcome = None;
            self.close_hand(&hand);
            self.hand = Some(hand);
            return;
        }
        if event.hand != hand.number {
            self.flag(
                Code::UnexpectedEvent,
                None,
                format!(
                    "end of hand {}, but hand {} is being played",
                    event.hand, hand.number
                ),
            );
        }
        if let Some(outcome) = &hand.outcome {
            self.check_claims(event, outcome);
        }
        self.close_hand(&hand);
        self.hand = Some(hand);
    }

    /// "Claims: `winners` compare as sets, `order` as a list, `scores`/`totals` as exact
    /// objects (every player, no extra key)."
    fn check_claims(&mut self, event: &End, outcome: &HandOutcome) {
        if let Some(winners) = &event.winners {
            if !same_set(winners, &outcome.winners) {
                self.flag(
                    Code::WinnerMismatch,
                    None,
                    format!(
                        "hand {}: the claimed winners differ: {}",
                        outcome.hand,
                        winners_differences(winners, &outcome.winners)
                    ),
                );
            }
        }
        // "`order` null otherwise", "`scores` null … in elimination play": where nothing
        // is computed, any claim differs, an empty one too
        if let Some(order) = &event.order {
            let same = outcome
                .order
                .as_ref()
                .is_some_and(|computed| same_list(computed, order));
            if !same {
                self.flag(
                    Code::WinnerMismatch,
                    None,
                    format!(
                        "hand {}: the claimed order differs: {}",
                        outcome.hand,
                        order_differences(order, outcome.order.as_deref())
                    ),
                );
            }
        }
        if let Some(scores) = &event.scores {
            let equal = outcome
                .scores
                .as_ref()
                .is_some_and(|computed| claim_equals(scores, computed));
            if !equal {
                self.flag(
                    Code::ScoreMismatch,
                    None,
                    format!(
                        "hand {}: the claimed scores differ: {}",
                        outcome.hand,
                        points_differences(scores, outcome.scores.as_deref())
                    ),
                );
            }
        }
    }

    /// Whether a `result` may come now: the match is over (open-ended: after a hand).
    fn match_over_for_result(&self) -> bool {
        let settings = &self.settings;
        if settings.match_hands.is_none() && settings.match_target.is_none() {
            return self.last_hand_number > 0;
        }
        self.match_over
    }

    /// "a `result` before the match is over is `unexpected_event` and closes the game:
    /// every later line is `unexpected_event` too and is not replayed"
    fn result(&mut self, event: &GameResult) {
        if self.hand_open || !self.match_over_for_result() {
            self.flag(
                Code::UnexpectedEvent,
                None,
                "a result before the match is over; the game is closed here".to_string(),
            );
            self.premature_result = true;
            self.closed_by = Some(Closure::Result);
            return;
        }
        if let Some(totals) = &event.totals {
            let computed = (!self.elimination()).then(|| self.totals());
            let matches = computed.as_ref().is_some_and(|c| claim_equals(totals, c));
            if !matches {
                self.flag(
                    Code::ScoreMismatch,
                    None,
                    format!(
                        "match result: the claimed totals differ: {}",
                        points_differences(totals, computed.as_deref())
                    ),
                );
            }
        }
        if let Some(winners) = &event.winners {
            let computed = self.match_winners();
            if !same_set(winners, &computed) {
                self.flag(
                    Code::WinnerMismatch,
                    None,
                    format!(
                        "match result: the claimed match winners differ: {}",
                        winners_differences(winners, &computed)
                    ),
                );
            }
        }
        self.closed_by = Some(Closure::Result);
    }
}

/// A suit's bit in [`Decision`]'s masks: C 1, D 2, H 4, S 8.
fn suit_bit(suit: Suit) -> i64 {
    1 << (suit as i64)
}

#[cfg(test)]
mod claim_message_tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    fn computed(list: &[&str]) -> Vec<Text> {
        list.iter().map(|&n| Text::from(n)).collect()
    }

    #[test]
    fn points_show_only_the_differing_entries() {
        let claim = vec![
            ("ali".to_string(), Points::Int(5)),
            ("sara".to_string(), Points::Int(10)),
            ("nima".to_string(), Points::Float(3.5)),
        ];
        let computed = vec![
            (Text::from("ali"), 5),
            (Text::from("sara"), 12),
            (Text::from("reza"), 4),
        ];
        assert_eq!(
            points_differences(&claim, Some(&computed)),
            "sara claimed 10, computed 12; reza not claimed (computed 4); \
             nima claimed 3.5 but is not at the table"
        );
    }

    #[test]
    fn the_last_value_under_a_key_counts() {
        let claim = vec![
            ("ali".to_string(), Points::Int(1)),
            ("ali".to_string(), Points::Int(7)),
        ];
        assert_eq!(
            points_differences(&claim, Some(&[(Text::from("ali"), 9)])),
            "ali claimed 7, computed 9"
        );
        assert_eq!(
            points_differences(&claim, None),
            "claimed ali 7, but this play scores no points"
        );
    }

    #[test]
    fn winners_name_who_did_not_win_and_who_is_missing() {
        assert_eq!(
            winners_differences(&names(&["sara", "ali", "sara"]), &computed(&["ali", "reza"])),
            "claimed ali and sara, computed ali and reza; sara did not win; reza won but is not claimed"
        );
        assert_eq!(
            winners_differences(&[], &computed(&["reza"])),
            "claimed nobody, computed reza; reza won but is not claimed"
        );
    }

    #[test]
    fn order_names_the_first_place_that_differs() {
        assert_eq!(
            order_differences(
                &names(&["ali", "sara", "reza"]),
                Some(&computed(&["ali", "reza", "sara"]))
            ),
            "claimed ali → sara → reza, computed ali → reza → sara; place 2: claimed sara, computed reza"
        );
        assert_eq!(
            order_differences(&names(&["ali"]), Some(&computed(&["ali", "reza"]))),
            "claimed ali, computed ali → reza; place 2: claimed nobody, computed reza"
        );
    }
}
