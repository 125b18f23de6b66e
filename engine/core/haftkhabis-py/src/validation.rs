//! The validator's Python face: `Validator`, `Verdict`, and the streaming `validate_to`
//! the CLI writes `validate --json` with.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use haftkhabis_core::cards::Card;
use haftkhabis_core::game::{GameVerdict, Status, Step};
use haftkhabis_core::json::{Text, Value};
use haftkhabis_core::machine::Snapshot;
use haftkhabis_core::reader::{LineReader, DEFAULT_MAX_LINE_BYTES};
use haftkhabis_core::validator::{
    self, ErrorRecord, Sink, ValidatorOptions, DEFAULT_MAX_OPEN_GAMES, DEFAULT_MAX_WAITING_BYTES,
    DEFAULT_MAX_WAITING_LINES,
};
use haftkhabis_core::verdict::{VerdictWriter, Written};

use crate::convert;
use crate::error::CoreError;

/// Standard input read through a Python file object (`sys.stdin.buffer`), for callers
/// whose stdin is not the process's file descriptor 0 (a test runner's, say).
struct PyStream(Py<PyAny>);

impl std::io::Read for PyStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let chunk = self
                .0
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let bytes = chunk
                .bind(py)
                .cast::<PyBytes>()
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let data = bytes.as_bytes();
            let n = data.len().min(buf.len());
            buf[..n].copy_from_slice(&data[..n]);
            Ok(n)
        })
    }
}

fn reader_for(file: &str, stdin: Option<&Py<PyAny>>, max_line: usize) -> LineReader {
    let reader = match stdin {
        Some(stream) if file == "-" => {
            LineReader::from_reader(file, PyStream(Python::attach(|py| stream.clone_ref(py))))
        }
        _ => LineReader::open(file),
    };
    reader.max_line_bytes(max_line)
}

pub(crate) fn error_dict<'py>(py: Python<'py>, e: &ErrorRecord) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("kind", "error")?;
    d.set_item("file", e.file.as_ref())?;
    d.set_item("line", e.line)?;
    d.set_item("code", e.code.name())?;
    d.set_item("message", &e.message)?;
    Ok(d)
}

/// One game's verdict and what the engine knew of it.
#[pyclass(frozen, module = "engine._core")]
pub struct Verdict {
    inner: GameVerdict,
}

#[pymethods]
impl Verdict {
    #[getter]
    fn game(&self) -> &str {
        &self.inner.game
    }

    #[getter]
    fn ruleset(&self) -> Option<&str> {
        self.inner.ruleset.as_deref()
    }

    #[getter]
    fn status(&self) -> &'static str {
        self.inner.status.name()
    }

    /// How many lines named the game (repeats and set-aside lines included).
    #[getter]
    fn lines(&self) -> u64 {
        self.inner.lines
    }

    /// The files the game's lines came from, in the order first seen.
    #[getter]
    fn files(&self) -> Vec<String> {
        self.inner.files.iter().map(|f| f.to_string()).collect()
    }

    #[getter]
    fn violations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        convert::violations(py, &self.inner.violations)
    }

    /// The decided hands, as the verdict lists them (None for an invalid game).
    #[getter]
    fn hands<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(hands) = &self.inner.hands else {
            return Ok(None);
        };
        let list = PyList::empty(py);
        for hand in hands {
            list.append(convert::outcome(py, hand)?)?;
        }
        Ok(Some(list))
    }

    #[getter]
    fn totals<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner
            .totals
            .as_ref()
            .map(|t| convert::points(py, t))
            .transpose()
    }

    /// The match winners (empty when no hand is decided or the game is invalid).
    #[getter]
    fn winners(&self) -> Vec<String> {
        self.inner
            .winners()
            .into_iter()
            .map(Text::into_string)
            .collect()
    }

    /// The match is over and its last hand has its `end` (or a result closed it).
    #[getter]
    fn complete(&self) -> bool {
        self.inner.status != Status::Invalid
            && self.inner.table.as_ref().is_some_and(|t| t.is_complete())
    }

    /// The header's settings as the engine read them (None when the header is unusable).
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner
            .table
            .as_ref()
            .map(|t| convert::settings(py, &t.settings))
            .transpose()
    }

    /// The header's fields as the log wrote them (None without a header).
    fn header<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(header) = &self.inner.header else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        for (name, field) in header.fields() {
            match field {
                Some(v) => d.set_item(name, convert::value(py, v)?)?,
                None => d.set_item(name, py.None())?,
            }
        }
        Ok(Some(d))
    }

    /// Every hand dealt: dealer, first player, outcome, cards left, reshuffles, closed.
    fn hand_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        if let Some(table) = &self.inner.table {
            for record in table.hand_records() {
                list.append(convert::hand_record(py, &record)?)?;
            }
        }
        Ok(list)
    }

    /// Per replayed line, what the engine knew (None unless the validator kept facts).
    fn facts<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(facts) = &self.inner.facts else {
            return Ok(None);
        };
        let list = PyList::empty(py);
        for fact in facts {
            list.append(convert::event_fact(py, fact)?)?;
        }
        Ok(Some(list))
    }

    /// Every replayed line with the state after it (empty unless the game was recorded);
    /// with `hand`, only that hand's lines (0: the lines before the first deal), so a
    /// caller showing one hand converts only its states.
    #[pyo3(signature = (hand=None))]
    fn steps<'py>(&self, py: Python<'py>, hand: Option<u64>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let steps = &self.inner.steps;
        let wanted = |step: &Step| hand.is_none_or(|h| step.hand() == h);
        // the states of the lines shown: from the first to the last of them
        let first = steps.iter().position(wanted).unwrap_or(steps.len());
        let stop = steps
            .iter()
            .rposition(wanted)
            .map_or(first, |last| last + 1);
        let mut done = Ok(());
        self.inner.visit_states(first..stop, |step, state| {
            if done.is_ok() && wanted(step) {
                done = convert::step(py, step, state).and_then(|d| list.append(d));
            }
        });
        done.map(|()| list)
    }

    /// The replayed line at `index` (its place in `outline()`), as `steps()` gives it:
    /// one step converted, not a hand's. None past the last line.
    fn step<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(step) = self.inner.steps.get(index) else {
            return Ok(None);
        };
        let state = self.inner.state(index);
        convert::step(py, step, state.as_ref()).map(Some)
    }

    /// The state after the line at `index` (the `state` of `step(index)`, without
    /// converting the line); None past the last line or when the line has no state.
    fn state<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.inner
            .state(index)
            .map(|state| convert::snapshot(py, &state))
            .transpose()
    }

    /// What `engine.narrate.MoveReasons` reads of the replayed lines `start..stop` (places
    /// in `outline()`), one `(raw, fact, state)` each, without converting whole states:
    /// `raw` holds only the line's `type`, `player`, `card`, `cards` and `reason` (those it
    /// has, as `steps()` gives them; None when the line is not an object), `fact` its
    /// `phase`, `draw_kind`, `expected` and `gift_to`, and `state` (None when the line has
    /// none) the state after it reduced to `pending_total`, `follow_card`, `mover`,
    /// `active`, `direction` and `legal` (its `player`, `play` and `pass`, or None).
    fn narration<'py>(
        &self,
        py: Python<'py>,
        start: usize,
        stop: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let steps = &self.inner.steps;
        let raw_keys = [
            ("type", intern!(py, "type")),
            ("player", intern!(py, "player")),
            ("card", intern!(py, "card")),
            ("cards", intern!(py, "cards")),
            ("reason", intern!(py, "reason")),
        ];
        let mut names = Names::new(py);
        let (start, stop) = (start.min(steps.len()), stop.min(steps.len()).max(start));
        let mut done = Ok(());
        self.inner.visit_states(start..stop, |step, state| {
            if done.is_ok() {
                done = narration_note(py, &mut names, &raw_keys, step, state)
                    .and_then(|note| list.append(note));
            }
        });
        done.map(|()| list)
    }

    /// Every replayed line in order, without its state: `(seq, hand, file, line)`, to
    /// number and link steps without converting every state.
    fn outline(&self) -> Vec<(u64, u64, Option<String>, Option<u64>)> {
        self.inner
            .steps
            .iter()
            .map(|s| {
                (
                    s.seq,
                    s.hand(),
                    s.file.as_deref().map(str::to_string),
                    s.line,
                )
            })
            .collect()
    }

    /// The violations no recorded step carries, in verdict order (the reader's: a
    /// sequence gap, a line without a usable seq, a conflicting line set aside).
    fn unplaced_violations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for violation in self.inner.unplaced_violations() {
            list.append(convert::violation(py, violation)?)?;
        }
        Ok(list)
    }

    /// The verdict object of `validate --json`, as a dict.
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("kind", "game")?;
        d.set_item("game", &self.inner.game)?;
        d.set_item("ruleset", self.inner.ruleset.as_deref())?;
        d.set_item("status", self.inner.status.name())?;
        d.set_item("violations", self.violations(py)?)?;
        let hands = self.inner.hands.as_ref().map(|hands| {
            hands
                .iter()
                .map(|h| {
                    let o = convert::outcome(py, h)?;
                    o.del_item("winning_card")?;
                    o.del_item("multiplier")?;
                    Ok(o)
                })
                .collect::<PyResult<Vec<_>>>()
        });
        d.set_item("hands", hands.transpose()?)?;
        d.set_item("totals", self.totals(py)?)?;
        Ok(d)
    }

    /// The verdict's line of `validate --json` (without its line ending).
    fn json<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::with_capacity(512);
        self.inner.write_json(&mut out);
        PyBytes::new(py, &out)
    }

    fn __repr__(&self) -> String {
        format!(
            "Verdict(game={:?}, status={:?}, violations={})",
            self.inner.game,
            self.inner.status.name(),
            self.inner.violations.len()
        )
    }
}

/// Python strings made once per call (`Verdict.narration`): the lines of a long hand name
/// the same players and cards again and again.
struct Names<'py> {
    py: Python<'py>,
    text: HashMap<Box<str>, Bound<'py, PyString>>,
    cards: HashMap<Card, Bound<'py, PyString>>,
}

impl<'py> Names<'py> {
    fn new(py: Python<'py>) -> Self {
        Names {
            py,
            text: HashMap::new(),
            cards: HashMap::new(),
        }
    }

    fn text(&mut self, text: &str) -> Bound<'py, PyString> {
        if let Some(made) = self.text.get(text) {
            return made.clone();
        }
        let made = PyString::new(self.py, text);
        self.text.insert(text.into(), made.clone());
        made
    }

    fn text_or_none(&mut self, text: Option<&str>) -> Option<Bound<'py, PyString>> {
        text.map(|t| self.text(t))
    }

    fn card(&mut self, card: Card) -> Bound<'py, PyString> {
        let py = self.py;
        self.cards
            .entry(card)
            .or_insert_with(|| PyString::new(py, &card.code()))
            .clone()
    }

    /// A JSON value as `convert::value` gives it, its strings made once.
    fn value(&mut self, value: &Value) -> PyResult<Bound<'py, PyAny>> {
        Ok(match value {
            Value::Str(s) => self.text(s.as_str()).into_any(),
            Value::Array(items) => {
                let list = PyList::empty(self.py);
                for item in items {
                    list.append(self.value(item)?)?;
                }
                list.into_any()
            }
            other => convert::value(self.py, other)?,
        })
    }
}

fn wrap(py: Python<'_>, verdicts: Vec<GameVerdict>) -> PyResult<Vec<Py<Verdict>>> {
    verdicts
        .into_iter()
        .map(|inner| Py::new(py, Verdict { inner }))
        .collect()
}

/// Feed it files or lines; finished games' verdicts come out of `take_verdicts` as
/// soon as they are due, the rest from `finish`. Line errors from `take_errors`.
#[pyclass(module = "engine._core")]
pub struct Validator {
    inner: validator::Validator,
    files: BTreeMap<String, Arc<str>>,
}

#[pymethods]
impl Validator {
    #[new]
    #[pyo3(signature = (
        *, record=None, only=None, facts=false, hold_lines=100_000, states=true,
        max_line_bytes=DEFAULT_MAX_LINE_BYTES, max_open_games=DEFAULT_MAX_OPEN_GAMES,
        max_waiting_lines=DEFAULT_MAX_WAITING_LINES, max_waiting_bytes=DEFAULT_MAX_WAITING_BYTES,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        record: Option<HashSet<String>>,
        only: Option<HashSet<String>>,
        facts: bool,
        hold_lines: u64,
        states: bool,
        max_line_bytes: usize,
        max_open_games: usize,
        max_waiting_lines: usize,
        max_waiting_bytes: usize,
    ) -> Validator {
        Validator {
            inner: validator::Validator::new(ValidatorOptions {
                record: record.unwrap_or_default(),
                record_states: states,
                only,
                facts,
                hold_lines,
                max_line_bytes,
                max_open_games,
                max_waiting_lines,
                max_waiting_bytes,
                ..ValidatorOptions::default()
            }),
            files: BTreeMap::new(),
        }
    }

    /// Read every file of `paths` (files, directories, `-` for standard input).
    /// FileNotFoundError, before anything is read, when a path does not exist.
    fn feed_paths(&mut self, py: Python<'_>, paths: Vec<String>) -> PyResult<()> {
        let inner = &mut self.inner;
        py.detach(|| inner.feed_paths(&paths))
            .map_err(|e| CoreError::from(e).into())
    }

    /// Read one file (`-` is standard input, or `stdin` when given: a binary file
    /// object); a file that cannot be read is a line error.
    #[pyo3(signature = (path, *, stdin=None))]
    fn feed_file(&mut self, py: Python<'_>, path: String, stdin: Option<Py<PyAny>>) {
        if stdin.is_some() && path == "-" {
            let max_line = self.inner.options().max_line_bytes;
            self.inner
                .feed_reader(&mut reader_for(&path, stdin.as_ref(), max_line));
            return;
        }
        let inner = &mut self.inner;
        py.detach(|| inner.feed_file(&path));
    }

    /// One raw line (without its ending) from `file` at physical line `line`.
    fn feed_line(&mut self, raw: &[u8], file: &str, line: u64) {
        let name = self
            .files
            .entry(file.to_string())
            .or_insert_with(|| Arc::from(file))
            .clone();
        self.inner.feed_line(raw, &name, line);
    }

    /// The verdicts of the games finished since the last call.
    fn take_verdicts(&mut self, py: Python<'_>) -> PyResult<Vec<Py<Verdict>>> {
        let ready = self.inner.sink_mut().take();
        wrap(py, ready)
    }

    /// The input has ended: every verdict not yet taken.
    fn finish(&mut self, py: Python<'_>) -> PyResult<Vec<Py<Verdict>>> {
        let inner = &mut self.inner;
        let all = py.detach(|| inner.finish().take());
        wrap(py, all)
    }

    /// Judge one held game now (None when it is not held).
    fn finish_game(&mut self, py: Python<'_>, game: &str) -> PyResult<Option<Py<Verdict>>> {
        if !self.inner.finish_game(game) {
            return Ok(None);
        }
        // judged last: the sink's last verdict is this game's
        self.inner
            .sink_mut()
            .pop()
            .map(|inner| Py::new(py, Verdict { inner }))
            .transpose()
    }

    /// The line errors so far, handed over (`{"kind": "error", "file", "line", "code",
    /// "message"}`).
    fn take_errors<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .take_errors()
            .iter()
            .map(|e| error_dict(py, e))
            .collect()
    }

    /// Non-blank lines read so far.
    #[getter]
    fn lines_read(&self) -> u64 {
        self.inner.lines_read()
    }

    /// Games held now (open, or finished within their hold window).
    #[getter]
    fn open_games(&self) -> usize {
        self.inner.open_games()
    }
}

/// A replayed game's verdict (None when no line names it) and the line errors met.
type Replayed<'py> = (Option<Py<Verdict>>, Vec<Bound<'py, PyDict>>);

/// Replay one game with every step recorded (the state after each line): its verdict
/// (None when no line names it) and the line errors met on the way.
#[pyfunction]
pub fn replay_game<'py>(
    py: Python<'py>,
    paths: Vec<String>,
    game: String,
) -> PyResult<Replayed<'py>> {
    let (verdict, errors) = py
        .detach(|| validator::replay_game(&paths, &game))
        .map_err(CoreError::from)?;
    let verdict = verdict
        .map(|inner| Py::new(py, Verdict { inner }))
        .transpose()?;
    let errors = errors
        .iter()
        .map(|e| error_dict(py, e))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((verdict, errors))
}

/// The files `paths` name, in input order: explicit files as given, directories
/// recursively (their `.jsonl`, `.ndjson`, `.log` files, optionally `.gz`, in path
/// order), `-` for standard input. FileNotFoundError for a path that does not exist.
#[pyfunction]
pub fn expand_paths(paths: Vec<String>) -> PyResult<Vec<String>> {
    haftkhabis_core::reader::expand_paths(&paths).map_err(|e| CoreError::from(e).into())
}

/// Validate `paths`: every verdict, then every line error, as the JSON lines
/// `validate --json` writes.
#[pyfunction]
pub fn validate_json<'py>(py: Python<'py>, paths: Vec<String>) -> PyResult<Bound<'py, PyBytes>> {
    let out = py
        .detach(
            || -> Result<Vec<u8>, haftkhabis_core::reader::InputPathError> {
                let writer = VerdictWriter::new(Vec::new(), CHUNK);
                let mut validator =
                    validator::Validator::with_sink(ValidatorOptions::default(), writer);
                validator.feed_paths(&paths)?;
                validator.finish();
                let mut writer = validator.into_sink();
                writer.write_held_errors();
                // writing to memory does not fail
                let _ = writer.flush();
                Ok(writer.into_inner())
            },
        )
        .map_err(CoreError::from)?;
    Ok(PyBytes::new(py, &out))
}

/// How much output `validate_to` gathers before it hands a chunk to `write`.
const CHUNK: usize = 1 << 20;

/// A Python callable `write(chunk)` as the output of a [`VerdictWriter`] (the GIL taken
/// for each chunk: `validate_to` runs without it); what it raised is kept for the caller.
struct PyWrite {
    write: Py<PyAny>,
    raised: Option<PyErr>,
}

impl std::io::Write for PyWrite {
    fn write(&mut self, chunk: &[u8]) -> std::io::Result<usize> {
        let called =
            Python::attach(|py| self.write.call1(py, (PyBytes::new(py, chunk),)).map(|_| ()));
        match called {
            Ok(()) => Ok(chunk.len()),
            Err(raised) => {
                self.raised = Some(raised);
                Err(std::io::Error::other("write() raised"))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Validate `paths`, handing `write` the JSON lines of `validate --json` in chunks as
/// games finish (memory stays flat in the number of games), without the GIL but while it
/// reads standard input from `stdin` or hands `write` a chunk (so other Python threads,
/// a server's event loop, run meanwhile); returns the counts:
/// `games`, `lines`, `errors`, `violations` and one count per status.
#[pyfunction]
#[pyo3(signature = (
    paths, write, *, stdin=None, hold_lines=100_000, max_line_bytes=DEFAULT_MAX_LINE_BYTES,
    max_open_games=DEFAULT_MAX_OPEN_GAMES, max_waiting_lines=DEFAULT_MAX_WAITING_LINES,
    max_waiting_bytes=DEFAULT_MAX_WAITING_BYTES,
))]
#[allow(clippy::too_many_arguments)]
pub fn validate_to<'py>(
    py: Python<'py>,
    paths: Vec<String>,
    write: Bound<'py, PyAny>,
    stdin: Option<Py<PyAny>>,
    hold_lines: u64,
    max_line_bytes: usize,
    max_open_games: usize,
    max_waiting_lines: usize,
    max_waiting_bytes: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let files = haftkhabis_core::reader::expand_paths(&paths).map_err(CoreError::from)?;
    let output = PyWrite {
        write: write.unbind(),
        raised: None,
    };
    let options = ValidatorOptions {
        hold_lines,
        max_line_bytes,
        max_open_games,
        max_waiting_lines,
        max_waiting_bytes,
        ..ValidatorOptions::default()
    };
    let (lines, written, raised, flushed) = py.detach(move || {
        let mut validator =
            validator::Validator::with_sink(options, VerdictWriter::new(output, CHUNK));
        for file in &files {
            validator.feed_reader(&mut reader_for(file, stdin.as_ref(), max_line_bytes));
            validator.sink_mut().write_held_errors();
            if validator.sink_mut().failed() {
                break;
            }
        }
        validator.finish();
        let lines = validator.lines_read();
        let mut writer = validator.into_sink();
        let flushed = writer.flush();
        let written = writer.written().clone();
        (lines, written, writer.into_inner().raised, flushed)
    });
    if let Some(raised) = raised {
        return Err(raised);
    }
    flushed.map_err(CoreError::from)?;
    counts_dict(py, lines, written)
}

/// What [`validate_each`] hands over, in the order it happened: a game judged, or a line
/// that belongs to no game.
enum Judged {
    Game(Box<GameVerdict>),
    Error(ErrorRecord),
}

/// The sink of [`validate_each`]: verdicts and line errors in one queue, as they come.
#[derive(Default)]
struct Queue(Vec<Judged>);

impl Sink for Queue {
    type Game = ();

    fn judged(&mut self, verdict: GameVerdict, _: ()) {
        self.0.push(Judged::Game(Box::new(verdict)));
    }

    fn error(&mut self, error: ErrorRecord) -> Option<ErrorRecord> {
        self.0.push(Judged::Error(error));
        None
    }
}

/// How many verdicts and line errors [`validate_each`] gathers before it hands them over.
const EACH_BATCH: usize = 1024;

/// Hands a [`Queue`]'s items to a Python callable `each(items)`, a batch at a time, the GIL
/// taken for each batch; counts what it handed and keeps what `each` raised.
struct Handing {
    each: Py<PyAny>,
    written: Written,
    raised: Option<PyErr>,
}

impl Handing {
    /// Hand over every item of `queue` (in batches of [`EACH_BATCH`]); false once `each`
    /// has raised (nothing more is handed).
    fn hand(&mut self, queue: &mut Queue) -> bool {
        while self.raised.is_none() && !queue.0.is_empty() {
            let batch: Vec<Judged> = queue.0.drain(..queue.0.len().min(EACH_BATCH)).collect();
            let called = Python::attach(|py| -> PyResult<()> {
                let items = PyList::empty(py);
                for item in batch {
                    match item {
                        Judged::Game(inner) => {
                            self.written.count(&inner);
                            items.append(Py::new(py, Verdict { inner: *inner })?)?;
                        }
                        Judged::Error(error) => {
                            self.written.errors += 1;
                            items.append(error_dict(py, &error)?)?;
                        }
                    }
                }
                self.each.call1(py, (items,)).map(|_| ())
            });
            if let Err(raised) = called {
                self.raised = Some(raised);
            }
        }
        queue.0.clear();
        self.raised.is_none()
    }
}

/// Validate `paths`, handing `each` lists of what is judged as it comes, in that order:
/// a `Verdict` when a game is judged, an error dict (as `Validator.take_errors` gives) when
/// a line belongs to no game — at most 1,024 at a time, and whatever is pending at the end
/// of each file — without the GIL but while it reads standard input from `stdin` or calls
/// `each` (so memory stays flat however many games or bad lines a file holds). Returns the
/// counts of `validate_to`. What `each` raised stops the validation and is raised.
#[pyfunction]
#[pyo3(signature = (
    paths, each, *, stdin=None, hold_lines=100_000, max_line_bytes=DEFAULT_MAX_LINE_BYTES,
    max_open_games=DEFAULT_MAX_OPEN_GAMES, max_waiting_lines=DEFAULT_MAX_WAITING_LINES,
    max_waiting_bytes=DEFAULT_MAX_WAITING_BYTES,
))]
#[allow(clippy::too_many_arguments)]
pub fn validate_each<'py>(
    py: Python<'py>,
    paths: Vec<String>,
    each: Bound<'py, PyAny>,
    stdin: Option<Py<PyAny>>,
    hold_lines: u64,
    max_line_bytes: usize,
    max_open_games: usize,
    max_waiting_lines: usize,
    max_waiting_bytes: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let files = haftkhabis_core::reader::expand_paths(&paths).map_err(CoreError::from)?;
    let options = ValidatorOptions {
        hold_lines,
        max_line_bytes,
        max_open_games,
        max_waiting_lines,
        max_waiting_bytes,
        ..ValidatorOptions::default()
    };
    let mut handing = Handing {
        each: each.unbind(),
        written: Written::default(),
        raised: None,
    };
    let lines = py.detach(|| {
        let mut validator = validator::Validator::with_sink(options, Queue::default());
        for file in &files {
            let mut reader = reader_for(file, stdin.as_ref(), max_line_bytes);
            validator.feed_reader_with(&mut reader, |v| {
                v.sink_mut().0.len() < EACH_BATCH || handing.hand(v.sink_mut())
            });
            if !handing.hand(validator.sink_mut()) {
                return validator.lines_read();
            }
        }
        handing.hand(validator.finish());
        validator.lines_read()
    });
    if let Some(raised) = handing.raised {
        return Err(raised);
    }
    counts_dict(py, lines, handing.written)
}

/// The counts `validate_to` and `validate_each` return.
fn counts_dict(py: Python<'_>, lines: u64, written: Written) -> PyResult<Bound<'_, PyDict>> {
    let Written {
        games,
        violations,
        errors,
        statuses,
    } = written;
    let counts = PyDict::new(py);
    counts.set_item("games", games)?;
    counts.set_item("lines", lines)?;
    counts.set_item("errors", errors)?;
    counts.set_item("violations", violations)?;
    // games per status, apart: a status named like a count ("violations") must not
    // overwrite it
    let by_status = PyDict::new(py);
    for (status, n) in statuses {
        by_status.set_item(status, n)?;
    }
    counts.set_item("statuses", by_status)?;
    Ok(counts)
}

/// One `(raw, fact, state)` of [`Verdict::narration`].
fn narration_note<'py>(
    py: Python<'py>,
    names: &mut Names<'py>,
    raw_keys: &[(&str, &Bound<'py, PyString>)],
    step: &Step,
    state: Option<&Snapshot>,
) -> PyResult<Bound<'py, PyTuple>> {
    let raw = match step.raw.as_object() {
        Some(_) => {
            let d = PyDict::new(py);
            for (name, key) in raw_keys {
                if let Some(value) = step.raw.get(name) {
                    d.set_item(key, names.value(value)?)?;
                }
            }
            Some(d)
        }
        None => None,
    };
    let fact = PyDict::new(py);
    let known = step.fact.as_ref();
    fact.set_item(intern!(py, "phase"), known.and_then(|f| f.phase))?;
    fact.set_item(
        intern!(py, "draw_kind"),
        known.and_then(|f| f.draw_kind).map(|k| k.name()),
    )?;
    let expected = known.and_then(|f| f.expected.as_deref());
    fact.set_item(intern!(py, "expected"), names.text_or_none(expected))?;
    let gift_to = known.and_then(|f| f.gift_to.as_deref());
    fact.set_item(intern!(py, "gift_to"), names.text_or_none(gift_to))?;
    let state = match state {
        Some(s) => {
            let d = PyDict::new(py);
            d.set_item(intern!(py, "pending_total"), s.pending_total)?;
            let follow = s.follow_card.map(|c| names.card(c));
            d.set_item(intern!(py, "follow_card"), follow)?;
            let mover = names.text_or_none(s.mover.as_deref());
            d.set_item(intern!(py, "mover"), mover)?;
            let active: Vec<_> = s.active.iter().map(|p| names.text(p)).collect();
            d.set_item(intern!(py, "active"), PyList::new(py, active)?)?;
            let direction = PyString::intern(py, s.direction());
            d.set_item(intern!(py, "direction"), direction)?;
            match &s.legal {
                Some(legal) => {
                    let l = PyDict::new(py);
                    l.set_item(intern!(py, "player"), names.text(&legal.player))?;
                    let play: Vec<_> = legal.playable.iter().map(|&c| names.card(c)).collect();
                    l.set_item(intern!(py, "play"), PyList::new(py, play)?)?;
                    l.set_item(intern!(py, "pass"), legal.may_pass)?;
                    d.set_item(intern!(py, "legal"), l)?;
                }
                None => d.set_item(intern!(py, "legal"), py.None())?,
            }
            Some(d)
        }
        None => None,
    };
    (raw, fact, state).into_pyobject(py)
}
