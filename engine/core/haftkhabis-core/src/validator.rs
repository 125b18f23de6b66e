//! The validator: lines in, one verdict per game out (notation.md, "The validator's verdict").
//!
//! Lines of many games may be interleaved and spread over files in any order; [`Validator`]
//! routes each line to its game (by the parsed `game`), drops identical repeats (same JSON
//! value: [`Value::fingerprint`](crate::json::Value::fingerprint)), sets aside a later
//! different line at a `seq` already seen, and feeds each game's lines to its [`GameRun`]
//! in `seq` order as soon as they are contiguous, so a game in order costs no buffering.
//! Lines that come early wait as raw bytes (parsed again when their turn comes).
//! `finish()` replays what is left (reporting gaps).
//!
//! **A sink listens** (python-chess's visitors): the validator walks the log once and
//! tells a [`Sink`] what it learns — each distinct line of a game as it is received
//! ([`Sink::line`], with whatever the sink keeps of that game, [`Sink::Game`]) and each
//! game's verdict as soon as it is judged ([`Sink::judged`]). It knows nothing of what
//! listens: [`Verdicts`] keeps the verdicts to be read back, `verdict::VerdictWriter`
//! writes them as `validate --json` lines, `rows::RowBuilder` builds the warehouse's rows.
//!
//! Memory is flat in the number of games and in the size of `seq` gaps:
//! - a game's seen lines are one fingerprint each (a dense vector for the seqs replayed,
//!   which are contiguous from 0, plus the waiting lines keyed by seq), never an array
//!   spanning a gap (issue: "100,000 lines whose seqs step by 4,095 reached 3.4 GB");
//! - a **finished** game (closed by `result`/`abort`, or complete: its match over and its
//!   last hand ended) is held for a window of further input lines
//!   ([`ValidatorOptions::hold_lines`], default [`DEFAULT_HOLD_LINES`]) so a late line —
//!   a shipper's retry, a trailing `result` — is still judged; once the window passes
//!   without a line of the game, it is judged (its verdict goes to the sink) and its state
//!   dropped, keeping only a tombstone (a 128-bit hash of its id and the line count then:
//!   ~24 bytes).
//!
//! **Decision (late lines):** a line of a game whose verdict was already written is not
//! judged (there is no state left to judge it against, and its verdict is out); it becomes
//! an error record `{"kind":"error", "code":"unexpected_event", "message":"… verdict was
//! already written N lines earlier …"}`. This includes an identical repeat that would have
//! been dropped silently within the window. Open games (not finished) are held until the
//! input ends, exactly as before.
//!
//! **Ingest mode** ([`ValidatorOptions::ingest`]): a line of a game whose verdict was
//! already handed out is not an error but a [`LateLine`] (the ingest replays the game
//! again from the union of its lines), and a line that belongs to no game keeps its bytes
//! (for the quarantine); a game without a line for [`ValidatorOptions::idle_lines`] lines
//! is judged as it stands (a log with a gap never closes), so memory stays flat.

use std::cmp::Reverse;
use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use crate::game::{GameRun, GameVerdict, Line, RunOptions};
use crate::reader::{display_name, expand_paths, InputPathError, LineReader};
use crate::violation::{Code, Violation};

/// How many further input lines a finished game is held for before its verdict is written.
pub const DEFAULT_HOLD_LINES: u64 = 100_000;
/// How often (in input lines) idle games are looked for, in ingest mode.
const IDLE_CHECK_EVERY: u64 = 16_384;

/// Who listens to a [`Validator`]: what it is told of each game as the log is walked.
pub trait Sink {
    /// What the sink keeps of one game while the validator holds it (`()` for nothing).
    type Game: Default;

    /// Whether the sink reads the facts of each replayed line (the validator then keeps
    /// them: [`GameVerdict::facts`]).
    const FACTS: bool = false;

    /// A distinct line of a game, as received (an identical repeat of a line already seen
    /// is not told), before it is replayed or set aside; in input order.
    fn line(&mut self, _game: &mut Self::Game, _line: &SeenLine<'_>) {}

    /// A game judged: its verdict, and what the sink kept of it.
    fn judged(&mut self, verdict: GameVerdict, game: Self::Game);
}

/// A distinct line of a game as the validator received it ([`Sink::line`]).
pub struct SeenLine<'a> {
    /// the line's bytes, without its ending (UTF-8: the parser accepted it)
    pub raw: &'a [u8],
    pub file: &'a Arc<str>,
    pub line: u64,
    pub fingerprint: u64,
    /// None when the line has no usable seq
    pub seq: Option<u64>,
    /// not replayed: no usable seq, or another line holds its seq
    pub set_aside: bool,
    /// the line as read: its JSON value, or its event when it was read straight to it
    pub read: &'a Line,
}

/// The sink whose verdicts are read back: it keeps them, in the order they were judged.
#[derive(Default)]
pub struct Verdicts(Vec<GameVerdict>);

impl Verdicts {
    /// The verdicts judged since the last call.
    pub fn take(&mut self) -> Vec<GameVerdict> {
        std::mem::take(&mut self.0)
    }

    /// The verdict judged last, taken out.
    pub fn pop(&mut self) -> Option<GameVerdict> {
        self.0.pop()
    }
}

impl Sink for Verdicts {
    type Game = ();

    fn judged(&mut self, verdict: GameVerdict, _: ()) {
        self.0.push(verdict);
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

/// A line that came before its turn: kept as bytes, parsed again when drained.
struct Waiting {
    fingerprint: u64,
    raw: Box<[u8]>,
    file: Arc<str>,
    line: u64,
}

/// The reader's book-keeping for one game: what seqs it has seen, what waits, and what
/// the sink keeps of it (`G`).
struct Pending<G> {
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
    /// what the sink keeps of the game ([`Sink::Game`])
    listened: G,
    /// fingerprints of the lines set aside by the reader (a conflict at a taken seq, a
    /// line without a usable seq): "a line repeated identically (a shipper's retry) is
    /// dropped silently", whichever line it repeats
    set_aside: HashSet<u64>,
}

impl<G> Pending<G> {
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
            if let Ok((input, _)) = Line::read(&w.raw, !self.run.options().record) {
                let _ = self.run.feed_line(seq, input, Some(&w.file), Some(w.line));
            }
        }
    }

    /// Replay what waits, reporting gaps, and judge the game: its verdict, and what the
    /// sink kept of it.
    fn finish(mut self) -> (GameVerdict, G) {
        let waiting = std::mem::take(&mut self.waiting);
        let no_header = self.next_seq == 0;
        if let Some((&first, w)) = waiting.iter().next().filter(|_| no_header) {
            let _ = self.run.note(Violation {
                seq: Some(first),
                code: Code::NoHeader,
                player: None,
                message: format!("game {} has no header line at seq 0", self.run.game()),
                file: Some(w.file.clone()),
                line: Some(w.line),
            });
            self.run.set_invalid();
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
                if let Ok((input, _)) = Line::read(&w.raw, !self.run.options().record) {
                    let _ = self.run.feed_line(seq, input, Some(&w.file), Some(w.line));
                }
            }
            self.next_seq = seq.saturating_add(1);
        }
        (self.run.verdict(), self.listened)
    }
}

/// How a [`Validator`] runs.
#[derive(Clone, Debug)]
pub struct ValidatorOptions {
    /// games replayed with every step kept
    pub record: HashSet<String>,
    /// a recorded game keeps the state after each step (else they are replayed when
    /// asked for: [`GameVerdict::state`])
    pub record_states: bool,
    /// only these games are replayed (others are skipped unread)
    pub only: Option<HashSet<String>>,
    /// keep an [`EventFact`](crate::game::EventFact) per replayed line (also when the sink
    /// reads facts, [`Sink::FACTS`])
    pub facts: bool,
    /// further input lines a finished game is held for (see the module doc)
    pub hold_lines: u64,
    /// ingest mode: a line of a game already handed out is a [`LateLine`], not an error; a
    /// line that belongs to no game keeps its bytes
    pub ingest: bool,
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
            ingest: false,
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

/// Feed it files (or lines); it tells its sink ([`Sink`]; [`Verdicts`] unless another is
/// given) each game's lines as they come and each game's verdict as soon as the game is
/// judged (a finished game past its hold window; the rest at [`Validator::finish`]). Line
/// errors collect in [`Validator::errors`].
pub struct Validator<S: Sink = Verdicts> {
    options: ValidatorOptions,
    sink: S,
    games: HashMap<Arc<str>, Box<Pending<S::Game>>, GameIdHashing>,
    errors: Vec<ErrorRecord>,
    lines_read: u64,
    next_order: u64,
    /// finished games by the `lines_read` at which they are due
    hold: BinaryHeap<Reverse<(u64, Arc<str>)>>,
    /// finished games whose verdict is written: 128-bit id hash → `lines_read` then
    tombstones: HashMap<u128, u64>,
    tomb_keys: (RandomState, RandomState),
    /// ingest mode: lines of games already handed out
    late: Vec<LateLine>,
    /// `lines_read` at which idle games are next looked for
    next_idle_check: u64,
    /// the most open (not yet finished) games held at once
    peak_open: usize,
    /// held games that are finished (waiting out their hold window)
    finished_held: usize,
}

impl Default for Validator {
    fn default() -> Self {
        Validator::new(ValidatorOptions::default())
    }
}

impl Validator {
    /// A validator whose verdicts are read back ([`Verdicts`]).
    pub fn new(options: ValidatorOptions) -> Validator {
        Validator::with_sink(options, Verdicts::default())
    }
}

impl<S: Sink> Validator<S> {
    /// A validator telling `sink` what it learns.
    pub fn with_sink(mut options: ValidatorOptions, sink: S) -> Validator<S> {
        options.facts |= S::FACTS;
        Validator {
            options,
            sink,
            games: HashMap::with_hasher(GameIdHashing::new()),
            errors: Vec::new(),
            lines_read: 0,
            next_order: 0,
            hold: BinaryHeap::new(),
            tombstones: HashMap::new(),
            tomb_keys: (RandomState::new(), RandomState::new()),
            late: Vec::new(),
            next_idle_check: IDLE_CHECK_EVERY,
            peak_open: 0,
            finished_held: 0,
        }
    }

    /// The sink, to read what it gathered so far.
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// The sink, the validator done with.
    pub fn into_sink(self) -> S {
        self.sink
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

    /// Every file of `paths` (files, directories, `-`), in input order. Fails before
    /// reading anything when a path does not exist.
    pub fn feed_paths(&mut self, paths: &[String]) -> Result<(), InputPathError> {
        for file in &expand_paths(paths)? {
            self.feed_file(file);
        }
        Ok(())
    }

    /// One file (`-` is standard input).
    pub fn feed_file(&mut self, file: &str) {
        self.feed_reader(&mut LineReader::open(file));
    }

    /// Every line of `reader` (named by its file's display name); a file that cannot be
    /// read, or breaks off, is a line error.
    pub fn feed_reader(&mut self, reader: &mut LineReader) {
        let name: Arc<str> = Arc::from(display_name(reader.file()));
        while let Some(item) = reader.next_line() {
            match item {
                Ok((number, line)) => self.feed_line(line, &name, number),
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
            raw: self.options.ingest.then(|| raw.into()),
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
        let sink = &mut self.sink;
        if let Some(pending) = self.games.get_mut(game) {
            if let Some(key) =
                Self::accept(pending, sink, input, fingerprint, (raw, file, line), now)
            {
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
            if self.options.ingest {
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
            listened: S::Game::default(),
        });
        self.next_order += 1;
        let sink = &mut self.sink;
        if let Some(key) = Self::accept(
            &mut pending,
            sink,
            input,
            fingerprint,
            (raw, file, line),
            now,
        ) {
            self.hold.push(Reverse((now.saturating_add(hold), key)));
            self.finished_held += 1;
        }
        self.games.insert(key, pending);
        let open = self.games.len().saturating_sub(self.finished_held);
        self.peak_open = self.peak_open.max(open);
    }

    /// Route one parsed line (with its fingerprint, and its bytes and where it was read)
    /// into its game, telling the sink of it unless it repeats a line already read; the
    /// game's key when it has just finished.
    fn accept(
        pending: &mut Pending<S::Game>,
        sink: &mut S,
        input: Line,
        fingerprint: u64,
        (raw, file, line): (&[u8], &Arc<str>, u64),
        now: u64,
    ) -> Option<Arc<str>> {
        pending.last_line = now;
        pending.run.saw_line(file);
        let seq = input.seq();
        // fingerprints are odd: 0 is "no line at this seq"
        let seen = seq.map_or(0, |s| pending.fingerprint_at(s));
        if seen == fingerprint || pending.set_aside.contains(&fingerprint) {
            return None; // an identical repeat of a line already read
        }
        let told = SeenLine {
            raw,
            file,
            line,
            fingerprint,
            seq,
            set_aside: seq.is_none() || seen != 0,
            read: &input,
        };
        sink.line(&mut pending.listened, &told);
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
            self.close_game(&game);
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
            self.close_game(&game);
        }
    }

    /// Judge a held game now (its verdict to the sink), leaving a tombstone; false when
    /// the game is not held.
    fn close_game(&mut self, game: &str) -> bool {
        let Some(pending) = self.games.remove(game) else {
            return false;
        };
        if pending.finished {
            self.finished_held = self.finished_held.saturating_sub(1);
        }
        let key = self.tomb_key(game);
        self.tombstones.insert(key, self.lines_read);
        let (verdict, listened) = pending.finish();
        self.sink.judged(verdict, listened);
        true
    }

    // ------------------------------------------------------------------ output

    /// Judge `game` now, whatever its state (a later line of it is then a late line); its
    /// verdict goes to the sink. False when the game is not held.
    pub fn finish_game(&mut self, game: &str) -> bool {
        self.close_game(game)
    }

    /// The input has ended: every held game is judged, in the order the games were first
    /// seen (their verdicts to the sink, after those already judged). Returns the sink.
    pub fn finish(&mut self) -> &mut S {
        let mut held: Vec<Box<Pending<S::Game>>> = self.games.drain().map(|(_, p)| p).collect();
        held.sort_by_key(|p| p.order);
        for pending in held {
            let (verdict, listened) = pending.finish();
            self.sink.judged(verdict, listened);
        }
        self.hold.clear();
        self.finished_held = 0;
        &mut self.sink
    }
}

/// Validate every game in `paths` (files, directories, `-`): the verdicts and line errors.
pub fn validate_paths(
    paths: &[String],
) -> Result<(Vec<GameVerdict>, Vec<ErrorRecord>), InputPathError> {
    let mut validator = Validator::default();
    validator.feed_paths(paths)?;
    let verdicts = validator.finish().take();
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
    let verdict = validator
        .finish()
        .take()
        .into_iter()
        .find(|v| v.game == game);
    Ok((verdict, validator.take_errors()))
}

#[cfg(test)]
mod tests {
    //! Routing, dedupe, conflicts, gaps and `no_header` need no rules: their games have
    //! no usable header, so nothing reaches the machine. Tests named `machine_*` replay
    //! real headers and events (they need `machine.rs` and `notation.rs` filled in).
    use super::*;
    use crate::game::{replay_lines, ReplayError, Status, Step};
    use crate::json::{self, Text, Value};

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
        let verdicts = validator.finish().take();
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
        let verdicts = validator.finish().take();
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
        let verdicts = validator.finish().take();
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
        let verdict = &validator.finish().take()[0];
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
        assert!(validator.sink_mut().take().is_empty());
        feed(&mut validator, &[other, other]);
        assert!(validator.sink_mut().take().is_empty());
        feed(&mut validator, &[other]); // 3 lines without g
        let written = validator.sink_mut().take();
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
        let rest = validator.finish().take();
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
        let data = format!("{HEADER}\n{ABORT}\n");
        let mut reader = LineReader::from_reader("mem", std::io::Cursor::new(data.into_bytes()));
        validator.feed_reader(&mut reader);
        // judged as soon as its window (none) passed, before the input ended
        let out = validator.sink_mut().take();
        assert_eq!(out.len(), 1);
        let v = &out[0];
        assert_eq!(v.status, Status::Aborted);
        assert_eq!(v.files, [Arc::from("mem")]);
        assert_eq!(v.steps.len(), 2);
        assert_eq!(v.steps[1].line, Some(2));
        let facts = v.facts.as_deref().unwrap_or_default();
        assert_eq!(facts.iter().map(|f| f.seq).collect::<Vec<_>>(), [0, 1]);
        assert!(validator.finish().take().is_empty());
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
