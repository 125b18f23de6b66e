//! The codec between log lines and events (notation.md): field checks, repairs, encoding.
//!
//! INTERFACE (implemented in this module):
//! - `decode(obj: &Value, game: &str, seq: u64) -> Decoded`: a JSON object whose `game`
//!   and `seq` are already known to be usable → the event (None when set aside) and its
//!   notation problems (each a `schema` message), exactly as `engine/events.py` decodes;
//! - `encode(event: &Event) -> Value`: the JSON object a producer writes;
//! - `game_id(obj: &Value) -> Option<&str>` / `seq(obj: &Value) -> Option<u64>`: the
//!   routing fields when usable; `player_of(obj)` names the actor for a violation;
//! - [`EVENT_FIELDS`] / [`COMMON_FIELDS`]: the one table of every event type's fields
//!   (name, required, kind). It drives the unknown-field check and the decoding (fields
//!   are read in table order, so the first set-aside problem is the one Python reports),
//!   and is public so a JSON Schema can be generated from it.
//!
//! Decisions beyond `engine/events.py` (security review):
//! - a key written twice anywhere in the line is one `schema` issue per key path
//!   ("duplicate key 'game' (the last value counts)"); the line is decoded with the last
//!   values, as `json::Value::get` reads them;
//! - range checks, a value out of range being a bad value of its field: `seq` ≤ 2^63−1
//!   ([`seq`]), `deal.hand` / `end.hand` ≤ 2^31−1, and `ts` must be a real instant (month
//!   1–12, a day of that month, hour ≤ 23, minute ≤ 59, second ≤ 60, offset ≤ 23:59) whose
//!   local date and UTC instant both fall in the years 0001–9999.

use std::collections::HashSet;
use std::fmt;

use crate::cards::{repair_card, repair_suit, Card, SpellingError, Suit};
use crate::event::{
    Common, Deal, Draw, End, Event, GameResult, Header, Kind, Penalty, PenaltyReason, Play, Points,
    EVENT_TYPES,
};
use crate::json::{py_repr_str, same_text, Text, Value};

/// The notation's `format` ("`format` (`"haftkhabis/1"`)").
pub const FORMAT: &str = "haftkhabis/1";
/// "`game` — the game's id: 1–128 characters of `A–Z a–z 0–9 . _ : -`."
pub const MAX_GAME_ID_LEN: usize = 128;
/// "Player ids are any 1–64 characters, unique."
pub const MAX_PLAYER_ID_LEN: usize = 64;
/// The largest usable `seq` (decision: 2^63−1).
pub const MAX_SEQ: u64 = i64::MAX as u64;
/// The largest `deal.hand` / `end.hand` (decision: 2^31−1).
pub const MAX_HAND: u64 = (1 << 31) - 1;
/// `announce`'s `call` (`"last_card"`).
pub const CALLS: [&str; 1] = ["last_card"];
/// "Unknown fields are errors (`schema`), except names starting with `x_`, which are kept
/// and ignored (producer extensions)."
pub const EXTENSION_PREFIX: &str = "x_";

named_enum! {
    /// What a field holds, and so how it is read (its name: the kind in the codec's
    /// exported field table, `engine._core.event_specs()`).
    pub enum FieldKind {
        /// 1–128 characters of `A–Z a–z 0–9 . _ : -` (checked by the router: [`game_id`])
        GameId = "game_id",
        /// a JSON integer 0 to 2^63−1 (checked by the router: [`seq`])
        Seq = "seq",
        /// one of [`EVENT_TYPES`]
        EventType = "event_type",
        /// "an RFC 3339 timestamp with offset"; a bad one is reported and dropped
        Timestamp = "timestamp",
        /// `"haftkhabis/1"`; kept as written, judged by `machine::read_header`
        Format = "format",
        /// `bazito` · `persian` · `pis-yedili`; kept as written, judged by the header reading
        Ruleset = "ruleset",
        /// 2+ unique player ids; kept as written, judged by the header reading
        Players = "players",
        /// an object of sub-rule overrides; kept as written, judged by the header reading
        Options = "options",
        /// `points` · `elimination`; kept as written, judged by the header reading
        Mode = "mode",
        /// 1 or 2; kept as written, judged by the header reading
        Decks = "decks",
        /// `{"hands": N}` or `{"target": N}`; kept as written, judged by the header reading
        Match = "match",
        /// any object; kept as written, judged by the header reading
        Meta = "meta",
        /// a whole number 1 to 2^31−1; anything else sets the line aside
        HandNumber = "hand_number",
        /// a player id, 1–64 characters; anything else sets the line aside
        PlayerId = "player_id",
        /// an object: player → list of cards; anything unreadable sets the line aside
        Hands = "hands",
        /// a card; repaired when repairable, else flagged for the rules (`bad_deal`)
        Starter = "starter",
        /// a list of cards, top first; not a list, or an unreadable card, sets the line aside
        Stock = "stock",
        /// a card; repaired when repairable, else the line is set aside
        Card = "card",
        /// a suit; repaired when repairable, else flagged for the rules (`bad_suit`)
        Suit = "suit",
        /// a player id, judged by the rules (`bad_target`); any value counts as given
        Target = "target",
        /// a non-empty list of cards; anything else sets the line aside
        Cards = "cards",
        /// `"last_card"`; another value is reported and kept as text
        Call = "call",
        /// a list of exactly one card (another count is reported, the line applied)
        PenaltyCards = "penalty_cards",
        /// `misplay` · `missed_call` · `out_of_turn` · `delay` · `other`; else set aside
        PenaltyReason = "penalty_reason",
        /// a claim: a list of player ids; malformed → reported and ignored
        PlayerList = "player_list",
        /// a claim: an object player → number (not a bool); malformed → reported and ignored
        PointsMap = "points_map",
        /// text; another value is reported and kept as its text
        Text = "text",
    }
}

named_enum! {
    /// How the codec treats a bad value of a field kind ([`FieldKind::policy`]).
    pub enum Policy {
        /// checked before decoding: the line belongs to no game or has no usable `seq`
        Router = "router",
        /// a `schema` issue, the line applied
        Reported = "reported",
        /// judged when the header is read
        Header = "header",
        /// a `schema` issue and the line is not replayed
        SetAside = "set_aside",
        /// not a notation issue: the rules judge it (e.g. `bad_suit`)
        Rules = "rules",
    }
}

impl FieldKind {
    /// How the codec treats a bad value of the kind (the published schema says it).
    pub fn policy(self) -> Policy {
        match self {
            FieldKind::GameId | FieldKind::Seq | FieldKind::EventType => Policy::Router,
            FieldKind::Timestamp
            | FieldKind::Call
            | FieldKind::PenaltyCards
            | FieldKind::PlayerList
            | FieldKind::PointsMap
            | FieldKind::Text => Policy::Reported,
            FieldKind::Format
            | FieldKind::Ruleset
            | FieldKind::Players
            | FieldKind::Options
            | FieldKind::Mode
            | FieldKind::Decks
            | FieldKind::Match
            | FieldKind::Meta => Policy::Header,
            FieldKind::HandNumber
            | FieldKind::PlayerId
            | FieldKind::Hands
            | FieldKind::Stock
            | FieldKind::Card
            | FieldKind::Cards
            | FieldKind::PenaltyReason => Policy::SetAside,
            FieldKind::Starter | FieldKind::Suit | FieldKind::Target => Policy::Rules,
        }
    }
}

/// One field of an event type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    /// the contract requires it; a missing required field sets the line aside, except the
    /// header's settings, which `machine::read_header` judges (a header missing one is
    /// unusable: status `invalid`)
    pub required: bool,
    pub kind: FieldKind,
}

/// The fields of one event type, in the order they are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventSpec {
    pub type_name: &'static str,
    pub fields: &'static [Field],
}

const fn req(name: &'static str, kind: FieldKind) -> Field {
    Field {
        name,
        required: true,
        kind,
    }
}

const fn opt(name: &'static str, kind: FieldKind) -> Field {
    Field {
        name,
        required: false,
        kind,
    }
}

/// "Every line carries: `game`, `seq`, `type`, `ts` (optional)".
pub const COMMON_FIELDS: &[Field] = &[
    req("game", FieldKind::GameId),
    req("seq", FieldKind::Seq),
    req("type", FieldKind::EventType),
    opt("ts", FieldKind::Timestamp),
];

/// Every event type's own fields (notation.md, "Events"), in [`EVENT_TYPES`] order; the
/// fields of each are read in the order listed.
pub const EVENT_FIELDS: &[EventSpec] = &[
    EventSpec {
        type_name: "game",
        fields: &[
            req("format", FieldKind::Format),
            req("ruleset", FieldKind::Ruleset),
            req("players", FieldKind::Players),
            opt("options", FieldKind::Options),
            opt("mode", FieldKind::Mode),
            opt("decks", FieldKind::Decks),
            opt("match", FieldKind::Match),
            opt("meta", FieldKind::Meta),
        ],
    },
    EventSpec {
        type_name: "deal",
        fields: &[
            req("hand", FieldKind::HandNumber),
            req("dealer", FieldKind::PlayerId),
            req("hands", FieldKind::Hands),
            opt("starter", FieldKind::Starter),
            opt("stock", FieldKind::Stock),
        ],
    },
    EventSpec {
        type_name: "play",
        fields: &[
            req("player", FieldKind::PlayerId),
            req("card", FieldKind::Card),
            opt("suit", FieldKind::Suit),
            opt("target", FieldKind::Target),
        ],
    },
    EventSpec {
        type_name: "draw",
        fields: &[
            req("player", FieldKind::PlayerId),
            req("cards", FieldKind::Cards),
        ],
    },
    EventSpec {
        type_name: "pass",
        fields: &[req("player", FieldKind::PlayerId)],
    },
    EventSpec {
        type_name: "announce",
        fields: &[
            req("player", FieldKind::PlayerId),
            req("call", FieldKind::Call),
        ],
    },
    EventSpec {
        type_name: "penalty",
        fields: &[
            req("player", FieldKind::PlayerId),
            req("cards", FieldKind::PenaltyCards),
            req("reason", FieldKind::PenaltyReason),
        ],
    },
    EventSpec {
        type_name: "reshuffle",
        fields: &[opt("stock", FieldKind::Stock)],
    },
    EventSpec {
        type_name: "end",
        fields: &[
            req("hand", FieldKind::HandNumber),
            opt("winners", FieldKind::PlayerList),
            opt("scores", FieldKind::PointsMap),
            opt("order", FieldKind::PlayerList),
        ],
    },
    EventSpec {
        type_name: "result",
        fields: &[
            opt("totals", FieldKind::PointsMap),
            opt("winners", FieldKind::PlayerList),
        ],
    },
    EventSpec {
        type_name: "abort",
        fields: &[opt("reason", FieldKind::Text)],
    },
];

impl EventSpec {
    /// The field `name` of this type (common fields included).
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        let fields: &'static [Field] = self.fields;
        COMMON_FIELDS
            .iter()
            .chain(fields.iter())
            .find(|f| f.name == name)
    }

    /// Whether a line of this type may carry `name` (its fields, the common ones, or a
    /// producer extension `x_…`).
    pub fn allows(&self, name: &str) -> bool {
        name.starts_with(EXTENSION_PREFIX)
            || COMMON_FIELDS.iter().any(|f| f.name == name)
            || self.fields.iter().any(|f| f.name == name)
    }
}

/// The field table of event type `type_name`.
pub fn event_spec(type_name: &str) -> Option<&'static EventSpec> {
    EVENT_FIELDS.iter().find(|s| same(s.type_name, type_name))
}

/// One decoded line: the event (None when set aside) and its notation problems.
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    pub event: Option<Event>,
    pub issues: Vec<String>,
}

// ------------------------------------------------------------------ routing fields

/// "`game` — the game's id: 1–128 characters of `A–Z a–z 0–9 . _ : -`."
pub fn valid_game_id(text: &str) -> bool {
    (1..=MAX_GAME_ID_LEN).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// "Player ids are any 1–64 characters" (characters, not bytes, as Python counts them).
pub fn valid_player_id(text: &str) -> bool {
    !text.is_empty()
        && (text.len() <= MAX_PLAYER_ID_LEN || text.chars().count() <= MAX_PLAYER_ID_LEN)
}

/// The line's `game` when usable (the last `game` written counts).
pub fn game_id(obj: &Value) -> Option<&str> {
    match obj.get("game") {
        Some(Value::Str(s)) if valid_game_id(s) => Some(s),
        _ => None,
    }
}

/// The line's `seq` when usable: "`seq` must be a JSON integer (`1.0` and `true` are
/// not)", 0 or more, and (decision) at most 2^63−1.
pub fn seq(obj: &Value) -> Option<u64> {
    match obj.get("seq") {
        Some(Value::Int(n)) => u64::try_from(*n).ok().filter(|n| *n <= MAX_SEQ),
        _ => None,
    }
}

/// The `player` field when it is a string: the actor a violation is attributed to.
pub fn player_of(obj: &Value) -> Option<&str> {
    obj.get("player").and_then(Value::as_str)
}

/// One `schema` message per key written twice anywhere in the line.
pub fn duplicate_key_issues(obj: &Value) -> Vec<String> {
    obj.duplicate_keys()
        .into_iter()
        .map(|path| format!("duplicate key '{path}' (the last value counts)"))
        .collect()
}

// ------------------------------------------------------------------ timestamps

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// "a bad `ts` (it must be `YYYY-MM-DDTHH:MM:SS[.frac]` with `Z` or `±HH:MM`, either case
/// of `T`/`Z`)" — ASCII digits only — and (decision) a real instant: month 1–12, a day of
/// that month, hour ≤ 23, minute ≤ 59, second ≤ 60 (a leap second), offset ≤ 23:59, with
/// the date as written and its UTC instant both within the years 0001–9999.
pub fn valid_ts(text: &str) -> bool {
    read_ts(text, false).is_some()
}

/// The UTC instant of a `ts` the notation accepts (see [`valid_ts`]), in microseconds
/// since 1970-01-01T00:00:00Z; None for a bad `ts`. Digits beyond the microsecond are
/// dropped (decision: truncated, as a database does); a leap second (`:60`) is the first
/// instant of the next minute.
pub fn ts_micros(text: &str) -> Option<i64> {
    read_ts(text, true)
}

/// [`ts_micros`]; without `instant`, only the check (and a dummy 0): the years 0002–9998
/// need no calendar arithmetic to be in range, and the validator checks every line's `ts`.
fn read_ts(text: &str, instant: bool) -> Option<i64> {
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = b.get(range)?;
        digits.iter().try_fold(0i64, |acc, &d| {
            d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
        })
    };
    let at = |i: usize, allowed: &[u8]| b.get(i).is_some_and(|c| allowed.contains(c));
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    ) else {
        return None;
    };
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt") && at(13, b":") && at(16, b":")) {
        return None;
    }
    let mut i = 19;
    let (mut fraction, mut digits) = (0i64, 0u32);
    if at(i, b".") {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 6 {
                fraction = fraction * 10 + i64::from(b[i] - b'0');
                digits += 1;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let offset_minutes = if at(i, b"Zz") && b.len() == i + 1 {
        0
    } else if at(i, b"+-") && at(i + 3, b":") && b.len() == i + 6 {
        let (Some(oh), Some(om)) = (num(i + 1..i + 3), num(i + 4..i + 6)) else {
            return None;
        };
        if oh > 23 || om > 59 {
            return None;
        }
        let sign = if at(i, b"-") { -1 } else { 1 };
        sign * (oh * 60 + om)
    } else {
        return None;
    };
    if !(1..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    // the UTC instant, to the minute (a leap second stays within its minute): an offset
    // under a day cannot move the years 0002-9998 out of 0001-9999
    let in_range = (2..=9998).contains(&year);
    if in_range && !instant {
        return Some(0);
    }
    let utc = days_from_civil(year, month, day) * 1440 + hour * 60 + minute - offset_minutes;
    if !in_range {
        let first = days_from_civil(1, 1, 1) * 1440;
        let last = days_from_civil(9999, 12, 31) * 1440 + 1439;
        if !(first..=last).contains(&utc) {
            return None;
        }
    }
    let micros = fraction * 10i64.pow(6 - digits);
    Some((utc * 60 + second) * 1_000_000 + micros)
}

// ------------------------------------------------------------------ decoding

/// The line cannot be replayed (a required field missing or unreadable).
struct SetAside;

type Step<T> = Result<T, SetAside>;

/// Where a card sits, for messages (`card`, `cards[0]`, `hands['ali'][2]`).
enum At<'s> {
    Field(&'s str),
    Item(&'s str, usize),
    Hand(&'s str, usize),
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Field(name) => f.write_str(name),
            At::Item(name, i) => write!(f, "{name}[{i}]"),
            At::Hand(player, i) => {
                let mut shown = String::new();
                py_repr_str(&mut shown, player);
                write!(f, "hands[{shown}][{i}]")
            }
        }
    }
}

/// What the fields of one line decoded to, before it becomes an event.
#[derive(Default)]
struct Slots {
    hand: Option<u64>,
    player: Option<Text>,
    dealer: Option<Text>,
    hands: Option<Vec<(Text, Vec<Card>)>>,
    starter: Option<Card>,
    starter_unreadable: bool,
    stock: Option<Vec<Card>>,
    card: Option<Card>,
    suit: Option<Suit>,
    suit_unreadable: bool,
    target: Option<Text>,
    target_given: bool,
    cards: Option<Vec<Card>>,
    call: Option<String>,
    reason: Option<PenaltyReason>,
    winners: Option<Vec<String>>,
    order: Option<Vec<String>>,
    points: Option<Vec<(String, Points)>>,
    text: Option<String>,
}

/// Reads the fields of one line, collecting `schema` issues as it goes (`_Reader`).
struct Reader {
    type_name: &'static str,
    issues: Vec<String>,
}

impl Reader {
    fn issue(&mut self, message: fmt::Arguments<'_>) {
        self.issues.push(format!("{}: {}", self.type_name, message));
    }

    fn required<'v>(&mut self, name: &str, raw: Option<&'v Value>) -> Step<&'v Value> {
        match raw {
            Some(value) => Ok(value),
            None => {
                self.issue(format_args!("the required field '{name}' is missing"));
                Err(SetAside)
            }
        }
    }

    /// The field, or None when it may be absent; a missing required one sets the line aside.
    fn field<'v>(&mut self, field: &Field, raw: Option<&'v Value>) -> Step<Option<&'v Value>> {
        if field.required {
            self.required(field.name, raw).map(Some)
        } else {
            Ok(raw)
        }
    }

    fn player(&mut self, name: &str, value: &Value) -> Step<Text> {
        match value {
            Value::Str(s) if valid_player_id(s) => Ok(s.clone()),
            _ => {
                self.issue(format_args!(
                    "'{name}' must be a player id (1-64 characters), got {}",
                    value.repr()
                ));
                Err(SetAside)
            }
        }
    }

    /// "A card (surrounding spaces ignored): a rank `10` (or `1`, `11`, `12`, `13` for A,
    /// J, Q, K), lower case, or a suit symbol … `10H`→`TH`, `7c`→`7C`, `7♣`→`7C`.
    /// Anything else (`XX`, a number, `♥J`) is unreadable" (and sets the line aside).
    fn card(&mut self, value: &Value, at: At<'_>) -> Step<Card> {
        let Value::Str(text) = value else {
            self.issue(format_args!(
                "{at}: {} is not a card (expected a string like '7C')",
                value.repr()
            ));
            return Err(SetAside);
        };
        if let Some(card) = Card::parse(text) {
            return Ok(card);
        }
        let shown = value.repr();
        match repair_card(text, &shown) {
            Ok(card) => {
                self.issue(format_args!(
                    "{at}: {shown} is not notation; write '{card}'"
                ));
                Ok(card)
            }
            Err(SpellingError(message)) => {
                self.issue(format_args!("{at}: {message}"));
                Err(SetAside)
            }
        }
    }

    fn cards_in(&mut self, items: &[Value], name: &str) -> Step<Vec<Card>> {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            out.push(self.card(item, At::Item(name, i))?);
        }
        Ok(out)
    }

    /// `_Reader.cards`: a list of cards, non-empty when required.
    fn card_list(&mut self, name: &str, value: &Value, required: bool) -> Step<Vec<Card>> {
        match value {
            Value::Array(items) if !(required && items.is_empty()) => self.cards_in(items, name),
            _ => {
                self.issue(format_args!(
                    "'{name}' must be a non-empty list of cards, got {}",
                    value.repr()
                ));
                Err(SetAside)
            }
        }
    }

    fn hand_number(&mut self, name: &str, value: &Value) -> Step<u64> {
        match value {
            Value::Int(n) if *n >= 1 => {
                let n = n.unsigned_abs();
                if n <= MAX_HAND {
                    return Ok(n);
                }
                self.hand_out_of_range(name, value)
            }
            Value::UInt(_) => self.hand_out_of_range(name, value),
            _ => {
                self.issue(format_args!(
                    "'{name}' must be a whole number 1 or more, got {}",
                    value.repr()
                ));
                Err(SetAside)
            }
        }
    }

    fn hand_out_of_range(&mut self, name: &str, value: &Value) -> Step<u64> {
        self.issue(format_args!(
            "'{name}' must be a whole number from 1 to {MAX_HAND}, got {}",
            value.repr()
        ));
        Err(SetAside)
    }

    fn hands(&mut self, value: &Value) -> Step<Vec<(Text, Vec<Card>)>> {
        let Some(entries) = value.dict_entries() else {
            self.issue(format_args!(
                "'hands' must map player ids to lists of cards, got {}",
                value.repr()
            ));
            return Err(SetAside);
        };
        let mut hands = Vec::with_capacity(entries.len());
        for (player, cards) in entries {
            let Value::Array(items) = cards else {
                let mut shown = String::new();
                py_repr_str(&mut shown, player);
                self.issue(format_args!(
                    "hands[{shown}] must be a list of cards, got {}",
                    cards.repr()
                ));
                return Err(SetAside);
            };
            let mut held = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                held.push(self.card(item, At::Hand(player, i))?);
            }
            hands.push((Text::from(player), held));
        }
        Ok(hands)
    }

    /// A claim (`winners`, `order`): "a malformed claim (then ignored)".
    fn player_list(&mut self, name: &str, value: Option<&Value>) -> Option<Vec<String>> {
        let value = value?;
        if let Value::Array(items) = value {
            let names: Option<Vec<String>> = items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect();
            if names.is_some() {
                return names;
            }
        }
        self.issue(format_args!(
            "claim '{name}' must be a list of player ids; ignored"
        ));
        None
    }

    /// A claim (`scores`, `totals`): JSON integers and fractions, not `true`/`false`.
    fn points_map(&mut self, name: &str, value: Option<&Value>) -> Option<Vec<(String, Points)>> {
        let value = value?;
        if let Some(entries) = value.dict_entries() {
            let points: Option<Vec<(String, Points)>> = entries
                .into_iter()
                .map(|(player, v)| {
                    let p = match v {
                        Value::Int(n) => Points::Int(i128::from(*n)),
                        Value::UInt(n) => Points::Int(i128::from(*n)),
                        Value::Float(x) => Points::Float(*x),
                        _ => return None,
                    };
                    Some((player.to_owned(), p))
                })
                .collect();
            if points.is_some() {
                return points;
            }
        }
        self.issue(format_args!(
            "claim '{name}' must map player ids to points; ignored"
        ));
        None
    }

    /// Read one field of the table into its slot (`raw`: its last value, None when absent
    /// or `null`).
    fn read(&mut self, field: &Field, raw: Option<&Value>, s: &mut Slots) -> Step<()> {
        let name = field.name;
        match field.kind {
            // the router has checked these; decode takes them as given
            FieldKind::GameId | FieldKind::Seq | FieldKind::EventType | FieldKind::Timestamp => {}
            // the header's settings are kept as written (`assemble` takes them) and judged
            // by `machine::read_header`
            FieldKind::Format
            | FieldKind::Ruleset
            | FieldKind::Players
            | FieldKind::Options
            | FieldKind::Mode
            | FieldKind::Decks
            | FieldKind::Match
            | FieldKind::Meta => {}
            FieldKind::HandNumber => {
                if let Some(value) = self.field(field, raw)? {
                    s.hand = Some(self.hand_number(name, value)?);
                }
            }
            FieldKind::PlayerId => {
                if let Some(value) = self.field(field, raw)? {
                    let player = self.player(name, value)?;
                    if same(name, "dealer") {
                        s.dealer = Some(player);
                    } else {
                        s.player = Some(player);
                    }
                }
            }
            FieldKind::Hands => {
                if let Some(value) = self.field(field, raw)? {
                    s.hands = Some(self.hands(value)?);
                }
            }
            // "`suit`, `target` and `starter` are judged by the rules instead (`bad_suit`,
            // `bad_target`, `bad_deal`) and the line is applied"
            FieldKind::Starter => {
                if let Some(raw) = raw {
                    match raw {
                        Value::Str(text) => match Card::parse(text) {
                            Some(card) => s.starter = Some(card),
                            None => match repair_card(text, "") {
                                Ok(card) => {
                                    self.issue(format_args!(
                                        "starter {} is not notation; write '{card}'",
                                        raw.repr()
                                    ));
                                    s.starter = Some(card);
                                }
                                Err(_) => s.starter_unreadable = true,
                            },
                        },
                        _ => s.starter_unreadable = true,
                    }
                }
            }
            FieldKind::Stock => {
                if let Some(value) = self.field(field, raw)? {
                    // events.py reads a deal's stock with its generic list reader (whose
                    // message says "non-empty" though an empty optional list passes) and a
                    // reshuffle's by hand: both messages are kept as Python writes them
                    if same(self.type_name, "deal") {
                        s.stock = Some(self.card_list(name, value, field.required)?);
                    } else if let Value::Array(items) = value {
                        s.stock = Some(self.cards_in(items, name)?);
                    } else {
                        self.issue(format_args!(
                            "'{name}' must be a list of cards, got {}",
                            value.repr()
                        ));
                        return Err(SetAside);
                    }
                }
            }
            FieldKind::Card => {
                if let Some(value) = self.field(field, raw)? {
                    s.card = Some(self.card(value, At::Field(name))?);
                }
            }
            FieldKind::Suit => {
                if let Some(raw) = raw {
                    let exact = match raw {
                        Value::Str(text) if text.len() == 1 => {
                            Suit::from_letter(text.as_bytes()[0])
                        }
                        _ => None,
                    };
                    if exact.is_some() {
                        s.suit = exact;
                    } else {
                        match raw.as_str().map(|text| repair_suit(text, "")) {
                            Some(Ok(suit)) => {
                                self.issue(format_args!(
                                    "suit {} is not notation; write '{}'",
                                    raw.repr(),
                                    suit.letter()
                                ));
                                s.suit = Some(suit);
                            }
                            _ => s.suit_unreadable = true,
                        }
                    }
                }
            }
            FieldKind::Target => {
                s.target_given = raw.is_some();
                s.target = match raw {
                    Some(Value::Str(text)) => Some(text.clone()),
                    _ => None,
                };
            }
            FieldKind::Cards => {
                if let Some(value) = self.field(field, raw)? {
                    s.cards = Some(self.card_list(name, value, true)?);
                }
            }
            FieldKind::Call => {
                if let Some(value) = self.field(field, raw)? {
                    match value {
                        Value::Str(text) if CALLS.contains(&text.as_str()) => {
                            s.call = Some(text.to_string());
                        }
                        _ => {
                            self.issue(format_args!(
                                "'{name}' must be \"last_card\", got {}",
                                value.repr()
                            ));
                            s.call = Some(value.py_str());
                        }
                    }
                }
            }
            FieldKind::PenaltyCards => {
                if let Some(value) = self.field(field, raw)? {
                    let Value::Array(items) = value else {
                        self.issue(format_args!(
                            "'{name}' must be a list of one card, got {}",
                            value.repr()
                        ));
                        return Err(SetAside);
                    };
                    let cards = self.cards_in(items, name)?;
                    if cards.len() != 1 {
                        self.issue(format_args!(
                            "'{name}' must hold exactly one card, got {}",
                            cards.len()
                        ));
                    }
                    s.cards = Some(cards);
                }
            }
            FieldKind::PenaltyReason => {
                if let Some(value) = self.field(field, raw)? {
                    match value.as_str().and_then(PenaltyReason::parse) {
                        Some(reason) => s.reason = Some(reason),
                        None => {
                            let mut names = PenaltyReason::ALL.map(PenaltyReason::name);
                            names.sort_unstable();
                            self.issue(format_args!(
                                "unknown reason {} (expected one of {})",
                                value.repr(),
                                names.join(", ")
                            ));
                            return Err(SetAside);
                        }
                    }
                }
            }
            FieldKind::PlayerList => {
                let names = self.player_list(name, raw);
                if same(name, "order") {
                    s.order = names;
                } else {
                    s.winners = names;
                }
            }
            FieldKind::PointsMap => {
                s.points = self.points_map(name, raw);
            }
            FieldKind::Text => {
                if let Some(value) = raw {
                    if let Value::Str(text) = value {
                        s.text = Some(text.to_string());
                    } else {
                        self.issue(format_args!("'{name}' must be text, got {}", value.repr()));
                        s.text = Some(value.py_str());
                    }
                }
            }
        }
        Ok(())
    }
}

/// The event of type `spec` from its decoded fields and (for a header) the values as
/// written; None only if the table lacks a field the event needs, which the tests rule out.
fn assemble(spec: &EventSpec, s: Slots, values: &[Option<&Value>]) -> Option<Kind> {
    let raw = |kind: FieldKind| {
        spec.fields
            .iter()
            .zip(values)
            .find(|(f, _)| f.kind == kind)
            .and_then(|(_, v)| v.cloned())
    };
    // the arms compare words, not strings (`match` on text calls memcmp per arm)
    let t = spec.type_name;
    Some(match t {
        _ if same(t, "game") => Kind::Header(Box::new(Header {
            format: raw(FieldKind::Format),
            ruleset: raw(FieldKind::Ruleset),
            players: raw(FieldKind::Players),
            options: raw(FieldKind::Options),
            mode: raw(FieldKind::Mode),
            decks: raw(FieldKind::Decks),
            r#match: raw(FieldKind::Match),
            meta: raw(FieldKind::Meta),
        })),
        _ if same(t, "deal") => Kind::Deal(Deal {
            hand: s.hand?,
            dealer: s.dealer?,
            hands: s.hands?,
            starter: s.starter,
            starter_unreadable: s.starter_unreadable,
            stock: s.stock,
        }),
        _ if same(t, "play") => Kind::Play(Play {
            player: s.player?,
            card: s.card?,
            suit: s.suit,
            suit_unreadable: s.suit_unreadable,
            target: s.target,
            target_given: s.target_given,
        }),
        _ if same(t, "draw") => Kind::Draw(Draw {
            player: s.player?,
            cards: s.cards?,
        }),
        _ if same(t, "pass") => Kind::Pass { player: s.player? },
        _ if same(t, "announce") => Kind::Announce {
            player: s.player?,
            call: s.call?,
        },
        _ if same(t, "penalty") => Kind::Penalty(Penalty {
            player: s.player?,
            cards: s.cards?,
            reason: s.reason?,
        }),
        _ if same(t, "reshuffle") => Kind::Reshuffle { stock: s.stock },
        _ if same(t, "end") => Kind::End(End {
            hand: s.hand?,
            winners: s.winners,
            scores: s.points,
            order: s.order,
        }),
        _ if same(t, "result") => Kind::Result(GameResult {
            totals: s.points,
            winners: s.winners,
        }),
        _ if same(t, "abort") => Kind::Abort { reason: s.text },
        _ => return None,
    })
}

/// The most fields an event type has (the header's 8).
const MAX_FIELDS: usize = 8;

/// Where a line's key belongs in its type's table.
enum Slot {
    /// `game`, `seq`, `type`, `ts` (at this position of [`COMMON_FIELDS`])
    Common(usize),
    /// the type's own field at this position
    Own(usize),
}

/// Whether two names are equal (cheaply: field names are short).
#[inline]
fn same(a: &str, b: &str) -> bool {
    same_text(a, b)
}

fn value_slot(spec: &EventSpec, key: &str) -> Option<Slot> {
    if let Some(i) = COMMON_FIELDS.iter().position(|f| same(f.name, key)) {
        return Some(Slot::Common(i));
    }
    spec.fields
        .iter()
        .position(|f| same(f.name, key))
        .map(Slot::Own)
}

/// Decode a JSON object whose `game` and `seq` are already known to be usable
/// (`events.decode_line`). Issues come in this order: duplicate keys, then unknown
/// fields (each once, in written order), the `ts`, then each field in table order up to
/// the first that sets the line aside.
pub fn decode(obj: &Value, game: &str, seq: u64) -> Decoded {
    let type_value = obj.get("type");
    let Some(spec) = type_value.and_then(Value::as_str).and_then(event_spec) else {
        let mut issues = duplicate_key_issues(obj);
        let shown = type_value.map_or_else(|| "None".to_owned(), Value::repr);
        issues.push(format!(
            "unknown event type {shown} (expected one of {})",
            EVENT_TYPES.join(", ")
        ));
        return Decoded {
            event: None,
            issues,
        };
    };
    let mut reader = Reader {
        type_name: spec.type_name,
        issues: Vec::new(),
    };
    // one pass over the entries: each known field's last value ("`null` in an optional
    // field means the field is absent; in a required field, missing"), every unknown
    // field reported once, in written order, and whether any key is written twice (the
    // paths are only worked out when one is)
    let mut ts_value: Option<&Value> = None;
    let mut values: [Option<&Value>; MAX_FIELDS] = [None; MAX_FIELDS];
    let mut reported: Option<HashSet<&str>> = None;
    let mut seen = [false; COMMON_FIELDS.len() + MAX_FIELDS];
    let mut extensions: [&str; 8] = [""; 8];
    let mut extension_count = 0;
    let mut twice = false;
    let mut searched = false;
    for (key, value) in obj.as_object().unwrap_or(&[]) {
        let present = (!value.is_null()).then_some(value);
        match value_slot(spec, key) {
            Some(Slot::Common(i)) => {
                twice |= std::mem::replace(&mut seen[i], true);
                if COMMON_FIELDS[i].kind == FieldKind::Timestamp {
                    ts_value = present;
                }
            }
            Some(Slot::Own(i)) => {
                if let (Some(slot), Some(met)) =
                    (values.get_mut(i), seen.get_mut(COMMON_FIELDS.len() + i))
                {
                    *slot = present;
                    twice |= std::mem::replace(met, true);
                }
            }
            None if key.starts_with(EXTENSION_PREFIX) => {
                if extension_count < extensions.len() {
                    twice |= extensions[..extension_count].contains(&key.as_str());
                    extensions[extension_count] = key;
                    extension_count += 1;
                } else if !searched {
                    // many extensions: one search of the whole line instead
                    searched = true;
                    twice |= obj.has_duplicate_keys();
                }
            }
            None => {
                if reported
                    .get_or_insert_with(HashSet::new)
                    .insert(key.as_str())
                {
                    reader.issue(format_args!(
                        "unknown field '{key}' (producer extensions start with '{EXTENSION_PREFIX}')"
                    ));
                } else {
                    twice = true;
                }
            }
        }
        if !twice && matches!(value, Value::Object(_) | Value::Array(_)) {
            twice = value.has_duplicate_keys();
        }
    }
    if twice {
        // the duplicate-key issues come first
        let mut issues = duplicate_key_issues(obj);
        issues.append(&mut reader.issues);
        reader.issues = issues;
    }
    let ts = match ts_value {
        None => None,
        Some(Value::Str(text)) if valid_ts(text) => Some(text.clone()),
        Some(other) => {
            reader.issue(format_args!(
                "'ts' must be an RFC 3339 timestamp with offset, got {}",
                other.repr()
            ));
            None
        }
    };
    let mut slots = Slots::default();
    for (field, raw) in spec.fields.iter().zip(values) {
        if reader.read(field, raw, &mut slots).is_err() {
            return Decoded {
                event: None,
                issues: reader.issues,
            };
        }
    }
    let Some(kind) = assemble(spec, slots, &values) else {
        reader.issue(format_args!(
            "internal error: the field table lacks a field this event needs; set aside"
        ));
        return Decoded {
            event: None,
            issues: reader.issues,
        };
    };
    Decoded {
        event: Some(Event {
            common: Common {
                game: Text::new(game),
                seq,
                ts,
            },
            kind,
        }),
        issues: reader.issues,
    }
}

// ------------------------------------------------------------------ encoding

fn cards_value(cards: &[Card]) -> Value {
    Value::Array(cards.iter().map(|c| Value::from(c.code())).collect())
}

fn names_value(names: &[String]) -> Value {
    Value::Array(names.iter().map(|n| Value::from(n.as_str())).collect())
}

fn points_value(points: &[(String, Points)]) -> Value {
    Value::Object(
        points
            .iter()
            .map(|(player, p)| {
                let v = match *p {
                    Points::Int(n) => match (i64::try_from(n), u64::try_from(n)) {
                        (Ok(i), _) => Value::Int(i),
                        (_, Ok(u)) => Value::UInt(u),
                        _ => Value::Float(n as f64),
                    },
                    Points::Float(x) => Value::Float(x),
                };
                (Text::new(player), v)
            })
            .collect(),
    )
}

/// The JSON object for `event`, as a producer writes it (`events.encode`): `game`,
/// `seq`, `type`, `ts` when known, then the event's fields in table order, absent
/// optionals omitted. A header always writes `format`, `ruleset` and `players` (`null`
/// when the event has none, as Python writes `None`).
pub fn encode(event: &Event) -> Value {
    let mut out: Vec<(Text, Value)> = Vec::with_capacity(8);
    let mut put = |key: &str, value: Value| out.push((Text::new(key), value));
    put("game", Value::from(event.common.game.as_str()));
    put("seq", Value::from(event.common.seq));
    put("type", Value::from(event.kind.type_name()));
    if let Some(ts) = &event.common.ts {
        put("ts", Value::from(ts.as_str()));
    }
    match &event.kind {
        Kind::Header(h) => {
            put("format", h.format.clone().unwrap_or(Value::Null));
            put("ruleset", h.ruleset.clone().unwrap_or(Value::Null));
            put("players", h.players.clone().unwrap_or(Value::Null));
            let optional = [
                ("options", &h.options),
                ("mode", &h.mode),
                ("decks", &h.decks),
                ("match", &h.r#match),
                ("meta", &h.meta),
            ];
            for (name, value) in optional {
                if let Some(value) = value {
                    put(name, value.clone());
                }
            }
        }
        Kind::Deal(d) => {
            put("hand", Value::from(d.hand));
            put("dealer", Value::from(d.dealer.as_str()));
            put(
                "hands",
                Value::Object(
                    d.hands
                        .iter()
                        .map(|(p, cards)| (Text::new(p), cards_value(cards)))
                        .collect(),
                ),
            );
            if let Some(starter) = d.starter {
                put("starter", Value::from(starter.code()));
            }
            if let Some(stock) = &d.stock {
                put("stock", cards_value(stock));
            }
        }
        Kind::Play(p) => {
            put("player", Value::from(p.player.as_str()));
            put("card", Value::from(p.card.code()));
            if let Some(suit) = p.suit {
                put("suit", Value::from(suit.letter().to_string()));
            }
            if let Some(target) = &p.target {
                put("target", Value::from(target.as_str()));
            }
        }
        Kind::Draw(d) => {
            put("player", Value::from(d.player.as_str()));
            put("cards", cards_value(&d.cards));
        }
        Kind::Pass { player } => put("player", Value::from(player.as_str())),
        Kind::Announce { player, call } => {
            put("player", Value::from(player.as_str()));
            put("call", Value::from(call.as_str()));
        }
        Kind::Penalty(p) => {
            put("player", Value::from(p.player.as_str()));
            put("cards", cards_value(&p.cards));
            put("reason", Value::from(p.reason.name()));
        }
        Kind::Reshuffle { stock } => {
            if let Some(stock) = stock {
                put("stock", cards_value(stock));
            }
        }
        Kind::End(e) => {
            put("hand", Value::from(e.hand));
            if let Some(winners) = &e.winners {
                put("winners", names_value(winners));
            }
            if let Some(scores) = &e.scores {
                put("scores", points_value(scores));
            }
            if let Some(order) = &e.order {
                put("order", names_value(order));
            }
        }
        Kind::Result(r) => {
            if let Some(totals) = &r.totals {
                put("totals", points_value(totals));
            }
            if let Some(winners) = &r.winners {
                put("winners", names_value(winners));
            }
        }
        Kind::Abort { reason } => {
            if let Some(reason) = reason {
                put("reason", Value::from(reason.as_str()));
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::{Rank, Suit};
    use crate::json::parse_line;

    #[test]
    fn a_headers_fields_are_the_field_tables() {
        let table: Vec<&str> = EVENT_FIELDS
            .iter()
            .find(|spec| spec.type_name == "game")
            .map(|spec| spec.fields.iter().map(|f| f.name).collect())
            .unwrap_or_default();
        let header = Header {
            format: None,
            ruleset: None,
            players: None,
            options: None,
            mode: None,
            decks: None,
            r#match: None,
            meta: None,
        };
        let names: Vec<&str> = header.fields().iter().map(|(name, _)| *name).collect();
        assert_eq!(names, table);
    }

    fn obj(text: &str) -> Value {
        match parse_line(text.as_bytes()) {
            Ok(v) => v,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn line(body: &str) -> Value {
        obj(&format!(r#"{{"game":"g1","seq":3,{body}}}"#))
    }

    fn dec(body: &str) -> Decoded {
        decode(&line(body), "g1", 3)
    }

    fn card(text: &str) -> Card {
        Card::parse(text).unwrap_or(Card::new(Rank::Ace, Suit::Clubs))
    }

    fn kind(d: &Decoded) -> &Kind {
        match &d.event {
            Some(e) => &e.kind,
            None => panic!("set aside: {:?}", d.issues),
        }
    }

    #[test]
    fn the_table_matches_the_event_types() {
        let names: Vec<&str> = EVENT_FIELDS.iter().map(|s| s.type_name).collect();
        assert_eq!(names, EVENT_TYPES);
        for spec in EVENT_FIELDS {
            for f in spec.fields {
                assert!(spec.allows(f.name));
                assert!(!COMMON_FIELDS.iter().any(|c| c.name == f.name));
            }
            assert_eq!(spec.field("seq").map(|f| f.kind), Some(FieldKind::Seq));
            assert!(spec.allows("x_anything") && !spec.allows("xy"));
        }
        assert_eq!(
            event_spec("penalty")
                .and_then(|s| s.field("reason"))
                .map(|f| f.kind),
            Some(FieldKind::PenaltyReason)
        );
    }

    #[test]
    fn every_type_fits_the_decoder() {
        for spec in EVENT_FIELDS {
            assert!(spec.fields.len() <= MAX_FIELDS, "{}", spec.type_name);
        }
        assert_eq!(COMMON_FIELDS.iter().filter(|f| f.name == "ts").count(), 1);
    }

    #[test]
    fn routing_fields() {
        assert_eq!(
            game_id(&obj(r#"{"game":"t41-0007.a_b:c"}"#)),
            Some("t41-0007.a_b:c")
        );
        assert_eq!(game_id(&obj(r#"{"game":"a","game":"b"}"#)), Some("b"));
        for bad in [r#""""#, r#""a b""#, r#""é""#, "1", "null", r#"["a"]"#] {
            assert_eq!(
                game_id(&obj(&format!(r#"{{"game":{bad}}}"#))),
                None,
                "{bad}"
            );
        }
        let long = "a".repeat(129);
        assert_eq!(game_id(&obj(&format!(r#"{{"game":"{long}"}}"#))), None);
        assert!(valid_game_id(&long[..128]));
        assert_eq!(seq(&obj(r#"{"seq":0}"#)), Some(0));
        assert_eq!(seq(&obj(r#"{"seq":9223372036854775807}"#)), Some(MAX_SEQ));
        for bad in [
            "9223372036854775808",
            "-1",
            "1.0",
            "true",
            r#""1""#,
            "null",
            "1e2",
        ] {
            assert_eq!(seq(&obj(&format!(r#"{{"seq":{bad}}}"#))), None, "{bad}");
        }
        assert_eq!(seq(&obj("{}")), None);
        assert_eq!(
            player_of(&line(r#""type":"pass","player":"ali""#)),
            Some("ali")
        );
        assert_eq!(player_of(&line(r#""type":"pass","player":5"#)), None);
    }

    #[test]
    fn timestamps() {
        for good in [
            "2026-11-29T18:04:11.250Z",
            "2026-11-29t18:04:11z",
            "2026-11-29T18:04:11+03:30",
            "2024-02-29T23:59:60-00:00",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "9999-12-31T23:59:59+23:59",
            "2026-01-01T00:00:00.123456789-12:00",
        ] {
            assert!(valid_ts(good), "{good}");
        }
        for bad in [
            "2026-11-29T18:04:11",
            "2026-11-29 18:04:11Z",
            "2026-11-29T18:04:11.Z",
            "2026-11-29T18:04:11+0330",
            "2026-11-29T18:04:11Z ",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:61Z",
            "2026-01-01T00:00:00+24:00",
            "2026-01-01T00:00:00+00:60",
            "9999-12-31T23:59:59-23:59",
            "0001-01-01T00:00:00+00:01",
            "0000-06-01T00:00:00Z",
            "٢٠٢٦-11-29T18:04:11Z",
            "",
        ] {
            assert!(!valid_ts(bad), "{bad}");
            assert_eq!(ts_micros(bad), None, "{bad}");
        }
        // the instant: UTC, microseconds, digits beyond the sixth dropped, a leap second
        // the next minute's first instant
        assert_eq!(ts_micros("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(ts_micros("1970-01-01t01:00:00.5+01:00"), Some(500_000));
        assert_eq!(ts_micros("1970-01-01T00:00:00.1234569Z"), Some(123_456));
        assert_eq!(ts_micros("1969-12-31T23:59:60Z"), Some(0));
        assert_eq!(
            ts_micros("2026-11-29T18:04:11-03:30"),
            Some(1_795_988_051_000_000)
        );
        assert_eq!(
            ts_micros("0001-01-01T00:00:00Z"),
            Some(-62_135_596_800_000_000)
        );
        let d = dec(r#""type":"pass","player":"ali","ts":"9999-12-31T23:59:59-23:59""#);
        assert_eq!(
            d.issues,
            ["pass: 'ts' must be an RFC 3339 timestamp with offset, got '9999-12-31T23:59:59-23:59'"]
        );
        assert_eq!(
            d.event.map(|e| e.common.ts),
            Some(None),
            "ts dropped, line applied"
        );
        let d = dec(r#""type":"pass","player":"ali","ts":5"#);
        assert_eq!(
            d.issues,
            ["pass: 'ts' must be an RFC 3339 timestamp with offset, got 5"]
        );
        let d = dec(r#""type":"pass","player":"ali","ts":null"#);
        assert!(d.issues.is_empty());
    }

    #[test]
    fn card_repairs() {
        let d = dec(r#""type":"play","player":"ali","card":"10H""#);
        assert_eq!(d.issues, ["play: card: '10H' is not notation; write 'TH'"]);
        assert!(matches!(kind(&d), Kind::Play(p) if p.card == card("TH")));
        let d = dec(r#""type":"draw","player":"ali","cards":["7c","7♣"," 12♡ "]"#);
        assert_eq!(
            d.issues,
            [
                "draw: cards[0]: '7c' is not notation; write '7C'",
                "draw: cards[1]: '7♣' is not notation; write '7C'",
                "draw: cards[2]: ' 12♡ ' is not notation; write 'QH'",
            ]
        );
        assert!(
            matches!(kind(&d), Kind::Draw(x) if x.cards == [card("7C"), card("7C"), card("QH")])
        );
        for (raw, suit) in [
            ("h", Suit::Hearts),
            ("♥", Suit::Hearts),
            ("hearts", Suit::Hearts),
            ("Club", Suit::Clubs),
        ] {
            let d = dec(&format!(
                r#""type":"play","player":"ali","card":"JS","suit":"{raw}""#
            ));
            assert_eq!(
                d.issues,
                [format!(
                    "play: suit '{raw}' is not notation; write '{}'",
                    suit.letter()
                )]
            );
            assert!(
                matches!(kind(&d), Kind::Play(p) if p.suit == Some(suit) && !p.suit_unreadable)
            );
        }
        let d = dec(r#""type":"play","player":"ali","card":"JS","suit":"X""#);
        assert!(d.issues.is_empty());
        assert!(matches!(kind(&d), Kind::Play(p) if p.suit.is_none() && p.suit_unreadable));
        let d = dec(r#""type":"play","player":"ali","card":"JS","suit":3"#);
        assert!(matches!(kind(&d), Kind::Play(p) if p.suit_unreadable));
    }

    #[test]
    fn set_aside_cases() {
        let cases = [
            (r#""type":"play","card":"7C""#, "play: the required field 'player' is missing"),
            (r#""type":"play","player":null,"card":"7C""#, "play: the required field 'player' is missing"),
            (r#""type":"play","player":"","card":"7C""#, "play: 'player' must be a player id (1-64 characters), got ''"),
            (r#""type":"play","player":7,"card":"7C""#, "play: 'player' must be a player id (1-64 characters), got 7"),
            (r#""type":"play","player":"ali","card":"XX""#, "play: card: 'XX' is not a card (expected rank A 2 3 4 5 6 7 8 9 T J Q K then suit C D H S, like '7C')"),
            (r#""type":"play","player":"ali","card":"♥J""#, "play: card: '♥J' is not a card (expected rank A 2 3 4 5 6 7 8 9 T J Q K then suit C D H S, like '7C')"),
            (r#""type":"play","player":"ali","card":"7""#, "play: card: '7' is not a card (expected rank then suit, like '7C')"),
            (r#""type":"play","player":"ali","card":17"#, "play: card: 17 is not a card (expected a string like '7C')"),
            (r#""type":"draw","player":"ali","cards":[]"#, "draw: 'cards' must be a non-empty list of cards, got []"),
            (r#""type":"draw","player":"ali","cards":"7C""#, "draw: 'cards' must be a non-empty list of cards, got '7C'"),
            (r#""type":"draw","player":"ali""#, "draw: the required field 'cards' is missing"),
            (r#""type":"deal","hand":0,"dealer":"a","hands":{}"#, "deal: 'hand' must be a whole number 1 or more, got 0"),
            (r#""type":"deal","hand":1.0,"dealer":"a","hands":{}"#, "deal: 'hand' must be a whole number 1 or more, got 1.0"),
            (r#""type":"deal","hand":true,"dealer":"a","hands":{}"#, "deal: 'hand' must be a whole number 1 or more, got True"),
            (r#""type":"deal","hand":2147483648,"dealer":"a","hands":{}"#, "deal: 'hand' must be a whole number from 1 to 2147483647, got 2147483648"),
            (r#""type":"end","hand":18446744073709551615"#, "end: 'hand' must be a whole number from 1 to 2147483647, got 18446744073709551615"),
            (r#""type":"deal","hand":1,"dealer":"a","hands":[]"#, "deal: 'hands' must map player ids to lists of cards, got []"),
            (r#""type":"deal","hand":1,"dealer":"a","hands":{"a":"7C"}"#, "deal: hands['a'] must be a list of cards, got '7C'"),
            (r#""type":"deal","hand":1,"dealer":"a","hands":{"a":["7C","1X"]}"#, "deal: hands['a'][1]: '1X' is not a card (expected rank A 2 3 4 5 6 7 8 9 T J Q K then suit C D H S, like '7C')"),
            (r#""type":"deal","hand":1,"dealer":"a","hands":{},"stock":"x""#, "deal: 'stock' must be a non-empty list of cards, got 'x'"),
            (r#""type":"reshuffle","stock":{}"#, "reshuffle: 'stock' must be a list of cards, got {}"),
            (r#""type":"reshuffle","stock":["7C",null]"#, "reshuffle: stock[1]: None is not a card (expected a string like '7C')"),
            (r#""type":"penalty","player":"a","cards":"7C","reason":"delay""#, "penalty: 'cards' must be a list of one card, got '7C'"),
            (r#""type":"penalty","player":"a","cards":["7C"],"reason":"rude""#, "penalty: unknown reason 'rude' (expected one of delay, misplay, missed_call, other, out_of_turn)"),
            (r#""type":"penalty","player":"a","cards":["7C"]"#, "penalty: the required field 'reason' is missing"),
            (r#""type":"announce","player":"a""#, "announce: the required field 'call' is missing"),
        ];
        for (body, message) in cases {
            let d = dec(body);
            assert!(d.event.is_none(), "{body} applied");
            assert_eq!(d.issues, [message], "{body}");
        }
        // the first problem in table order is the one reported
        let d = dec(r#""type":"deal","hand":0,"hands":5"#);
        assert_eq!(
            d.issues,
            ["deal: 'hand' must be a whole number 1 or more, got 0"]
        );
        let long = "é".repeat(64);
        let d = dec(&format!(r#""type":"pass","player":"{long}""#));
        assert!(
            d.issues.is_empty(),
            "64 characters are a player id, whatever their bytes"
        );
        let d = dec(&format!(r#""type":"pass","player":"{long}x""#));
        assert!(d.event.is_none());
    }

    #[test]
    fn type_and_unknown_fields() {
        let d = dec(r#""type":"shuffle""#);
        assert_eq!(
            d.issues,
            ["unknown event type 'shuffle' (expected one of game, deal, play, draw, pass, announce, penalty, reshuffle, end, result, abort)"]
        );
        assert!(d.event.is_none());
        let d = decode(&obj(r#"{"game":"g1","seq":3}"#), "g1", 3);
        assert!(d.issues[0].starts_with("unknown event type None (expected"));
        let d = dec(r#""type":5"#);
        assert!(d.issues[0].starts_with("unknown event type 5 ("));
        let d = dec(r#""type":"pass","player":"a","colour":1,"x_ms":5,"colour":2,"card":"7C""#);
        assert_eq!(
            d.issues,
            [
                "duplicate key 'colour' (the last value counts)",
                "pass: unknown field 'colour' (producer extensions start with 'x_')",
                "pass: unknown field 'card' (producer extensions start with 'x_')",
            ]
        );
        assert!(
            d.event.is_some(),
            "unknown fields are reported and the line applied"
        );
    }

    #[test]
    fn duplicate_keys_use_the_last_value() {
        let v = obj(
            r#"{"game":"g0","seq":3,"type":"play","player":"ali","card":"7C","card":"8D","game":"g1"}"#,
        );
        assert_eq!(game_id(&v), Some("g1"));
        let d = decode(&v, "g1", 3);
        assert_eq!(
            d.issues,
            [
                "duplicate key 'game' (the last value counts)",
                "duplicate key 'card' (the last value counts)",
            ]
        );
        assert!(matches!(kind(&d), Kind::Play(p) if p.card == card("8D")));
        let d = dec(
            r#""type":"deal","hand":1,"dealer":"a","hands":{"a":["7C"],"b":["8C"],"a":["9C"]}"#,
        );
        assert_eq!(
            d.issues,
            ["duplicate key 'hands.a' (the last value counts)"]
        );
        let Kind::Deal(deal) = kind(&d) else {
            panic!("not a deal")
        };
        assert_eq!(
            deal.hands,
            vec![
                (Text::from("a"), vec![card("9C")]),
                (Text::from("b"), vec![card("8C")])
            ]
        );
    }

    #[test]
    fn duplicates_found_on_every_path() {
        let dup = |key: &str| format!("duplicate key '{key}' (the last value counts)");
        let d = dec(r#""type":"pass","player":"a","x_a":1,"x_a":2"#);
        assert_eq!(d.issues, [dup("x_a")]);
        let d = dec(r#""type":"pass","player":"a","ts":"2026-01-01T00:00:00Z","ts":null"#);
        assert_eq!(d.issues, [dup("ts")]);
        assert_eq!(
            d.event.map(|e| e.common.ts),
            Some(None),
            "the last value counts"
        );
        let d = decode(
            &obj(r#"{"game":"g1","seq":3,"seq":4,"type":"pass","player":"a"}"#),
            "g1",
            4,
        );
        assert_eq!(d.issues, [dup("seq")]);
        let d = dec(r#""type":"pass","player":"a","zz":1,"zz":2"#);
        assert_eq!(
            d.issues,
            [
                dup("zz"),
                "pass: unknown field 'zz' (producer extensions start with 'x_')".to_string()
            ]
        );
        let d = dec(r#""type":"game","format":"haftkhabis/1","meta":{"a":{"b":1,"b":2}}"#);
        assert_eq!(d.issues, [dup("meta.a.b")]);
        let mut many: String = (0..12).map(|i| format!(r#""x_{i}":0,"#)).collect();
        many.push_str(r#""x_11":1,"type":"pass","player":"a""#);
        let d = dec(&many);
        assert_eq!(d.issues, [dup("x_11")]);
        let d = dec(r#""type":"draw","player":"a","cards":["7C"],"x_log":[{"k":1},{"k":2}]"#);
        assert!(d.issues.is_empty(), "{:?}", d.issues);
    }

    #[test]
    fn applied_with_issues() {
        let d = dec(r#""type":"penalty","player":"a","cards":["7C","8C"],"reason":"delay""#);
        assert_eq!(
            d.issues,
            ["penalty: 'cards' must hold exactly one card, got 2"]
        );
        assert!(matches!(kind(&d), Kind::Penalty(p) if p.cards.len() == 2));
        let d = dec(r#""type":"penalty","player":"a","cards":[],"reason":"other""#);
        assert_eq!(
            d.issues,
            ["penalty: 'cards' must hold exactly one card, got 0"]
        );
        let d = dec(r#""type":"announce","player":"a","call":"uno""#);
        assert_eq!(
            d.issues,
            [r#"announce: 'call' must be "last_card", got 'uno'"#]
        );
        assert!(matches!(kind(&d), Kind::Announce { call, .. } if call == "uno"));
        let d = dec(r#""type":"announce","player":"a","call":[1,"x"]"#);
        assert!(matches!(kind(&d), Kind::Announce { call, .. } if call == "[1, 'x']"));
        let d = dec(r#""type":"abort","reason":false"#);
        assert_eq!(d.issues, ["abort: 'reason' must be text, got False"]);
        assert!(matches!(kind(&d), Kind::Abort { reason } if reason.as_deref() == Some("False")));
        let d = dec(r#""type":"deal","hand":1,"dealer":"a","hands":{"a":[]},"starter":"10h""#);
        assert_eq!(
            d.issues,
            ["deal: starter '10h' is not notation; write 'TH'"]
        );
        assert!(matches!(kind(&d), Kind::Deal(x) if x.starter == Some(card("TH"))));
        let d = dec(
            r#""type":"deal","hand":1,"dealer":"a","hands":{"a":[]},"starter":"ZZ","stock":[]"#,
        );
        assert!(d.issues.is_empty());
        assert!(
            matches!(kind(&d), Kind::Deal(x) if x.starter.is_none() && x.starter_unreadable && x.stock == Some(vec![]))
        );
        let d = dec(r#""type":"play","player":"a","card":"2C","target":5"#);
        assert!(matches!(kind(&d), Kind::Play(p) if p.target.is_none() && p.target_given));
        let d = dec(r#""type":"play","player":"a","card":"2C","target":null"#);
        assert!(matches!(kind(&d), Kind::Play(p) if !p.target_given));
    }

    #[test]
    fn claims() {
        let d = dec(
            r#""type":"end","hand":1,"winners":["a"],"scores":{"a":0,"b":-5.5,"c":18446744073709551615},"order":null"#,
        );
        assert!(d.issues.is_empty(), "{:?}", d.issues);
        let Kind::End(end) = kind(&d) else {
            panic!("not an end")
        };
        assert_eq!(end.winners, Some(vec!["a".to_string()]));
        assert_eq!(
            end.scores,
            Some(vec![
                ("a".to_string(), Points::Int(0)),
                ("b".to_string(), Points::Float(-5.5)),
                ("c".to_string(), Points::Int(i128::from(u64::MAX))),
            ])
        );
        assert_eq!(end.order, None);
        let d = dec(r#""type":"end","hand":1,"winners":"a","scores":{"a":true},"order":[1]"#);
        assert_eq!(
            d.issues,
            [
                "end: claim 'winners' must be a list of player ids; ignored",
                "end: claim 'scores' must map player ids to points; ignored",
                "end: claim 'order' must be a list of player ids; ignored",
            ]
        );
        assert!(
            matches!(kind(&d), Kind::End(e) if e.winners.is_none() && e.scores.is_none() && e.order.is_none())
        );
        let d = dec(r#""type":"result","totals":[1],"winners":[]"#);
        assert_eq!(
            d.issues,
            ["result: claim 'totals' must map player ids to points; ignored"]
        );
        assert!(
            matches!(kind(&d), Kind::Result(r) if r.totals.is_none() && r.winners == Some(vec![]))
        );
    }

    #[test]
    fn header_keeps_what_was_written() {
        let d = dec(
            r#""type":"game","format":"haftkhabis/2","players":"x","mode":null,"meta":{"t":1}"#,
        );
        assert!(
            d.issues.is_empty(),
            "the header is judged by machine::read_header"
        );
        let Kind::Header(h) = kind(&d) else {
            panic!("not a header")
        };
        assert_eq!(h.format, Some(Value::from("haftkhabis/2")));
        assert_eq!(h.ruleset, None);
        assert_eq!(h.players, Some(Value::from("x")));
        assert_eq!(h.mode, None);
        assert_eq!(h.meta, Some(obj(r#"{"t":1}"#)));
    }

    fn round_trip(event: Event) {
        let text = encode(&event).to_json();
        let parsed = obj(&text);
        let (Some(game), Some(seq)) = (game_id(&parsed), seq(&parsed)) else {
            panic!("{text}: no usable game/seq")
        };
        let d = decode(&parsed, game, seq);
        assert!(d.issues.is_empty(), "{text}: {:?}", d.issues);
        assert_eq!(d.event.as_ref(), Some(&event), "{text}");
    }

    #[test]
    fn encode_round_trips_every_event_type() {
        let common = |seq: u64, ts: Option<&str>| Common {
            game: "t41-0007".into(),
            seq,
            ts: ts.map(Text::new),
        };
        let cards = |list: &[&str]| list.iter().map(|c| card(c)).collect::<Vec<Card>>();
        let kinds = vec![
            Kind::Header(Box::new(Header {
                format: Some(Value::from(FORMAT)),
                ruleset: Some(Value::from("persian")),
                players: Some(obj(r#"["sara","omid"]"#)),
                options: Some(obj(r#"{"tarkesh":false}"#)),
                mode: Some(Value::from("points")),
                decks: Some(Value::Int(2)),
                r#match: Some(obj(r#"{"hands":3}"#)),
                meta: Some(obj(r#"{"table":"t41","build":[1,2.5,null]}"#)),
            })),
            Kind::Header(Box::new(Header {
                format: Some(Value::from(FORMAT)),
                ruleset: Some(Value::from("bazito")),
                players: Some(obj(r#"["a","b"]"#)),
                options: None,
                mode: None,
                decks: None,
                r#match: None,
                meta: None,
            })),
            Kind::Deal(Deal {
                hand: 1,
                dealer: "omid".into(),
                hands: vec![
                    ("sara".into(), cards(&["7C", "TH"])),
                    ("omid".into(), cards(&["JS"])),
                ],
                starter: Some(card("5C")),
                starter_unreadable: false,
                stock: Some(cards(&["2D", "AS"])),
            }),
            Kind::Deal(Deal {
                hand: MAX_HAND,
                dealer: "omid".into(),
                hands: vec![],
                starter: None,
                starter_unreadable: false,
                stock: None,
            }),
            Kind::Play(Play {
                player: "sara".into(),
                card: card("JD"),
                suit: Some(Suit::Spades),
                suit_unreadable: false,
                target: None,
                target_given: false,
            }),
            Kind::Play(Play {
                player: "sara".into(),
                card: card("2D"),
                suit: None,
                suit_unreadable: false,
                target: Some("omid".into()),
                target_given: true,
            }),
            Kind::Draw(Draw {
                player: "omid".into(),
                cards: cards(&["KS", "4C"]),
            }),
            Kind::Pass {
                player: "omid".into(),
            },
            Kind::Announce {
                player: "sara".into(),
                call: "last_card".into(),
            },
            Kind::Penalty(Penalty {
                player: "sara".into(),
                cards: cards(&["9H"]),
                reason: PenaltyReason::MissedCall,
            }),
            Kind::Reshuffle {
                stock: Some(cards(&["3C", "QH"])),
            },
            Kind::Reshuffle { stock: None },
            Kind::End(End {
                hand: 1,
                winners: Some(vec!["sara".into()]),
                scores: Some(vec![
                    ("sara".into(), Points::Int(0)),
                    ("omid".into(), Points::Float(12.5)),
                    ("big".into(), Points::Int(i128::from(u64::MAX))),
                ]),
                order: Some(vec!["sara".into(), "omid".into()]),
            }),
            Kind::End(End {
                hand: 2,
                winners: None,
                scores: None,
                order: None,
            }),
            Kind::Result(GameResult {
                totals: Some(vec![("sara".into(), Points::Int(-3))]),
                winners: Some(vec!["sara".into()]),
            }),
            Kind::Result(GameResult {
                totals: None,
                winners: None,
            }),
            Kind::Abort {
                reason: Some("table closed".into()),
            },
            Kind::Abort { reason: None },
        ];
        let mut covered = HashSet::new();
        for (i, kind) in kinds.into_iter().enumerate() {
            covered.insert(kind.type_name());
            let ts = (i % 2 == 0).then_some("2026-11-29T18:04:11.250Z");
            round_trip(Event {
                common: common(i as u64, ts),
                kind,
            });
        }
        assert_eq!(covered.len(), EVENT_TYPES.len());
        round_trip(Event {
            common: common(MAX_SEQ, None),
            kind: Kind::Pass {
                player: "omid".into(),
            },
        });
    }

    #[test]
    fn encode_writes_python_key_order() {
        let d = dec(
            r#""type":"play","card":"2D","target":"b","player":"a","ts":"2026-01-01T00:00:00Z""#,
        );
        let Some(event) = d.event else {
            panic!("set aside")
        };
        assert_eq!(
            encode(&event).to_json(),
            r#"{"game":"g1","seq":3,"type":"play","ts":"2026-01-01T00:00:00Z","player":"a","card":"2D","target":"b"}"#
        );
    }
}
