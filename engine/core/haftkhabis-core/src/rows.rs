//! A finished game's warehouse rows, from what the engine knew of it.
//!
//! [`RowBuilder`] is the validator's sink for the ingest: it keeps every distinct line of
//! a game as the validator receives it ([`KeptLine`]: its bytes, where it came from, the
//! cells read off it when it was parsed) and builds the game's rows once the game is
//! judged. Nothing is decided again: the hand and phase of a line, what a draw was, whose
//! gift a 2 gave, outcomes and scores all come from the machine's facts; this module only
//! counts and lays them out, one row type per warehouse table (the binding declares the
//! tables' columns and fills them by name).
//!
//! Which line the engine replayed at each `seq` is decided by the validator (notation.md,
//! "Reading"): the first line seen at a seq is replayed, an identical repeat is dropped, a
//! different one (or a line without a usable seq) is set aside. Set-aside lines are kept
//! as rows too (`set_aside` true), so the warehouse holds every line of the game and can
//! replay it alone.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::cards::{self, Card, Rank};
use crate::event::{Draw, Event, Kind, Penalty};
use crate::game::{EventFact, GameVerdict, Line};
use crate::json::{Text, Value};
use crate::machine::{Decision, DrawKind, HandRecord, LineFact};
use crate::notation;
use crate::validator::{SeenLine, Sink};
use crate::violation::{Code, Violation};

/// The partition value when a game's ruleset is not one the engine knows.
pub const UNKNOWN_RULESET: &str = "unknown";
/// The partition value when no line of a game carries a timestamp.
pub const UNKNOWN_MONTH: &str = "unknown";
/// The `meta` keys a server build is read from, in order of preference.
const META_BUILD_KEYS: [&str; 5] = [
    "server_build",
    "build",
    "server_version",
    "version",
    "server",
];

/// The cells of one line, read off its JSON value when it was parsed (for every line,
/// the set-aside ones included, so each line is decoded once). Short texts (types, ids,
/// cards) are held inline: a line's cells allocate nothing but a draw's card list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineCells {
    pub ts: Option<i64>,
    pub kind: Option<Text>,
    pub player: Option<Text>,
    /// a `play`'s card, a `deal`'s starter: repaired when the spelling is repairable,
    /// else as written
    pub card: Option<Text>,
    pub suit: Option<Text>,
    pub target: Option<Text>,
    pub cards: Option<Vec<Text>>,
}

impl LineCells {
    /// The cells of a line's JSON object.
    pub fn of(obj: &Value) -> LineCells {
        let text = |key: &str| match obj.get(key) {
            Some(Value::Str(s)) => Some(s.clone()),
            _ => None,
        };
        let kind = text("type");
        let card_key = if kind.as_deref() == Some("deal") {
            "starter"
        } else {
            "card"
        };
        LineCells {
            ts: obj
                .get("ts")
                .and_then(Value::as_str)
                .and_then(notation::ts_micros),
            card: obj.get(card_key).and_then(card_cell),
            suit: obj.get("suit").and_then(suit_cell),
            cards: obj.get("cards").and_then(Value::as_array).map(|items| {
                items
                    .iter()
                    .map(|c| card_cell(c).unwrap_or_default())
                    .collect()
            }),
            player: text("player"),
            target: text("target"),
            kind,
        }
    }
}

impl LineCells {
    /// The cells of a line as the validator read it.
    pub fn of_line(line: &Line) -> LineCells {
        match line {
            Line::Json(obj) => LineCells::of(obj),
            Line::Event(event) => LineCells::of_event(event),
        }
    }

    /// The cells of a clean line read straight to its event (`fastline`): what
    /// [`LineCells::of`] reads off its JSON object, every value being in notation form.
    pub fn of_event(event: &Event) -> LineCells {
        let code = |card: &Card| {
            let [rank, suit] = card.notation();
            let mut text = Text::default();
            text.push(char::from(rank));
            text.push(char::from(suit));
            text
        };
        let mut cells = LineCells {
            ts: event.common.ts.as_deref().and_then(notation::ts_micros),
            kind: Some(Text::from(event.kind.type_name())),
            player: event.kind.actor().map(Text::from),
            ..LineCells::default()
        };
        match &event.kind {
            Kind::Deal(deal) => cells.card = deal.starter.as_ref().map(code),
            Kind::Play(play) => {
                cells.card = Some(code(&play.card));
                cells.suit = play.suit.map(|suit| {
                    let mut letter = Text::default();
                    letter.push(suit.letter());
                    letter
                });
                cells.target = play.target.clone();
            }
            Kind::Draw(Draw { cards, .. }) | Kind::Penalty(Penalty { cards, .. }) => {
                cells.cards = Some(cards.iter().map(code).collect());
            }
            _ => {}
        }
        cells
    }
}

/// A card cell: the notation's code when the spelling is repairable, else the value as
/// written (a string as is, anything else as JSON); None for a JSON null.
fn card_cell(value: &Value) -> Option<Text> {
    match value {
        Value::Null => None,
        // the common case: already the notation's two-letter code
        Value::Str(s) if Card::parse(s).is_some() => Some(s.clone()),
        Value::Str(s) => Some(match cards::repair_card(s, s) {
            Ok(card) => Text::from(card.code()),
            Err(_) => s.clone(),
        }),
        other => Some(Text::from(other.to_json())),
    }
}

fn suit_cell(value: &Value) -> Option<Text> {
    match value {
        Value::Null => None,
        Value::Str(s) => Some(match cards::repair_suit(s, s) {
            Ok(suit) => {
                let mut letter = Text::default();
                letter.push(suit.letter());
                letter
            }
            Err(_) => s.clone(),
        }),
        other => Some(Text::from(other.to_json())),
    }
}

/// The validator's sink that builds the warehouse's rows: each game's distinct lines are
/// kept as they are received ([`KeptLine`], the cells read off each while it is parsed,
/// so a line is decoded once), and the game's rows are built from them and its verdict
/// (with its facts) when it is judged.
#[derive(Default)]
pub struct RowBuilder {
    built: Vec<GameRows>,
}

impl RowBuilder {
    /// The rows of the games judged since the last call, in the order they were judged.
    pub fn take(&mut self) -> Vec<GameRows> {
        std::mem::take(&mut self.built)
    }
}

impl Sink for RowBuilder {
    type Game = Vec<KeptLine>;
    const FACTS: bool = true;

    fn line(&mut self, kept: &mut Vec<KeptLine>, line: &SeenLine<'_>) {
        kept.push(KeptLine {
            raw: line.raw.into(),
            file: line.file.clone(),
            line: line.line,
            fingerprint: line.fingerprint,
            seq: line.seq,
            set_aside: line.set_aside,
            cells: LineCells::of_line(line.read),
        });
    }

    fn judged(&mut self, verdict: GameVerdict, kept: Vec<KeptLine>) {
        self.built.push(GameRows::build(verdict, kept));
    }
}

/// One distinct line of a game as received (ingest mode).
#[derive(Clone, Debug)]
pub struct KeptLine {
    /// the line's bytes, without its ending (UTF-8: the parser accepted it)
    pub raw: Box<[u8]>,
    pub file: Arc<str>,
    pub line: u64,
    pub fingerprint: u64,
    /// None when the line has no usable seq
    pub seq: Option<u64>,
    /// not replayed: no usable seq, or another line holds its seq
    pub set_aside: bool,
    pub cells: LineCells,
}

/// `games`: one row per game.
#[derive(Clone, Debug, Default)]
pub struct GameRow {
    pub game_id: String,
    pub ruleset_declared: Option<String>,
    pub mode: Option<String>,
    pub decks: Option<i64>,
    pub match_hands: Option<i64>,
    pub match_target: Option<i64>,
    pub options: Option<String>,
    pub players: Option<Vec<Text>>,
    pub start_time: Option<i64>,
    pub end_time: Option<i64>,
    pub status: &'static str,
    pub complete: bool,
    pub hands: i64,
    pub hands_decided: i64,
    pub winners: Option<Vec<Text>>,
    pub totals: Option<Vec<(Text, i64)>>,
    pub meta: Option<String>,
    pub server_build: Option<String>,
    pub source_files: Vec<String>,
    pub lines: i64,
    pub violations: i64,
    pub content_hash: String,
}

/// `hands`: one row per hand dealt.
#[derive(Clone, Debug, Default)]
pub struct HandRow {
    pub hand: i64,
    pub dealer: Text,
    pub first_player: Text,
    pub players: i64,
    pub winners: Option<Vec<Text>>,
    pub reason: Option<&'static str>,
    pub winning_card: Option<String>,
    pub multiplier: Option<i64>,
    pub scores: Option<Vec<(Text, i64)>>,
    pub decided: bool,
    pub closed: bool,
    pub events: i64,
    pub start_time: Option<i64>,
    pub end_time: Option<i64>,
    pub duration_ms: Option<i64>,
    pub reshuffles: i64,
    pub violations: i64,
    /// the dealer's seat (header order)
    pub dealer_seat: i64,
    /// the starter's card code ([`Card::index`]); None where the ruleset has none
    pub starter: Option<u8>,
    /// the stock as the deal logged it, top first, as card codes; None when it logged none
    pub stock: Option<Vec<u8>>,
    /// the violations found at the hand's `deal` line (0: the deal replayed clean, the
    /// only deals the deal audit reads); None when the line is not among the game's
    pub deal_violations: Option<i64>,
}

/// What one player did in one hand, counted over the hand's replayed lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlayerTally {
    pub cards_played: i64,
    pub cards_drawn: i64,
    pub penalty_cards: i64,
    pub sevens_played: i64,
    /// draws of a 7 total (`DrawKind::SevenTotal`)
    pub seven_totals_drawn: i64,
    pub seven_cards_drawn: i64,
    /// 2s whose gift applied (the machine's `gift_to`)
    pub twos_given: i64,
    pub twos_received: i64,
    pub jacks_played: i64,
    /// the player's fouls ([`Code::is_foul`]) on the hand's lines
    pub violations: i64,
}

/// `hand_players`: one row per player per hand.
#[derive(Clone, Debug, Default)]
pub struct HandPlayerRow {
    pub hand: i64,
    pub player: Text,
    pub seat: i64,
    pub turn_order: Option<i64>,
    pub points: Option<i64>,
    pub won: Option<bool>,
    pub finishing_position: Option<i64>,
    pub cards_left: Option<i64>,
    pub left_cards: Option<Vec<String>>,
    pub tally: PlayerTally,
    /// seats after the dealer, clockwise (0 = the dealer, 1 = the next seat)
    pub deal_position: i64,
    /// the cards the deal gave the seat, in the order written, as card codes
    /// ([`Card::index`]): "Every player is dealt 7 cards"
    pub opening_cards: Vec<u8>,
}

/// `events`: one row per distinct line of the game.
#[derive(Clone, Debug, Default)]
pub struct EventRow {
    pub seq: Option<u64>,
    pub ordinal: i64,
    pub hand: Option<i64>,
    pub cells: LineCells,
    pub phase: Option<&'static str>,
    /// for a `draw` or `penalty`: what the draw was ([`DrawKind::name`])
    pub draw_kind: Option<&'static str>,
    /// a 2 whose gift applied: its target
    pub gift_to: Option<Text>,
    pub codes: Vec<&'static str>,
    pub set_aside: bool,
    pub fingerprint: i64,
    pub raw: Box<[u8]>,
    pub file: Arc<str>,
    pub line: i64,
}

/// `decisions`: one row per turn event a player made in their turn (the machine's
/// [`Decision`]: what they faced), for the pair audit.
#[derive(Clone, Debug, Default)]
pub struct DecisionRow {
    pub seq: u64,
    pub hand: i64,
    pub player: Text,
    pub phase: Option<&'static str>,
    pub decision: Decision,
}

/// `violations`: one row per violation.
#[derive(Clone, Debug, Default)]
pub struct ViolationRow {
    pub seq: Option<u64>,
    pub hand: Option<i64>,
    pub code: &'static str,
    /// a player's own foul ([`Code::is_foul`]): what "a player's violations" counts
    pub foul: bool,
    pub player: Option<String>,
    pub message: String,
    pub file: Option<Arc<str>>,
    pub line: Option<i64>,
}

/// Every row of one game, and the partition it is stored under.
#[derive(Clone, Debug, Default)]
pub struct GameRows {
    /// the declared ruleset when the engine knows it, else [`UNKNOWN_RULESET`]
    pub ruleset: String,
    /// `YYYY-MM` (UTC) of the game's first timestamp, else [`UNKNOWN_MONTH`]
    pub month: String,
    pub game: GameRow,
    pub hands: Vec<HandRow>,
    pub hand_players: Vec<HandPlayerRow>,
    pub events: Vec<EventRow>,
    pub decisions: Vec<DecisionRow>,
    pub violations: Vec<ViolationRow>,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The content hash of a game: over the multiset of its distinct lines' fingerprints,
/// so the order in which files deliver them does not matter (128 bits, hex). Not
/// cryptographic; deterministic across runs and machines.
pub fn content_hash(fingerprints: &mut [u64]) -> String {
    fingerprints.sort_unstable();
    let mut high: u64 = 0x6a09_e667_f3bc_c908;
    let mut low: u64 = 0xbb67_ae85_84ca_a73b;
    for &fp in fingerprints.iter() {
        high = mix(high ^ fp);
        low = mix(low.rotate_left(23) ^ fp ^ 0x3c6e_f372_fe94_f82b);
    }
    let count = fingerprints.len() as u64;
    format!(
        "{:016x}{:016x}",
        mix(high ^ count),
        mix(low ^ count.rotate_left(32))
    )
}

/// SplitMix64's finaliser: a bijective avalanche of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The partition month (UTC, `YYYY-MM`) of an instant in microseconds since the epoch.
pub fn month_of(micros: Option<i64>) -> String {
    let Some(micros) = micros else {
        return UNKNOWN_MONTH.to_string();
    };
    // H. Hinnant's civil_from_days
    let days = micros.div_euclid(86_400_000_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}")
}

/// The server build a header's `meta` names, under the usual key spellings.
pub fn server_build(meta: Option<&Value>) -> Option<String> {
    let meta = meta?;
    META_BUILD_KEYS.iter().find_map(|key| match meta.get(key) {
        Some(v @ (Value::Str(_) | Value::Int(_) | Value::UInt(_) | Value::Float(_))) => {
            Some(v.py_str())
        }
        _ => None,
    })
}

/// Finishing positions (1 = best): the elimination order, or winners first and the
/// others by the points they took (fewer is better), ties sharing a place.
fn positions(record: &HandRecord, players: &[Text]) -> HashMap<Text, i64> {
    let Some(outcome) = &record.outcome else {
        return HashMap::new();
    };
    if let Some(order) = &outcome.order {
        return order.iter().zip(1..).map(|(p, i)| (p.clone(), i)).collect();
    }
    let points = |p: &str| -> i64 {
        outcome
            .scores
            .iter()
            .flatten()
            .find(|(q, _)| q == p)
            .map_or(0, |(_, s)| *s)
    };
    let winners = outcome.winners.len() as i64;
    let others: Vec<&Text> = players
        .iter()
        .filter(|p| !outcome.winners.contains(p))
        .collect();
    let mut places: HashMap<Text, i64> = outcome.winners.iter().map(|p| (p.clone(), 1)).collect();
    for p in &others {
        let mine = points(p);
        let better = others.iter().filter(|q| points(q) < mine).count() as i64;
        places.insert((*p).clone(), 1 + winners + better);
    }
    places
}

/// Per hand: the lines' tally, the hand's own counters.
#[derive(Default)]
struct HandTally {
    events: i64,
    violations: i64,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    players: HashMap<Text, PlayerTally>,
}

impl HandTally {
    fn player(&mut self, name: &str) -> &mut PlayerTally {
        if !self.players.contains_key(name) {
            self.players.insert(name.into(), PlayerTally::default());
        }
        self.players.get_mut(name).expect("just inserted")
    }

    /// Count one replayed line of the hand.
    fn count(&mut self, cells: &LineCells, detail: Option<&LineFact>, codes: usize) {
        self.events += 1;
        self.violations += codes as i64;
        if let Some(ts) = cells.ts {
            self.first_ts = Some(self.first_ts.map_or(ts, |t| t.min(ts)));
            self.last_ts = Some(self.last_ts.map_or(ts, |t| t.max(ts)));
        }
        let Some(player) = cells.player.as_deref() else {
            return;
        };
        let drawn = cells.cards.as_ref().map_or(0, |c| c.len() as i64);
        match cells.kind.as_deref() {
            Some("play") => {
                let rank = cells.card.as_deref().and_then(Card::parse).map(Card::rank);
                let tally = self.player(player);
                tally.cards_played += 1;
                match rank {
                    Some(Rank::Seven) => tally.sevens_played += 1,
                    Some(Rank::Jack) => tally.jacks_played += 1,
                    _ => {}
                }
                if let Some(target) = detail.and_then(|d| d.gift_to.as_deref()) {
                    self.player(player).twos_given += 1;
                    self.player(target).twos_received += 1;
                }
            }
            Some("draw") => {
                let tally = self.player(player);
                tally.cards_drawn += drawn;
                if detail.and_then(|d| d.draw_kind) == Some(DrawKind::SevenTotal) {
                    tally.seven_totals_drawn += 1;
                    tally.seven_cards_drawn += drawn;
                }
            }
            Some("penalty") => self.player(player).penalty_cards += drawn,
            _ => {}
        }
    }
}

/// The fact the engine kept of the line replayed at `seq` (facts are in seq order).
fn fact_at(facts: &[EventFact], seq: u64) -> Option<&EventFact> {
    facts
        .binary_search_by_key(&seq, |f| f.seq)
        .ok()
        .map(|i| &facts[i])
}

impl GameRows {
    /// Every row of a judged game, from its verdict (with facts) and its distinct lines as
    /// received.
    pub fn build(verdict: GameVerdict, lines: Vec<KeptLine>) -> GameRows {
        let GameVerdict {
            game,
            status,
            violations,
            hands: outcomes,
            totals,
            files,
            header,
            table,
            facts,
            ..
        } = verdict;
        let facts = facts.unwrap_or_default();

        // the codes found at each line, by (file, line); most games have none
        let mut codes_at: HashMap<(&str, u64), Vec<Code>> = HashMap::new();
        for v in &violations {
            if let (Some(file), Some(line)) = (&v.file, v.line) {
                codes_at.entry((file, line)).or_default().push(v.code);
            }
        }
        let flagged: HashSet<(&str, u64)> = codes_at.keys().copied().collect();

        let mut first_ts: Option<i64> = None;
        let mut last_ts: Option<i64> = None;
        let mut tallies: HashMap<u64, HandTally> = HashMap::new();
        // the hand of each line a violation was found at
        let mut hand_of_line: HashMap<(Arc<str>, u64), Option<i64>> = HashMap::new();
        let mut fingerprints: Vec<u64> = Vec::with_capacity(lines.len());
        let mut events: Vec<EventRow> = Vec::with_capacity(lines.len());
        let mut decisions: Vec<DecisionRow> = Vec::new();
        // the violations found at each replayed `deal` line, by seq (a hand's deal facts
        // are kept by the table with the line's seq)
        let mut deal_codes: HashMap<u64, i64> = HashMap::new();
        let mut ordered = true;
        let mut previous: Option<u64> = None;
        for (ordinal, kept) in lines.into_iter().enumerate() {
            let KeptLine {
                raw,
                file,
                line,
                fingerprint,
                seq,
                set_aside,
                cells,
            } = kept;
            fingerprints.push(fingerprint);
            if let Some(ts) = cells.ts {
                first_ts = Some(first_ts.map_or(ts, |t| t.min(ts)));
                last_ts = Some(last_ts.map_or(ts, |t| t.max(ts)));
            }
            let codes: &[Code] = if codes_at.is_empty() {
                &[]
            } else {
                codes_at.get(&(&*file, line)).map_or(&[], Vec::as_slice)
            };
            let fact = match (seq, set_aside) {
                (Some(seq), false) => fact_at(&facts, seq),
                _ => None,
            };
            let (hand, phase) = fact.map_or((None, None), |f| (f.hand, f.phase));
            if let (Some(seq), Some(_), Some("deal")) = (seq, fact, cells.kind.as_deref()) {
                deal_codes.insert(seq, codes.len() as i64);
            }
            if let Some(hand) = hand {
                tallies.entry(hand).or_default().count(
                    &cells,
                    fact.and_then(|f| f.detail.as_ref()),
                    codes.len(),
                );
            }
            let hand = hand.map(to_i64);
            if !flagged.is_empty() && flagged.contains(&(&*file, line)) {
                hand_of_line.insert((file.clone(), line), hand);
            }
            match seq {
                Some(s) if !set_aside && previous.is_none_or(|p| s >= p) => previous = Some(s),
                _ => ordered = false,
            }
            let detail = fact.and_then(|f| f.detail.as_ref());
            if let (Some(seq), Some(hand), Some(player), Some(decision)) = (
                seq,
                hand,
                cells.player.as_ref(),
                detail.and_then(|d| d.decision.as_ref()),
            ) {
                decisions.push(DecisionRow {
                    seq,
                    hand,
                    player: player.clone(),
                    phase,
                    decision: decision.clone(),
                });
            }
            events.push(EventRow {
                seq,
                ordinal: ordinal as i64,
                hand,
                cells,
                phase,
                draw_kind: detail.and_then(|d| d.draw_kind).map(DrawKind::name),
                gift_to: detail.and_then(|d| d.gift_to.clone()),
                codes: codes.iter().map(|c| c.name()).collect(),
                set_aside,
                // the warehouse's column is signed: the same 64 bits
                fingerprint: fingerprint as i64,
                raw,
                file,
                line: to_i64(line),
            });
        }
        if !ordered {
            // replayed lines by seq, then the set-aside ones in input order
            events.sort_by_key(|e| (e.set_aside, e.seq.unwrap_or(0), e.ordinal));
        }

        // a player's violations: their fouls, in the hand of the line they were found at
        let hand_of = |v: &Violation| match (&v.file, v.line) {
            (Some(file), Some(line)) => hand_of_line.get(&(file.clone(), line)).copied().flatten(),
            _ => None,
        };
        // Where a hand's log lost or doubled a line (a `sequence` violation: a gap, or a
        // conflict at a taken seq), what follows in that hand was judged against a state
        // that may not be the table's: a foul found there is reported, but is not counted
        // as the player's own (issue: "a seq gap is blamed on whoever's line came next").
        let mut broken_from: HashMap<i64, u64> = HashMap::new();
        for v in violations.iter().filter(|v| v.code == Code::Sequence) {
            if let (Some(hand), Some(seq)) = (hand_of(v), v.seq) {
                let from = broken_from.entry(hand).or_insert(seq);
                *from = (*from).min(seq);
            }
        }
        let violation_rows: Vec<ViolationRow> = violations
            .iter()
            .map(|v| {
                let hand = hand_of(v);
                let after_a_break = match (hand, v.seq) {
                    (Some(hand), Some(seq)) => broken_from.get(&hand).is_some_and(|&b| seq >= b),
                    _ => false,
                };
                ViolationRow {
                    seq: v.seq,
                    hand,
                    code: v.code.name(),
                    foul: v.code.is_foul() && !after_a_break,
                    player: v.player.clone(),
                    message: v.message.clone(),
                    file: v.file.clone(),
                    line: v.line.map(to_i64),
                }
            })
            .collect();
        for v in &violation_rows {
            if let (true, Some(hand), Some(player)) = (v.foul, v.hand, &v.player) {
                if let Ok(hand) = u64::try_from(hand) {
                    tallies.entry(hand).or_default().player(player).violations += 1;
                }
            }
        }

        let declared = match header.as_ref().and_then(|h| h.ruleset.as_ref()) {
            Some(Value::Str(name)) => Some(name.to_string()),
            _ => None,
        };
        let known = declared
            .as_deref()
            .is_some_and(|name| crate::ruleset::ruleset(name).is_some());
        let ruleset = match (&declared, known) {
            (Some(name), true) => name.clone(),
            _ => UNKNOWN_RULESET.to_string(),
        };

        let mut hand_rows = Vec::new();
        let mut player_rows = Vec::new();
        let mut hands_dealt = 0;
        if let Some(table) = &table {
            let players = table.players();
            let records = table.hand_records();
            hands_dealt = records.len() as i64;
            for record in &records {
                let tally = tallies.remove(&record.number).unwrap_or_default();
                let deal_violations = record
                    .deal
                    .seq
                    .and_then(|seq| deal_codes.get(&seq).copied());
                hand_rows.push(hand_row(record, &tally, players.len(), deal_violations));
                player_rows.extend(player_rows_of(record, &tally, players));
            }
        }

        let complete = table.is_some()
            && status.name() != "invalid"
            && table.as_ref().is_some_and(|t| t.is_complete());
        let winners = complete.then(|| match &table {
            Some(t) if outcomes.as_ref().is_some_and(|o| !o.is_empty()) => t.match_winners(),
            _ => Vec::new(),
        });
        let settings = table.as_ref().map(|t| &t.settings);
        let header_text = |v: Option<&Value>| v.filter(|v| !v.is_null()).map(Value::to_json_sorted);
        let mut source_files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        source_files.sort();
        source_files.dedup();
        let game_row = GameRow {
            ruleset_declared: declared,
            mode: match (&settings, header.as_ref().and_then(|h| h.mode.as_ref())) {
                (Some(s), _) => Some(s.mode.name().to_string()),
                (None, Some(Value::Str(m))) => Some(m.to_string()),
                _ => None,
            },
            decks: settings.map(|s| i64::from(s.decks)),
            match_hands: settings.and_then(|s| s.match_hands).map(to_i64),
            match_target: settings.and_then(|s| s.match_target).map(to_i64),
            options: header_text(header.as_ref().and_then(|h| h.options.as_ref())),
            players: match (&table, header.as_ref().and_then(|h| h.players.as_ref())) {
                (Some(t), _) => Some(t.players().to_vec()),
                (None, Some(Value::Array(items))) => Some(
                    items
                        .iter()
                        .filter_map(|p| p.as_str().map(Text::from))
                        .collect(),
                ),
                _ => None,
            },
            start_time: first_ts,
            end_time: last_ts,
            status: status.name(),
            complete,
            hands: hands_dealt,
            hands_decided: outcomes.as_ref().map_or(0, |o| o.len() as i64),
            winners,
            totals,
            meta: header_text(header.as_ref().and_then(|h| h.meta.as_ref())),
            server_build: server_build(header.as_ref().and_then(|h| h.meta.as_ref())),
            source_files,
            lines: events.len() as i64,
            violations: violation_rows.len() as i64,
            content_hash: content_hash(&mut fingerprints),
            game_id: game,
        };
        GameRows {
            ruleset,
            month: month_of(first_ts),
            game: game_row,
            hands: hand_rows,
            hand_players: player_rows,
            events,
            decisions,
            violations: violation_rows,
        }
    }
}

fn hand_row(
    record: &HandRecord,
    tally: &HandTally,
    players: usize,
    deal_violations: Option<i64>,
) -> HandRow {
    let outcome = record.outcome.as_ref();
    let duration = match (tally.first_ts, tally.last_ts) {
        (Some(a), Some(b)) => Some((b - a) / 1000),
        _ => None,
    };
    HandRow {
        hand: to_i64(record.number),
        dealer: record.dealer.clone(),
        first_player: record.first_player.clone(),
        players: players as i64,
        winners: outcome.map(|o| o.winners.clone()),
        reason: outcome.map(|o| o.reason.name()),
        winning_card: outcome.and_then(|o| o.winning_card).map(Card::code),
        multiplier: outcome.map(|o| i64::from(o.multiplier)),
        scores: outcome.and_then(|o| o.scores.clone()),
        decided: outcome.is_some(),
        closed: record.closed,
        events: tally.events,
        start_time: tally.first_ts,
        end_time: tally.last_ts,
        duration_ms: duration,
        reshuffles: i64::from(record.reshuffles),
        violations: tally.violations,
        dealer_seat: record.deal.dealer_seat as i64,
        starter: record.deal.starter.map(card_code),
        stock: record.deal.stock.as_deref().map(card_codes),
        deal_violations,
    }
}

/// A card as the warehouse stores it: its index in the pack ([`Card::index`], 0..52).
fn card_code(card: Card) -> u8 {
    card.index() as u8
}

fn card_codes(cards: &[Card]) -> Vec<u8> {
    cards.iter().copied().map(card_code).collect()
}

fn player_rows_of(record: &HandRecord, tally: &HandTally, players: &[Text]) -> Vec<HandPlayerRow> {
    let outcome = record.outcome.as_ref();
    let n = players.len() as i64;
    let first_seat = players.iter().position(|p| *p == record.first_player);
    let places = positions(record, players);
    players
        .iter()
        .enumerate()
        .map(|(seat, player)| {
            let left = record
                .cards_left
                .iter()
                .find(|(p, _)| p == player)
                .map(|(_, cards)| cards);
            let points = outcome
                .and_then(|o| o.scores.as_ref())
                .and_then(|s| s.iter().find(|(p, _)| p == player))
                .map(|(_, s)| *s);
            HandPlayerRow {
                hand: to_i64(record.number),
                player: player.clone(),
                seat: seat as i64,
                turn_order: first_seat.map(|f| (seat as i64 - f as i64).rem_euclid(n)),
                points,
                won: outcome.map(|o| o.winners.contains(player)),
                finishing_position: places.get(player).copied(),
                cards_left: left.map(|c| c.len() as i64),
                left_cards: left.map(|c| c.iter().map(|card| card.code()).collect()),
                tally: tally
                    .players
                    .get(player.as_str())
                    .copied()
                    .unwrap_or_default(),
                deal_position: (seat as i64 - record.deal.dealer_seat as i64).rem_euclid(n),
                opening_cards: record
                    .deal
                    .opening
                    .get(seat)
                    .map_or_else(Vec::new, |cards| card_codes(cards)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_of_instants() {
        assert_eq!(month_of(None), UNKNOWN_MONTH);
        assert_eq!(month_of(Some(0)), "1970-01");
        // 2026-03-01T00:00:00Z
        assert_eq!(
            month_of(notation::ts_micros("2026-03-01T00:00:00Z")),
            "2026-03"
        );
        assert_eq!(
            month_of(notation::ts_micros("2026-02-28T23:59:59.999999Z")),
            "2026-02"
        );
        assert_eq!(
            month_of(notation::ts_micros("0001-01-01T00:00:00Z")),
            "0001-01"
        );
        assert_eq!(
            month_of(notation::ts_micros("9999-12-31T23:59:59Z")),
            "9999-12"
        );
    }

    #[test]
    fn content_hash_ignores_order_not_multiplicity() {
        let a = content_hash(&mut [3, 1, 2]);
        assert_eq!(a, content_hash(&mut [2, 3, 1]));
        assert_ne!(a, content_hash(&mut [1, 2]));
        assert_ne!(a, content_hash(&mut [1, 2, 3, 3]));
        assert_eq!(a.len(), 32);
    }

    #[test]
    fn cells_repair_cards_and_keep_the_unreadable() {
        let obj = crate::json::parse_line(
            br#"{"type":"play","player":"ali","card":"10h","suit":"hearts","cards":["7c",5],"ts":"2026-01-02T03:04:05.5+01:00"}"#,
        )
        .expect("json");
        let cells = LineCells::of(&obj);
        assert_eq!(cells.card.as_deref(), Some("TH"));
        assert_eq!(cells.suit.as_deref(), Some("H"));
        assert_eq!(cells.cards, Some(vec![Text::from("7C"), Text::from("5")]));
        assert_eq!(cells.ts, notation::ts_micros("2026-01-02T02:04:05.5Z"));
        assert_eq!(cells.kind.as_deref(), Some("play"));
    }

    #[test]
    fn server_build_under_usual_keys() {
        let meta = crate::json::parse_line(br#"{"version":2.5,"build":"2.4.1-rc"}"#).expect("json");
        assert_eq!(server_build(Some(&meta)).as_deref(), Some("2.4.1-rc"));
        let meta = crate::json::parse_line(br#"{"version":true}"#).expect("json");
        assert_eq!(server_build(Some(&meta)), None);
    }
}
