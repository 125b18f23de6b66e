//! The usual log line read straight into its event, with no JSON value in between.
//!
//! Nearly every line a game server writes is clean: an object of the notation's fields,
//! each once, each of the right type and already in notation form. For such a line this
//! reader gives exactly what [`json::parse_line_fingerprinted`] followed by
//! [`notation::decode`] gives — the same event, the same fingerprint, and no issue — in
//! one pass over the text, without building the value tree that `decode` would read once
//! and drop. It gives up (None) on anything else, valid or not: a `null`, an unknown or a
//! producer-extension field, a key written twice, an escape in a string, a spelling to
//! repair, a value out of range, a number that is not a plain integer, and the `game`
//! and `abort` lines (a header is kept as written; an abort is rare). The caller then takes the full
//! path, so every message about a line stays the full path's.
//!
//! INTERFACE (implemented in this module):
//! - `read(bytes) -> Option<(Event, u64)>`: the event and the line's fingerprint.

use std::sync::OnceLock;

use crate::cards::{Card, Suit};
use crate::event::{
    Common, Deal, Draw, End, Event, GameResult, Kind, Penalty, PenaltyReason, Play, Points,
    EVENT_TYPES,
};
use crate::json::{self, EntryHash, FastParser, Fingerprint, Text, TAG_ARRAY, TAG_OBJECT};
use crate::notation::{self, CALLS, EVENT_FIELDS, MAX_HAND};

/// The most entries a nested object may have here (a deal of up to 16 hands).
const MOST_ENTRIES: usize = 16;

/// The most producer extensions a line may carry here.
const MOST_EXTENSIONS: usize = 4;

/// The fields this reader knows, one bit each in a line's key set.
#[derive(Clone, Copy)]
#[repr(u8)]
enum Key {
    Game,
    Seq,
    Type,
    Ts,
    Player,
    Card,
    Suit,
    Target,
    Cards,
    Hand,
    Dealer,
    Hands,
    Starter,
    Stock,
    Call,
    Reason,
    Winners,
    Scores,
    Order,
    Totals,
}

/// How many [`Key`]s there are.
const KEYS: usize = 20;

impl Key {
    const ALL: [Key; KEYS] = [
        Key::Game,
        Key::Seq,
        Key::Type,
        Key::Ts,
        Key::Player,
        Key::Card,
        Key::Suit,
        Key::Target,
        Key::Cards,
        Key::Hand,
        Key::Dealer,
        Key::Hands,
        Key::Starter,
        Key::Stock,
        Key::Call,
        Key::Reason,
        Key::Winners,
        Key::Scores,
        Key::Order,
        Key::Totals,
    ];

    fn name(self) -> &'static str {
        match self {
            Key::Game => "game",
            Key::Seq => "seq",
            Key::Type => "type",
            Key::Ts => "ts",
            Key::Player => "player",
            Key::Card => "card",
            Key::Suit => "suit",
            Key::Target => "target",
            Key::Cards => "cards",
            Key::Hand => "hand",
            Key::Dealer => "dealer",
            Key::Hands => "hands",
            Key::Starter => "starter",
            Key::Stock => "stock",
            Key::Call => "call",
            Key::Reason => "reason",
            Key::Winners => "winners",
            Key::Scores => "scores",
            Key::Order => "order",
            Key::Totals => "totals",
        }
    }

    fn of(name: &str) -> Option<Key> {
        Some(match name {
            "game" => Key::Game,
            "seq" => Key::Seq,
            "type" => Key::Type,
            "ts" => Key::Ts,
            "player" => Key::Player,
            "card" => Key::Card,
            "suit" => Key::Suit,
            "target" => Key::Target,
            "cards" => Key::Cards,
            "hand" => Key::Hand,
            "dealer" => Key::Dealer,
            "hands" => Key::Hands,
            "starter" => Key::Starter,
            "stock" => Key::Stock,
            "call" => Key::Call,
            "reason" => Key::Reason,
            "winners" => Key::Winners,
            "scores" => Key::Scores,
            "order" => Key::Order,
            "totals" => Key::Totals,
            _ => return None,
        })
    }

    #[inline]
    fn bit(self) -> u32 {
        1 << (self as u8)
    }
}

/// What the reader works out once from the notation's tables.
struct Tables {
    /// every key, in the fingerprint's canonical order, with the word its hash holds
    canonical: Vec<(Key, u64)>,
    /// per event type ([`EVENT_FIELDS`] order): the keys its lines may carry and those they
    /// must (0, 0 for a type this reader leaves to the full path)
    types: Vec<(u32, u32)>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut canonical: Vec<(Key, u64)> = Key::ALL
            .iter()
            .filter_map(|&key| Some((key, json::short_key_word(key.name())?)))
            .collect();
        canonical.sort_by(|a, b| json::canonical_cmp(a.0.name(), b.0.name()));
        let common = Key::Game.bit() | Key::Seq.bit() | Key::Type.bit() | Key::Ts.bit();
        let always = Key::Game.bit() | Key::Seq.bit() | Key::Type.bit();
        let types = EVENT_FIELDS
            .iter()
            .map(|spec| {
                let (mut allowed, mut required) = (common, always);
                for field in spec.fields {
                    let Some(key) = Key::of(field.name) else {
                        return (0, 0);
                    };
                    allowed |= key.bit();
                    if field.required {
                        required |= key.bit();
                    }
                }
                (allowed, required)
            })
            .collect();
        Tables { canonical, types }
    })
}

/// What the fields of one line hold, as read.
#[derive(Default)]
struct Fields<'t> {
    game: &'t str,
    seq: u64,
    kind: &'t str,
    ts: Option<&'t str>,
    player: &'t str,
    card: &'t str,
    suit: Option<&'t str>,
    target: Option<&'t str>,
    dealer: &'t str,
    starter: Option<&'t str>,
    call: &'t str,
    reason: &'t str,
    hand: i64,
    cards: Vec<Card>,
    stock: Option<Vec<Card>>,
    hands: Vec<(Text, Vec<Card>)>,
    winners: Option<Vec<String>>,
    scores: Option<Vec<(String, Points)>>,
    order: Option<Vec<String>>,
    totals: Option<Vec<(String, Points)>>,
}

/// The line's event and fingerprint, when the line is clean (see the module's text).
pub fn read(bytes: &[u8]) -> Option<(Event, u64)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut p = FastParser::new(text);
    p.skip_whitespace();
    let mut f = Fields::default();
    let mut seen = 0u32;
    // each key's value hash, by key: the keys are distinct and known, so the canonical
    // order the fingerprint wants is a fixed one (no sort)
    let mut hashes = [0u64; KEYS];
    // producer extensions (`x_…`, "kept and ignored"): their names and value hashes
    let mut extensions: [(&str, u64); MOST_EXTENSIONS] = [("", 0); MOST_EXTENSIONS];
    let mut extension_count = 0;
    p.byte(b'{')?;
    p.skip_whitespace();
    loop {
        if p.peek()? != b'"' {
            return None;
        }
        let name = p.string()?;
        let Some(key) = Key::of(name) else {
            let known = extensions[..extension_count]
                .iter()
                .any(|(n, _)| *n == name);
            if !name.starts_with(notation::EXTENSION_PREFIX)
                || known
                || extension_count == MOST_EXTENSIONS
            {
                return None; // unknown, written twice, or many: `decode` reports or counts
            }
            p.skip_whitespace();
            p.byte(b':')?;
            p.skip_whitespace();
            extensions[extension_count] = (name, extension(&mut p)?);
            extension_count += 1;
            if !p.next_item(b'}')? {
                break;
            }
            continue;
        };
        if seen & key.bit() != 0 {
            return None; // written twice: `decode` reports it
        }
        seen |= key.bit();
        p.skip_whitespace();
        p.byte(b':')?;
        p.skip_whitespace();
        hashes[key as usize] = field(&mut p, key, &mut f)?;
        if !p.next_item(b'}')? {
            break;
        }
    }
    p.skip_whitespace();
    if !p.at_end() {
        return None;
    }
    let tables = tables();
    let event = event(&mut f, seen, tables)?;
    if extension_count > 0 {
        // extension keys may fall anywhere in the canonical order: sort them all in
        let mut keys: [&str; KEYS + MOST_EXTENSIONS] = [""; KEYS + MOST_EXTENSIONS];
        let mut entries = [EntryHash::default(); KEYS + MOST_EXTENSIONS];
        let mut len = 0;
        let known = Key::ALL.iter().filter(|key| seen & key.bit() != 0);
        let named = known.map(|&key| (key.name(), hashes[key as usize]));
        for (name, h) in named.chain(extensions[..extension_count].iter().copied()) {
            keys[len] = name;
            entries[len] = EntryHash::new(name, h);
            len += 1;
        }
        return Some((
            event,
            json::object_hash_of(&keys[..len], &entries[..len]) | 1,
        ));
    }
    let mut hasher = Fingerprint::new();
    for &(key, word) in &tables.canonical {
        if seen & key.bit() != 0 {
            hasher.word(word);
            hasher.word(hashes[key as usize]);
        }
    }
    hasher.header(TAG_OBJECT, seen.count_ones() as usize);
    Some((event, hasher.finish() | 1))
}

/// Read the value of `key` into its slot; its node hash.
fn field<'t>(p: &mut FastParser<'t>, key: Key, f: &mut Fields<'t>) -> Option<u64> {
    Some(match key {
        Key::Game => text(p, &mut f.game)?,
        Key::Type => text(p, &mut f.kind)?,
        Key::Player => text(p, &mut f.player)?,
        Key::Card => text(p, &mut f.card)?,
        Key::Dealer => text(p, &mut f.dealer)?,
        Key::Call => text(p, &mut f.call)?,
        Key::Reason => text(p, &mut f.reason)?,
        Key::Ts => text(p, f.ts.insert(""))?,
        Key::Suit => text(p, f.suit.insert(""))?,
        Key::Target => text(p, f.target.insert(""))?,
        Key::Starter => text(p, f.starter.insert(""))?,
        Key::Seq => {
            let n = p.integer()?;
            f.seq = n.unsigned_abs();
            json::int_hash(n)
        }
        Key::Hand => {
            f.hand = whole(p)?;
            json::int_hash(f.hand)
        }
        Key::Cards => cards(p, &mut f.cards)?,
        Key::Stock => cards(p, f.stock.insert(Vec::new()))?,
        Key::Hands => hands(p, &mut f.hands)?,
        Key::Winners => names(p, f.winners.insert(Vec::new()))?,
        Key::Order => names(p, f.order.insert(Vec::new()))?,
        Key::Scores => points(p, f.scores.insert(Vec::new()))?,
        Key::Totals => points(p, f.totals.insert(Vec::new()))?,
    })
}

/// The value of a producer extension: a scalar (a container could hide a key written
/// twice, which `decode` reports); its node hash.
fn extension(p: &mut FastParser<'_>) -> Option<u64> {
    if matches!(p.peek()?, b'{' | b'[') {
        return None;
    }
    let mut value = json::Value::Null;
    p.value(&mut value, 2)
}

/// A string without escapes into `slot`; its node hash.
#[inline]
fn text<'t>(p: &mut FastParser<'t>, slot: &mut &'t str) -> Option<u64> {
    if p.peek()? != b'"' {
        return None;
    }
    *slot = p.string()?;
    Some(json::text_hash(slot))
}

/// An integer (negative too), as the full parser reads one (`-0` is a float to it).
fn whole(p: &mut FastParser<'_>) -> Option<i64> {
    if p.peek()? == b'-' {
        p.byte(b'-')?;
        return p.integer().filter(|n| *n != 0).map(|n| -n);
    }
    p.integer()
}

/// An array whose items `item` reads, each giving its node hash; the array's node hash.
fn array<'t>(
    p: &mut FastParser<'t>,
    mut item: impl FnMut(&mut FastParser<'t>) -> Option<u64>,
) -> Option<u64> {
    p.byte(b'[')?;
    p.skip_whitespace();
    let mut hasher = Fingerprint::new();
    let mut count = 0;
    if p.peek()? == b']' {
        p.byte(b']')?;
    } else {
        loop {
            hasher.word(item(p)?);
            count += 1;
            if !p.next_item(b']')? {
                break;
            }
        }
    }
    hasher.header(TAG_ARRAY, count);
    Some(hasher.finish())
}

/// An object of distinct keys whose values `value` reads (given the key), each giving its
/// node hash; the object's node hash.
fn object<'t>(
    p: &mut FastParser<'t>,
    mut value: impl FnMut(&mut FastParser<'t>, &'t str) -> Option<u64>,
) -> Option<u64> {
    p.byte(b'{')?;
    p.skip_whitespace();
    let mut keys: [&str; MOST_ENTRIES] = [""; MOST_ENTRIES];
    let mut hashes = [EntryHash::default(); MOST_ENTRIES];
    let mut len = 0;
    if p.peek()? == b'}' {
        p.byte(b'}')?;
    } else {
        loop {
            if len == MOST_ENTRIES || p.peek()? != b'"' {
                return None;
            }
            let name = p.string()?;
            if keys[..len].contains(&name) {
                return None; // written twice: `decode` reports it
            }
            p.skip_whitespace();
            p.byte(b':')?;
            p.skip_whitespace();
            hashes[len] = EntryHash::new(name, value(p, name)?);
            keys[len] = name;
            len += 1;
            if !p.next_item(b'}')? {
                break;
            }
        }
    }
    Some(json::object_hash_of(&keys[..len], &hashes[..len]))
}

/// A list of cards, each already in notation form.
fn cards(p: &mut FastParser<'_>, out: &mut Vec<Card>) -> Option<u64> {
    array(p, |p| {
        let mut code = "";
        let h = text(p, &mut code)?;
        out.push(Card::parse(code)?);
        Some(h)
    })
}

/// A list of player ids (a claim: `winners`, `order`).
fn names(p: &mut FastParser<'_>, out: &mut Vec<String>) -> Option<u64> {
    array(p, |p| {
        let mut name = "";
        let h = text(p, &mut name)?;
        out.push(name.to_owned());
        Some(h)
    })
}

/// A deal's `hands`: player → list of cards.
fn hands(p: &mut FastParser<'_>, out: &mut Vec<(Text, Vec<Card>)>) -> Option<u64> {
    // room for a table's hands and a hand's cards up front, not grown a push at a time
    out.reserve(8);
    object(p, |p, player| {
        let mut held = Vec::with_capacity(8);
        let h = cards(p, &mut held)?;
        out.push((Text::from(player), held));
        Some(h)
    })
}

/// A claim of points (`scores`): player → integer.
fn points(p: &mut FastParser<'_>, out: &mut Vec<(String, Points)>) -> Option<u64> {
    object(p, |p, player| {
        let n = whole(p)?;
        out.push((player.to_owned(), Points::Int(i128::from(n))));
        Some(json::int_hash(n))
    })
}

/// A player id the notation accepts, as text.
fn player(id: &str) -> Option<Text> {
    notation::valid_player_id(id).then(|| Text::new(id))
}

/// A hand number the notation accepts (1 to [`MAX_HAND`]).
fn hand_number(n: i64) -> Option<u64> {
    u64::try_from(n).ok().filter(|n| (1..=MAX_HAND).contains(n))
}

/// The place of `name` in [`EVENT_TYPES`] (and so in [`EVENT_FIELDS`]).
const fn type_at(name: &str) -> usize {
    let mut i = 0;
    while i < EVENT_TYPES.len() {
        let (a, b) = (EVENT_TYPES[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not an event type")
}

const DEAL: usize = type_at("deal");
const PLAY: usize = type_at("play");
const DRAW: usize = type_at("draw");
const PASS: usize = type_at("pass");
const ANNOUNCE: usize = type_at("announce");
const PENALTY: usize = type_at("penalty");
const RESHUFFLE: usize = type_at("reshuffle");
const END: usize = type_at("end");
const RESULT: usize = type_at("result");

/// The event the fields make, when the line is clean for its type: its fields are those
/// of the type's table (every required one present), and every value is one `decode`
/// takes without an issue.
#[inline]
fn event(f: &mut Fields<'_>, seen: u32, tables: &Tables) -> Option<Event> {
    let at = EVENT_TYPES
        .iter()
        .position(|t| json::same_text(t, f.kind))?;
    let (allowed, required) = *tables.types.get(at)?;
    if seen & !allowed != 0 || seen & required != required {
        return None;
    }
    if !notation::valid_game_id(f.game) || f.ts.is_some_and(|ts| !notation::valid_ts(ts)) {
        return None;
    }
    let kind = match at {
        PLAY => Kind::Play(Play {
            player: player(f.player)?,
            card: Card::parse(f.card)?,
            suit: match f.suit {
                // "a suit letter"; anything else is the rules' to judge, on the full path
                Some(letter) if letter.len() == 1 => Some(Suit::from_letter(letter.as_bytes()[0])?),
                Some(_) => return None,
                None => None,
            },
            suit_unreadable: false,
            target: f.target.map(Text::new),
            target_given: f.target.is_some(),
        }),
        DRAW if !f.cards.is_empty() => Kind::Draw(Draw {
            player: player(f.player)?,
            cards: std::mem::take(&mut f.cards),
        }),
        PASS => Kind::Pass {
            player: player(f.player)?,
        },
        ANNOUNCE if CALLS.contains(&f.call) => Kind::Announce {
            player: player(f.player)?,
            call: f.call.to_owned(),
        },
        PENALTY if f.cards.len() == 1 => Kind::Penalty(Penalty {
            player: player(f.player)?,
            cards: std::mem::take(&mut f.cards),
            reason: PenaltyReason::parse(f.reason)?,
        }),
        DEAL => Kind::Deal(Deal {
            hand: hand_number(f.hand)?,
            dealer: player(f.dealer)?,
            hands: std::mem::take(&mut f.hands),
            starter: match f.starter {
                Some(code) => Some(Card::parse(code)?),
                None => None,
            },
            starter_unreadable: false,
            stock: f.stock.take(),
        }),
        RESHUFFLE => Kind::Reshuffle {
            stock: f.stock.take(),
        },
        END => Kind::End(End {
            hand: hand_number(f.hand)?,
            winners: f.winners.take(),
            scores: f.scores.take(),
            order: f.order.take(),
        }),
        RESULT => Kind::Result(GameResult {
            totals: f.totals.take(),
            winners: f.winners.take(),
        }),
        _ => return None,
    };
    Some(Event {
        common: Common {
            game: Text::new(f.game),
            seq: f.seq,
            ts: f.ts.map(Text::new),
        },
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse_line_fingerprinted;
    use crate::rows::LineCells;

    /// What the full path makes of a line: (event, fingerprint) when it decodes with no
    /// issue, else None.
    fn full(line: &str) -> Option<(Event, u64)> {
        let (value, fingerprint) = parse_line_fingerprinted(line.as_bytes()).ok()?;
        let game = notation::game_id(&value)?;
        let seq = notation::seq(&value)?;
        let decoded = notation::decode(&value, game, seq);
        (decoded.issues.is_empty()).then_some(())?;
        Some((decoded.event?, fingerprint))
    }

    /// Whenever this reader takes a line, the full path agrees with it exactly (and so do
    /// the line's warehouse cells).
    fn agrees(line: &str) -> bool {
        match read(line.as_bytes()) {
            Some(fast) => {
                assert_eq!(Some(&fast), full(line).as_ref(), "{line}");
                // the warehouse's cells of the line, too (ingest keeps them per line)
                let value = json::parse_line(line.as_bytes()).ok();
                let cells = value.as_ref().map(LineCells::of);
                assert_eq!(cells, Some(LineCells::of_event(&fast.0)), "{line}");
                true
            }
            None => false,
        }
    }

    const CLEAN: &[&str] = &[
        r#"{"game":"g1","seq":2,"type":"play","ts":"2026-10-29T21:43:17.441Z","player":"azadeh39","card":"TC"}"#,
        r#"{"seq":3,"type":"play","player":"a","card":"JC","suit":"H","game":"g1"}"#,
        r#"{"game":"g1","seq":4,"type":"play","player":"a","card":"2C","target":"b"}"#,
        r#" { "game" : "g1" , "seq" : 5 , "type" : "draw" , "player" : "b" , "cards" : [ "TD" , "9H" ] } "#,
        r#"{"game":"g1","seq":6,"type":"pass","player":"b"}"#,
        r#"{"game":"g1","seq":7,"type":"announce","player":"b","call":"last_card"}"#,
        r#"{"game":"g1","seq":8,"type":"penalty","player":"b","cards":["4H"],"reason":"delay"}"#,
        r#"{"game":"g1","seq":9,"type":"reshuffle","stock":["4H","5S"]}"#,
        r#"{"game":"g1","seq":10,"type":"reshuffle","stock":[]}"#,
        r#"{"game":"g1","seq":11,"type":"reshuffle"}"#,
        r#"{"game":"g1","seq":12,"type":"end","hand":1,"winners":["a"],"scores":{"a":0,"b":-12},"order":["a","b"]}"#,
        r#"{"game":"g1","seq":13,"type":"end","hand":2}"#,
        r#"{"game":"g1","seq":14,"type":"result","winners":["a"]}"#,
        r#"{"game":"g1","seq":14,"type":"result","ts":"2026-10-29T21:46:12.981Z","totals":{"a":206,"b":-3},"winners":["b","a"]}"#,
        r#"{"game":"g1","seq":14,"type":"result","totals":{},"winners":[]}"#,
        r#"{"game":"g1","seq":14,"type":"result"}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","x_latency_ms":378}"#,
        r#"{"x_a":"b","game":"g1","seq":2,"type":"pass","player":"a","x_zzzzzzzzzz":null,"x_t":true}"#,
        r#"{"game":"g1","seq":1,"type":"deal","hand":1,"dealer":"a","hands":{"a":["4S","3H"],"b":["8H","8D"]},"starter":"KD","stock":["TD"]}"#,
        r#"{"game":"g1","seq":1,"type":"deal","hand":1,"dealer":"a","hands":{"a":[],"b":["8H"]}}"#,
        r#"{"game":"g1","seq":1,"type":"deal","hand":1,"dealer":"a","hands":{},"stock":[]}"#,
    ];

    /// Lines the full path reports on, or that it keeps as written: left to it.
    const LEFT: &[&str] = &[
        r#"{"game":"g1","seq":0,"type":"game","format":"haftkhabis/1","ruleset":"bazito","players":["a","b"]}"#,
        r#"{"game":"g1","seq":9,"type":"abort","reason":"x"}"#,
        r#"{"game":"g1","seq":9,"type":"result","totals":{"a":1.5}}"#,
        r#"{"game":"g1","seq":9,"type":"result","totals":{"a":1,"a":2}}"#,
        r#"{"game":"g1","seq":9,"type":"result","scores":{"a":1}}"#,
        r#"{"game":"g1","seq":9,"type":"result","winners":"a"}"#,
        r#"{"game":"g1","seq":9,"type":"end","hand":1,"totals":{"a":1}}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"10H"}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","suit":"hearts"}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","suit":null}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","target":7}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","x_note":{"a":1}}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","x_n":1,"x_n":2}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","x_n":1.5}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","y_note":"hi"}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","cards":["TH"]}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a","card":"TH","player":"b"}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"a\u0062","card":"TH"}"#,
        r#"{"game":"g1","seq":2,"type":"play","player":"","card":"TH"}"#,
        r#"{"game":"g1","seq":2.0,"type":"play","player":"a","card":"TH"}"#,
        r#"{"game":"g1","seq":-1,"type":"play","player":"a","card":"TH"}"#,
        r#"{"game":"g 1","seq":2,"type":"play","player":"a","card":"TH"}"#,
        r#"{"game":"g1","seq":2,"type":"play","ts":"yesterday","player":"a","card":"TH"}"#,
        r#"{"game":"g1","seq":2,"type":"draw","player":"a","cards":[]}"#,
        r#"{"game":"g1","seq":2,"type":"penalty","player":"a","cards":["TH","TS"],"reason":"delay"}"#,
        r#"{"game":"g1","seq":2,"type":"penalty","player":"a","cards":["TH"],"reason":"rude"}"#,
        r#"{"game":"g1","seq":2,"type":"announce","player":"a","call":"uno"}"#,
        r#"{"game":"g1","seq":1,"type":"deal","hand":0,"dealer":"a","hands":{"a":["4S"]}}"#,
        r#"{"game":"g1","seq":1,"type":"deal","hand":1,"dealer":"a","hands":{"a":["4S"],"a":["5S"]}}"#,
        r#"{"game":"g1","seq":1,"type":"deal","hand":1,"dealer":"a","hands":{"a":["4S"]},"starter":"??"}"#,
        r#"{"game":"g1","seq":1,"type":"deal","hand":1,"dealer":"a"}"#,
        r#"{"game":"g1","seq":1,"type":"wave","player":"a"}"#,
        r#"{"game":"g1","seq":12,"type":"end","hand":1,"scores":{"a":1.5}}"#,
        r#"{"game":"g1","seq":12,"type":"end","hand":1,"scores":{"a":-0}}"#,
        r#"{"game":"g1","seq":2,"type":"pass","player":"a"} x"#,
        r#"{"game":"g1","seq":2,"type":"pass","player":"a",}"#,
        r#"["game"]"#,
        "",
    ];

    /// Every line of the scenario cases and of the bundled sample logs (whose faults
    /// include repairs, retries and strangers): whatever this reader takes, the full path
    /// reads the same, and it takes most of them.
    #[test]
    fn the_project_logs_agree_with_the_full_path() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
        let mut files = Vec::new();
        let mut dirs = vec![root.join("tests/cases"), root.join("data/sample")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path
                    .extension()
                    .is_some_and(|e| e == "jsonl" || e == "ndjson")
                {
                    files.push(path);
                }
            }
        }
        let (mut lines, mut taken) = (0, 0);
        for path in &files {
            let Ok(data) = std::fs::read(path) else {
                continue;
            };
            for line in data.split(|&b| b == b'\n') {
                if let Ok(text) = std::str::from_utf8(line) {
                    lines += 1;
                    taken += usize::from(agrees(text));
                }
            }
        }
        assert!(files.len() > 100, "found only {} logs", files.len());
        assert!(taken * 10 > lines * 8, "took {taken} of {lines} lines");
    }

    #[test]
    fn clean_lines_are_read_as_the_full_path_reads_them() {
        for line in CLEAN {
            assert!(agrees(line), "not taken: {line}");
        }
    }

    #[test]
    fn everything_else_is_left_to_the_full_path() {
        for line in LEFT {
            assert!(read(line.as_bytes()).is_none(), "taken: {line}");
        }
    }

    /// Every one-byte deletion and every one-byte change (to a byte that matters in JSON)
    /// of the clean lines: whatever this reader takes, the full path reads the same.
    #[test]
    fn mutated_lines_agree_with_the_full_path() {
        let swaps = b"\"{}[]:,0-1 \\aTHn.";
        let mut taken = 0;
        for line in CLEAN {
            let bytes = line.as_bytes();
            for i in 0..bytes.len() {
                let mut cut = bytes.to_vec();
                cut.remove(i);
                if let Ok(text) = std::str::from_utf8(&cut) {
                    taken += usize::from(agrees(text));
                }
                for &b in swaps {
                    let mut changed = bytes.to_vec();
                    changed[i] = b;
                    if let Ok(text) = std::str::from_utf8(&changed) {
                        taken += usize::from(agrees(text));
                    }
                }
            }
        }
        assert!(taken > 100, "only {taken} mutants were taken");
    }
}
