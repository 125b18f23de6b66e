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
//! **Bounded by design** (issue #34: "a cap on games held open (and on lines held per game
//! waiting for a gap), beyond which the oldest are judged as they stand … and their memory
//! freed"): at most [`ValidatorOptions::max_open_games`] games are held (open or finished
//! within their hold window); a line opening one more judges the game that has gone
//! longest without a line, as it stands — contract terms: its log stops there, so a game
//! stopped inside a hand is `incomplete` (notation.md: "A log that stops inside a hand …
//! is `incomplete`"). A game with more than [`ValidatorOptions::max_waiting_lines`] lines
//! waiting for a missing seq is judged the same way (its gap is then a `sequence`
//! violation, as at the end of the input), and so are the games holding the most waiting
//! lines once all of them together hold more than [`ValidatorOptions::max_waiting_bytes`]. Either way the cut is said once, as an error
//! record `too_many_open_games` at the line that caused it, naming the game; a later line
//! of the game is a late line (above). A finished game cut short of its hold window needs
//! no record: its verdict is what the window would have written. Memory is then bounded by
//! the caps, whatever the number of games in a file.
//!
//! **Ingest mode** ([`ValidatorOptions::ingest`]): a line of a game whose verdict was
//! already handed out is not an error but a [`LateLine`] (the ingest replays the game
//! again from the union of its lines), and a line that belongs to no game keeps its bytes
//! (for the quarantine); a game without a line for [`ValidatorOptions::idle_lines`] lines
//! is judged as it stands (a log with a gap never closes), so memory stays flat.

use std::cmp::Reverse;
use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use crate::game::{GameRun, GameVerdict, Line, RunOptions};
use crate::reader::{
    display_name, expand_paths, too_long_message, InputPathError, LineReader,
    DEFAULT_MAX_LINE_BYTES,
};
use crate::violation::{Code, Violation};

/// How many further input lines a finished game is held for before its verdict is written.
pub const DEFAULT_HOLD_LINES: u64 = 100_000;
/// The most games held at once by default (open, or finished within their hold window):
/// a header-only game costs about 2 KiB held, a dealt one about 8 KiB, so 50,000 games stay
/// well under the 1 GiB a validation may take (docs/operations.md, "Limits").
pub const DEFAULT_MAX_OPEN_GAMES: usize = 50_000;
/// The most lines one game holds waiting for a missing seq, by default (a long persian
/// game written backwards has a few thousand).
pub const DEFAULT_MAX_WAITING_LINES: usize = 100_000;
/// The most bytes of lines all games together hold waiting for a missing seq, by default.
pub const DEFAULT_MAX_WAITING_BYTES: usize = 256 << 20;
/// The most tombstones kept (about 64 bytes each): a line of a game judged longer ago than
/// the last million games judged is no longer known as late, and opens a game of its own
/// (judged as such: `no_header` unless it is a header), so memory stays flat whatever the
/// number of games in a file (issue #34). Not in ingest mode (see `close_game`).
pub const MAX_TOMBSTONES: usize = 1_000_000;
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

    /// A line error as it is met: the sink writes it out (None), or hands it back to be
    /// kept in [`Validator::errors`] (the default).
    fn error(&mut self, error: ErrorRecord) -> Option<ErrorRecord> {
        Some(error)
    }
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

impl Waiting {
    /// What a waiting line holds: its bytes and about 96 bytes of book-keeping (the
    /// record and its place in the map).
    fn cost(raw: &[u8]) -> usize {
        raw.len() + 96
    }
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
    /// what `waiting` holds, in bytes ([`Waiting::cost`])
    waiting_bytes: usize,
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
            self.waiting_bytes = self.waiting_bytes.saturating_sub(Waiting::cost(&w.raw));
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
    /// the longest line read from a file, in bytes ([`LineReader::max_line_bytes`])
    pub max_line_bytes: usize,
    /// the most games held at once (see the module doc)
    pub max_open_games: usize,
    /// the most lines one game holds waiting for a missing seq
    pub max_waiting_lines: usize,
    /// the most bytes all games together hold in lines waiting for a missing seq
    pub max_waiting_bytes: usize,
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
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_open_games: DEFAULT_MAX_OPEN_GAMES,
            max_waiting_lines: DEFAULT_MAX_WAITING_LINES,
            max_waiting_bytes: DEFAULT_MAX_WAITING_BYTES,
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
    /// the tombstones in the order they were laid, the oldest dropped past
    /// [`MAX_TOMBSTONES`]
    tomb_order: VecDeque<u128>,
    tomb_keys: (RandomState, RandomState),
    /// ingest mode: lines of games already handed out
    late: Vec<LateLine>,
    /// `lines_read` at which idle games are next looked for
    next_idle_check: u64,
    /// the most open (not yet finished) games held at once
    peak_open: usize,
    /// held games that are finished (waiting out their hold window)
    finished_held: usize,
    /// held games by the `lines_read` of their latest line when pushed (an entry whose
    /// game has had a line since is pushed again when met): the least recently fed first
    recency: BinaryHeap<Reverse<(u64, Arc<str>)>>,
    /// bytes of lines waiting, all games together
    waiting_bytes: usize,
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
            tomb_order: VecDeque::new(),
            tomb_keys: (RandomState::new(), RandomState::new()),
            late: Vec::new(),
            next_idle_check: IDLE_CHECK_EVERY,
            peak_open: 0,
            finished_held: 0,
            recency: BinaryHeap::new(),
            waiting_bytes: 0,
        }
    }

    /// How it runs.
    pub fn options(&self) -> &ValidatorOptions {
        &self.options
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
        let max_line = self.options.max_line_bytes;
        self.feed_reader(&mut LineReader::open(file).max_line_bytes(max_line));
    }

    /// A line error: to the sink, or kept when the sink hands it back.
    fn push_error(&mut self, error: ErrorRecord) {
        if let Some(kept) = self.sink.error(error) {
            self.errors.push(kept);
        }
    }

    /// Every line of `reader` (named by its file's display name); a file that cannot be
    /// read, or breaks off, is a line error.
    pub fn feed_reader(&mut self, reader: &mut LineReader) {
        self.feed_reader_with(reader, |_| true);
    }

    /// As [`Validator::feed_reader`], handing itself to `between` after each line, so that
    /// a caller can take what the sink gathered as it comes (a file of a million bad lines
    /// is then never held whole); stops reading when `between` says `false`.
    pub fn feed_reader_with(
        &mut self,
        reader: &mut LineReader,
        mut between: impl FnMut(&mut Self) -> bool,
    ) {
        let name: Arc<str> = Arc::from(display_name(reader.file()));
        while let Some(item) = reader.next_line() {
            match item {
                Ok((number, line)) => self.feed_line(line, &name, number),
                Err(error) => {
                    if error.code == Code::LineTooLong {
                        self.lines_read += 1; // a line, though not read
                    }
                    self.push_error(ErrorRecord {
                        file: name.clone(),
                        line: error.line,
                        code: error.code,
                        message: error.message,
                        raw: None,
                    });
                }
            }
            if !between(self) {
                return;
            }
        }
    }

    /// One raw line (without its ending) from `file` at `line`. A line longer than
    /// [`ValidatorOptions::max_line_bytes`] is a `line_too_long` error, not read, as the
    /// reader makes it (a caller that split the lines itself: the dashboard's upload).
    pub fn feed_line(&mut self, raw: &[u8], file: &Arc<str>, line: u64) {
        self.lines_read += 1;
        if raw.len() > self.options.max_line_bytes {
            let message = too_long_message(self.options.max_line_bytes);
            self.push_error(ErrorRecord {
                file: file.clone(),
                line: Some(line),
                code: Code::LineTooLong,
                message,
                raw: None,
            });
            self.expire();
            return;
        }
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
        let raw = self.options.ingest.then(|| raw.into());
        self.push_error(ErrorRecord {
            file: file.clone(),
            line: Some(line),
            code,
            message,
            raw,
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
            let before = pending.waiting_bytes;
            if let Some(key) =
                Self::accept(pending, sink, input, fingerprint, (raw, file, line), now)
            {
                self.hold.push(Reverse((now.saturating_add(hold), key)));
                self.finished_held += 1;
            }
            self.waiting_bytes = (self.waiting_bytes + pending.waiting_bytes) - before;
            let waiting = pending.waiting.len();
            if waiting > self.options.max_waiting_lines {
                let key = pending.key.clone();
                let missing = pending.next_seq;
                let message = format!(
                    "game {key} has {waiting} lines waiting for its missing seq {missing}, \
                     more than the {} a game may hold (max_waiting_lines): it was judged as \
                     it stood, and a later line of it is not judged",
                    self.options.max_waiting_lines
                );
                self.cut_off(&key, (file, line, raw), message);
            }
            self.bound_waiting_bytes((file, line, raw));
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
            waiting_bytes: 0,
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
        self.waiting_bytes += pending.waiting_bytes;
        self.games.insert(key.clone(), pending);
        self.recency.push(Reverse((now, key)));
        let open = self.games.len().saturating_sub(self.finished_held);
        self.peak_open = self.peak_open.max(open);
        if self.games.len() > self.options.max_open_games.max(1) {
            self.evict_least_recent((file, line, raw));
        }
        self.bound_waiting_bytes((file, line, raw));
        if self.recency.len() > 2 * self.games.len() + 1024 {
            // entries of games judged since (their window, `finish_game`): start afresh
            self.recency = self
                .games
                .values()
                .map(|p| Reverse((p.last_line, p.key.clone())))
                .collect();
        }
    }

    /// Past the bytes all games may hold waiting: judge the games holding the most, as they
    /// stand, until a quarter of the budget is free again (so the scan is rare).
    fn bound_waiting_bytes(&mut self, at: (&Arc<str>, u64, &[u8])) {
        let budget = self.options.max_waiting_bytes;
        if self.waiting_bytes <= budget {
            return;
        }
        let mut holding: Vec<(usize, Arc<str>)> = self
            .games
            .values()
            .filter(|p| p.waiting_bytes > 0)
            .map(|p| (p.waiting_bytes, p.key.clone()))
            .collect();
        holding.sort_unstable_by(|a, b| b.cmp(a));
        let total = self.waiting_bytes;
        for (bytes, game) in holding {
            if self.waiting_bytes <= budget / 4 * 3 {
                break;
            }
            let message = format!(
                "game {game} was judged as it stood: it held {bytes} bytes of lines waiting \
                 for a missing seq, the most of any game, when all games held {total}, more \
                 than the {budget} the validator holds (max_waiting_bytes); a later line of \
                 it is not judged"
            );
            self.cut_off(&game, at, message);
        }
    }

    /// One game too many is held: judge the one that has gone longest without a line.
    fn evict_least_recent(&mut self, at: (&Arc<str>, u64, &[u8])) {
        while let Some(Reverse((fed, game))) = self.recency.pop() {
            let Some(pending) = self.games.get(&game) else {
                continue; // judged since
            };
            if pending.last_line != fed {
                self.recency.push(Reverse((pending.last_line, game)));
                continue;
            }
            let message = format!(
                "game {game} was judged as it stood: {} games were held open at once, the \
                 most the validator holds (max_open_games), and it had gone longest without \
                 a line; a later line of it is not judged",
                self.games.len()
            );
            self.cut_off(&game, at, message);
            return;
        }
    }

    /// Judge a held game before its end, as it stands; unless it was finished (its verdict
    /// is the one its hold window would have written) or in ingest mode (a later line is a
    /// [`LateLine`] and the game is replayed again whole), say so with an error record at
    /// the line that caused it.
    fn cut_off(&mut self, game: &Arc<str>, at: (&Arc<str>, u64, &[u8]), message: String) {
        let finished = self.games.get(game).is_some_and(|p| p.finished);
        if self.close_game(game) && !finished && !self.options.ingest {
            let (file, line, _) = at;
            self.push_error(ErrorRecord {
                file: file.clone(),
                line: Some(line),
                code: Code::TooManyOpenGames,
                message,
                raw: None,
            });
        }
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
            pending.waiting_bytes += Waiting::cost(raw);
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
        self.waiting_bytes = self.waiting_bytes.saturating_sub(pending.waiting_bytes);
        let key = self.tomb_key(game);
        // ingest keeps every one: a late line must reach the game it belongs to (a batch's
        // input is bounded by its caller)
        if self.tombstones.insert(key, self.lines_read).is_none() && !self.options.ingest {
            self.tomb_order.push_back(key);
            if self.tomb_order.len() > MAX_TOMBSTONES {
                if let Some(oldest) = self.tomb_order.pop_front() {
                    self.tombstones.remove(&oldest);
                }
            }
        }
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
        self.recency.clear();
        self.waiting_bytes = 0;
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
        // one game, held whole: its own lines are all it can hold
        max_waiting_lines: usize::MAX,
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
    fn feed_reader_with_hands_over_after_each_line_and_stops_when_told() {
        let text = b"not json\n{\"game\":\"g\",\"seq\":\n[1]\nnot json either\n".to_vec();
        let mut validator = Validator::default();
        let mut held_at_each_line = Vec::new();
        let mut reader = LineReader::from_reader("t.jsonl", std::io::Cursor::new(text.clone()));
        validator.feed_reader_with(&mut reader, |v| {
            held_at_each_line.push(v.take_errors().len());
            true
        });
        // each line's error is taken as it comes: never more than one held
        assert_eq!(held_at_each_line, [1, 1, 1, 1]);
        assert_eq!(validator.lines_read(), 4);

        let mut validator = Validator::default();
        let mut reader = LineReader::from_reader("t.jsonl", std::io::Cursor::new(text));
        validator.feed_reader_with(&mut reader, |v| v.lines_read() < 2);
        assert_eq!(validator.lines_read(), 2);
        assert_eq!(validator.take_errors().len(), 2);
    }

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

    /// issue #34: "a cap on games held open …, beyond which the oldest are judged as
    /// they stand … and their memory freed".
    #[test]
    fn games_past_the_open_cap_are_judged_least_recent_first() {
        let mut validator = Validator::new(ValidatorOptions {
            max_open_games: 2,
            ..ValidatorOptions::default()
        });
        feed(
            &mut validator,
            &[
                r#"{"game":"a","seq":1,"type":"pass","player":"x"}"#,
                r#"{"game":"b","seq":1,"type":"pass","player":"x"}"#,
                r#"{"game":"a","seq":2,"type":"pass","player":"x"}"#,
                r#"{"game":"c","seq":1,"type":"pass","player":"x"}"#,
                r#"{"game":"b","seq":2,"type":"pass","player":"x"}"#,
            ],
        );
        assert!(validator.open_games() <= 2);
        let early: Vec<String> = validator
            .sink_mut()
            .take()
            .into_iter()
            .map(|v| v.game)
            .collect();
        // b had gone longest without a line when c came: judged then; b's next line
        // is a late line (and a's, the least recent then, is judged for it)
        assert_eq!(early, ["b"]);
        let errors = validator.take_errors();
        let found: Vec<(Option<u64>, Code)> = errors.iter().map(|e| (e.line, e.code)).collect();
        assert_eq!(
            found,
            [
                (Some(4), Code::TooManyOpenGames),
                (Some(5), Code::UnexpectedEvent)
            ]
        );
        assert!(errors[0]
            .message
            .starts_with("game b was judged as it stood: 3 games"));
        let rest: Vec<String> = validator
            .finish()
            .take()
            .into_iter()
            .map(|v| v.game)
            .collect();
        assert_eq!(rest, ["a", "c"]);
    }

    #[test]
    fn the_games_holding_most_waiting_bytes_are_judged_past_the_budget() {
        let mut validator = Validator::new(ValidatorOptions {
            max_waiting_bytes: 1_200,
            ..ValidatorOptions::default()
        });
        let mut lines = Vec::new();
        for seq in 2..12 {
            lines.push(format!(
                r#"{{"game":"big","seq":{seq},"type":"pass","player":"x"}}"#
            ));
            if seq < 4 {
                lines.push(format!(
                    r#"{{"game":"small","seq":{seq},"type":"pass","player":"x"}}"#
                ));
            }
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        feed(&mut validator, &refs);
        let judged: Vec<String> = validator
            .sink_mut()
            .take()
            .into_iter()
            .map(|v| v.game)
            .collect();
        assert_eq!(judged, ["big"]);
        let errors = validator.take_errors();
        assert_eq!(errors[0].code, Code::TooManyOpenGames);
        assert!(
            errors[0].message.contains("(max_waiting_bytes)"),
            "{}",
            errors[0].message
        );
        assert!(validator.waiting_bytes <= 1_200);
        assert_eq!(validator.open_games(), 1);
    }

    #[test]
    fn a_game_past_the_waiting_cap_is_judged_with_its_gap() {
        let mut validator = Validator::new(ValidatorOptions {
            max_waiting_lines: 3,
            ..ValidatorOptions::default()
        });
        let lines: Vec<String> = (2..8)
            .map(|seq| format!(r#"{{"game":"g","seq":{seq},"type":"pass","player":"x"}}"#))
            .collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        feed(&mut validator, &refs);
        let judged = validator.sink_mut().take();
        assert_eq!(judged.len(), 1);
        assert_eq!(judged[0].lines, 4);
        let codes: Vec<Code> = validator.take_errors().iter().map(|e| e.code).collect();
        assert_eq!(
            codes,
            [
                Code::TooManyOpenGames,
                Code::UnexpectedEvent,
                Code::UnexpectedEvent
            ]
        );
        assert_eq!(validator.open_games(), 0);
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
        let mut validator = Validator::new(ValidatorOptions {
            max_waiting_lines: usize::MAX,
            ..ValidatorOptions::default()
        });
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
