//! What the validator writes: one [`GameVerdict`] per game, one [`ErrorRecord`] per line
//! that belongs to no game, and their JSON-lines form (notation.md, "The validator's
//! verdict"), byte for byte as `haftkhabis validate --json` writes them (compact, keys in
//! the documented order, non-ASCII text as UTF-8, control characters escaped as orjson
//! and serde_json escape them).

use std::collections::HashMap;
use std::sync::Arc;

use crate::event::Header;
use crate::json::Text;
use crate::machine::{HandOutcome, Snapshot, Table};
use crate::rows::KeptLine;
use crate::validator::{EventFact, Step};
use crate::violation::{Code, Violation};

/// A game's status (notation.md). Precedence: `invalid` > `violations` > `aborted` >
/// `compliant` / `incomplete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// complete, no violation
    Compliant,
    /// at least one violation (even in an aborted or unfinished game)
    Violations,
    /// no violation, but the log stops before the game's end
    Incomplete,
    Aborted,
    /// no usable header: nothing could be replayed
    Invalid,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Compliant => "compliant",
            Status::Violations => "violations",
            Status::Incomplete => "incomplete",
            Status::Aborted => "aborted",
            Status::Invalid => "invalid",
        }
    }
}

/// One game's verdict, with what the engine knew of it.
#[derive(Clone, Debug)]
pub struct GameVerdict {
    pub game: String,
    /// the header's `ruleset` when it is a string
    pub ruleset: Option<String>,
    pub status: Status,
    /// sorted by seq, the ones without a seq first; found order kept within a seq
    pub violations: Vec<Violation>,
    /// the decided hands (None for an invalid game)
    pub hands: Option<Vec<HandOutcome>>,
    /// match points per player in seat order (None for an invalid game or elimination play)
    pub totals: Option<Vec<(Text, i64)>>,
    /// the files the game's lines came from, in the order first seen (display names)
    pub files: Vec<Arc<str>>,
    /// how many lines named the game (repeats and set-aside lines included)
    pub lines: u64,
    pub header: Option<Header>,
    pub table: Option<Table>,
    /// per replayed line, when the validator keeps facts
    pub facts: Option<Vec<EventFact>>,
    /// per replayed line, when the game is recorded
    pub steps: Vec<Step>,
    /// the steps carry the state after them (else [`GameVerdict::states`] replays them)
    pub states_kept: bool,
    /// ingest mode: every distinct line of the game as received, in input order
    pub kept: Vec<KeptLine>,
}

impl GameVerdict {
    /// The verdict's violations that no recorded step carries, in verdict order: the
    /// reader's (a sequence gap, a line without a usable seq, a conflicting line with a
    /// taken seq, set aside). A replay shows these beside the steps, not on one.
    pub fn unplaced_violations(&self) -> Vec<&Violation> {
        type Key<'a> = (
            Option<u64>,
            Code,
            Option<&'a str>,
            &'a str,
            Option<&'a str>,
            Option<u64>,
        );
        fn key(v: &Violation) -> Key<'_> {
            (
                v.seq,
                v.code,
                v.player.as_deref(),
                v.message.as_str(),
                v.file.as_deref(),
                v.line,
            )
        }
        let mut on_steps: HashMap<Key<'_>, usize> = HashMap::new();
        for violation in self.steps.iter().flat_map(|s| &s.violations) {
            *on_steps.entry(key(violation)).or_insert(0) += 1;
        }
        self.violations
            .iter()
            .filter(|v| match on_steps.get_mut(&key(v)) {
                Some(left) if *left > 0 => {
                    *left -= 1;
                    false
                }
                _ => true,
            })
            .collect()
    }

    /// Visit the recorded steps `range` (places in `steps`) with the state after each: the
    /// kept one, or worked out again from the steps' events
    /// ([`crate::validator::replay_states`]).
    pub fn visit_states(
        &self,
        range: std::ops::Range<usize>,
        each: impl FnMut(&Step, Option<&Snapshot>),
    ) {
        crate::validator::visit_states(&self.game, &self.steps, self.states_kept, range, each);
    }

    /// The state after the recorded step at `index` (None past the last, or without one).
    pub fn state(&self, index: usize) -> Option<Snapshot> {
        let mut found = None;
        self.visit_states(index..index + 1, |_, state| found = state.cloned());
        found
    }

    /// The match winners (empty when no hand is decided or the game is invalid).
    pub fn winners(&self) -> Vec<Text> {
        match &self.table {
            Some(table) if self.hands.as_ref().is_some_and(|h| !h.is_empty()) => {
                table.match_winners()
            }
            _ => Vec::new(),
        }
    }

    /// Append the verdict's JSON object (no line ending) to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"kind\":\"game\",\"game\":");
        write_str(out, &self.game);
        out.extend_from_slice(b",\"ruleset\":");
        write_opt_str(out, self.ruleset.as_deref());
        out.extend_from_slice(b",\"status\":\"");
        out.extend_from_slice(self.status.name().as_bytes());
        out.extend_from_slice(b"\",\"violations\":[");
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_violation(out, v);
        }
        out.extend_from_slice(b"],\"hands\":");
        match &self.hands {
            None => out.extend_from_slice(b"null"),
            Some(hands) => {
                out.push(b'[');
                for (i, hand) in hands.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_hand(out, hand);
                }
                out.push(b']');
            }
        }
        out.extend_from_slice(b",\"totals\":");
        write_points(out, self.totals.as_deref());
        out.push(b'}');
    }

    /// The verdict's JSON object as one line (no line ending).
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(256);
        self.write_json(&mut out);
        bytes_to_string(out)
    }
}

/// A line (or a file) that belongs to no game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorRecord {
    pub file: Arc<str>,
    pub line: Option<u64>,
    pub code: Code,
    pub message: String,
    /// ingest mode: the line's bytes, for the quarantine (None for a file's error)
    pub raw: Option<Box<[u8]>>,
}

impl ErrorRecord {
    /// Append `{"kind":"error","file","line","code","message"}` (no line ending) to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"kind\":\"error\",\"file\":");
        write_str(out, &self.file);
        out.extend_from_slice(b",\"line\":");
        write_opt_u64(out, self.line);
        out.extend_from_slice(b",\"code\":\"");
        out.extend_from_slice(self.code.name().as_bytes());
        out.extend_from_slice(b"\",\"message\":");
        write_str(out, &self.message);
        out.push(b'}');
    }

    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(128);
        self.write_json(&mut out);
        bytes_to_string(out)
    }
}

/// `{"seq","code","player","message","file","line"}`
pub fn write_violation(out: &mut Vec<u8>, v: &Violation) {
    out.extend_from_slice(b"{\"seq\":");
    write_opt_u64(out, v.seq);
    out.extend_from_slice(b",\"code\":\"");
    out.extend_from_slice(v.code.name().as_bytes());
    out.extend_from_slice(b"\",\"player\":");
    write_opt_str(out, v.player.as_deref());
    out.extend_from_slice(b",\"message\":");
    write_str(out, &v.message);
    out.extend_from_slice(b",\"file\":");
    write_opt_str(out, v.file.as_deref());
    out.extend_from_slice(b",\"line\":");
    write_opt_u64(out, v.line);
    out.push(b'}');
}

/// `{"hand","winners","scores","reason","order"}`
pub fn write_hand(out: &mut Vec<u8>, hand: &HandOutcome) {
    out.extend_from_slice(b"{\"hand\":");
    write_u64(out, hand.hand);
    out.extend_from_slice(b",\"winners\":");
    write_str_list(out, &hand.winners);
    out.extend_from_slice(b",\"scores\":");
    write_points(out, hand.scores.as_deref());
    out.extend_from_slice(b",\"reason\":\"");
    out.extend_from_slice(hand.reason.name().as_bytes());
    out.extend_from_slice(b"\",\"order\":");
    match &hand.order {
        None => out.extend_from_slice(b"null"),
        Some(order) => write_str_list(out, order),
    }
    out.push(b'}');
}

fn write_points<S: AsRef<str>>(out: &mut Vec<u8>, points: Option<&[(S, i64)]>) {
    let Some(points) = points else {
        out.extend_from_slice(b"null");
        return;
    };
    out.push(b'{');
    for (i, (player, n)) in points.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, player.as_ref());
        out.push(b':');
        write_i64(out, *n);
    }
    out.push(b'}');
}

fn write_str_list<S: AsRef<str>>(out: &mut Vec<u8>, items: &[S]) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, item.as_ref());
    }
    out.push(b']');
}

fn write_opt_str(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => write_str(out, text),
        None => out.extend_from_slice(b"null"),
    }
}

fn write_opt_u64(out: &mut Vec<u8>, n: Option<u64>) {
    match n {
        Some(n) => write_u64(out, n),
        None => out.extend_from_slice(b"null"),
    }
}

fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

fn write_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    write_u64(out, n.unsigned_abs());
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JSON string as orjson writes it: `"` and `\` escaped, control characters as
/// `\b \t \n \f \r` or `\u00xx`, everything else (DEL, non-ASCII) as is.
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x09 => b't',
            0x0a => b'n',
            0x0c => b'f',
            0x0d => b'r',
            0x00..=0x1f => 0,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        if short != 0 {
            out.extend_from_slice(&[b'\\', short]);
        } else {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]);
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

fn bytes_to_string(out: Vec<u8>) -> String {
    // only whole `str`s and ASCII were written
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::OutcomeReason;

    fn verdict() -> GameVerdict {
        GameVerdict {
            game: "t41-0007".into(),
            ruleset: Some("bazito".into()),
            status: Status::Violations,
            violations: vec![Violation {
                seq: Some(3),
                code: Code::NotYourTurn,
                player: Some("omid".into()),
                message: "it is \"sara\"'s turn\n\u{1}é\u{7f}".into(),
                file: Some(Arc::from("logs/a.jsonl")),
                line: Some(4),
            }],
            hands: Some(vec![HandOutcome {
                hand: 1,
                winners: vec!["sara".into()],
                scores: Some(vec![("sara".into(), 0), ("omid".into(), -12)]),
                reason: OutcomeReason::Out,
                order: None,
                winning_card: None,
                multiplier: 1,
            }]),
            totals: Some(vec![("sara".into(), 0), ("omid".into(), 12)]),
            files: vec![],
            lines: 9,
            header: None,
            table: None,
            facts: None,
            steps: vec![],
            states_kept: true,
            kept: vec![],
        }
    }

    #[test]
    fn game_json_as_orjson_writes_it() {
        let want = concat!(
            r#"{"kind":"game","game":"t41-0007","ruleset":"bazito","status":"violations","#,
            r#""violations":[{"seq":3,"code":"not_your_turn","player":"omid","#,
            r#""message":"it is \"sara\"'s turn\n\u0001é"#,
            "\u{7f}",
            r#"","file":"logs/a.jsonl","line":4}],"#,
            r#""hands":[{"hand":1,"winners":["sara"],"scores":{"sara":0,"omid":-12},"#,
            r#""reason":"out","order":null}],"totals":{"sara":0,"omid":12}}"#
        );
        assert_eq!(verdict().to_json(), want);
        let mut invalid = verdict();
        invalid.status = Status::Invalid;
        invalid.ruleset = None;
        invalid.violations.clear();
        invalid.hands = None;
        invalid.totals = None;
        assert_eq!(
            invalid.to_json(),
            r#"{"kind":"game","game":"t41-0007","ruleset":null,"status":"invalid","violations":[],"hands":null,"totals":null}"#
        );
    }

    #[test]
    fn error_json() {
        let error = ErrorRecord {
            file: Arc::from("<stdin>"),
            line: None,
            code: Code::MalformedJson,
            raw: None,
            message: "cannot open: \\x".into(),
        };
        assert_eq!(
            error.to_json(),
            r#"{"kind":"error","file":"<stdin>","line":null,"code":"malformed_json","message":"cannot open: \\x"}"#
        );
        let mut out = Vec::new();
        write_i64(&mut out, i64::MIN);
        write_u64(&mut out, u64::MAX);
        assert_eq!(out, b"-922337203685477580818446744073709551615");
    }
}
