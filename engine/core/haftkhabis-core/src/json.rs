//! A JSON value as a log line holds it, and the one parser every line goes through.
//!
//! Objects keep their keys in the order written; a key written twice is kept twice here
//! and judged by the notation (`schema`), so the router and the codec can never disagree
//! on which `game` a line names (issue: "decide duplicate keys once").
//!
//! INTERFACE (implemented in this module):
//! - `parse_line(bytes) -> Result<Value, ParseError>`: one line (without its ending);
//!   errors say what is wrong ("not valid JSON: …", "not UTF-8: …", "nested deeper than
//!   1024 levels"), and `ParseError::not_utf8` tells the two `malformed_json` causes apart;
//! - `Value::fingerprint()`: a 64-bit hash of the JSON value with key order and spacing
//!   ignored (notation.md: "Identical repeated lines are the same JSON value"), never 0;
//!   `parse_line_fingerprinted(bytes)` gives it with the value, worked out while parsing;
//! - `Value::get(key)`: the **last** value under `key` in an object (decision: a key
//!   written twice is a `schema` problem and the last value counts, as most JSON readers
//!   do); `Value::duplicate_keys()` lists the paths of keys written twice;
//! - `Value::repr()`: the value rendered for messages the way Python's `repr` shows the
//!   decoded value (`'10H'`, `5`, `None`, `['a', 'b']`, `{'a': 1}`, `True`);
//! - `Value::to_json()` / `Value::to_json_sorted()`: compact JSON like `orjson.dumps`
//!   (without / with `OPT_SORT_KEYS`).
//!
//! Every walk over a value (hashing, rendering) is iterative, so even a value deeper than
//! [`MAX_DEPTH`] built by hand cannot overflow the stack; `parse_line` never builds one.
//!
//! A line is read by a fast path first (the usual shape of a log line, no serde, no
//! allocation for short text); whatever it does not take on, valid or not, goes to the
//! full parser (serde_json), which therefore decides every value and every error.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::{self, Write as _};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// How deep arrays and objects may nest in one line (the top-level value is depth 1).
pub const MAX_DEPTH: usize = 1024;

/// One JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// an integer that fits in i64
    Int(i64),
    /// an integer above i64::MAX that fits in u64
    UInt(u64),
    /// any other number (a fraction, an exponent, or an integer beyond u64)
    Float(f64),
    Str(Text),
    Array(Vec<Value>),
    /// keys in the order written, duplicates kept
    Object(Vec<(Text, Value)>),
}

/// The text of a string or an object key: up to 24 bytes are held inline (a line's keys,
/// ids, cards and timestamps), so reading them allocates nothing.
pub type Text = compact_str::CompactString;

/// Why a line is not a JSON value (`malformed_json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// what is wrong, to follow "the line is …": "not valid JSON: …", "not UTF-8: …",
    /// "nested deeper than 1024 levels"
    pub message: String,
    /// the line is not UTF-8 (notation.md: "not a JSON object, or not UTF-8")
    pub not_utf8: bool,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parse one line (without its ending). The whole line must be one JSON value, with only
/// JSON whitespace (space, tab, CR, LF) around it; a byte-order mark is the reader's
/// business ("A UTF-8 byte-order mark is ignored"), not this function's.
///
/// Nesting deeper than [`MAX_DEPTH`] is an error, found before the stack is at risk: the
/// parser recurses once per level, which at the full depth takes under 300 KB of stack
/// in a release build (about 1.9 MB in a debug build).
pub fn parse_line(bytes: &[u8]) -> Result<Value, ParseError> {
    parse_line_fingerprinted(bytes).map(|(value, _)| value)
}

/// [`parse_line`], and the value's [`Value::fingerprint`], worked out as the line is read.
pub fn parse_line_fingerprinted(bytes: &[u8]) -> Result<(Value, u64), ParseError> {
    // the whole line is checked first, as orjson does, so a bad byte anywhere is "not UTF-8"
    let text = std::str::from_utf8(bytes).map_err(|e| ParseError {
        message: format!("not UTF-8: {e}"),
        not_utf8: true,
    })?;
    if let Some((value, root)) = FastParser::parse(text) {
        return Ok((value, root | 1));
    }
    let value = parse_full(text)?;
    let fingerprint = value.fingerprint();
    Ok((value, fingerprint))
}

/// The full parser (serde_json), for what the fast path leaves to it.
fn parse_full(text: &str) -> Result<Value, ParseError> {
    let too_deep = Cell::new(false);
    let mut de = serde_json::Deserializer::from_str(text);
    // our own seed counts depth (to MAX_DEPTH); serde_json's fixed limit of 128 is too low
    de.disable_recursion_limit();
    let seed = ValueSeed {
        depth: 0,
        too_deep: &too_deep,
    };
    let parsed = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    parsed.map_err(|e| {
        if too_deep.get() {
            ParseError {
                message: format!("nested deeper than {MAX_DEPTH} levels"),
                not_utf8: false,
            }
        } else {
            ParseError {
                message: format!("not valid JSON: {e}"),
                not_utf8: false,
            }
        }
    })
}

#[derive(Clone, Copy)]
struct ValueSeed<'c> {
    /// depth of the container holding the value (0 for the line itself)
    depth: usize,
    too_deep: &'c Cell<bool>,
}

impl<'c> ValueSeed<'c> {
    /// The seed for the items of a container opened at `self.depth + 1`.
    fn enter<E: de::Error>(self) -> Result<ValueSeed<'c>, E> {
        if self.depth >= MAX_DEPTH {
            self.too_deep.set(true);
            return Err(E::custom(format_args!(
                "nested deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(ValueSeed {
            depth: self.depth + 1,
            too_deep: self.too_deep,
        })
    }
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(match i64::try_from(v) {
            Ok(n) => Value::Int(n),
            Err(_) => Value::UInt(v),
        })
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Value, E> {
        Ok(Value::Str(Text::new(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(Text::new(v)))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(Text::from(v)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<TextKey>()? {
            let key = key.0;
            let value = map.next_value_seed(inner)?;
            if entries.is_empty() {
                // a line's object has about 4-8 keys: one allocation, not three
                entries.reserve(8);
            }
            entries.push((key, value));
        }
        Ok(Value::Object(entries))
    }
}

/// An object key as serde hands it over, kept as [`Text`].
struct TextKey(Text);

impl<'de> de::Deserialize<'de> for TextKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TextKey, D::Error> {
        deserializer.deserialize_str(TextKeyVisitor)
    }
}

struct TextKeyVisitor;

impl Visitor<'_> for TextKeyVisitor {
    type Value = TextKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E>(self, v: &str) -> Result<TextKey, E> {
        Ok(TextKey(Text::new(v)))
    }

    fn visit_string<E>(self, v: String) -> Result<TextKey, E> {
        Ok(TextKey(Text::from(v)))
    }
}

// ------------------------------------------------------------------ the fast path

/// How deep the fast path nests before it leaves the line to the full parser.
const FAST_PARSE_DEPTH: usize = 128;

/// A byte that ends the plain run of a string: its closing quote, an escape, a control
/// character (not allowed unescaped).
const fn string_stops() -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
}

static STRING_STOPS: [bool; 256] = string_stops();

/// The high bit of each byte of `word` (little-endian) that is a `"`, a `\` or below
/// 0x20 may be set; the lowest set bit is exact (SWAR: bytes above a true find may show
/// false ones, never those below it).
#[inline]
fn string_stops_in(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let quote = zero_in(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_in(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}

/// The common shape of a log line, parsed in one pass without serde, its fingerprint
/// worked out on the way: strings without escapes, integers of up to 18 digits, nesting
/// up to [`FAST_PARSE_DEPTH`]. It gives up (None) on anything else, valid or not, and
/// [`parse_line`] then runs the full parser, so every value, and every error message, is
/// the full parser's.
pub(crate) struct FastParser<'t> {
    text: &'t str,
    pos: usize,
}

impl<'t> FastParser<'t> {
    /// The whole text as one value with only whitespace around it, and the value's
    /// [`node_hash`].
    fn parse(text: &'t str) -> Option<(Value, u64)> {
        let mut parser = FastParser::new(text);
        parser.skip_whitespace();
        let mut value = Value::Null;
        let root = parser.value(&mut value, 1)?;
        parser.skip_whitespace();
        (parser.pos == text.len()).then_some((value, root))
    }

    /// A parser at the start of `text`.
    #[inline]
    pub(crate) fn new(text: &'t str) -> FastParser<'t> {
        FastParser { text, pos: 0 }
    }

    /// Whether the whole text has been read.
    #[inline]
    pub(crate) fn at_end(&self) -> bool {
        self.pos == self.text.len()
    }

    /// Step over the next byte when it is `b`.
    #[inline]
    pub(crate) fn byte(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.pos += 1)
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    #[inline]
    pub(crate) fn skip_whitespace(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Step over `word` (a literal) when it comes next.
    #[inline]
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.pos + word.len();
        (self.text.as_bytes().get(self.pos..end)? == word).then(|| self.pos = end)
    }

    /// Read the value starting here into `slot` (values are built in place, not moved
    /// up through the recursion); its node hash. `depth` is its own depth (the line's
    /// value is at 1).
    pub(crate) fn value(&mut self, slot: &mut Value, depth: usize) -> Option<u64> {
        let scalar = match self.peek()? {
            b'"' => {
                let text = self.string()?;
                let h = text_hash(text);
                *slot = Value::Str(Text::new(text));
                return Some(h);
            }
            b'{' => return self.object(slot, depth),
            b'[' => return self.array(slot, depth),
            b'n' => self.literal(b"null").map(|()| Value::Null),
            b't' => self.literal(b"true").map(|()| Value::Bool(true)),
            b'f' => self.literal(b"false").map(|()| Value::Bool(false)),
            b'-' => {
                self.pos += 1;
                // -0 is a float to the full parser; leave it to that one
                self.integer().filter(|n| *n != 0).map(|n| Value::Int(-n))
            }
            b'0'..=b'9' => self.integer().map(Value::Int),
            _ => None,
        }?;
        let h = scalar_hash(&scalar);
        *slot = scalar;
        Some(h)
    }

    /// An integer of 1-18 digits without a leading zero, not followed by a fraction or
    /// an exponent (those are floats).
    pub(crate) fn integer(&mut self) -> Option<i64> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let mut n: i64 = 0;
        while let Some(&b) = bytes.get(self.pos) {
            if !b.is_ascii_digit() {
                break;
            }
            if self.pos - start == 18 {
                return None; // 19 digits or more may not fit: the full parser decides
            }
            n = n * 10 + i64::from(b - b'0');
            self.pos += 1;
        }
        let digits = self.pos - start;
        let leading_zero = digits > 1 && bytes[start] == b'0';
        if digits == 0 || leading_zero || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(n)
    }

    /// A string without escapes or control characters, the opening quote next: its text.
    #[inline]
    pub(crate) fn string(&mut self) -> Option<&'t str> {
        let bytes = self.text.as_bytes();
        let start = self.pos + 1;
        let mut end = start;
        // eight bytes at a time up to the first that may stop the string
        while let Some(chunk) = bytes.get(end..end + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let stops = string_stops_in(u64::from_le_bytes(word));
            if stops != 0 {
                end += (stops.trailing_zeros() / 8) as usize;
                break;
            }
            end += 8;
        }
        while let Some(&b) = bytes.get(end) {
            if STRING_STOPS[usize::from(b)] {
                if b != b'"' {
                    return None;
                }
                self.pos = end + 1;
                return self.text.get(start..end);
            }
            end += 1;
        }
        None
    }

    /// After an item: step over the `,` before the next one (true) or the closing `close`
    /// (false).
    #[inline]
    pub(crate) fn next_item(&mut self, close: u8) -> Option<bool> {
        self.skip_whitespace();
        let b = self.peek()?;
        self.pos += 1;
        if b == b',' {
            self.skip_whitespace();
            Some(true)
        } else if b == close {
            Some(false)
        } else {
            None
        }
    }

    fn array(&mut self, slot: &mut Value, depth: usize) -> Option<u64> {
        if depth > FAST_PARSE_DEPTH {
            return None;
        }
        self.pos += 1;
        self.skip_whitespace();
        let mut items: Vec<Value> = Vec::new();
        let mut hasher = Fingerprint::new();
        if self.peek()? == b']' {
            self.pos += 1;
        } else {
            loop {
                items.push(Value::Null);
                let item = items.last_mut()?;
                hasher.word(self.value(item, depth + 1)?);
                if !self.next_item(b']')? {
                    break;
                }
            }
        }
        hasher.header(TAG_ARRAY, items.len());
        *slot = Value::Array(items);
        Some(hasher.finish())
    }

    fn object(&mut self, slot: &mut Value, depth: usize) -> Option<u64> {
        if depth > FAST_PARSE_DEPTH {
            return None;
        }
        self.pos += 1;
        self.skip_whitespace();
        let mut entries: Vec<(Text, Value)> = Vec::new();
        let mut hashes = EntryHashes::new();
        if self.peek()? == b'}' {
            self.pos += 1;
        } else {
            // a line's object has about 4-8 keys: one allocation
            entries.reserve(8);
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                let key = self.string()?;
                self.skip_whitespace();
                if self.peek()? != b':' {
                    return None;
                }
                self.pos += 1;
                self.skip_whitespace();
                entries.push((Text::new(key), Value::Null));
                let (_, value) = entries.last_mut()?;
                let h = self.value(value, depth + 1)?;
                hashes.push(EntryHash::new(key, h));
                if !self.next_item(b'}')? {
                    break;
                }
            }
        }
        let h = object_hash(&entries, hashes.as_slice());
        *slot = Value::Object(entries);
        Some(h)
    }
}

/// Objects up to this size find duplicate keys by comparing pairs; larger ones hash.
const SMALL_OBJECT: usize = 16;

/// Indices of the first occurrence of every key written more than once, in written order.
fn duplicated(entries: &[(Text, Value)]) -> Vec<usize> {
    let mut out = Vec::new();
    if entries.len() <= SMALL_OBJECT {
        for (i, (key, _)) in entries.iter().enumerate() {
            if entries[..i].iter().any(|(k, _)| k == key) {
                continue;
            }
            if entries[i + 1..].iter().any(|(k, _)| k == key) {
                out.push(i);
            }
        }
    } else {
        let mut first: HashMap<&str, (usize, bool)> = HashMap::with_capacity(entries.len());
        for (i, (key, _)) in entries.iter().enumerate() {
            first
                .entry(key.as_str())
                .and_modify(|(_, twice)| *twice = true)
                .or_insert((i, false));
        }
        out.extend(first.values().filter(|(_, twice)| *twice).map(|(i, _)| *i));
        out.sort_unstable();
    }
    out
}

/// The entries as a Python dict holds them: each key once, at its first position, with
/// the last value written under it (as indices into `entries`).
fn dict_order(entries: &[(Text, Value)]) -> Vec<usize> {
    let mut order: Vec<usize> = Vec::with_capacity(entries.len());
    if entries.len() <= SMALL_OBJECT {
        for (i, (key, _)) in entries.iter().enumerate() {
            match order.iter_mut().find(|j| entries[**j].0 == *key) {
                Some(slot) => *slot = i,
                None => order.push(i),
            }
        }
    } else {
        let mut at: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
        for (i, (key, _)) in entries.iter().enumerate() {
            match at.get(key.as_str()) {
                Some(&pos) => order[pos] = i,
                None => {
                    at.insert(key.as_str(), order.len());
                    order.push(i);
                }
            }
        }
    }
    order
}

impl Value {
    /// The last value under `key`, when `self` is an object (decision: "a key written
    /// twice is a `schema` problem and the last value counts").
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(entries) => entries
                .iter()
                .rev()
                .find(|(k, _)| same_text(k, key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The entries of an object as written (duplicates kept).
    pub fn as_object(&self) -> Option<&[(Text, Value)]> {
        match self {
            Value::Object(entries) => Some(entries),
            _ => None,
        }
    }

    /// The entries of an object as a Python dict (and so `engine/events.py`) sees them:
    /// each key once, at its first position, with its last value.
    pub fn dict_entries(&self) -> Option<Vec<(&str, &Value)>> {
        let Value::Object(entries) = self else {
            return None;
        };
        if duplicated(entries).is_empty() {
            return Some(entries.iter().map(|(k, v)| (k.as_str(), v)).collect());
        }
        Some(
            dict_order(entries)
                .into_iter()
                .filter_map(|i| entries.get(i).map(|(k, v)| (k.as_str(), v)))
                .collect(),
        )
    }

    /// The name of the value's Python type once decoded (`dict`, `list`, `str`, `int`,
    /// `float`, `bool`, `NoneType`), for "the line is JSON but not an object (list)".
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::UInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
    }

    /// Whether a key is written twice anywhere in the value (cheap: no path is built).
    pub fn has_duplicate_keys(&self) -> bool {
        has_duplicates(self, 1)
    }

    /// The paths of keys written twice anywhere in the value (`game`, `hands.ali`,
    /// `meta.tables[0].id`), each once, in the order met. Values nested deeper than
    /// [`MAX_DEPTH`] (which `parse_line` never builds) are not searched.
    pub fn duplicate_keys(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !has_duplicates(self, 1) {
            return out; // the usual case: no path is built
        }
        let mut path = String::new();
        collect_duplicates(self, &mut path, 1, &mut out);
        out
    }

    /// A 64-bit hash of the JSON value, never 0: object entries are taken in a canonical
    /// key order (a stable sort, so duplicates count, in written order), so key order and spacing
    /// do not matter, while `1` and `1.0` (different JSON spellings) differ
    /// (notation.md: "Identical repeated lines are the same JSON value (key order and
    /// spacing ignored)"). Not cryptographic; deterministic across runs.
    pub fn fingerprint(&self) -> u64 {
        let root = node_hash(self, 1).unwrap_or_else(|| {
            // deeper than the recursive fast path goes: the same nodes, walked iteratively
            let mut hasher = TreeHasher {
                open: Vec::new(),
                root: 0,
            };
            walk(self, Order::Canonical, &mut hasher);
            hasher.root
        });
        root | 1
    }

    /// The value as Python's `repr` shows it once decoded (`'10H'`, `None`, `True`,
    /// `['a', 'b']`, `{'a': 1}`, `1.0`, `1e+100`); a key written twice shows once, at its
    /// first place, with its last value, as a Python dict holds it.
    pub fn repr(&self) -> String {
        let mut sink = Repr {
            out: String::with_capacity(16),
        };
        walk(self, Order::Dict, &mut sink);
        sink.out
    }

    /// Python's `str()` of the decoded value: the text itself for a string, else `repr`.
    pub fn py_str(&self) -> String {
        match self {
            Value::Str(s) => s.to_string(),
            other => other.repr(),
        }
    }

    /// Compact JSON, keys in stored order (duplicates kept), like `orjson.dumps`.
    pub fn to_json(&self) -> String {
        let mut sink = Json {
            out: String::with_capacity(128),
        };
        walk(self, Order::Written, &mut sink);
        sink.out
    }

    /// Compact JSON with keys sorted (a stable sort), like `orjson.OPT_SORT_KEYS`.
    pub fn to_json_sorted(&self) -> String {
        let mut sink = Json {
            out: String::with_capacity(128),
        };
        walk(self, Order::Sorted, &mut sink);
        sink.out
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        Value::Str(Text::new(text))
    }
}

impl From<String> for Value {
    fn from(text: String) -> Value {
        Value::Str(Text::from(text))
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        match i64::try_from(n) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(n),
        }
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}

/// Whether a key is written twice anywhere in `value` (no allocation for small objects).
fn has_duplicates(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let nested =
        |v: &Value| matches!(v, Value::Object(_) | Value::Array(_)) && has_duplicates(v, depth + 1);
    match value {
        Value::Object(entries) => {
            let twice = if entries.len() <= SMALL_OBJECT {
                // compare lengths and key words first; the text only when they agree
                let mut prefix = [(0u64, 0usize); SMALL_OBJECT];
                for (slot, (key, _)) in prefix.iter_mut().zip(entries) {
                    *slot = (key_word(key.as_bytes()), key.len());
                }
                (1..entries.len())
                    .any(|i| (0..i).any(|j| prefix[j] == prefix[i] && entries[j].0 == entries[i].0))
            } else {
                !duplicated(entries).is_empty()
            };
            twice || entries.iter().any(|(_, v)| nested(v))
        }
        Value::Array(items) => items.iter().any(nested),
        _ => false,
    }
}

/// A word that, with the length, identifies text of up to 8 bytes exactly (overlapping
/// loads, no byte loop); for longer text it is a filter before the full compare.
#[inline]
fn key_word(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    if len >= 8 {
        let mut head = [0u8; 8];
        head.copy_from_slice(&bytes[..8]);
        u64::from_le_bytes(head)
    } else if len >= 4 {
        let mut first = [0u8; 4];
        let mut last = [0u8; 4];
        first.copy_from_slice(&bytes[..4]);
        last.copy_from_slice(&bytes[len - 4..]);
        u64::from(u32::from_le_bytes(first)) | (u64::from(u32::from_le_bytes(last)) << 32)
    } else if len > 0 {
        u64::from(bytes[0]) | (u64::from(bytes[len / 2]) << 8) | (u64::from(bytes[len - 1]) << 16)
    } else {
        0
    }
}

/// Whether two texts are equal: for names of up to 8 bytes (every field name of the
/// notation) by their length and [`key_word`], without a call to `memcmp`.
#[inline]
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && if a.len() <= 8 {
            key_word(a.as_bytes()) == key_word(b.as_bytes())
        } else {
            a == b
        }
}

/// The canonical order of keys for [`Value::fingerprint`]: any fixed total order does, so
/// this one is cheap (length, then [`key_word`], then the bytes).
#[inline]
pub(crate) fn canonical_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| key_word(a.as_bytes()).cmp(&key_word(b.as_bytes())))
        .then_with(|| a.cmp(b))
}

fn collect_duplicates(value: &Value, path: &mut String, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(entries) => {
            for i in duplicated(entries) {
                let full = join_key(path, &entries[i].0);
                if !out.contains(&full) {
                    out.push(full);
                }
            }
            for (key, child) in entries {
                if matches!(child, Value::Object(_) | Value::Array(_)) {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                    collect_duplicates(child, path, depth + 1, out);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                if matches!(child, Value::Object(_) | Value::Array(_)) {
                    let len = path.len();
                    let _ = write!(path, "[{i}]");
                    collect_duplicates(child, path, depth + 1, out);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

fn join_key(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        let mut full = String::with_capacity(path.len() + 1 + key.len());
        full.push_str(path);
        full.push('.');
        full.push_str(key);
        full
    }
}

// ------------------------------------------------------------------ the iterative walk

/// In which order a walk visits an object's entries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// as stored (duplicates kept)
    Written,
    /// sorted by key, a stable sort (duplicates kept, in written order)
    Sorted,
    /// sorted by [`canonical_cmp`], a stable sort (the fingerprint's order)
    Canonical,
    /// as a Python dict holds them (each key once: first place, last value)
    Dict,
}

/// What a walk reports, in document order.
trait Sink<'a> {
    fn scalar(&mut self, value: &'a Value);
    fn begin_array(&mut self, len: usize);
    /// before the array element at `index`
    fn element(&mut self, index: usize);
    fn end_array(&mut self);
    fn begin_object(&mut self, len: usize);
    /// before the value of the entry at `index` (in visiting order)
    fn key(&mut self, key: &'a str, index: usize);
    fn end_object(&mut self);
}

enum Frame<'a> {
    Array {
        items: &'a [Value],
        next: usize,
    },
    Object {
        entries: &'a [(Text, Value)],
        next: usize,
        len: usize,
        /// where this object's visiting order starts in the walk's index arena (None:
        /// written order)
        order: Option<usize>,
    },
}

/// Walk `root` without recursion: an explicit stack of open containers, and one arena
/// holding the visiting order of the objects open on it (freed as each closes).
fn walk<'a, S: Sink<'a>>(root: &'a Value, order: Order, sink: &mut S) {
    let mut stack: Vec<Frame<'a>> = Vec::new();
    let mut arena: Vec<usize> = Vec::new();
    let mut current = root;
    loop {
        match current {
            Value::Array(items) => {
                sink.begin_array(items.len());
                stack.push(Frame::Array { items, next: 0 });
            }
            Value::Object(entries) => {
                let start = arena.len();
                let visiting = match order {
                    Order::Sorted if entries.len() > 1 => {
                        arena.extend(0..entries.len());
                        arena[start..].sort_by(|&a, &b| entries[a].0.cmp(&entries[b].0));
                        Some(start)
                    }
                    Order::Canonical if entries.len() > 1 => {
                        arena.extend(0..entries.len());
                        arena[start..]
                            .sort_by(|&a, &b| canonical_cmp(&entries[a].0, &entries[b].0));
                        Some(start)
                    }
                    Order::Dict if entries.len() > 1 && !duplicated(entries).is_empty() => {
                        arena.extend(dict_order(entries));
                        Some(start)
                    }
                    _ => None,
                };
                let len = arena.len() - start;
                let len = if visiting.is_some() {
                    len
                } else {
                    entries.len()
                };
                sink.begin_object(len);
                stack.push(Frame::Object {
                    entries,
                    next: 0,
                    len,
                    order: visiting,
                });
            }
            scalar => sink.scalar(scalar),
        }
        // the next value to visit, closing every finished container on the way
        loop {
            let Some(top) = stack.last_mut() else {
                return;
            };
            match top {
                Frame::Array { items, next } => {
                    let items: &'a [Value] = items;
                    if let Some(item) = items.get(*next) {
                        sink.element(*next);
                        *next += 1;
                        current = item;
                        break;
                    }
                    stack.pop();
                    sink.end_array();
                }
                Frame::Object {
                    entries,
                    next,
                    len,
                    order,
                } => {
                    let entries: &'a [(Text, Value)] = entries;
                    if *next < *len {
                        let index = match *order {
                            Some(start) => arena.get(start + *next).copied().unwrap_or(*next),
                            None => *next,
                        };
                        if let Some((key, value)) = entries.get(index) {
                            sink.key(key, *next);
                            *next += 1;
                            current = value;
                            break;
                        }
                        *next = *len; // cannot happen: the arena holds valid indices
                        continue;
                    }
                    if let Some(start) = *order {
                        arena.truncate(start);
                    }
                    stack.pop();
                    sink.end_object();
                }
            }
        }
    }
}

// ------------------------------------------------------------------ fingerprint

const K0: u64 = 0x243f_6a88_85a3_08d3;
const K1: u64 = 0x9e37_79b9_7f4a_7c15;
const K2: u64 = 0x1319_8a2e_0370_7344;
const K3: u64 = 0xa409_3822_299f_31d0;

const TAG_NULL: u64 = 1;
const TAG_FALSE: u64 = 2;
const TAG_TRUE: u64 = 3;
const TAG_INT: u64 = 4;
const TAG_UINT: u64 = 5;
const TAG_FLOAT: u64 = 6;
const TAG_STR: u64 = 7;
pub(crate) const TAG_ARRAY: u64 = 8;
pub(crate) const TAG_OBJECT: u64 = 9;
/// how deep [`node_hash`] recurses before the iterative walk takes over
const FAST_DEPTH: usize = 128;
/// a string of 0-7 bytes is one word: its bytes, and this bit with its length on top
const SHORT_STR: u64 = 0x80 << 56;

#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// A streaming folded-multiply hash over the words of one node of the value's tree.
///
/// The fingerprint is a tree hash, so the parser can work it out as it reads: a scalar's
/// node hash is that of its tagged words; an array's, that of its items' node hashes in
/// order and then its length; an object's, that of its entries in the canonical key
/// order ([`canonical_cmp`], a stable sort), each its key's words and its value's node
/// hash, and then its length. Tags and lengths make each node's word stream uniquely
/// decodable, so only a hash collision can confuse two values.
pub(crate) struct Fingerprint {
    h: u64,
}

impl Fingerprint {
    pub(crate) fn new() -> Fingerprint {
        Fingerprint { h: K2 }
    }

    #[inline]
    pub(crate) fn word(&mut self, w: u64) {
        self.h = fold(self.h ^ w ^ K0, K1);
    }

    /// header words: a tag in the low byte, a length above it (the top byte stays clear
    /// for any real length, unlike a short string's word)
    #[inline]
    pub(crate) fn header(&mut self, tag: u64, len: usize) {
        self.word(tag | ((len as u64) << 8));
    }

    #[inline]
    fn text(&mut self, s: &str) {
        let bytes = s.as_bytes();
        if bytes.len() < 8 {
            // exact for up to 8 bytes given the length, which the word carries on top
            self.word(key_word(bytes) | SHORT_STR | ((bytes.len() as u64) << 56));
            return;
        }
        self.header(TAG_STR, bytes.len());
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.word(key_word(chunk));
        }
        if !chunks.remainder().is_empty() {
            // the last 8 bytes, overlapping the previous chunk: the length is known
            self.word(key_word(&bytes[bytes.len() - 8..]));
        }
    }

    /// The words of a scalar (nothing for a container).
    #[inline]
    fn scalar(&mut self, value: &Value) {
        match value {
            Value::Null => self.word(TAG_NULL),
            Value::Bool(false) => self.word(TAG_FALSE),
            Value::Bool(true) => self.word(TAG_TRUE),
            Value::Int(n) => {
                self.word(TAG_INT);
                self.word(*n as u64);
            }
            Value::UInt(n) => {
                self.word(TAG_UINT);
                self.word(*n);
            }
            Value::Float(x) => {
                self.word(TAG_FLOAT);
                self.word(x.to_bits());
            }
            Value::Str(s) => self.text(s),
            Value::Array(_) | Value::Object(_) => {}
        }
    }

    #[inline]
    pub(crate) fn finish(&self) -> u64 {
        let h = fold(self.h ^ K3, K1);
        h ^ (h >> 29)
    }
}

/// The node hash of a scalar.
#[inline]
fn scalar_hash(value: &Value) -> u64 {
    let mut hasher = Fingerprint::new();
    hasher.scalar(value);
    hasher.finish()
}

/// The node hash of a string (the same as [`scalar_hash`] of `Value::Str`).
#[inline]
pub(crate) fn text_hash(text: &str) -> u64 {
    let mut hasher = Fingerprint::new();
    hasher.text(text);
    hasher.finish()
}

/// The word an object's node hash holds for a key of under 8 bytes (None for a longer
/// one, hashed as text).
pub(crate) fn short_key_word(key: &str) -> Option<u64> {
    let len = key.len();
    (len < 8).then(|| key_word(key.as_bytes()) | SHORT_STR | ((len as u64) << 56))
}

/// The node hash of an integer (the same as [`scalar_hash`] of `Value::Int`).
#[inline]
pub(crate) fn int_hash(n: i64) -> u64 {
    let mut hasher = Fingerprint::new();
    hasher.word(TAG_INT);
    hasher.word(n as u64);
    hasher.finish()
}

/// What an object's node hash needs of one entry, worked out once: its key's length and
/// [`key_word`] (the canonical order compares these first; a key of up to 7 bytes is
/// hashed as that word), and its value's node hash.
#[derive(Clone, Copy, Default)]
pub(crate) struct EntryHash {
    key_len: usize,
    key_word: u64,
    value: u64,
}

impl EntryHash {
    #[inline]
    pub(crate) fn new(key: &str, value: u64) -> EntryHash {
        EntryHash {
            key_len: key.len(),
            key_word: key_word(key.as_bytes()),
            value,
        }
    }
}

/// The [`EntryHash`]es of an object, in written order, as they are worked out: on the
/// stack for a small object.
struct EntryHashes {
    small: [EntryHash; SMALL_OBJECT],
    len: usize,
    spill: Vec<EntryHash>,
}

impl EntryHashes {
    #[inline]
    fn new() -> EntryHashes {
        EntryHashes {
            small: [EntryHash::default(); SMALL_OBJECT],
            len: 0,
            spill: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, entry: EntryHash) {
        if self.len < SMALL_OBJECT {
            self.small[self.len] = entry;
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.small);
            }
            self.spill.push(entry);
        }
        self.len += 1;
    }

    #[inline]
    fn as_slice(&self) -> &[EntryHash] {
        if self.len <= SMALL_OBJECT {
            &self.small[..self.len]
        } else {
            &self.spill
        }
    }
}

/// The node hash of an object from its entries and their [`EntryHash`]es (both in
/// written order): each entry's key words and value hash in canonical key order (a
/// stable sort), then the length.
fn object_hash(entries: &[(Text, Value)], hashes: &[EntryHash]) -> u64 {
    object_hash_by(hashes.len().min(entries.len()), |i| &entries[i].0, hashes)
}

/// [`object_hash`] of an object whose keys are `keys` (in written order, one per hash).
pub(crate) fn object_hash_of(keys: &[&str], hashes: &[EntryHash]) -> u64 {
    object_hash_by(hashes.len().min(keys.len()), |i| keys[i], hashes)
}

/// [`object_hash`] of `len` entries, the key of entry `i` being `key_at(i)`.
#[inline]
fn object_hash_by<'k>(len: usize, key_at: impl Fn(usize) -> &'k str, hashes: &[EntryHash]) -> u64 {
    let mut hasher = Fingerprint::new();
    let mut entry = |e: &EntryHash, key: &str| {
        if e.key_len < 8 {
            hasher.word(e.key_word | SHORT_STR | ((e.key_len as u64) << 56));
        } else {
            hasher.text(key);
        }
        hasher.word(e.value);
    };
    let prefix = |i: usize| (hashes[i].key_len, hashes[i].key_word);
    if len <= SMALL_OBJECT {
        // a stable insertion sort of the entry indices, on the stack, comparing
        // (length, key word) first and the keys only when those tie
        let after = |a: usize, b: usize| match prefix(a).cmp(&prefix(b)) {
            std::cmp::Ordering::Equal => key_at(a) > key_at(b),
            other => other == std::cmp::Ordering::Greater,
        };
        let mut order = [0u8; SMALL_OBJECT];
        for i in 0..len {
            let mut j = i;
            while j > 0 && after(usize::from(order[j - 1]), i) {
                order[j] = order[j - 1];
                j -= 1;
            }
            order[j] = i as u8;
        }
        for &i in &order[..len] {
            let i = usize::from(i);
            entry(&hashes[i], key_at(i));
        }
    } else {
        let mut order: Vec<usize> = (0..len).collect();
        order.sort_by(|&a, &b| {
            prefix(a)
                .cmp(&prefix(b))
                .then_with(|| key_at(a).cmp(key_at(b)))
        });
        for i in order {
            entry(&hashes[i], key_at(i));
        }
    }
    hasher.header(TAG_OBJECT, len);
    hasher.finish()
}

/// The node hash of `value`, recursively; None when it nests deeper than [`FAST_DEPTH`]
/// (then [`TreeHasher`] walks it iteratively).
fn node_hash(value: &Value, depth: usize) -> Option<u64> {
    match value {
        Value::Array(items) => {
            if depth > FAST_DEPTH {
                return None;
            }
            let mut hasher = Fingerprint::new();
            for item in items {
                hasher.word(node_hash(item, depth + 1)?);
            }
            hasher.header(TAG_ARRAY, items.len());
            Some(hasher.finish())
        }
        Value::Object(entries) => {
            if depth > FAST_DEPTH {
                return None;
            }
            let mut hashes = EntryHashes::new();
            for (key, v) in entries {
                hashes.push(EntryHash::new(key, node_hash(v, depth + 1)?));
            }
            Some(object_hash(entries, hashes.as_slice()))
        }
        scalar => Some(scalar_hash(scalar)),
    }
}

/// The fingerprint's tree hash fed by [`walk`] in canonical order, for values of any
/// depth: one open hasher (and its length) per open container.
struct TreeHasher {
    open: Vec<(Fingerprint, usize)>,
    root: u64,
}

impl TreeHasher {
    fn node(&mut self, h: u64) {
        match self.open.last_mut() {
            Some((parent, _)) => parent.word(h),
            None => self.root = h,
        }
    }

    fn close(&mut self, tag: u64) {
        if let Some((mut hasher, len)) = self.open.pop() {
            hasher.header(tag, len);
            self.node(hasher.finish());
        }
    }
}

impl<'a> Sink<'a> for TreeHasher {
    fn scalar(&mut self, value: &'a Value) {
        self.node(scalar_hash(value));
    }

    fn begin_array(&mut self, len: usize) {
        self.open.push((Fingerprint::new(), len));
    }

    fn element(&mut self, _index: usize) {}

    fn end_array(&mut self) {
        self.close(TAG_ARRAY);
    }

    fn begin_object(&mut self, len: usize) {
        self.open.push((Fingerprint::new(), len));
    }

    fn key(&mut self, key: &'a str, _index: usize) {
        if let Some((parent, _)) = self.open.last_mut() {
            parent.text(key);
        }
    }

    fn end_object(&mut self) {
        self.close(TAG_OBJECT);
    }
}

// ------------------------------------------------------------------ JSON text

struct Json {
    out: String,
}

fn write_json_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The shortest round-trip digits of `x` (no sign, no point) and its decimal exponent:
/// `x = d.ddd × 10^exp`. Among the shortest strings the one nearest `x` is taken, a tie
/// going to the even digit, as Python's `repr` and orjson do (`711917175578702.25` is
/// `…702.2`): Rust's shortest mode fixes the length, its exact mode (which rounds half to
/// even) the digits.
fn float_digits(x: f64) -> (String, i32) {
    let split = |sci: &str| -> (String, i32) {
        let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        (digits, exp.parse().unwrap_or(0))
    };
    let shortest = split(&format!("{:e}", x.abs()));
    let precision = shortest.0.len().saturating_sub(1);
    let nearest = split(&format!("{:.precision$e}", x.abs()));
    if nearest.0.len() == shortest.0.len() && nearest.0.parse::<u64>().is_ok() {
        let text = format!("{}e{}", nearest.0, i64::from(nearest.1) - precision as i64);
        if text.parse::<f64>().ok() == Some(x.abs()) {
            return nearest;
        }
    }
    shortest
}

/// A finite float the way Python (`python = true`: `repr`) or orjson writes it: fixed
/// notation with a `.0` when whole inside a range of exponents, else `1e+100` / `1e100`.
fn write_float(out: &mut String, x: f64, python: bool) {
    if x.is_nan() {
        out.push_str(if python { "nan" } else { "null" });
        return;
    }
    if x.is_infinite() {
        out.push_str(match (python, x > 0.0) {
            (true, true) => "inf",
            (true, false) => "-inf",
            (false, _) => "null",
        });
        return;
    }
    if x.is_sign_negative() {
        out.push('-');
    }
    let (digits, exp) = float_digits(x);
    let lowest = if python { -4 } else { -5 };
    if (lowest..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            out.push_str("0.");
            for _ in 0..-point {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let point = point as usize;
            if point < digits.len() {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            } else {
                out.push_str(&digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
                out.push_str(".0");
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        if python {
            let sign = if exp < 0 { '-' } else { '+' };
            let _ = write!(out, "e{sign}{:02}", exp.unsigned_abs());
        } else {
            let _ = write!(out, "e{exp}");
        }
    }
}

impl<'a> Sink<'a> for Json {
    fn scalar(&mut self, value: &'a Value) {
        let out = &mut self.out;
        match value {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::UInt(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Float(x) => write_float(out, *x, false),
            Value::Str(s) => write_json_str(out, s),
            Value::Array(_) | Value::Object(_) => {}
        }
    }

    fn begin_array(&mut self, _len: usize) {
        self.out.push('[');
    }

    fn element(&mut self, index: usize) {
        if index > 0 {
            self.out.push(',');
        }
    }

    fn end_array(&mut self) {
        self.out.push(']');
    }

    fn begin_object(&mut self, _len: usize) {
        self.out.push('{');
    }

    fn key(&mut self, key: &'a str, index: usize) {
        if index > 0 {
            self.out.push(',');
        }
        write_json_str(&mut self.out, key);
        self.out.push(':');
    }

    fn end_object(&mut self) {
        self.out.push('}');
    }
}

// ------------------------------------------------------------------ Python repr

struct Repr {
    out: String,
}

/// `str.isprintable` for one character, from Python 3.11's Unicode 14.0 database (code
/// points assigned later count as unassigned, so they show escaped, as 3.11 shows them).
fn py_printable(c: char) -> bool {
    let n = u32::from(c);
    if n < 0x7f {
        return n >= 0x20;
    }
    let i = NOT_PRINTABLE.partition_point(|&(_, last)| last < n);
    match NOT_PRINTABLE.get(i) {
        Some(&(first, _)) => n < first,
        None => true,
    }
}

/// The code points `str.isprintable()` rejects (Cc, Cf, Cs, Co, Cn, Zl, Zp, and Zs but
/// the space), as sorted inclusive ranges. Generated with Python 3.11.7:
/// `[c for c in range(0x110000) if not chr(c).isprintable()]`, merged into runs.
#[rustfmt::skip]
const NOT_PRINTABLE: [(u32, u32); 701] = [
    (0x0, 0x1f), (0x7f, 0xa0), (0xad, 0xad), (0x378, 0x379), (0x380, 0x383), (0x38b, 0x38b),
    (0x38d, 0x38d), (0x3a2, 0x3a2), (0x530, 0x530), (0x557, 0x558), (0x58b, 0x58c),
    (0x590, 0x590), (0x5c8, 0x5cf), (0x5eb, 0x5ee), (0x5f5, 0x605), (0x61c, 0x61c),
    (0x6dd, 0x6dd), (0x70e, 0x70f), (0x74b, 0x74c), (0x7b2, 0x7bf), (0x7fb, 0x7fc),
    (0x82e, 0x82f), (0x83f, 0x83f), (0x85c, 0x85d), (0x85f, 0x85f), (0x86b, 0x86f),
    (0x88f, 0x897), (0x8e2, 0x8e2), (0x984, 0x984), (0x98d, 0x98e), (0x991, 0x992),
    (0x9a9, 0x9a9), (0x9b1, 0x9b1), (0x9b3, 0x9b5), (0x9ba, 0x9bb), (0x9c5, 0x9c6),
    (0x9c9, 0x9ca), (0x9cf, 0x9d6), (0x9d8, 0x9db), (0x9de, 0x9de), (0x9e4, 0x9e5),
    (0x9ff, 0xa00), (0xa04, 0xa04), (0xa0b, 0xa0e), (0xa11, 0xa12), (0xa29, 0xa29),
    (0xa31, 0xa31), (0xa34, 0xa34), (0xa37, 0xa37), (0xa3a, 0xa3b), (0xa3d, 0xa3d),
    (0xa43, 0xa46), (0xa49, 0xa4a), (0xa4e, 0xa50), (0xa52, 0xa58), (0xa5d, 0xa5d),
    (0xa5f, 0xa65), (0xa77, 0xa80), (0xa84, 0xa84), (0xa8e, 0xa8e), (0xa92, 0xa92),
    (0xaa9, 0xaa9), (0xab1, 0xab1), (0xab4, 0xab4), (0xaba, 0xabb), (0xac6, 0xac6),
    (0xaca, 0xaca), (0xace, 0xacf), (0xad1, 0xadf), (0xae4, 0xae5), (0xaf2, 0xaf8),
    (0xb00, 0xb00), (0xb04, 0xb04), (0xb0d, 0xb0e), (0xb11, 0xb12), (0xb29, 0xb29),
    (0xb31, 0xb31), (0xb34, 0xb34), (0xb3a, 0xb3b), (0xb45, 0xb46), (0xb49, 0xb4a),
    (0xb4e, 0xb54), (0xb58, 0xb5b), (0xb5e, 0xb5e), (0xb64, 0xb65), (0xb78, 0xb81),
    (0xb84, 0xb84), (0xb8b, 0xb8d), (0xb91, 0xb91), (0xb96, 0xb98), (0xb9b, 0xb9b),
    (0xb9d, 0xb9d), (0xba0, 0xba2), (0xba5, 0xba7), (0xbab, 0xbad), (0xbba, 0xbbd),
    (0xbc3, 0xbc5), (0xbc9, 0xbc9), (0xbce, 0xbcf), (0xbd1, 0xbd6), (0xbd8, 0xbe5),
    (0xbfb, 0xbff), (0xc0d, 0xc0d), (0xc11, 0xc11), (0xc29, 0xc29), (0xc3a, 0xc3b),
    (0xc45, 0xc45), (0xc49, 0xc49), (0xc4e, 0xc54), (0xc57, 0xc57), (0xc5b, 0xc5c),
    (0xc5e, 0xc5f), (0xc64, 0xc65), (0xc70, 0xc76), (0xc8d, 0xc8d), (0xc91, 0xc91),
    (0xca9, 0xca9), (0xcb4, 0xcb4), (0xcba, 0xcbb), (0xcc5, 0xcc5), (0xcc9, 0xcc9),
    (0xcce, 0xcd4), (0xcd7, 0xcdc), (0xcdf, 0xcdf), (0xce4, 0xce5), (0xcf0, 0xcf0),
    (0xcf3, 0xcff), (0xd0d, 0xd0d), (0xd11, 0xd11), (0xd45, 0xd45), (0xd49, 0xd49),
    (0xd50, 0xd53), (0xd64, 0xd65), (0xd80, 0xd80), (0xd84, 0xd84), (0xd97, 0xd99),
    (0xdb2, 0xdb2), (0xdbc, 0xdbc), (0xdbe, 0xdbf), (0xdc7, 0xdc9), (0xdcb, 0xdce),
    (0xdd5, 0xdd5), (0xdd7, 0xdd7), (0xde0, 0xde5), (0xdf0, 0xdf1), (0xdf5, 0xe00),
    (0xe3b, 0xe3e), (0xe5c, 0xe80), (0xe83, 0xe83), (0xe85, 0xe85), (0xe8b, 0xe8b),
    (0xea4, 0xea4), (0xea6, 0xea6), (0xebe, 0xebf), (0xec5, 0xec5), (0xec7, 0xec7),
    (0xece, 0xecf), (0xeda, 0xedb), (0xee0, 0xeff), (0xf48, 0xf48), (0xf6d, 0xf70),
    (0xf98, 0xf98), (0xfbd, 0xfbd), (0xfcd, 0xfcd), (0xfdb, 0xfff), (0x10c6, 0x10c6),
    (0x10c8, 0x10cc), (0x10ce, 0x10cf), (0x1249, 0x1249), (0x124e, 0x124f),
    (0x1257, 0x1257), (0x1259, 0x1259), (0x125e, 0x125f), (0x1289, 0x1289),
    (0x128e, 0x128f), (0x12b1, 0x12b1), (0x12b6, 0x12b7), (0x12bf, 0x12bf),
    (0x12c1, 0x12c1), (0x12c6, 0x12c7), (0x12d7, 0x12d7), (0x1311, 0x1311),
    (0x1316, 0x1317), (0x135b, 0x135c), (0x137d, 0x137f), (0x139a, 0x139f),
    (0x13f6, 0x13f7), (0x13fe, 0x13ff), (0x1680, 0x1680), (0x169d, 0x169f),
    (0x16f9, 0x16ff), (0x1716, 0x171e), (0x1737, 0x173f), (0x1754, 0x175f),
    (0x176d, 0x176d), (0x1771, 0x1771), (0x1774, 0x177f), (0x17de, 0x17df),
    (0x17ea, 0x17ef), (0x17fa, 0x17ff), (0x180e, 0x180e), (0x181a, 0x181f),
    (0x1879, 0x187f), (0x18ab, 0x18af), (0x18f6, 0x18ff), (0x191f, 0x191f),
    (0x192c, 0x192f), (0x193c, 0x193f), (0x1941, 0x1943), (0x196e, 0x196f),
    (0x1975, 0x197f), (0x19ac, 0x19af), (0x19ca, 0x19cf), (0x19db, 0x19dd),
    (0x1a1c, 0x1a1d), (0x1a5f, 0x1a5f), (0x1a7d, 0x1a7e), (0x1a8a, 0x1a8f),
    (0x1a9a, 0x1a9f), (0x1aae, 0x1aaf), (0x1acf, 0x1aff), (0x1b4d, 0x1b4f),
    (0x1b7f, 0x1b7f), (0x1bf4, 0x1bfb), (0x1c38, 0x1c3a), (0x1c4a, 0x1c4c),
    (0x1c89, 0x1c8f), (0x1cbb, 0x1cbc), (0x1cc8, 0x1ccf), (0x1cfb, 0x1cff),
    (0x1f16, 0x1f17), (0x1f1e, 0x1f1f), (0x1f46, 0x1f47), (0x1f4e, 0x1f4f),
    (0x1f58, 0x1f58), (0x1f5a, 0x1f5a), (0x1f5c, 0x1f5c), (0x1f5e, 0x1f5e),
    (0x1f7e, 0x1f7f), (0x1fb5, 0x1fb5), (0x1fc5, 0x1fc5), (0x1fd4, 0x1fd5),
    (0x1fdc, 0x1fdc), (0x1ff0, 0x1ff1), (0x1ff5, 0x1ff5), (0x1fff, 0x200f),
    (0x2028, 0x202f), (0x205f, 0x206f), (0x2072, 0x2073), (0x208f, 0x208f),
    (0x209d, 0x209f), (0x20c1, 0x20cf), (0x20f1, 0x20ff), (0x218c, 0x218f),
    (0x2427, 0x243f), (0x244b, 0x245f), (0x2b74, 0x2b75), (0x2b96, 0x2b96),
    (0x2cf4, 0x2cf8), (0x2d26, 0x2d26), (0x2d28, 0x2d2c), (0x2d2e, 0x2d2f),
    (0x2d68, 0x2d6e), (0x2d71, 0x2d7e), (0x2d97, 0x2d9f), (0x2da7, 0x2da7),
    (0x2daf, 0x2daf), (0x2db7, 0x2db7), (0x2dbf, 0x2dbf), (0x2dc7, 0x2dc7),
    (0x2dcf, 0x2dcf), (0x2dd7, 0x2dd7), (0x2ddf, 0x2ddf), (0x2e5e, 0x2e7f),
    (0x2e9a, 0x2e9a), (0x2ef4, 0x2eff), (0x2fd6, 0x2fef), (0x2ffc, 0x3000),
    (0x3040, 0x3040), (0x3097, 0x3098), (0x3100, 0x3104), (0x3130, 0x3130),
    (0x318f, 0x318f), (0x31e4, 0x31ef), (0x321f, 0x321f), (0xa48d, 0xa48f),
    (0xa4c7, 0xa4cf), (0xa62c, 0xa63f), (0xa6f8, 0xa6ff), (0xa7cb, 0xa7cf),
    (0xa7d2, 0xa7d2), (0xa7d4, 0xa7d4), (0xa7da, 0xa7f1), (0xa82d, 0xa82f),
    (0xa83a, 0xa83f), (0xa878, 0xa87f), (0xa8c6, 0xa8cd), (0xa8da, 0xa8df),
    (0xa954, 0xa95e), (0xa97d, 0xa97f), (0xa9ce, 0xa9ce), (0xa9da, 0xa9dd),
    (0xa9ff, 0xa9ff), (0xaa37, 0xaa3f), (0xaa4e, 0xaa4f), (0xaa5a, 0xaa5b),
    (0xaac3, 0xaada), (0xaaf7, 0xab00), (0xab07, 0xab08), (0xab0f, 0xab10),
    (0xab17, 0xab1f), (0xab27, 0xab27), (0xab2f, 0xab2f), (0xab6c, 0xab6f),
    (0xabee, 0xabef), (0xabfa, 0xabff), (0xd7a4, 0xd7af), (0xd7c7, 0xd7ca),
    (0xd7fc, 0xf8ff), (0xfa6e, 0xfa6f), (0xfada, 0xfaff), (0xfb07, 0xfb12),
    (0xfb18, 0xfb1c), (0xfb37, 0xfb37), (0xfb3d, 0xfb3d), (0xfb3f, 0xfb3f),
    (0xfb42, 0xfb42), (0xfb45, 0xfb45), (0xfbc3, 0xfbd2), (0xfd90, 0xfd91),
    (0xfdc8, 0xfdce), (0xfdd0, 0xfdef), (0xfe1a, 0xfe1f), (0xfe53, 0xfe53),
    (0xfe67, 0xfe67), (0xfe6c, 0xfe6f), (0xfe75, 0xfe75), (0xfefd, 0xff00),
    (0xffbf, 0xffc1), (0xffc8, 0xffc9), (0xffd0, 0xffd1), (0xffd8, 0xffd9),
    (0xffdd, 0xffdf), (0xffe7, 0xffe7), (0xffef, 0xfffb), (0xfffe, 0xffff),
    (0x1000c, 0x1000c), (0x10027, 0x10027), (0x1003b, 0x1003b), (0x1003e, 0x1003e),
    (0x1004e, 0x1004f), (0x1005e, 0x1007f), (0x100fb, 0x100ff), (0x10103, 0x10106),
    (0x10134, 0x10136), (0x1018f, 0x1018f), (0x1019d, 0x1019f), (0x101a1, 0x101cf),
    (0x101fe, 0x1027f), (0x1029d, 0x1029f), (0x102d1, 0x102df), (0x102fc, 0x102ff),
    (0x10324, 0x1032c), (0x1034b, 0x1034f), (0x1037b, 0x1037f), (0x1039e, 0x1039e),
    (0x103c4, 0x103c7), (0x103d6, 0x103ff), (0x1049e, 0x1049f), (0x104aa, 0x104af),
    (0x104d4, 0x104d7), (0x104fc, 0x104ff), (0x10528, 0x1052f), (0x10564, 0x1056e),
    (0x1057b, 0x1057b), (0x1058b, 0x1058b), (0x10593, 0x10593), (0x10596, 0x10596),
    (0x105a2, 0x105a2), (0x105b2, 0x105b2), (0x105ba, 0x105ba), (0x105bd, 0x105ff),
    (0x10737, 0x1073f), (0x10756, 0x1075f), (0x10768, 0x1077f), (0x10786, 0x10786),
    (0x107b1, 0x107b1), (0x107bb, 0x107ff), (0x10806, 0x10807), (0x10809, 0x10809),
    (0x10836, 0x10836), (0x10839, 0x1083b), (0x1083d, 0x1083e), (0x10856, 0x10856),
    (0x1089f, 0x108a6), (0x108b0, 0x108df), (0x108f3, 0x108f3), (0x108f6, 0x108fa),
    (0x1091c, 0x1091e), (0x1093a, 0x1093e), (0x10940, 0x1097f), (0x109b8, 0x109bb),
    (0x109d0, 0x109d1), (0x10a04, 0x10a04), (0x10a07, 0x10a0b), (0x10a14, 0x10a14),
    (0x10a18, 0x10a18), (0x10a36, 0x10a37), (0x10a3b, 0x10a3e), (0x10a49, 0x10a4f),
    (0x10a59, 0x10a5f), (0x10aa0, 0x10abf), (0x10ae7, 0x10aea), (0x10af7, 0x10aff),
    (0x10b36, 0x10b38), (0x10b56, 0x10b57), (0x10b73, 0x10b77), (0x10b92, 0x10b98),
    (0x10b9d, 0x10ba8), (0x10bb0, 0x10bff), (0x10c49, 0x10c7f), (0x10cb3, 0x10cbf),
    (0x10cf3, 0x10cf9), (0x10d28, 0x10d2f), (0x10d3a, 0x10e5f), (0x10e7f, 0x10e7f),
    (0x10eaa, 0x10eaa), (0x10eae, 0x10eaf), (0x10eb2, 0x10eff), (0x10f28, 0x10f2f),
    (0x10f5a, 0x10f6f), (0x10f8a, 0x10faf), (0x10fcc, 0x10fdf), (0x10ff7, 0x10fff),
    (0x1104e, 0x11051), (0x11076, 0x1107e), (0x110bd, 0x110bd), (0x110c3, 0x110cf),
    (0x110e9, 0x110ef), (0x110fa, 0x110ff), (0x11135, 0x11135), (0x11148, 0x1114f),
    (0x11177, 0x1117f), (0x111e0, 0x111e0), (0x111f5, 0x111ff), (0x11212, 0x11212),
    (0x1123f, 0x1127f), (0x11287, 0x11287), (0x11289, 0x11289), (0x1128e, 0x1128e),
    (0x1129e, 0x1129e), (0x112aa, 0x112af), (0x112eb, 0x112ef), (0x112fa, 0x112ff),
    (0x11304, 0x11304), (0x1130d, 0x1130e), (0x11311, 0x11312), (0x11329, 0x11329),
    (0x11331, 0x11331), (0x11334, 0x11334), (0x1133a, 0x1133a), (0x11345, 0x11346),
    (0x11349, 0x1134a), (0x1134e, 0x1134f), (0x11351, 0x11356), (0x11358, 0x1135c),
    (0x11364, 0x11365), (0x1136d, 0x1136f), (0x11375, 0x113ff), (0x1145c, 0x1145c),
    (0x11462, 0x1147f), (0x114c8, 0x114cf), (0x114da, 0x1157f), (0x115b6, 0x115b7),
    (0x115de, 0x115ff), (0x11645, 0x1164f), (0x1165a, 0x1165f), (0x1166d, 0x1167f),
    (0x116ba, 0x116bf), (0x116ca, 0x116ff), (0x1171b, 0x1171c), (0x1172c, 0x1172f),
    (0x11747, 0x117ff), (0x1183c, 0x1189f), (0x118f3, 0x118fe), (0x11907, 0x11908),
    (0x1190a, 0x1190b), (0x11914, 0x11914), (0x11917, 0x11917), (0x11936, 0x11936),
    (0x11939, 0x1193a), (0x11947, 0x1194f), (0x1195a, 0x1199f), (0x119a8, 0x119a9),
    (0x119d8, 0x119d9), (0x119e5, 0x119ff), (0x11a48, 0x11a4f), (0x11aa3, 0x11aaf),
    (0x11af9, 0x11bff), (0x11c09, 0x11c09), (0x11c37, 0x11c37), (0x11c46, 0x11c4f),
    (0x11c6d, 0x11c6f), (0x11c90, 0x11c91), (0x11ca8, 0x11ca8), (0x11cb7, 0x11cff),
    (0x11d07, 0x11d07), (0x11d0a, 0x11d0a), (0x11d37, 0x11d39), (0x11d3b, 0x11d3b),
    (0x11d3e, 0x11d3e), (0x11d48, 0x11d4f), (0x11d5a, 0x11d5f), (0x11d66, 0x11d66),
    (0x11d69, 0x11d69), (0x11d8f, 0x11d8f), (0x11d92, 0x11d92), (0x11d99, 0x11d9f),
    (0x11daa, 0x11edf), (0x11ef9, 0x11faf), (0x11fb1, 0x11fbf), (0x11ff2, 0x11ffe),
    (0x1239a, 0x123ff), (0x1246f, 0x1246f), (0x12475, 0x1247f), (0x12544, 0x12f8f),
    (0x12ff3, 0x12fff), (0x1342f, 0x143ff), (0x14647, 0x167ff), (0x16a39, 0x16a3f),
    (0x16a5f, 0x16a5f), (0x16a6a, 0x16a6d), (0x16abf, 0x16abf), (0x16aca, 0x16acf),
    (0x16aee, 0x16aef), (0x16af6, 0x16aff), (0x16b46, 0x16b4f), (0x16b5a, 0x16b5a),
    (0x16b62, 0x16b62), (0x16b78, 0x16b7c), (0x16b90, 0x16e3f), (0x16e9b, 0x16eff),
    (0x16f4b, 0x16f4e), (0x16f88, 0x16f8e), (0x16fa0, 0x16fdf), (0x16fe5, 0x16fef),
    (0x16ff2, 0x16fff), (0x187f8, 0x187ff), (0x18cd6, 0x18cff), (0x18d09, 0x1afef),
    (0x1aff4, 0x1aff4), (0x1affc, 0x1affc), (0x1afff, 0x1afff), (0x1b123, 0x1b14f),
    (0x1b153, 0x1b163), (0x1b168, 0x1b16f), (0x1b2fc, 0x1bbff), (0x1bc6b, 0x1bc6f),
    (0x1bc7d, 0x1bc7f), (0x1bc89, 0x1bc8f), (0x1bc9a, 0x1bc9b), (0x1bca0, 0x1ceff),
    (0x1cf2e, 0x1cf2f), (0x1cf47, 0x1cf4f), (0x1cfc4, 0x1cfff), (0x1d0f6, 0x1d0ff),
    (0x1d127, 0x1d128), (0x1d173, 0x1d17a), (0x1d1eb, 0x1d1ff), (0x1d246, 0x1d2df),
    (0x1d2f4, 0x1d2ff), (0x1d357, 0x1d35f), (0x1d379, 0x1d3ff), (0x1d455, 0x1d455),
    (0x1d49d, 0x1d49d), (0x1d4a0, 0x1d4a1), (0x1d4a3, 0x1d4a4), (0x1d4a7, 0x1d4a8),
    (0x1d4ad, 0x1d4ad), (0x1d4ba, 0x1d4ba), (0x1d4bc, 0x1d4bc), (0x1d4c4, 0x1d4c4),
    (0x1d506, 0x1d506), (0x1d50b, 0x1d50c), (0x1d515, 0x1d515), (0x1d51d, 0x1d51d),
    (0x1d53a, 0x1d53a), (0x1d53f, 0x1d53f), (0x1d545, 0x1d545), (0x1d547, 0x1d549),
    (0x1d551, 0x1d551), (0x1d6a6, 0x1d6a7), (0x1d7cc, 0x1d7cd), (0x1da8c, 0x1da9a),
    (0x1daa0, 0x1daa0), (0x1dab0, 0x1deff), (0x1df1f, 0x1dfff), (0x1e007, 0x1e007),
    (0x1e019, 0x1e01a), (0x1e022, 0x1e022), (0x1e025, 0x1e025), (0x1e02b, 0x1e0ff),
    (0x1e12d, 0x1e12f), (0x1e13e, 0x1e13f), (0x1e14a, 0x1e14d), (0x1e150, 0x1e28f),
    (0x1e2af, 0x1e2bf), (0x1e2fa, 0x1e2fe), (0x1e300, 0x1e7df), (0x1e7e7, 0x1e7e7),
    (0x1e7ec, 0x1e7ec), (0x1e7ef, 0x1e7ef), (0x1e7ff, 0x1e7ff), (0x1e8c5, 0x1e8c6),
    (0x1e8d7, 0x1e8ff), (0x1e94c, 0x1e94f), (0x1e95a, 0x1e95d), (0x1e960, 0x1ec70),
    (0x1ecb5, 0x1ed00), (0x1ed3e, 0x1edff), (0x1ee04, 0x1ee04), (0x1ee20, 0x1ee20),
    (0x1ee23, 0x1ee23), (0x1ee25, 0x1ee26), (0x1ee28, 0x1ee28), (0x1ee33, 0x1ee33),
    (0x1ee38, 0x1ee38), (0x1ee3a, 0x1ee3a), (0x1ee3c, 0x1ee41), (0x1ee43, 0x1ee46),
    (0x1ee48, 0x1ee48), (0x1ee4a, 0x1ee4a), (0x1ee4c, 0x1ee4c), (0x1ee50, 0x1ee50),
    (0x1ee53, 0x1ee53), (0x1ee55, 0x1ee56), (0x1ee58, 0x1ee58), (0x1ee5a, 0x1ee5a),
    (0x1ee5c, 0x1ee5c), (0x1ee5e, 0x1ee5e), (0x1ee60, 0x1ee60), (0x1ee63, 0x1ee63),
    (0x1ee65, 0x1ee66), (0x1ee6b, 0x1ee6b), (0x1ee73, 0x1ee73), (0x1ee78, 0x1ee78),
    (0x1ee7d, 0x1ee7d), (0x1ee7f, 0x1ee7f), (0x1ee8a, 0x1ee8a), (0x1ee9c, 0x1eea0),
    (0x1eea4, 0x1eea4), (0x1eeaa, 0x1eeaa), (0x1eebc, 0x1eeef), (0x1eef2, 0x1efff),
    (0x1f02c, 0x1f02f), (0x1f094, 0x1f09f), (0x1f0af, 0x1f0b0), (0x1f0c0, 0x1f0c0),
    (0x1f0d0, 0x1f0d0), (0x1f0f6, 0x1f0ff), (0x1f1ae, 0x1f1e5), (0x1f203, 0x1f20f),
    (0x1f23c, 0x1f23f), (0x1f249, 0x1f24f), (0x1f252, 0x1f25f), (0x1f266, 0x1f2ff),
    (0x1f6d8, 0x1f6dc), (0x1f6ed, 0x1f6ef), (0x1f6fd, 0x1f6ff), (0x1f774, 0x1f77f),
    (0x1f7d9, 0x1f7df), (0x1f7ec, 0x1f7ef), (0x1f7f1, 0x1f7ff), (0x1f80c, 0x1f80f),
    (0x1f848, 0x1f84f), (0x1f85a, 0x1f85f), (0x1f888, 0x1f88f), (0x1f8ae, 0x1f8af),
    (0x1f8b2, 0x1f8ff), (0x1fa54, 0x1fa5f), (0x1fa6e, 0x1fa6f), (0x1fa75, 0x1fa77),
    (0x1fa7d, 0x1fa7f), (0x1fa87, 0x1fa8f), (0x1faad, 0x1faaf), (0x1fabb, 0x1fabf),
    (0x1fac6, 0x1facf), (0x1fada, 0x1fadf), (0x1fae8, 0x1faef), (0x1faf7, 0x1faff),
    (0x1fb93, 0x1fb93), (0x1fbcb, 0x1fbef), (0x1fbfa, 0x1ffff), (0x2a6e0, 0x2a6ff),
    (0x2b739, 0x2b73f), (0x2b81e, 0x2b81f), (0x2cea2, 0x2ceaf), (0x2ebe1, 0x2f7ff),
    (0x2fa1e, 0x2ffff), (0x3134b, 0xe00ff), (0xe01f0, 0x10ffff),
];

/// A string as Python's `repr` writes it: single quotes unless the text holds a `'` and
/// no `"`, backslash escapes for the quote, `\\`, `\t \n \r`, and `\xNN` / `\uNNNN` /
/// `\UNNNNNNNN` for what is not printable.
pub fn py_repr_str(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.reserve(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if py_printable(c) => out.push(c),
            c => {
                let n = u32::from(c);
                let _ = if n < 0x100 {
                    write!(out, "\\x{n:02x}")
                } else if n < 0x10000 {
                    write!(out, "\\u{n:04x}")
                } else {
                    write!(out, "\\U{n:08x}")
                };
            }
        }
    }
    out.push(quote);
}

impl<'a> Sink<'a> for Repr {
    fn scalar(&mut self, value: &'a Value) {
        let out = &mut self.out;
        match value {
            Value::Null => out.push_str("None"),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::UInt(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Float(x) => write_float(out, *x, true),
            Value::Str(s) => py_repr_str(out, s),
            Value::Array(_) | Value::Object(_) => {}
        }
    }

    fn begin_array(&mut self, _len: usize) {
        self.out.push('[');
    }

    fn element(&mut self, index: usize) {
        if index > 0 {
            self.out.push_str(", ");
        }
    }

    fn end_array(&mut self) {
        self.out.push(']');
    }

    fn begin_object(&mut self, _len: usize) {
        self.out.push('{');
    }

    fn key(&mut self, key: &'a str, index: usize) {
        if index > 0 {
            self.out.push_str(", ");
        }
        py_repr_str(&mut self.out, key);
        self.out.push_str(": ");
    }

    fn end_object(&mut self) {
        self.out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Value {
        match parse_line(text.as_bytes()) {
            Ok(v) => v,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn error(bytes: &[u8]) -> ParseError {
        match parse_line(bytes) {
            Ok(v) => panic!("{bytes:?} parsed as {v:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn keeps_key_order_and_duplicates() {
        let v = parse(r#"{"b":1,"a":2,"b":3}"#);
        assert_eq!(
            v,
            Value::Object(vec![
                ("b".into(), Value::Int(1)),
                ("a".into(), Value::Int(2)),
                ("b".into(), Value::Int(3)),
            ])
        );
        assert_eq!(v.get("b"), Some(&Value::Int(3)), "the last value counts");
        assert_eq!(v.get("c"), None);
        assert_eq!(v.duplicate_keys(), vec!["b".to_string()]);
        assert_eq!(v.to_json(), r#"{"b":1,"a":2,"b":3}"#);
        assert_eq!(v.to_json_sorted(), r#"{"a":2,"b":1,"b":3}"#);
        assert_eq!(v.repr(), "{'b': 3, 'a': 2}", "as a Python dict holds it");
        let entries = v.dict_entries().unwrap_or_default();
        assert_eq!(entries, vec![("b", &Value::Int(3)), ("a", &Value::Int(2))]);
    }

    #[test]
    fn duplicate_key_paths() {
        let v = parse(
            r#"{"game":"a","hands":{"ali":[],"bo":[],"ali":["7C"]},"game":"b",
                "meta":{"t":[{"id":1,"id":2},[{"x":0,"x":1,"x":2}]]}}"#,
        );
        assert_eq!(
            v.duplicate_keys(),
            vec!["game", "hands.ali", "meta.t[0].id", "meta.t[1][0].x"]
        );
        assert!(parse(r#"{"a":{"b":1},"c":[{"b":2}]}"#)
            .duplicate_keys()
            .is_empty());
        // a big object takes the hashing path
        let mut text = String::from("{");
        for i in 0..40 {
            let _ = write!(text, "\"k{i}\":{i},");
        }
        text.push_str("\"k7\":0,\"k3\":1,\"k7\":2}");
        let big = parse(&text);
        assert_eq!(big.duplicate_keys(), vec!["k3", "k7"]);
        assert_eq!(big.get("k7"), Some(&Value::Int(2)));
        let entries = big.dict_entries().unwrap_or_default();
        assert_eq!(entries.len(), 40);
        assert_eq!(entries[7], ("k7", &Value::Int(2)));
    }

    #[test]
    fn depth_is_limited_without_overflowing() {
        // serde_json recurses once per level: at the full 1024 levels that is under 300 KB
        // of stack in a release build but about 1.9 MB in a debug one, so this runs on a
        // thread with a stated stack rather than the test harness's 2 MB default
        let run = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(depth_checks)
            .map(|handle| handle.join());
        assert!(matches!(run, Ok(Ok(()))));
    }

    fn depth_checks() {
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse_line(ok.as_bytes()).is_ok());
        let over = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let e = error(over.as_bytes());
        assert_eq!(e.message, "nested deeper than 1024 levels");
        assert!(!e.not_utf8);
        let deep = "[".repeat(100_000);
        assert_eq!(
            error(deep.as_bytes()).message,
            "nested deeper than 1024 levels"
        );
        let objects = "{\"a\":".repeat(100_000);
        assert_eq!(
            error(objects.as_bytes()).message,
            "nested deeper than 1024 levels"
        );
    }

    #[test]
    fn deep_values_built_by_hand_walk_without_recursion() {
        let mut v = Value::Null;
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        assert_ne!(v.fingerprint(), 0);
        assert_eq!(v.to_json().len(), 200_004);
        assert!(v.repr().starts_with("[[[["));
        assert!(v.duplicate_keys().is_empty());
        // dropping a value is recursive in Rust: take it apart by hand
        while let Value::Array(mut items) = v {
            v = items.pop().unwrap_or(Value::Null);
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse("9223372036854775807"), Value::Int(i64::MAX));
        assert_eq!(parse("-9223372036854775808"), Value::Int(i64::MIN));
        assert_eq!(parse("9223372036854775808"), Value::UInt(1 << 63));
        assert_eq!(parse("18446744073709551615"), Value::UInt(u64::MAX));
        assert_eq!(
            parse("18446744073709551616"),
            Value::Float(18446744073709551616.0)
        );
        assert_eq!(
            parse("123456789012345678901234567890").repr(),
            "1.2345678901234568e+29"
        );
        assert_eq!(parse("1.0"), Value::Float(1.0));
        assert_eq!(parse("1e2"), Value::Float(100.0));
        assert_ne!(parse("1").fingerprint(), parse("1.0").fingerprint());
        assert_eq!(parse("1.0").fingerprint(), parse("1.00").fingerprint());
        assert!(parse_line(b"1e400").is_err(), "beyond f64 is malformed");
        assert!(parse_line(b"NaN").is_err());
    }

    #[test]
    fn floats_render_like_python_and_orjson() {
        let cases = [
            ("1e100", "1e+100", "1e100"),
            ("1e16", "1e+16", "1e16"),
            ("1e15", "1000000000000000.0", "1000000000000000.0"),
            ("2.5e15", "2500000000000000.0", "2500000000000000.0"),
            ("0.00001", "1e-05", "0.00001"),
            ("0.0001", "0.0001", "0.0001"),
            ("1e-6", "1e-06", "1e-6"),
            ("1.5e-7", "1.5e-07", "1.5e-7"),
            ("5e-324", "5e-324", "5e-324"),
            (
                "1.7976931348623157e308",
                "1.7976931348623157e+308",
                "1.7976931348623157e308",
            ),
            (
                "12345678901234567.0",
                "1.2345678901234568e+16",
                "1.2345678901234568e16",
            ),
            ("-0.0", "-0.0", "-0.0"),
            ("0.1", "0.1", "0.1"),
            ("100.0", "100.0", "100.0"),
            ("-1e-10", "-1e-10", "-1e-10"),
            ("1.5", "1.5", "1.5"),
            // exact ties between two shortest spellings go to the even digit
            (
                "711917175578702.25",
                "711917175578702.2",
                "711917175578702.2",
            ),
            (
                "1297785754980971.25",
                "1297785754980971.2",
                "1297785754980971.2",
            ),
            ("0.3", "0.3", "0.3"),
            ("2.675", "2.675", "2.675"),
        ];
        for (text, python, orjson) in cases {
            let v = parse(text);
            assert_eq!(v.repr(), python, "{text}");
            assert_eq!(v.to_json(), orjson, "{text}");
        }
    }

    #[test]
    fn repr_like_python() {
        let v = parse(r#"{"a":[null,true,false,1,"10H"],"b":{},"c":[]}"#);
        assert_eq!(
            v.repr(),
            "{'a': [None, True, False, 1, '10H'], 'b': {}, 'c': []}"
        );
        assert_eq!(parse(r#""it's""#).repr(), "\"it's\"");
        assert_eq!(parse(r#""a'b\"c""#).repr(), r#"'a\'b"c'"#);
        assert_eq!(
            parse(r#""\\\n\t\u001f\u007f\u2028é\u0080\u00a0\u00ad""#).repr(),
            r"'\\\n\t\x1f\x7f\u2028é\x80\xa0\xad'"
        );
        assert_eq!(parse(r#""7♣""#).repr(), "'7♣'");
        assert_eq!(parse(r#""\ud83c\udca1""#).repr(), "'🂡'");
        assert_eq!(parse("[1, 2]").py_str(), "[1, 2]");
        assert_eq!(parse(r#""x""#).py_str(), "x");
    }

    #[test]
    fn json_text_like_orjson() {
        let v = parse(r#" { "b" : 1 , "a" : [ 1 , { "d" : null , "c" : true } ] } "#);
        assert_eq!(v.to_json(), r#"{"b":1,"a":[1,{"d":null,"c":true}]}"#);
        assert_eq!(v.to_json_sorted(), r#"{"a":[1,{"c":true,"d":null}],"b":1}"#);
        let s = parse(r#""\u001f\u007f\u2028é\"\\/\n\t\b\f\r""#);
        assert_eq!(
            s.to_json(),
            "\"\\u001f\u{7f}\u{2028}é\\\"\\\\/\\n\\t\\b\\f\\r\""
        );
        assert_eq!(parse(&s.to_json()), s);
    }

    #[test]
    fn fingerprint_ignores_order_and_spacing_only() {
        let a = parse(r#"{"game":"g","seq":1,"type":"pass","player":"ali"}"#);
        let b = parse(r#"{ "type": "pass", "player": "ali", "seq": 1, "game": "g" }"#);
        let c = parse(r#"{"game":"g","seq":1,"type":"pass","player":"alí"}"#);
        let d = parse(r#"{"game":"g","seq":1,"type":"pass","player":"ali","ts":null}"#);
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        assert_ne!(a.fingerprint(), d.fingerprint());
        assert_eq!(a.fingerprint() & 1, 1);
        // duplicates count, in written order
        let e = parse(r#"{"a":1,"a":2}"#);
        let f = parse(r#"{"a":2,"a":1}"#);
        assert_ne!(e.fingerprint(), f.fingerprint());
        assert_ne!(e.fingerprint(), parse(r#"{"a":2}"#).fingerprint());
        // structure is length-prefixed: no two of these collide
        let texts = [
            "[]",
            "[[]]",
            "[[],[]]",
            "[[[]]]",
            "{}",
            r#"{"":null}"#,
            "null",
            r#""""#,
            r#""a""#,
            r#"["a"]"#,
            r#"["","a"]"#,
            r#"["a",""]"#,
            r#""abcdefgh""#,
            r#""abcdefg""#,
            r#""abcdefgh\u0000""#,
            "0",
            "false",
            "true",
            "0.0",
            "-0.0",
            r#"{"a":"b"}"#,
            r#"["a","b"]"#,
            r#"{"a":[]}"#,
            r#"{"a":{}}"#,
        ];
        let mut seen = std::collections::HashSet::new();
        for t in texts {
            assert!(seen.insert(parse(t).fingerprint()), "{t} collides");
        }
    }

    #[test]
    fn fast_path_agrees_with_the_full_parser() {
        let taken = [
            r#"{"game":"t-1","seq":2,"type":"play","ts":"2026-08-30T21:58:41.678Z","player":"nasrin","card":"AC"}"#,
            r#" { "a" : [ 1 , -2 , true , false , null , "" , { } , [ ] ] , "b" : { "c" : "7♣" } } "#,
            "\t[1,\r\n2]\n",
            r#"{"a":1,"a":2,"b":{"x":0,"x":1}}"#,
            "\"a\u{7f}b\"",
            "999999999999999999",
            "-999999999999999999",
            "0",
            r#"{"":""}"#,
        ];
        let left = [
            "-0",
            "1.0",
            "1e2",
            "1E2",
            "01",
            "-",
            "9223372036854775807",
            "9999999999999999999",
            r#""a\nb""#,
            r#""\u00e9""#,
            "\"a\u{1}b\"",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "[1 2]",
            "nul",
            "truex",
            "[1] x",
            "",
            "   ",
            "\u{feff}{}",
            "\u{c}{}",
        ];
        for text in taken.iter().chain(&left) {
            let full = parse_full(text);
            match FastParser::parse(text) {
                Some((value, root)) => {
                    assert!(taken.contains(text), "{text:?} taken by the fast path");
                    assert_eq!(full.as_ref(), Ok(&value), "{text:?}");
                    assert_eq!(root | 1, value.fingerprint(), "{text:?}");
                }
                None => assert!(left.contains(text), "{text:?} left to the full parser"),
            }
            let fingerprinted = parse_line_fingerprinted(text.as_bytes());
            assert_eq!(
                fingerprinted.as_ref().map(|(v, _)| v),
                full.as_ref(),
                "{text:?}"
            );
            if let Ok((value, fingerprint)) = fingerprinted {
                assert_eq!(fingerprint, value.fingerprint(), "{text:?}");
            }
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(FastParser::parse(&deep).is_none());
        let parsed = parse_line_fingerprinted(deep.as_bytes());
        assert!(parsed.is_ok_and(|(v, f)| f == v.fingerprint()));
    }

    #[test]
    fn fingerprint_paths_agree() {
        let mut text = String::from(r#"{"z":1,"a":[{"y":null,"b":"long string here"}],"#);
        for i in 0..30 {
            let _ = write!(text, "\"k{}\":{i},", 30 - i);
        }
        text.push_str(r#""a":2.5,"m":{"q":true,"p":false,"q":0},"#);
        // keys whose words tie or hide a NUL: both paths must order them alike
        text.push_str(
            r#""n":{"ab":1,"a":2,"a\u0000":3,"abcdefghX":4,"abcdefghA":5,"abcdefgh":6,"é":7,"":8}}"#,
        );
        for v in [parse(&text), parse("[]"), parse(r#""x""#), parse("{}")] {
            let mut iterative = TreeHasher {
                open: Vec::new(),
                root: 0,
            };
            walk(&v, Order::Canonical, &mut iterative);
            let recursive = node_hash(&v, 1);
            assert_eq!(Some(iterative.root), recursive);
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(node_hash(&parse(&deep), 1), None);
        assert_ne!(parse(&deep).fingerprint(), 0);
    }

    #[test]
    fn errors() {
        let e = error(b"\x0c");
        assert!(e.message.starts_with("not valid JSON: "), "{}", e.message);
        assert!(!e.not_utf8);
        assert!(error(b"").message.starts_with("not valid JSON: "));
        assert!(error(b"[1] x")
            .message
            .starts_with("not valid JSON: trailing"));
        assert!(error(b"{\"a\":1}{}")
            .message
            .starts_with("not valid JSON: "));
        assert!(error(b"{\"a\":1,}").message.starts_with("not valid JSON: "));
        assert!(error(b"\"\\ud800\"")
            .message
            .starts_with("not valid JSON: "));
        let bom = error(b"\xef\xbb\xbf{}");
        assert!(
            !bom.not_utf8,
            "a BOM is valid UTF-8 but not JSON: the reader strips it"
        );
        let bad = error(b"{\"a\":\"\xff\"}");
        assert!(bad.not_utf8);
        assert!(bad.message.starts_with("not UTF-8: "), "{}", bad.message);
        assert!(error(b"{\"a\":1, \xc3}").not_utf8);
        // spaces, tabs and line ends around the value are fine
        assert_eq!(parse(" \t{}\r\n"), Value::Object(vec![]));
    }

    #[test]
    fn type_names() {
        let names: Vec<&str> = ["null", "true", "1", "1.5", "\"\"", "[]", "{}"]
            .iter()
            .map(|t| parse(t).type_name())
            .collect();
        assert_eq!(
            names,
            ["NoneType", "bool", "int", "float", "str", "list", "dict"]
        );
    }
}
