//! The validator: lines in, one verdict per game out (notation.md, "The validator's verdict").
//!
//! Lines of many games may be interleaved and spread over files in any order; [`Validator`]
//! routes each line to its game (by the parsed `game`), drops identical repeats (same JSON
//! value: [`Value::fingerprint`]), sets aside a later different line at a `seq` already
//! seen, and feeds each game's lines to its [`GameRun`] in `seq` order as soon as they are
//! contiguous, so a game in order costs no buffering. Lines that come early wait as raw
//! bytes (parsed again when their turn comes). `finish()` replays what is left (reporting
//! gaps) and returns the verdicts.
//!
//! Memory is flat in the number of games and in the size of `seq` gaps:
//! - a game's seen lines are one fingerprint each (a dense vector for the seqs replayed,
//!   which are contiguous from 0, plus the waiting lines keyed by seq), never an array
//!   spanning a gap (issue: "100,000 lines whose seqs step by 4,095 reached 3.4 GB");
//! - a **finished** game (closed by `result`/`abort`, or complete: its match over and its
//!   last hand ended) is held for a window of further input lines
//!   ([`ValidatorOptions::hold_lines`], default [`DEFAULT_HOLD_LINES`]) so a late line —
//!   a shipper's retry, a trailing `result` — is still judged; once the window passes
//!   without a line of the game, its verdict is written ([`Validator::drain_finished`]
//!   or a `feed_*_with` sink) and its state dropped, keeping only a tombstone (a 128-bit
//!   hash of its id and the line count then: ~24 bytes).
//!
//! **Decision (late lines):** a line of a game whose verdict was already written is not
//! judged (there is no state left to judge it against, and its verdict is out); it becomes
//! an error record `{"kind":"error", "code":"unexpected_event", "message":"… verdict was
//! already written N lines earlier …"}`. This includes an identical repeat that would have
//! been dropped silently within the window. Open games (not finished) are held until the
//! input ends, exactly as before.
//!
//! **Ingest mode** ([`ValidatorOptions::keep_lines`]): each game also keeps its distinct
//! lines as received ([`KeptLine`], handed out with the verdict for the warehouse rows of
//! [`crate::rows`]); a line of a game whose verdict was already handed out is not an
//! error but a [`LateLine`] (the ingest replays the game again from the union of its
//! lines); a game without a line for [`ValidatorOptions::idle_lines`] lines is judged as
//! it stands (a log with a gap never closes), so memory stays flat.

use std::cmp::Reverse;
use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use crate::event::{Event, Header, Kind};
use crate::fastline;
use crate::json::{self, ParseError, Text, Value};
use crate::machine::{read_header, Closure, LineFact, Snapshot, Table};
use crate::notation;
use crate::reader::{display_name, expand_paths, InputPathError, LineReader};
use crate::rows::{KeptLine, LineCells};
use crate::verdict::{ErrorRecord, GameVerdict, Status};
use crate::violation::{Code, Violation};

/// How many further input lines a finished game is held for before its verdict is written.
pub const DEFAULT_HOLD_LINES: u64 = 100_000;
/// How often (in input lines) idle games are looked for, in ingest mode.
const IDLE_CHECK_EVERY: u64 = 16_384;

/// Returned by a strict replay at the first violation, or by a replay of no lines.
#[derive(Clone, Debug, PartialEq)]
pub enum ReplayError {
    Violation(Box<Violation>),
    NoLines,
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Violation(v) => {
                match v.seq {
                    Some(seq) => write!(f, "seq {seq}: ")?,
                    None => write!(f, "seq None: ")?,
                }
                write!(f, "{}: {}", v.code.name(), v.message)
            }
            ReplayError::NoLines => f.write_str("no lines to replay"),
        }
    }
}

impl std::error::Error for ReplayError {}

/// One replayed line: the event, what it broke, and the state after it.
#[derive(Clone, Debug)]
pub struct Step {
    pub seq: u64,
    pub file: Option<Arc<str>>,
    pub line: Option<u64>,
    /// None when the line was set aside
    pub event: Option<Event>,
    /// the line's JSON object as parsed
    pub raw: Value,
    pub violations: Vec<Violation>,
    /// the hand the line belongs to: the hand of the state after it (an `end` line is its
    /// hand's last line), 0 for the lines before the first deal
    pub hand: u64,
    /// the state after the line (None before the first deal or without a table); None
    /// too when the run did not keep states ([`RunOptions::states`]): [`replay_states`]
    /// works them out again
    pub state: Option<Snapshot>,
    /// what the machine knew of the line (None when it was not applied)
    pub fact: Option<LineFact>,
}

impl Step {
    /// The hand the line belongs to (0 for the lines before the first deal).
    pub fn hand(&self) -> u64 {
        self.hand
    }
}

/// The state after each of `steps[..stop]` (recorded without their states), worked out
/// again by feeding the steps' events to a fresh table exactly as the run fed them: the
/// header's settings make the table, every later step with an event is applied. `each`
/// gets the step's index and the table after it (None before a usable header).
///
/// A long game's states take far more memory and time to keep than to replay: a support
/// tool opening one step of a 2,000-line game needs two states, not 2,000.
pub fn replay_states(
    game: &str,
    steps: &[Step],
    stop: usize,
    mut each: impl FnMut(usize, Option<&Table>),
) {
    let mut table: Option<Table> = None;
    for (index, step) in steps[..stop.min(steps.len())].iter().enumerate() {
        match (table.as_mut(), &step.event) {
            (
                None,
                Some(Event {
                    kind: Kind::Header(header),
                    ..
                }),
            ) if step.seq == 0 => {
                table = read_header(header)
                    .settings
                    .map(|settings| Table::new(settings, game));
            }
            (Some(table), Some(event)) => {
                table.apply(event);
            }
            _ => {}
        }
        each(index, table.as_ref());
    }
}

/// Visit `steps[range]` with the state after each: its kept state when `kept`, else the
/// one [`replay_states`] works out.
pub fn visit_states(
    game: &str,
    steps: &[Step],
    kept: bool,
    range: std::ops::Range<usize>,
    mut each: impl FnMut(&Step, Option<&Snapshot>),
) {
    let range = range.start.min(steps.len())..range.end.min(steps.len());
    if kept {
        for step in &steps[range] {
            each(step, step.state.as_ref());
        }
        return;
    }
    replay_states(game, steps, range.end, |index, table| {
        if index >= range.start {
            each(&steps[index], table.and_then(Table::snapshot).as_ref());
        }
    });
}

/// What the engine knew of one replayed line: the hand it fell in and the phase before
/// it (a draw in phase `seven` is a 7 total, in `gift` a 2's gift, …).
#[derive(Clone, Debug, PartialEq)]
pub struct EventFact {
    pub seq: u64,
    pub hand: Option<u64>,
    pub phase: Option<&'static str>,
    /// the codes of the violations placed on the line
    pub codes: Vec<Code>,
    /// the machine's facts of the line; None when it was not applied (the header, a
    /// set-aside line, a line of an invalid game)
    pub detail: Option<LineFact>,
}

/// How one game is replayed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// keep every step (event, raw line, violations, hand)
    pub record: bool,
    /// with `record`: keep the state after each step too (else [`replay_states`])
    pub states: bool,
    /// stop at the first violation: `feed`/`note` return it as an error
    pub strict: bool,
    /// keep an [`EventFact`] per replayed line
    pub facts: bool,
}

/// One game's replay: header, table, violations; optionally every step.
pub struct GameRun {
    game: String,
    header: Option<Header>,
    table: Option<Table>,
    violations: Vec<Violation>,
    invalid: bool,
    options: RunOptions,
    steps: Vec<Step>,
    files: Vec<Arc<str>>,
    lines: u64,
    facts: Option<Vec<EventFact>>,
}

fn player_of(obj: &Value) -> Option<String> {
    notation::player_of(obj).map(str::to_string)
}

fn repr_of(value: Option<&Value>) -> String {
    value.map_or_else(|| "None".to_string(), Value::repr)
}

/// One line as a game takes it.
#[derive(Debug)]
pub enum Line {
    /// its JSON value, decoded where it is replayed (`notation::decode`)
    Json(Value),
    /// its event, read straight from a clean line ([`fastline`]): what decoding its value
    /// would give, with no issue
    Event(Event),
}

impl Line {
    /// Read `raw`: straight to its event when the line is clean and `fast`, else to its
    /// JSON value; with the line's fingerprint.
    pub fn read(raw: &[u8], fast: bool) -> Result<(Line, u64), ParseError> {
        if fast {
            if let Some((event, fingerprint)) = fastline::read(raw) {
                return Ok((Line::Event(event), fingerprint));
            }
        }
        json::parse_line_fingerprinted(raw)
            .map(|(value, fingerprint)| (Line::Json(value), fingerprint))
    }

    /// The line's `seq` when usable.
    fn seq(&self) -> Option<u64> {
        match self {
            Line::Json(obj) => notation::seq(obj),
            Line::Event(event) => Some(event.common.seq),
        }
    }

    /// The line's `player` when it is a string: the actor a violation is attributed to.
    fn player(&self) -> Option<String> {
        match self {
            Line::Json(obj) => player_of(obj),
            Line::Event(event) => event.kind.actor().map(str::to_string),
        }
    }

    /// The line's `game` when usable, else the error that sets it apart.
    pub fn game(&self) -> Result<&str, (Code, String)> {
        match self {
            Line::Json(obj) => game_of_line(obj),
            Line::Event(event) => Ok(&event.common.game),
        }
    }

    /// The line's `seq` for a message: as written.
    fn seq_repr(&self) -> String {
        match self {
            Line::Json(obj) => repr_of(obj.get("seq")),
            Line::Event(event) => event.common.seq.to_string(),
        }
    }

    /// The warehouse cells of the line.
    fn cells(&self) -> LineCells {
        match self {
            Line::Json(obj) => LineCells::of(obj),
            Line::Event(event) => LineCells::of_event(event),
        }
    }
}

impl GameRun {
    pub fn new(game: &str, options: RunOptions) -> GameRun {
        GameRun {
            game: game.to_string(),
            header: None,
            table: None,
            violations: Vec::new(),
            invalid: false,
            options,
            steps: Vec::new(),
            files: Vec::new(),
            lines: 0,
            facts: options.facts.then(Vec::new),
        }
    }

    pub fn game(&self) -> &str {
        &self.game
    }
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }
    pub fn table(&self) -> Option<&Table> {
        self.table.as_ref()
    }
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }
    pub fn facts(&self) -> Option<&[EventFact]> {
        self.facts.as_deref()
    }
    /// No usable header: nothing is replayed.
    pub fn is_invalid(&self) -> bool {
        self.invalid
    }

    /// Closed by `result`/`abort`, or complete (match over and its last hand ended):
    /// nothing more may follow.
    pub fn is_finished(&self) -> bool {
        !self.invalid
            && self
                .table
                .as_ref()
                .is_some_and(|t| t.closed_by().is_some() || (t.match_over() && !t.hand_open()))
    }

    /// Count a line that names this game, from `file`.
    fn saw_line(&mut self, file: &Arc<str>) {
        self.lines += 1;
        let known = self
            .files
            .last()
            .is_some_and(|f| Arc::ptr_eq(f, file) || f == file)
            || self.files.iter().any(|f| f == file);
        if !known {
            self.files.push(file.clone());
        }
    }

    /// Record `found` at `file:line`; the index of the first one placed.
    fn add(
        &mut self,
        found: Vec<Violation>,
        file: Option<&Arc<str>>,
        line: Option<u64>,
    ) -> Result<usize, ReplayError> {
        let start = self.violations.len();
        for v in found {
            self.violations.push(Violation {
                file: file.cloned(),
                line,
                ..v
            });
        }
        if self.options.strict && self.violations.len() > start {
            return Err(ReplayError::Violation(Box::new(
                self.violations[start].clone(),
            )));
        }
        Ok(start)
    }

    /// A violation found by the reader (sequence, no_header, schema of an unusable seq),
    /// already carrying its file and line.
    pub fn note(&mut self, violation: Violation) -> Result<(), ReplayError> {
        let (file, line) = (violation.file.clone(), violation.line);
        self.add(vec![violation], file.as_ref(), line).map(|_| ())
    }

    /// Replay the line at `seq` (lines must come in seq order).
    pub fn feed(
        &mut self,
        seq: u64,
        obj: Value,
        file: Option<&Arc<str>>,
        line: Option<u64>,
    ) -> Result<(), ReplayError> {
        self.feed_line(seq, Line::Json(obj), file, line)
    }

    /// [`GameRun::feed`] of a line read either way ([`Line::read`]).
    pub fn feed_line(
        &mut self,
        seq: u64,
        input: Line,
        file: Option<&Arc<str>>,
        line: Option<u64>,
    ) -> Result<(), ReplayError> {
        if self.invalid {
            return Ok(());
        }
        // taken apart where it lands: the event is not moved again
        let (event, issues, obj) = match input {
            Line::Json(obj) => {
                let notation::Decoded { event, issues } = notation::decode(&obj, &self.game, seq);
                (event, issues, Some(obj))
            }
            Line::Event(event) => (Some(event), Vec::new(), None),
        };
        let mut found: Vec<Violation> = Vec::new();
        if !issues.is_empty() {
            let player = obj.as_ref().and_then(player_of);
            for message in issues {
                found.push(Violation::new(
                    Some(seq),
                    Code::Schema,
                    player.clone(),
                    message,
                ));
            }
        }
        let mut detail: Option<LineFact> = None;
        if seq == 0 && self.table.is_none() {
            match event.as_ref().map(|e| &e.kind) {
                Some(Kind::Header(header)) => {
                    let reading = read_header(header);
                    self.header = Some(Header::clone(header));
                    for (code, message) in reading.violations {
                        found.push(Violation::new(Some(seq), code, None, message));
                    }
                    match reading.settings {
                        Some(settings) => self.table = Some(Table::new(settings, &self.game)),
                        None => self.invalid = true,
                    }
                }
                _ => {
                    found.push(Violation::new(
                        Some(seq),
                        Code::NoHeader,
                        None,
                        format!(
                            "the line at seq 0 is a {}, not the game header",
                            match (&obj, &event) {
                                (Some(obj), _) => repr_of(obj.get("type")),
                                (None, Some(event)) => Value::from(event.kind.type_name()).repr(),
                                (None, None) => repr_of(None),
                            }
                        ),
                    ));
                    self.invalid = true;
                }
            }
        } else if let (Some(event), Some(table)) = (event.as_ref(), self.table.as_mut()) {
            found.extend(table.apply(event));
            if self.facts.is_some() || self.options.record {
                detail = Some(table.last_fact().clone());
            }
            if !self.options.record {
                // a closed hand's cards are no longer needed: free them
                table.free_closed_hand();
            }
        }
        let start = self.add(found, file, line)?;
        if let (Some(facts), Some(table)) = (self.facts.as_mut(), self.table.as_ref()) {
            let (hand, phase) = match &detail {
                Some(d) => (d.hand, d.phase),
                None if table.hand_open() => (table.last_fact().hand, None),
                None => (None, None),
            };
            facts.push(EventFact {
                seq,
                hand,
                phase,
                codes: self.violations[start..].iter().map(|v| v.code).collect(),
                detail: detail.clone(),
            });
        }
        if self.options.record {
            let state = match (self.options.states, self.table.as_ref()) {
                (true, Some(table)) => table.snapshot(),
                _ => None,
            };
            let hand = self
                .table
                .as_ref()
                .and_then(Table::hand_number)
                .unwrap_or(0);
            // a line read straight to its event is shown as the notation writes it
            let raw = obj.unwrap_or_else(|| event.as_ref().map_or(Value::Null, notation::encode));
            self.steps.push(Step {
                seq,
                file: file.cloned(),
                line,
                event,
                raw,
                violations: self.violations[start..].to_vec(),
                hand,
                state,
                fact: detail,
            });
        }
        Ok(())
    }

    /// The game's verdict (notation.md: status precedence `invalid` > `violations` >
    /// `aborted` > `compliant` / `incomplete`).
    pub fn verdict(self) -> GameVerdict {
        let ruleset = match self.header.as_ref().and_then(|h| h.ruleset.as_ref()) {
            Some(Value::Str(name)) => Some(name.to_string()),
            _ => None,
        };
        let mut violations = self.violations;
        // stable: the found order is kept within a seq; no seq sorts first
        violations.sort_by_key(|v| v.seq.map_or(0, |s| u128::from(s) + 1));
        let (status, hands, totals) = match (&self.table, self.invalid) {
            (Some(table), false) => {
                let outcomes = table.decided_outcomes();
                let totals = (!table.elimination()).then(|| {
                    let mut totals: Vec<(Text, i64)> =
                        table.players().iter().map(|p| (p.clone(), 0)).collect();
                    for outcome in &outcomes {
                        for (player, points) in outcome.scores.iter().flatten() {
                            if let Some(slot) = totals.iter_mut().find(|(p, _)| p == player) {
                                slot.1 += points;
                            }
                        }
                    }
                    totals
                });
                let status = if !violations.is_empty() {
                    Status::Violations
                } else if table.closed_by() == Some(Closure::Abort) {
                    Status::Aborted
                } else if table.is_complete() {
                    Status::Compliant
                } else {
                    Status::Incomplete
                };
                (status, Some(outcomes), totals)
            }
            _ => (Status::Invalid, None, None),
        };
        GameVerdict {
            game: self.game,
            ruleset,
            status,
            violations,
            hands,
            totals,
            files: self.files,
            lines: self.lines,
            header: self.header,
            table: self.table,
            facts: self.facts,
            steps: self.steps,
            states_kept: self.options.states,
            kept: Vec::new(),
        }
    }
}

/// A line that came before its turn: kept as bytes, parsed again when drained.
struct Waiting {
    fingerprint: u64,
    raw: Box<[u8]>,
    file: Arc<str>,
    line: u64,
}

/// The reader's book-keeping for one game: what seqs it has seen, what waits.
struct Pending {
    key: Arc<str>,
    run: GameRun,
    /// the next seq to replay; every seq below it has been replayed
    next_seq: u64,
    /// fingerprints of the replayed seqs `0..next_seq` (before `finish`)
    seen: Vec<u64>,
    /// lines seen beyond `next_seq`, by seq (their fingerprints included)
    waiting: BTreeMap<u64, Waiting>,
    /// `lines_read` at the game's latest line
    last_line: u64,
    /// first-seen order, for `finish`
    order: u64,
    /// closed or complete: in the hold queue
    finished: bool,
    /// ingest mode: the distinct lines as received, and their fingerprints
    kept: Option<(Vec<KeptLine>, HashSet<u64, GameIdHashing>)>,
    /// fingerprints of the lines set aside by the reader (a conflict at a taken seq, a
    /// line without a usable seq): "a line repeated identically (a shipper's retry) is
    /// dropped silently", whichever line it repeats
    set_aside: HashSet<u64>,
}

impl Pending {
    /// The fingerprint of the line accepted at `seq`, 0 when none.
    fn fingerprint_at(&self, seq: u64) -> u64 {
        match usize::try_from(seq) {
            Ok(i) if i < self.seen.len() => self.seen[i],
            _ => self.waiting.get(&seq).map_or(0, |w| w.fingerprint),
        }
    }

    /// Replay `obj` at `next_seq`, then whatever waits right behind it.
    fn replay(&mut self, fingerprint: u64, input: Line, file: &Arc<str>, line: u64) {
        let seq = self.next_seq;
        self.seen.push(fingerprint);
        self.next_seq = seq.saturating_add(1);
        // validator runs are never strict: feed cannot fail
        let _ = self.run.feed_line(seq, input, Some(file), Some(line));
        while !self.waiting.is_empty() {
            let seq = self.next_seq;
            let Some(w) = self.waiting.remove(&seq) else {
                break;
            };
            self.seen.push(w.fingerprint);
            self.next_seq = seq.saturating_add(1);
            // it parsed when it came; parsing is deterministic
            if let Ok((input, _)) = Line::read(&w.raw, !self.run.options.record) {
                let _ = self.run.feed_line(seq, input, Some(&w.file), Some(w.line));
            }
        }
    }

    /// Replay what waits, reporting gaps, and judge the game.
    fn finish(mut self) -> GameVerdict {
        let waiting = std::mem::take(&mut self.waiting);
        let no_header = self.next_seq == 0;
        if let Some((&first, w)) = waiting.iter().next().filter(|_| no_header) {
            let _ = self.run.note(Violation {
                seq: Some(first),
                code: Code::NoHeader,
                player: None,
                message: format!("game {} has no header line at seq 0", self.run.game),
                file: Some(w.file.clone()),
                line: Some(w.line),
            });
            self.run.invalid = true;
            // the missing seq 0 is the missing header, not also a gap; any other seq
            // missing is one (nothing is replayed: the game is invalid)
            self.next_seq = 1;
        }
        for (seq, w) in waiting {
            let next = self.next_seq;
            if seq != next {
                let missing = if seq == next.saturating_add(1) {
                    format!("seq {next}")
                } else {
                    format!("seqs {next}-{}", seq - 1)
                };
                let _ = self.run.note(Violation {
                    seq: Some(seq),
                    code: Code::Sequence,
                    player: None,
                    message: format!("{missing} missing before this line"),
                    file: Some(w.file.clone()),
                    line: Some(w.line),
                });
            }
            if !no_header {
                if let Ok((input, _)) = Line::read(&w.raw, !self.run.options.record) {
                    let _ = self.run.feed_line(seq, input, Some(&w.file), Some(w.line));
                }
            }
            self.next_seq = seq.saturating_add(1);
        }
        let mut verdict = self.run.verdict();
        if let Some((kept, _)) = self.kept {
            verdict.kept = kept;
        }
        verdict
    }
}

/// The game a parsed line belongs to (routing is by the parsed `game`, the last one
/// written when the key repeats), or why it belongs to none: "not a JSON object" is
/// `malformed_json`, no usable `game` id is `schema`.
pub fn game_of_line(obj: &Value) -> Result<&str, (Code, String)> {
    if !matches!(obj, Value::Object(_)) {
        let message = format!("the line is JSON but not an object ({})", obj.type_name());
        return Err((Code::MalformedJson, message));
    }
    notation::game_id(obj).ok_or_else(|| {
        let mut message =
            "the line has no usable 'game' id (1-128 characters of A-Z a-z 0-9 . _ : -)"
                .to_string();
        if let Some(value) = obj.get("game").filter(|v| !matches!(v, Value::Null)) {
            message.push_str(", got ");
            message.push_str(&value.repr());
        }
        (Code::Schema, message)
    })
}

/// How a [`Validator`] runs.
#[derive(Clone, Debug)]
pub struct ValidatorOptions {
    /// games replayed with every step kept
    pub record: HashSet<String>,
    /// a recorded game keeps the state after each step (else they are replayed when
    /// asked for: [`GameVerdict::states`])
    pub record_states: bool,
    /// only these games are replayed (others are skipped unread)
    pub only: Option<HashSet<String>>,
    /// keep an [`EventFact`] per replayed line
    pub facts: bool,
    /// further input lines a finished game is held for (see the module doc)
    pub hold_lines: u64,
    /// ingest mode: keep every distinct line of a game, late lines handed out
    pub keep_lines: bool,
    /// ingest mode: judge a game that got no line for this many input lines
    pub idle_lines: u64,
}

/// A line of a game whose verdict was already handed out (ingest mode).
#[derive(Clone, Debug)]
pub struct LateLine {
    pub game: String,
    pub raw: Box<[u8]>,
    pub file: Arc<str>,
    pub line: u64,
    pub fingerprint: u64,
}

impl Default for ValidatorOptions {
    fn default() -> Self {
        ValidatorOptions {
            record: HashSet::new(),
            record_states: true,
            only: None,
            facts: false,
            hold_lines: DEFAULT_HOLD_LINES,
            keep_lines: false,
            idle_lines: u64::MAX,
        }
    }
}

/// How the table of held games hashes a game id: a folded multiply over its bytes, keyed
/// at random per validator (so a log cannot choose ids that collide), and several times
/// cheaper than SipHash on ids of a few dozen bytes (every line looks its game up).
#[derive(Clone)]
struct GameIdHashing {
    seed: u64,
    key: u64,
}

impl GameIdHashing {
    fn new() -> GameIdHashing {
        let random = RandomState::new();
        GameIdHashing {
            seed: random.hash_one(0x6861_6674_u64),
            key: random.hash_one(0x6b68_6162_u64) | 1,
        }
    }
}

impl BuildHasher for GameIdHashing {
    type Hasher = GameIdHasher;

    fn build_hasher(&self) -> GameIdHasher {
        GameIdHasher {
            h: self.seed,
            key: self.key,
        }
    }
}

/// See [`GameIdHashing`].
struct GameIdHasher {
    h: u64,
    key: u64,
}

impl GameIdHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        let r = u128::from(self.h ^ word) * u128::from(self.key);
        self.h = (r as u64) ^ ((r >> 64) as u64);
    }
}

impl Hasher for GameIdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        let mut word = (bytes.len() as u64) << 56;
        for (i, &b) in rest.iter().enumerate() {
            word |= u64::from(b) << (8 * i);
        }
        self.mix(word);
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.mix(u64::from(byte) ^ 0x5a00);
    }

    /// A line's fingerprint (ingest mode's set of a game's distinct lines).
    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.mix(word);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let r = u128::from(self.h) * u128::from(self.key ^ 0x9e37_79b9_7f4a_7c15);
        (r as u64) ^ ((r >> 64) as u64)
    }
}

/// Feed it files (or lines); finished games stream out through
/// [`Validator::drain_finished`] (or the sink of a `feed_*_with`), the rest at
/// [`Validator::finish`]. Line errors collect in [`Validator::errors`].
pub struct Validator {
    options: ValidatorOptions,
    games: HashMap<Arc<str>, Box<Pending>, GameIdHashing>,
    errors: Vec<ErrorRecord>,
    lines_read: u64,
    next_order: u64,
    /// finished games by the `lines_read` at which they are due
    hold: BinaryHeap<Reverse<(u64, Arc<str>)>>,
    /// verdicts written and not yet drained
    ready: Vec<GameVerdict>,
    /// finished games whose verdict is written: 128-bit id hash → `lines_read` then
    tombstones: HashMap<u128, u64>,
    tomb_keys: (RandomState, RandomState),
    /// ingest mode: lines of games already handed out
    late: Vec<LateLine>,
    /// `lines_read` at which idle games are next looked for
    next_idle_check: u64,
    /// the most open (not yet finished) games held at once
    peak_open: usize,
    /// how ingest mode's sets of fingerprints hash (keyed once per validator)
    line_hashing: GameIdHashing,
    /// held games that are finished (waiting out their hold window)
    finished_held: usize,
}

impl Default for Validator {
    fn default() -> Self {
        Validator::new(ValidatorOptions::default())
    }
}

impl Validator {
    pub fn new(options: ValidatorOptions) -> Validator {
        Validator {
            options,
            games: HashMap::with_hasher(GameIdHashing::new()),
            errors: Vec::new(),
            lines_read: 0,
            next_order: 0,
            hold: BinaryHeap::new(),
            ready: Vec::new(),
            tombstones: HashMap::new(),
            tomb_keys: (RandomState::new(), RandomState::new()),
            late: Vec::new(),
            next_idle_check: IDLE_CHECK_EVERY,
            peak_open: 0,
            finished_held: 0,
            line_hashing: GameIdHashing::new(),
        }
    }

    /// The most open games (not yet finished) held at once so far: what memory grows
    /// with (finished games are held only for the hold window).
    pub fn peak_open_games(&self) -> usize {
        self.peak_open
    }

    /// Ingest mode: the lines of games already handed out, since the last call.
    pub fn take_late(&mut self) -> Vec<LateLine> {
        std::mem::take(&mut self.late)
    }

    /// Lines fed so far (non-blank lines, malformed ones included).
    pub fn lines_read(&self) -> u64 {
        self.lines_read
    }

    /// The line errors so far.
    pub fn errors(&self) -> &[ErrorRecord] {
        &self.errors
    }

    /// The line errors so far, handed over (so they can stream out too).
    pub fn take_errors(&mut self) -> Vec<ErrorRecord> {
        std::mem::take(&mut self.errors)
    }

    /// Games held (open, or finished and within their hold window).
    pub fn open_games(&self) -> usize {
        self.games.len()
    }

    /// A held game's replay so far.
    pub fn run(&self, game: &str) -> Option<&GameRun> {
        self.games.get(game).map(|p| &p.run)
    }

    // ------------------------------------------------------------------- input

    /// Every file of `paths` (files, directories, `-`), in input order; verdicts due
    /// collect for [`Validator::drain_finished`]. Fails before reading anything when a
    /// path does not exist.
    pub fn feed_paths(&mut self, paths: &[String]) -> Result<(), InputPathError> {
        for file in &expand_paths(paths)? {
            self.feed_file(file);
        }
        Ok(())
    }

    /// As [`Validator::feed_paths`], each verdict handed to `sink` as soon as it is due.
    pub fn feed_paths_with<F: FnMut(GameVerdict)>(
        &mut self,
        paths: &[String],
        sink: &mut F,
    ) -> Result<(), InputPathError> {
        for file in &expand_paths(paths)? {
            self.feed_file_with(file, sink);
        }
        Ok(())
    }

    /// One file (`-` is standard input); verdicts due collect for `drain_finished`.
    pub fn feed_file(&mut self, file: &str) {
        self.feed_reader(&mut LineReader::open(file));
    }

    /// As [`Validator::feed_file`], each verdict handed to `sink` as soon as it is due.
    pub fn feed_file_with<F: FnMut(GameVerdict)>(&mut self, file: &str, sink: &mut F) {
        self.feed_reader_with(&mut LineReader::open(file), sink);
    }

    /// Every line of `reader` (named by its file's display name); verdicts due collect
    /// for `drain_finished`.
    pub fn feed_reader(&mut self, reader: &mut LineReader) {
        self.read_all(reader, None);
    }

    /// As [`Validator::feed_reader`], each verdict handed to `sink` as soon as it is due.
    pub fn feed_reader_with<F: FnMut(GameVerdict)>(
        &mut self,
        reader: &mut LineReader,
        sink: &mut F,
    ) {
        self.read_all(reader, Some(sink));
    }

    /// Every record of a spool ([`crate::spool`]), its file indexes naming `files`; each
    /// verdict handed to `sink` as soon as it is due. Fails when the spool cannot be read
    /// or names a file index beyond `files`.
    pub fn feed_spool_with<F: FnMut(GameVerdict)>(
        &mut self,
        path: &std::path::Path,
        files: &[Arc<str>],
        sink: &mut F,
    ) -> std::io::Result<()> {
        let mut reader = crate::spool::SpoolReader::open(path)?;
        while let Some((index, number, raw)) = reader.next_record()? {
            let Some(file) = files.get(index as usize) else {
                let message = format!("spool record names file {index} of {}", files.len());
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    message,
                ));
            };
            self.feed_line(raw, file, number);
            if !self.ready.is_empty() {
                self.ready.drain(..).for_each(&mut *sink);
            }
        }
        Ok(())
    }

    fn read_all(&mut self, reader: &mut LineReader, mut sink: Option<&mut dyn FnMut(GameVerdict)>) {
        let name: Arc<str> = Arc::from(display_name(reader.file()));
        while let Some(item) = reader.next_line() {
            match item {
                Ok((number, line)) => {
                    self.feed_line(line, &name, number);
                    if let Some(sink) = sink.as_mut() {
                        if !self.ready.is_empty() {
                            self.ready.drain(..).for_each(&mut **sink);
                        }
                    }
                }
                Err(error) => self.errors.push(ErrorRecord {
                    file: name.clone(),
                    line: error.line,
                    code: Code::MalformedJson,
                    message: error.message,
                    raw: None,
                }),
            }
        }
    }

    /// One raw line (without its ending) from `file` at `line`.
    pub fn feed_line(&mut self, raw: &[u8], file: &Arc<str>, line: u64) {
        self.lines_read += 1;
        // a recorded game keeps every line's value as parsed (its steps show it)
        let fast = self.options.record.is_empty();
        match Line::read(raw, fast) {
            Ok((input, fingerprint)) => self.route(input, fingerprint, raw, file, line),
            Err(error) => self.error(
                (file, line, raw),
                Code::MalformedJson,
                format!("the line is {error}"),
            ),
        }
        self.expire();
    }

    /// A line that belongs to no game (its bytes kept in ingest mode, for the quarantine).
    fn error(&mut self, (file, line, raw): (&Arc<str>, u64, &[u8]), code: Code, message: String) {
        self.errors.push(ErrorRecord {
            file: file.clone(),
            line: Some(line),
            code,
            message,
            raw: self.options.keep_lines.then(|| raw.into()),
        });
    }

    fn tomb_key(&self, game: &str) -> u128 {
        let high = self.tomb_keys.0.hash_one(game);
        let low = self.tomb_keys.1.hash_one(game);
        (u128::from(high) << 64) | u128::from(low)
    }

    fn route(&mut self, input: Line, fingerprint: u64, raw: &[u8], file: &Arc<str>, line: u64) {
        let game = match input.game() {
            Ok(game) => game,
            Err((code, message)) => {
                self.error((file, line, raw), code, message);
                return;
            }
        };
        let now = self.lines_read;
        let hold = self.options.hold_lines;
        if let Some(pending) = self.games.get_mut(game) {
            if let Some(key) = Self::accept(pending, input, fingerprint, raw, file, line, now) {
                self.hold.push(Reverse((now.saturating_add(hold), key)));
                self.finished_held += 1;
            }
            return;
        }
        if let Some(only) = &self.options.only {
            if !only.contains(game) {
                return;
            }
        }
        if let Some(&written) = self.tombstones.get(&self.tomb_key(game)) {
            if self.options.keep_lines {
                self.late.push(LateLine {
                    game: game.to_string(),
                    raw: raw.into(),
                    file: file.clone(),
                    line,
                    fingerprint,
                });
                return;
            }
            let message = format!(
                "game {game}'s verdict was already written {} lines earlier; a line that comes \
                 after it is not judged",
                now.saturating_sub(written)
            );
            self.error((file, line, raw), Code::UnexpectedEvent, message);
            return;
        }
        let key: Arc<str> = Arc::from(game);
        let options = RunOptions {
            record: self.options.record.contains(game),
            states: self.options.record_states,
            strict: false,
            facts: self.options.facts,
        };
        let mut pending = Box::new(Pending {
            key: key.clone(),
            run: GameRun::new(game, options),
            next_seq: 0,
            seen: Vec::new(),
            waiting: BTreeMap::new(),
            last_line: now,
            order: self.next_order,
            finished: false,
            set_aside: HashSet::new(),
            kept: self
                .options
                .keep_lines
                .then(|| (Vec::new(), HashSet::with_hasher(self.line_hashing.clone()))),
        });
        self.next_order += 1;
        if let Some(key) = Self::accept(&mut pending, input, fingerprint, raw, file, line, now) {
            self.hold.push(Reverse((now.saturating_add(hold), key)));
            self.finished_held += 1;
        }
        self.games.insert(key, pending);
        let open = self.games.len().saturating_sub(self.finished_held);
        self.peak_open = self.peak_open.max(open);
    }

    /// Route one parsed line (and its [`Value::fingerprint`]) into its game; the game's key
    /// when it has just finished.
    fn accept(
        pending: &mut Pending,
        input: Line,
        fingerprint: u64,
        raw: &[u8],
        file: &Arc<str>,
        line: u64,
        now: u64,
    ) -> Option<Arc<str>> {
        pending.last_line = now;
        pending.run.saw_line(file);
        let seq = input.seq();
        if pending.kept.is_some() {
            let seen = seq.map_or(0, |s| pending.fingerprint_at(s));
            // every distinct line is kept; an identical repeat of one kept is not
            if let Some((kept, distinct)) = pending
                .kept
                .as_mut()
                .filter(|(_, d)| !d.contains(&fingerprint))
            {
                distinct.insert(fingerprint);
                kept.push(KeptLine {
                    raw: raw.into(),
                    file: file.clone(),
                    line,
                    fingerprint,
                    seq,
                    set_aside: seq.is_none() || seen != 0,
                    cells: input.cells(),
                });
            }
        }
        let seen = seq.map_or(0, |s| pending.fingerprint_at(s));
        if seen == fingerprint || pending.set_aside.contains(&fingerprint) {
            return None; // an identical repeat of a line already read
        }
        let run = &mut pending.run;
        let Some(seq) = seq else {
            pending.set_aside.insert(fingerprint);
            let message = format!(
                "'seq' must be a whole number 0 or more, got {}; the line is set aside",
                input.seq_repr()
            );
            let _ = run.note(Violation {
                seq: None,
                code: Code::Schema,
                player: input.player(),
                message,
                file: Some(file.clone()),
                line: Some(line),
            });
            return None;
        };
        if seen != 0 {
            pending.set_aside.insert(fingerprint);
            let _ = pending.run.note(Violation {
                seq: Some(seq),
                code: Code::Sequence,
                player: input.player(),
                message: format!(
                    "another, different line already has seq {seq}; this one is set aside"
                ),
                file: Some(file.clone()),
                line: Some(line),
            });
            return None;
        }
        if seq != pending.next_seq {
            pending.waiting.insert(
                seq,
                Waiting {
                    fingerprint,
                    raw: raw.into(),
                    file: file.clone(),
                    line,
                },
            );
            return None;
        }
        pending.replay(fingerprint, input, file, line);
        if !pending.finished && pending.run.is_finished() {
            pending.finished = true;
            return Some(pending.key.clone());
        }
        None
    }

    /// Write the verdicts of finished games whose hold window has passed.
    fn expire(&mut self) {
        let now = self.lines_read;
        while let Some(Reverse((due, _))) = self.hold.peek() {
            if *due > now {
                break;
            }
            let Some(Reverse((_, game))) = self.hold.pop() else {
                break;
            };
            let Some(pending) = self.games.get(&game) else {
                continue; // already finished by `finish_game`
            };
            let due = pending.last_line.saturating_add(self.options.hold_lines);
            if due > now {
                self.hold.push(Reverse((due, game)));
                continue;
            }
            if let Some(verdict) = self.close_game(&game, true) {
                self.ready.push(verdict);
            }
        }
        if now >= self.next_idle_check {
            self.next_idle_check = now.saturating_add(IDLE_CHECK_EVERY);
            self.close_idle();
        }
    }

    /// Ingest mode: judge the games that got no line for `idle_lines` lines.
    fn close_idle(&mut self) {
        let idle = self.options.idle_lines;
        if idle == u64::MAX {
            return;
        }
        let horizon = self.lines_read.saturating_sub(idle);
        let mut quiet: Vec<(u64, Arc<str>)> = self
            .games
            .values()
            .filter(|p| p.last_line <= horizon && self.lines_read >= idle)
            .map(|p| (p.order, p.key.clone()))
            .collect();
        quiet.sort_unstable();
        for (_, game) in quiet {
            if let Some(verdict) = self.close_game(&game, true) {
                self.ready.push(verdict);
            }
        }
    }

    fn close_game(&mut self, game: &str, tombstone: bool) -> Option<GameVerdict> {
        let pending = self.games.remove(game)?;
        if pending.finished {
            self.finished_held = self.finished_held.saturating_sub(1);
        }
        if tombstone {
            let key = self.tomb_key(game);
            self.tombstones.insert(key, self.lines_read);
        }
        Some(pending.finish())
    }

    // ------------------------------------------------------------------ output

    /// The verdicts written since the last call (finished games past their window).
    pub fn drain_finished(&mut self) -> Vec<GameVerdict> {
        std::mem::take(&mut self.ready)
    }

    /// Judge `game` now, whatever its state (a later line of it is then a late line).
    pub fn finish_game(&mut self, game: &str) -> Option<GameVerdict> {
        self.close_game(game, true)
    }

    /// The input has ended: the verdicts not yet drained, then every held game's, in the
    /// order their games were first seen.
    pub fn finish(&mut self) -> Vec<GameVerdict> {
        let mut out = std::mem::take(&mut self.ready);
        let mut held: Vec<Box<Pending>> = self.games.drain().map(|(_, p)| p).collect();
        held.sort_by_key(|p| p.order);
        out.extend(held.into_iter().map(|p| p.finish()));
        self.hold.clear();
        self.finished_held = 0;
        out
    }
}

/// Validate every game in `paths` (files, directories, `-`): the verdicts and line errors.
pub fn validate_paths(
    paths: &[String],
) -> Result<(Vec<GameVerdict>, Vec<ErrorRecord>), InputPathError> {
    let mut validator = Validator::default();
    let mut verdicts = Vec::new();
    validator.feed_paths_with(paths, &mut |v| verdicts.push(v))?;
    verdicts.extend(validator.finish());
    Ok((verdicts, validator.take_errors()))
}

/// Replay one game with every step recorded (for `replay`, the dashboard, reports): its
/// verdict (None when no line names it) and the line errors. The game is never cut off
/// by a hold window.
pub fn replay_game(
    paths: &[String],
    game: &str,
) -> Result<(Option<GameVerdict>, Vec<ErrorRecord>), InputPathError> {
    let one: HashSet<String> = std::iter::once(game.to_string()).collect();
    let mut validator = Validator::new(ValidatorOptions {
        record: one.clone(),
        only: Some(one),
        facts: false,
        hold_lines: u64::MAX,
        ..ValidatorOptions::default()
    });
    validator.feed_paths(paths)?;
    let verdict = validator.finish().into_iter().find(|v| v.game == game);
    Ok((verdict, validator.take_errors()))
}

/// Replay one game's parsed lines, already in seq order (simulator, tests); line numbers
/// count from 1, no file. `strict` returns the first violation as an error; otherwise
/// violations are collected and the replay goes on. A line without a usable `seq` is
/// `schema` (seq null) and set aside.
pub fn replay_lines<I: IntoIterator<Item = Value>>(
    lines: I,
    strict: bool,
    record: bool,
) -> Result<GameRun, ReplayError> {
    let mut run: Option<GameRun> = None;
    for (index, obj) in lines.into_iter().enumerate() {
        let number = index as u64 + 1;
        let run = run.get_or_insert_with(|| {
            let game =
                notation::game_id(&obj).map_or_else(|| repr_of(obj.get("game")), str::to_string);
            GameRun::new(
                &game,
                RunOptions {
                    record,
                    states: true,
                    strict,
                    facts: false,
                },
            )
        });
        match notation::seq(&obj) {
            Some(seq) => run.feed(seq, obj, None, Some(number))?,
            None => {
                let message = format!(
                    "'seq' must be a whole number 0 or more, got {}; the line is set aside",
                    repr_of(obj.get("seq"))
                );
                run.note(Violation {
                    seq: None,
                    code: Code::Schema,
                    player: player_of(&obj),
                    message,
                    file: None,
                    line: Some(number),
                })?;
            }
        }
    }
    run.ok_or(ReplayError::NoLines)
}

#[cfg(test)]
mod tests {
    //! Routing, dedupe, conflicts, gaps and `no_header` need no rules: their games have
    //! no usable header, so nothing reaches the machine. Tests named `machine_*` replay
    //! real headers and events (they need `machine.rs` and `notation.rs` filled in).
    use super::*;

    fn file() -> Arc<str> {
        Arc::from("t.jsonl")
    }

    fn feed(validator: &mut Validator, lines: &[&str]) {
        let name = file();
        for (i, line) in lines.iter().enumerate() {
            validator.feed_line(line.as_bytes(), &name, i as u64 + 1);
        }
    }

    fn run_all(lines: &[&str]) -> (Vec<GameVerdict>, Vec<ErrorRecord>) {
        let mut validator = Validator::default();
        feed(&mut validator, lines);
        let verdicts = validator.finish();
        (verdicts, validator.take_errors())
    }

    /// (seq, code, line) of the violations with one of `codes`.
    fn found(verdict: &GameVerdict, codes: &[Code]) -> Vec<(Option<u64>, Code, Option<u64>)> {
        verdict
            .violations
            .iter()
            .filter(|v| codes.contains(&v.code))
            .map(|v| (v.seq, v.code, v.line))
            .collect()
    }

    const PLAY_A: &str = r#"{"game":"g1","seq":1,"type":"pass","player":"a"}"#;

    #[test]
    fn routes_interleaved_games_in_first_seen_order() {
        let (verdicts, errors) = run_all(&[
            r#"{"game":"g2","seq":2,"type":"pass","player":"b"}"#,
            PLAY_A,
            r#"{"game":"g2","seq":1,"type":"pass","player":"b"}"#,
            r#"{"game":"g1","seq":3,"type":"pass","player":"a"}"#,
        ]);
        assert!(errors.is_empty());
        let games: Vec<&str> = verdicts.iter().map(|v| v.game.as_str()).collect();
        assert_eq!(games, ["g2", "g1"]);
        // no seq 0: no_header at the first line present, nothing replayed
        assert_eq!(
            found(&verdicts[0], &[Code::NoHeader]),
            [(Some(1), Code::NoHeader, Some(3))]
        );
        assert_eq!(
            found(&verdicts[1], &[Code::NoHeader]),
            [(Some(1), Code::NoHeader, Some(2))]
        );
        assert_eq!(
            verdicts[1].violations[0].message,
            "game g1 has no header line at seq 0"
        );
        for v in &verdicts {
            assert_eq!(v.status, Status::Invalid);
            assert_eq!((v.lines, v.files.len()), (2, 1));
            assert!(v.hands.is_none() && v.totals.is_none());
        }
    }

    #[test]
    fn identical_repeats_dropped_different_ones_set_aside() {
        let (verdicts, _) = run_all(&[
            PLAY_A,
            r#"{ "player" : "a", "type":"pass", "seq":1, "game":"g1" }"#,
            r#"{"game":"g1","seq":1,"type":"pass","player":"a","x_retry":1}"#,
            PLAY_A,
        ]);
        let v = &verdicts[0];
        assert_eq!(v.lines, 4);
        assert_eq!(
            found(v, &[Code::Sequence, Code::NoHeader]),
            [
                (Some(1), Code::Sequence, Some(3)),
                (Some(1), Code::NoHeader, Some(1))
            ]
        );
        let conflict = &v.violations[0];
        assert_eq!(conflict.player.as_deref(), Some("a"));
        assert_eq!(
            conflict.message,
            "another, different line already has seq 1; this one is set aside"
        );
    }

    #[test]
    fn gaps_reported_at_the_next_line_present() {
        let (verdicts, _) = run_all(&[
            r#"{"game":"g","seq":6,"type":"pass","player":"a"}"#,
            r#"{"game":"g","seq":0,"type":"pass","player":"a"}"#,
            r#"{"game":"g","seq":2,"type":"pass","player":"a"}"#,
            r#"{"game":"g","seq":5,"type":"pass","player":"a"}"#,
        ]);
        let v = &verdicts[0];
        assert_eq!(v.status, Status::Invalid);
        assert_eq!(
            found(v, &[Code::Sequence, Code::NoHeader]),
            [
                (Some(0), Code::NoHeader, Some(2)),
                (Some(2), Code::Sequence, Some(3)),
                (Some(5), Code::Sequence, Some(4)),
            ]
        );
        let messages: Vec<&str> = v
            .violations
            .iter()
            .filter(|v| v.code != Code::Schema)
            .map(|v| v.message.as_str())
            .collect();
        assert_eq!(
            messages,
            [
                "the line at seq 0 is a 'pass', not the game header",
                "seq 1 missing before this line",
                "seqs 3-4 missing before this line",
            ]
        );
    }

    #[test]
    fn line_errors_and_unusable_seq() {
        let (verdicts, errors) = run_all(&[
            "{not json",
            "\"\u{0}\"",
            "[1, 2]",
            r#"{"seq":0,"type":"pass"}"#,
            r#"{"game":"bad id!","seq":0}"#,
            r#"{"game":null,"seq":0}"#,
            r#"{"game":"g","seq":-1,"type":"pass","player":"a"}"#,
            r#"{"game":"g","type":"pass"}"#,
            "\x0c",
        ]);
        let got: Vec<(Option<u64>, Code)> = errors.iter().map(|e| (e.line, e.code)).collect();
        assert_eq!(
            got,
            [
                (Some(1), Code::MalformedJson),
                (Some(2), Code::MalformedJson),
                (Some(3), Code::MalformedJson),
                (Some(4), Code::Schema),
                (Some(5), Code::Schema),
                (Some(6), Code::Schema),
                (Some(9), Code::MalformedJson),
            ]
        );
        assert!(errors[0].message.starts_with("the line is not valid JSON"));
        assert_eq!(
            errors[2].message,
            "the line is JSON but not an object (list)"
        );
        let no_id = "the line has no usable 'game' id (1-128 characters of A-Z a-z 0-9 . _ : -)";
        assert_eq!(errors[3].message, no_id);
        assert_eq!(errors[4].message, format!("{no_id}, got 'bad id!'"));
        assert_eq!(errors[5].message, no_id);
        let v = &verdicts[0];
        assert_eq!(v.lines, 2);
        let seqless: Vec<(Option<u64>, Option<&str>, &str)> = v
            .violations
            .iter()
            .map(|v| (v.seq, v.player.as_deref(), v.message.as_str()))
            .collect();
        assert_eq!(
            seqless,
            [
                (
                    None,
                    Some("a"),
                    "'seq' must be a whole number 0 or more, got -1; the line is set aside"
                ),
                (
                    None,
                    None,
                    "'seq' must be a whole number 0 or more, got None; the line is set aside"
                ),
            ]
        );
        assert_eq!(v.status, Status::Invalid);
    }

    #[test]
    fn raw_line_bytes_are_reported_as_malformed_when_not_utf8() {
        let mut validator = Validator::default();
        validator.feed_line(b"{\"game\":\"g\xff\"}", &file(), 7);
        let errors = validator.take_errors();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].message.starts_with("the line is not UTF-8"));
        assert_eq!(validator.lines_read(), 1);
    }

    #[test]
    fn sparse_seqs_cost_no_dense_memory() {
        let mut validator = Validator::default();
        let name = file();
        let n: u64 = 20_000;
        for i in 1..=n {
            let line = format!(
                r#"{{"game":"g","seq":{},"type":"pass","player":"a"}}"#,
                i * 4095
            );
            validator.feed_line(line.as_bytes(), &name, i);
        }
        let pending = validator
            .games
            .get("g")
            .map(|p| (p.seen.capacity(), p.waiting.len()));
        assert_eq!(pending, Some((0, n as usize)));
        let verdicts = validator.finish();
        assert_eq!(found(&verdicts[0], &[Code::NoHeader]).len(), 1);
    }

    #[test]
    fn only_filter_and_lines_read() {
        let only: HashSet<String> = std::iter::once("g2".to_string()).collect();
        let mut validator = Validator::new(ValidatorOptions {
            only: Some(only),
            ..ValidatorOptions::default()
        });
        feed(
            &mut validator,
            &[
                PLAY_A,
                r#"{"game":"g2","seq":1,"type":"pass","player":"b"}"#,
                "nope",
            ],
        );
        assert_eq!(validator.lines_read(), 3);
        assert_eq!(validator.errors().len(), 1);
        let verdicts = validator.finish();
        assert_eq!(verdicts.len(), 1);
        assert_eq!(verdicts[0].game, "g2");
    }

    // ------------------------------------------------------------ with the machine

    const HEADER: &str = r#"{"game":"g","seq":0,"type":"game","format":"haftkhabis/1","ruleset":"bazito","players":["a","b","c","d"]}"#;
    const ABORT: &str = r#"{"game":"g","seq":1,"type":"abort"}"#;

    #[test]
    fn machine_unplaced_violations_are_the_readers_own() {
        // a seq gap (reported at the next line present) and a conflicting line set aside
        // are the reader's; the header's `unexpected_event` for the abort's twin is a step's
        let mut validator = Validator::new(ValidatorOptions {
            record: std::iter::once("g".to_string()).collect(),
            ..ValidatorOptions::default()
        });
        feed(
            &mut validator,
            &[
                HEADER,
                r#"{"game":"g","seq":2,"type":"abort"}"#,
                r#"{"game":"g","seq":2,"type":"abort","reason":"x"}"#,
            ],
        );
        let verdict = &validator.finish()[0];
        assert_eq!(
            verdict.steps.iter().map(Step::hand).collect::<Vec<_>>(),
            [0, 0]
        );
        let unplaced: Vec<(Option<u64>, Code, Option<u64>)> = verdict
            .unplaced_violations()
            .iter()
            .map(|v| (v.seq, v.code, v.line))
            .collect();
        assert_eq!(
            unplaced,
            // verdict order: the conflict is found as it is read, the gap when seq 1 never came
            [
                (Some(2), Code::Sequence, Some(3)),
                (Some(2), Code::Sequence, Some(2))
            ]
        );
        let on_steps: usize = verdict.steps.iter().map(|s| s.violations.len()).sum();
        assert_eq!(on_steps + unplaced.len(), verdict.violations.len());
    }

    #[test]
    fn machine_statuses() {
        let (v, _) = run_all(&[HEADER]);
        assert_eq!(v[0].status, Status::Incomplete);
        assert_eq!(v[0].ruleset.as_deref(), Some("bazito"));
        let zero = |p: &str| (Text::from(p), 0);
        assert_eq!(
            v[0].totals,
            Some(vec![zero("a"), zero("b"), zero("c"), zero("d")])
        );
        assert_eq!(
            v[0].to_json(),
            r#"{"kind":"game","game":"g","ruleset":"bazito","status":"incomplete","violations":[],"hands":[],"totals":{"a":0,"b":0,"c":0,"d":0}}"#
        );
        let (v, _) = run_all(&[ABORT, HEADER]);
        assert_eq!(v[0].status, Status::Aborted);
        let bad = HEADER.replace("haftkhabis/1", "haftkhabis/2");
        let (v, _) = run_all(&[&bad, ABORT]);
        assert_eq!(v[0].status, Status::Invalid);
        assert_eq!(v[0].ruleset.as_deref(), Some("bazito"));
        assert!(v[0].violations.iter().all(|x| x.seq == Some(0)));
    }

    #[test]
    fn machine_finished_game_held_for_a_window_then_written() {
        let mut validator = Validator::new(ValidatorOptions {
            hold_lines: 3,
            ..ValidatorOptions::default()
        });
        let other = r#"{"game":"h","seq":5,"type":"pass","player":"a"}"#;
        let late = r#"{"game":"g","seq":2,"type":"pass","player":"a"}"#;
        feed(&mut validator, &[HEADER, ABORT]); // finished at line 2
        feed(&mut validator, &[other, ABORT, late]); // a retry and a late line: judged
        assert!(validator.drain_finished().is_empty());
        feed(&mut validator, &[other, other]);
        assert!(validator.drain_finished().is_empty());
        feed(&mut validator, &[other]); // 3 lines without g
        let written = validator.drain_finished();
        assert_eq!(written.len(), 1);
        assert_eq!(written[0].status, Status::Violations);
        assert_eq!(
            found(&written[0], &[Code::UnexpectedEvent]),
            [(Some(2), Code::UnexpectedEvent, Some(3))]
        );
        assert_eq!(written[0].lines, 4);
        assert_eq!(validator.open_games(), 1);
        feed(&mut validator, &[other, ABORT]);
        let errors = validator.take_errors();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].code, Code::UnexpectedEvent);
        assert!(errors[0]
            .message
            .starts_with("game g's verdict was already written 2 lines earlier"));
        let rest = validator.finish();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].game, "h");
    }

    #[test]
    fn machine_streaming_sink_and_records() {
        let mut validator = Validator::new(ValidatorOptions {
            hold_lines: 0,
            facts: true,
            record: std::iter::once("g".to_string()).collect(),
            ..ValidatorOptions::default()
        });
        let mut out = Vec::new();
        let data = format!("{HEADER}\n{ABORT}\n");
        let mut reader = LineReader::from_reader("mem", std::io::Cursor::new(data.into_bytes()));
        validator.feed_reader_with(&mut reader, &mut |v| out.push(v));
        assert_eq!(out.len(), 1);
        let v = &out[0];
        assert_eq!(v.status, Status::Aborted);
        assert_eq!(v.files, [Arc::from("mem")]);
        assert_eq!(v.steps.len(), 2);
        assert_eq!(v.steps[1].line, Some(2));
        let facts = v.facts.as_deref().unwrap_or_default();
        assert_eq!(facts.iter().map(|f| f.seq).collect::<Vec<_>>(), [0, 1]);
        assert!(validator.finish().is_empty());
    }

    #[test]
    fn machine_replay_lines_strict() {
        let parse = |s: &str| json::parse_line(s.as_bytes());
        let lines: Vec<Value> = [HEADER, ABORT]
            .iter()
            .filter_map(|l| parse(l).ok())
            .collect();
        let run = replay_lines(lines.clone(), true, true);
        assert!(run.as_ref().is_ok_and(|r| r.steps().len() == 2));
        let mut bad = lines;
        if let Ok(extra) = parse(r#"{"game":"g","seq":2,"type":"abort"}"#) {
            bad.push(extra);
        }
        match replay_lines(bad, true, false) {
            Err(ReplayError::Violation(v)) => assert_eq!(v.code, Code::UnexpectedEvent),
            other => panic!("expected a strict failure, got {:?}", other.err()),
        }
        assert!(matches!(
            replay_lines(Vec::new(), false, false),
            Err(ReplayError::NoLines)
        ));
    }
}
