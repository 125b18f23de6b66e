//! What the validator writes: one [`GameVerdict`] per game, one [`ErrorRecord`] per line
//! that belongs to no game, in their JSON-lines form (notation.md, "The validator's
//! verdict"), byte for byte as `haftkhabis validate --json` writes them (compact, keys in
//! the documented order, non-ASCII text as UTF-8, control characters escaped as orjson
//! and serde_json escape them); and [`VerdictWriter`], the validator's sink that writes
//! each verdict as soon as its game is judged.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::game::GameVerdict;
use crate::machine::HandOutcome;
use crate::validator::{ErrorRecord, Sink};
use crate::violation::Violation;

/// What a [`VerdictWriter`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub games: u64,
    pub violations: u64,
    /// line errors
    pub errors: u64,
    /// games per status
    pub statuses: BTreeMap<&'static str, u64>,
}

impl Written {
    /// Count a game's verdict: the game, its violations, its status.
    pub fn count(&mut self, verdict: &GameVerdict) {
        self.games += 1;
        self.violations += verdict.violations.len() as u64;
        *self.statuses.entry(verdict.status.name()).or_default() += 1;
    }
}

/// The most line errors a [`VerdictWriter`] holds before it writes them out.
pub const ERRORS_HELD: usize = 4096;

/// The validator's sink that writes `validate --json`: each verdict's line as soon as its
/// game is judged, and the line errors it is handed, to `out` in chunks of about `chunk`
/// bytes, whole lines each (memory stays flat in the number of games). The first failure
/// to write stops the writing; [`VerdictWriter::flush`] reports it.
///
/// Line errors the validator meets are held (written after the verdicts, by
/// [`VerdictWriter::write_held_errors`]) up to [`ERRORS_HELD`]; past it they are written
/// as they come, so a file of a million bad lines is never held as records.
pub struct VerdictWriter<W: Write> {
    out: W,
    buffer: Vec<u8>,
    held: Vec<ErrorRecord>,
    chunk: usize,
    written: Written,
    failure: Option<io::Error>,
}

impl<W: Write> VerdictWriter<W> {
    pub fn new(out: W, chunk: usize) -> Self {
        VerdictWriter {
            out,
            buffer: Vec::with_capacity(chunk.saturating_add(4096).min(1 << 24)),
            chunk,
            held: Vec::new(),
            written: Written::default(),
            failure: None,
        }
    }

    /// What was written so far.
    pub fn written(&self) -> &Written {
        &self.written
    }

    /// Whether writing has failed (nothing more is written).
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }

    /// Write the line errors held so far.
    pub fn write_held_errors(&mut self) {
        let held = std::mem::take(&mut self.held);
        self.write_errors(&held);
    }

    /// Write each line error's line.
    pub fn write_errors(&mut self, errors: &[ErrorRecord]) {
        for error in errors {
            self.written.errors += 1;
            error.write_json(&mut self.buffer);
            self.buffer.push(b'\n');
            self.spill();
        }
    }

    /// Write what is gathered and flush `out`; the first failure to write, if any (taken:
    /// it is reported once).
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_out();
        if self.failure.is_none() {
            if let Err(error) = self.out.flush() {
                self.failure = Some(error);
            }
        }
        match self.failure.take() {
            Some(error) => {
                // nothing more is written after a failure
                self.failure = Some(io::Error::other("an earlier write failed"));
                Err(error)
            }
            None => Ok(()),
        }
    }

    /// The output, the writer done with.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Hand a full chunk to `out`.
    fn spill(&mut self) {
        if self.buffer.len() >= self.chunk {
            self.write_out();
        }
    }

    /// Hand what is gathered to `out` (dropped once writing has failed).
    fn write_out(&mut self) {
        if self.failure.is_none() && !self.buffer.is_empty() {
            if let Err(error) = self.out.write_all(&self.buffer) {
                self.failure = Some(error);
            }
        }
        self.buffer.clear();
    }
}

impl<W: Write> Sink for VerdictWriter<W> {
    type Game = ();

    fn judged(&mut self, verdict: GameVerdict, _: ()) {
        self.written.count(&verdict);
        verdict.write_json(&mut self.buffer);
        self.buffer.push(b'\n');
        self.spill();
    }

    /// Held, up to [`ERRORS_HELD`] (see the type's doc).
    fn error(&mut self, error: ErrorRecord) -> Option<ErrorRecord> {
        self.held.push(error);
        if self.held.len() >= ERRORS_HELD {
            self.write_held_errors();
        }
        None
    }
}

impl GameVerdict {
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
    use std::sync::Arc;

    use super::*;
    use crate::game::Status;
    use crate::machine::OutcomeReason;
    use crate::violation::Code;

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

    /// Collects what it is given, each `write_all` as one chunk; fails once `fail_after`
    /// chunks were taken.
    struct Chunks {
        chunks: Vec<Vec<u8>>,
        fail_after: usize,
    }

    impl Write for Chunks {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.chunks.len() >= self.fail_after {
                return Err(io::Error::from_raw_os_error(28));
            }
            self.chunks.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_writer_hands_over_whole_lines_in_chunks_and_counts_them() {
        let line = verdict().to_json();
        let out = Chunks {
            chunks: Vec::new(),
            fail_after: usize::MAX,
        };
        let mut writer = VerdictWriter::new(out, 2 * line.len() + 1);
        for _ in 0..5 {
            writer.judged(verdict(), ());
        }
        let error = ErrorRecord {
            file: Arc::from("a.jsonl"),
            line: Some(2),
            code: Code::Schema,
            message: "no game".into(),
            raw: None,
        };
        writer.write_errors(std::slice::from_ref(&error));
        writer.flush().expect("written");
        let written = writer.written().clone();
        let out = writer.into_inner();
        // two verdicts fill a chunk; the last verdict and the error are written at the end
        let lines_per_chunk: Vec<usize> = out
            .chunks
            .iter()
            .map(|c| c.iter().filter(|&&b| b == b'\n').count())
            .collect();
        assert_eq!(lines_per_chunk, [2, 2, 2]);
        assert!(out.chunks.iter().all(|c| c.ends_with(b"\n")));
        let text = String::from_utf8(out.chunks.concat()).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6);
        assert!(lines[..5].iter().all(|l| *l == line));
        assert_eq!(lines[5], error.to_json());
        assert_eq!(
            (written.games, written.violations, written.errors),
            (5, 5, 1)
        );
        assert_eq!(written.statuses.get("violations"), Some(&5));
    }

    #[test]
    fn the_writer_stops_at_the_first_failure_and_reports_it() {
        let out = Chunks {
            chunks: Vec::new(),
            fail_after: 1,
        };
        let mut writer = VerdictWriter::new(out, 1);
        for _ in 0..3 {
            writer.judged(verdict(), ());
        }
        assert!(writer.failed());
        let error = writer.flush().expect_err("a failure");
        assert_eq!(error.raw_os_error(), Some(28));
        assert!(writer.failed() && writer.into_inner().chunks.len() == 1);
    }
}
