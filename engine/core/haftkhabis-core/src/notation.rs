//! The codec between log lines and events (notation.md): field checks, repairs, encoding.
//!
//! INTERFACE (implemented in this module):
//! - `decode(obj: &Value, game: &str, seq: u64) -> Decoded`: a JSON object whose `game`
//!   and `seq` are already known to be usable → the event (None when set aside) and its
//!   notation problems (each a `schema` message), exactly as `engine/events.py` decodes;
//! - `encode(event: &Event) -> Value`: the JSON object a producer writes;
//! - `game_id(obj: &Value) -> Option<&str>` / `seq(obj: &Value) -> Option<u64>`: the
//!   routing fields when usable.

use crate::event::Event;

/// One decoded line: the event (None when set aside) and its notation problems.
#[derive(Clone, Debug, Default)]
pub struct Decoded {
    pub event: Option<Event>,
    pub issues: Vec<String>,
}
