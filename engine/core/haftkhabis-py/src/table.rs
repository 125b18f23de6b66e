//! One game replayed line by line from Python (`engine._core.GameRun`): the simulator's
//! bots, the what-if of a disputed step and the step views drive the core's `Table`
//! through it, under the strict or the collecting policy.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use haftkhabis_core::game::{self, Line, RunOptions};
use haftkhabis_core::json::{self, Text};
use haftkhabis_core::notation;
use haftkhabis_core::violation::{Code, Violation};
use haftkhabis_core::{analysis, ismcts};

use crate::convert;
use crate::error::CoreError;

/// A raw line parsed as the core reads it; a line that is not JSON is a ValueError.
fn parse(raw: &[u8]) -> PyResult<json::Value> {
    json::parse_line(raw).map_err(not_json)
}

/// The ValueError for a line that is not JSON.
fn not_json(error: json::ParseError) -> PyErr {
    PyValueError::new_err(format!("the line is {error}"))
}

/// How a run driven from Python replays (a [`GameRun`] and each [`ParsedLines`] replay
/// alike): with `record`, every step keeps the state after it, which the step views read;
/// no per-line facts (the streaming validator keeps those, for the warehouse).
fn run_options(strict: bool, record: bool) -> RunOptions {
    RunOptions {
        record,
        states: true,
        strict,
        facts: false,
    }
}

/// Judge and apply one parsed line: replayed at its `seq`, or, without a usable `seq`, set
/// aside as a `schema` violation (what [`GameRun::feed`] and [`ParsedLines`] both do).
fn feed_value(
    run: &mut game::GameRun,
    file: Option<&Arc<str>>,
    obj: json::Value,
    line: Option<u64>,
) -> PyResult<()> {
    let outcome = match notation::seq(&obj) {
        Some(seq) => run.feed(seq, obj, file, line),
        None => {
            let shown = obj.get("seq").map_or("None".to_string(), |v| v.repr());
            let mut v = Violation::new(
                None,
                Code::Schema,
                notation::player_of(&obj).map(str::to_string),
                format!(
                    "'seq' must be a whole number 0 or more, got {shown}; the line is set aside"
                ),
            );
            v.file = file.cloned();
            v.line = line;
            run.note(v)
        }
    };
    outcome.map_err(CoreError::from)?;
    Ok(())
}

/// One game's lines parsed once, to be replayed under many headers: ruleset inference
/// (`engine.infer`) replays the same lines under every candidate profile, and each replay
/// stops as soon as it has found more violations than the best so far. A clean line is
/// read straight to its event, as the validator reads it ([`Line::read`]): a replay then
/// neither copies its JSON value nor decodes it again.
#[pyclass(module = "engine._core", frozen)]
pub struct ParsedLines {
    lines: Vec<(Line, Option<u64>)>,
}

#[pymethods]
impl ParsedLines {
    /// `raws` (each line without its ending) and their line numbers, as many of each.
    #[new]
    fn new(raws: Vec<Bound<'_, PyBytes>>, lines: Vec<Option<u64>>) -> PyResult<ParsedLines> {
        if raws.len() != lines.len() {
            return Err(PyValueError::new_err(format!(
                "{} lines but {} line numbers",
                raws.len(),
                lines.len()
            )));
        }
        let parsed = raws
            .iter()
            .zip(lines)
            .map(|(raw, line)| {
                Line::read(raw.as_bytes(), true)
                    .map(|(read, _)| (read, line))
                    .map_err(not_json)
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(ParsedLines { lines: parsed })
    }

    fn __len__(&self) -> usize {
        self.lines.len()
    }

    /// Replay `header` (seq 0, no line number), then these lines in order, as
    /// [`GameRun::feed`] would, stopping once more than `bound` violations are found:
    /// (the violations counted, the first one, whether the replay ran to the end).
    fn replay_bounded<'py>(
        &self,
        py: Python<'py>,
        game: &str,
        header: &[u8],
        bound: f64,
    ) -> PyResult<(usize, Option<Bound<'py, PyDict>>, bool)> {
        let mut run = game::GameRun::new(game, run_options(false, false));
        let over = |run: &game::GameRun| run.violations().len() as f64 > bound;
        feed_value(&mut run, None, parse(header)?, None)?;
        let mut finished = !over(&run);
        if finished {
            for (read, line) in &self.lines {
                match read {
                    Line::Event(event) => run
                        .feed_line(event.common.seq, Line::Event(event.clone()), None, *line)
                        .map_err(CoreError::from)?,
                    Line::Json(obj) => feed_value(&mut run, None, obj.clone(), *line)?,
                }
                if over(&run) {
                    finished = false;
                    break;
                }
            }
        }
        let first = match run.violations().first() {
            Some(v) => Some(convert::violation(py, v)?),
            None => None,
        };
        Ok((run.violations().len(), first, finished))
    }
}

/// One game's replay, fed one line at a time in `seq` order.
#[pyclass(module = "engine._core")]
pub struct GameRun {
    run: game::GameRun,
    file: Option<Arc<str>>,
}

impl GameRun {
    fn table(&self) -> PyResult<&haftkhabis_core::machine::Table> {
        self.run
            .table()
            .ok_or_else(|| PyValueError::new_err("no usable header has been fed yet"))
    }
}

#[pymethods]
impl GameRun {
    /// `strict=True` raises ReplayError at the first violation (the simulator, tests);
    /// otherwise violations are collected and the replay goes on. `record=True` keeps
    /// every step with the state after it.
    #[new]
    #[pyo3(signature = (game, *, strict=false, record=false, file=None))]
    fn new(game: &str, strict: bool, record: bool, file: Option<&str>) -> GameRun {
        GameRun {
            run: game::GameRun::new(game, run_options(strict, record)),
            file: file.map(Arc::from),
        }
    }

    /// An independent run at the same point: the same lines fed, steps and violations
    /// kept; feeding either leaves the other as it was.
    fn copy(&self) -> GameRun {
        GameRun {
            run: self.run.clone(),
            file: self.file.clone(),
        }
    }

    /// Judge and apply one raw line (without its ending); the violations it carries.
    #[pyo3(signature = (raw, line=None))]
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        raw: &[u8],
        line: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let before = self.run.violations().len();
        feed_value(&mut self.run, self.file.as_ref(), parse(raw)?, line)?;
        convert::violations(py, &self.run.violations()[before..])
    }

    /// What the player expected to act may do now (None when nobody is to move): the
    /// legality view (`player`, `phase`, `play`, `draw`, `pass`, `obliged`, `gift`, `text`).
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        match self.run.table().and_then(|t| t.options()) {
            Some(o) => Ok(Some(convert::options(py, &o)?)),
            None => Ok(None),
        }
    }

    /// The state after the last line (None before the first deal).
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        match self.run.table().and_then(|t| t.snapshot()) {
            Some(s) => Ok(Some(convert::snapshot(py, &s)?)),
            None => Ok(None),
        }
    }

    /// The player the rules expect to act next.
    fn expected_actor(&self) -> Option<String> {
        self.run
            .table()
            .and_then(|t| t.expected_actor().map(str::to_string))
    }

    /// No usable header: nothing is replayed.
    #[getter]
    fn invalid(&self) -> bool {
        self.run.is_invalid()
    }

    #[getter]
    fn players(&self) -> PyResult<Vec<String>> {
        Ok(self
            .table()?
            .players()
            .iter()
            .map(|p| p.to_string())
            .collect())
    }

    #[getter]
    fn elimination(&self) -> PyResult<bool> {
        Ok(self.table()?.elimination())
    }

    #[getter]
    fn match_over(&self) -> PyResult<bool> {
        Ok(self.table()?.match_over())
    }

    #[getter]
    fn hand_open(&self) -> PyResult<bool> {
        Ok(self.table()?.hand_open())
    }

    /// `result` or `abort` when a line closed the game.
    #[getter]
    fn closed_by(&self) -> PyResult<Option<&'static str>> {
        Ok(self.table()?.closed_by().map(|c| c.name()))
    }

    fn is_complete(&self) -> PyResult<bool> {
        Ok(self.table()?.is_complete())
    }

    /// Match points per player, seat order (the hands closed so far).
    fn totals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        convert::points(py, &self.table()?.totals())
    }

    fn match_winners(&self) -> PyResult<Vec<String>> {
        let winners = self.table()?.match_winners();
        Ok(winners.into_iter().map(Text::into_string).collect())
    }

    /// Hands with an outcome: those closed by an end, and the running one if decided.
    fn decided_outcomes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for outcome in self.table()?.decided_outcomes() {
            list.append(convert::outcome(py, &outcome)?)?;
        }
        Ok(list)
    }

    /// The header's settings as the engine read them.
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        convert::settings(py, &self.table()?.settings)
    }

    /// Every card of the running hand accounted for: hands, pile, stock, laid-aside 7s.
    fn card_count(&self) -> PyResult<Option<usize>> {
        Ok(self.table()?.card_count())
    }

    /// Every violation so far, in the order found.
    #[getter]
    fn violations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        convert::violations(py, self.run.violations())
    }

    /// The decision of the player to move, analysed from their information set
    /// (`haftkhabis_core::analysis`): every legal move's expected hand outcome. `search`
    /// is `flat` (every move played out `rollouts` times) or `ismcts` (the same playouts
    /// spent by an information-set tree search over `trees` root-parallel trees, by
    /// default `ismcts::DEFAULT_TREES`). None
    /// when nobody is to move or there is only one move; ValueError for another search.
    /// The interpreter is released while the rollouts run on `threads` threads (0: every
    /// core).
    #[pyo3(signature = (*, rollouts=1000, seed=0, threads=0, search="flat", trees=None))]
    fn analyse<'py>(
        &self,
        py: Python<'py>,
        rollouts: usize,
        seed: u64,
        threads: usize,
        search: &str,
        trees: Option<usize>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let trees = trees.unwrap_or(ismcts::DEFAULT_TREES);
        let table = self.table()?;
        let search = match search {
            "flat" => analysis::Search::Flat,
            "ismcts" if trees >= 1 => analysis::Search::Ismcts { trees },
            "ismcts" => return Err(PyValueError::new_err("trees must be 1 or more")),
            other => {
                return Err(PyValueError::new_err(format!(
                    "search is 'flat' or 'ismcts', not {other:?}"
                )))
            }
        };
        let config = analysis::Config {
            rollouts,
            seed,
            threads,
        };
        match py.detach(|| analysis::analyse(table, &config, search)) {
            Some(a) => Ok(Some(crate::analysis::decision(py, &a, table.players())?)),
            None => Ok(None),
        }
    }

    /// `player`'s expected outcome of the running hand from their information set, every
    /// move made by the rollout policy (after a deal: the deal's strength). None without
    /// an open hand; ValueError for a player not at the table.
    #[pyo3(signature = (player, *, rollouts=1000, seed=0, threads=0))]
    fn position_value<'py>(
        &self,
        py: Python<'py>,
        player: &str,
        rollouts: usize,
        seed: u64,
        threads: usize,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let table = self.table()?;
        let seat = table
            .seat(player)
            .ok_or_else(|| PyValueError::new_err(format!("{player:?} is not at the table")))?;
        let config = analysis::Config {
            rollouts,
            seed,
            threads,
        };
        match py.detach(|| analysis::position_value(table, seat, &config)) {
            Some(p) => Ok(Some(crate::analysis::position(py, &p, table.players())?)),
            None => Ok(None),
        }
    }

    /// The legal moves of the player to move, each once (a J per suit it may declare, a 2
    /// per target), as the analysis enumerates them (`kind`, `card`, `suit`, `target`,
    /// `text`); empty when nobody is to move.
    fn legal_moves<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let table = self.table()?;
        let list = PyList::empty(py);
        for mv in analysis::legal_moves(table) {
            list.append(crate::analysis::move_dict(py, &mv, table.players())?)?;
        }
        Ok(list)
    }

    /// The move the rollout policy (`ANALYSIS_POLICY`) makes now (None when nobody is to
    /// move or it can do nothing).
    fn policy_move<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let table = self.table()?;
        match analysis::policy_move(table) {
            Some(mv) => Ok(Some(crate::analysis::move_dict(py, &mv, table.players())?)),
            None => Ok(None),
        }
    }

    /// Every replayed line (empty unless `record=True`), with the state after it unless
    /// `states=False` (then `state` is None: a state is every hand, the pile and the
    /// scores, most of what converting a step costs, and a caller reading the lines, their
    /// events and violations does not pay for it). `start`: from the step at that place
    /// in feed order on (a what-if reads the steps after the ones its copy was made from).
    #[pyo3(signature = (*, states=true, start=0))]
    fn steps<'py>(
        &self,
        py: Python<'py>,
        states: bool,
        start: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for step in self.run.steps().iter().skip(start) {
            let state = if states { step.state.as_ref() } else { None };
            list.append(convert::step(py, step, state)?)?;
        }
        Ok(list)
    }
}
