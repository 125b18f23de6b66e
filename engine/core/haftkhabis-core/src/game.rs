//! One game's replay: its lines fed in `seq` order to the state machine ([`GameRun`]),
//! under the strict or the collecting policy, and what it concludes ([`GameVerdict`]: the
//! status, the violations, the decided hands, and, when asked, a fact per line and every
//! step). The validator ([`crate::validator`]) routes each game's lines here; the
//! simulator, the what-if and the tests drive a [`GameRun`] directly.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::event::{Event, Header, Kind};
use crate::fastline;
use crate::json::{self, ParseError, Text, Value};
use crate::machine::{read_header, Closure, HandOutcome, LineFact, Snapshot, Table};
use crate::notation;
use crate::violation::{Code, Violation};

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

/// One game's replay: header, table, violations; optionally every step. A clone is an
/// independent run from the same point (a what-if branches one off the recorded game).
#[derive(Clone)]
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
#[derive(Clone, Debug)]
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
    // inlined where the validator routes the line: the `Line` is built in place rather
    // than copied out of the call (callgrind: two fewer copies of it a line)
    #[inline]
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
    pub fn seq(&self) -> Option<u64> {
        match self {
            Line::Json(obj) => notation::seq(obj),
            Line::Event(event) => Some(event.common.seq),
        }
    }

    /// The line's `player` when it is a string: the actor a violation is attributed to.
    pub fn player(&self) -> Option<String> {
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
    pub fn seq_repr(&self) -> String {
        match self {
            Line::Json(obj) => repr_of(obj.get("seq")),
            Line::Event(event) => event.common.seq.to_string(),
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

    /// The game has no usable header after all (the reader found no line at seq 0):
    /// nothing more is replayed.
    pub(crate) fn set_invalid(&mut self) {
        self.invalid = true;
    }

    /// How the game is replayed.
    pub fn options(&self) -> RunOptions {
        self.options
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
    pub(crate) fn saw_line(&mut self, file: &Arc<str>) {
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
                        Some(settings) => {
                            let mut table = Table::new(settings, &self.game);
                            table.decisions = self.options.facts; // the rows read them
                            self.table = Some(table);
                        }
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
        }
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
    /// the steps carry the state after them (else [`GameVerdict::state`] replays them)
    pub states_kept: bool,
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
    /// ([`replay_states`]).
    pub fn visit_states(
        &self,
        range: std::ops::Range<usize>,
        each: impl FnMut(&Step, Option<&Snapshot>),
    ) {
        visit_states(&self.game, &self.steps, self.states_kept, range, each);
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
}
