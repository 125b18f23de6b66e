//! A JSON value as a log line holds it, and the one parser every line goes through.
//!
//! Objects keep their keys in the order written; a key written twice is kept twice here
//! and judged by the notation (`schema`), so the router and the codec can never disagree
//! on which `game` a line names (issue: "decide duplicate keys once").
//!
//! INTERFACE (implemented in this module):
//! - `parse_line(bytes) -> Result<Value, ParseError>`: one line (without its ending);
//!   errors say what is wrong ("not valid JSON: …", "not UTF-8", "nested deeper than …");
//! - `Value::fingerprint()`: a 64-bit hash of the JSON value with key order and spacing
//!   ignored (notation.md: "Identical repeated lines are the same JSON value"), never 0;
//! - `Value::get(key)`: the first value under `key` in an object;
//! - `Value::repr()`: the value rendered for messages the way Python's `repr` shows the
//!   decoded value (`'10H'`, `5`, `None`, `['a', 'b']`, `{'a': 1}`, `True`).

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
    Str(String),
    Array(Vec<Value>),
    /// keys in the order written, duplicates kept
    Object(Vec<(String, Value)>),
}
