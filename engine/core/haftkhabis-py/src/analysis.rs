//! Move-quality analyses as Python dicts (`GameRun.analyse`, `GameRun.position_value`):
//! the shapes `DecisionAnalysisInfo` and `PositionValueInfo` of `engine/_core.pyi`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use haftkhabis_core::analysis::{DecisionAnalysis, Move, PositionValue, Search, POLICY};
use haftkhabis_core::json::Text;

/// A move (`LegalMoveInfo`).
pub fn move_dict<'py>(
    py: Python<'py>,
    mv: &Move,
    players: &[Text],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (kind, card, suit, target) = match mv {
        Move::Play { card, suit, target } => (
            "play",
            Some(card.code()),
            suit.map(|s| s.letter().to_string()),
            target.and_then(|t| players.get(t)).map(|t| t.to_string()),
        ),
        Move::Draw => ("draw", None, None, None),
        Move::Pass => ("pass", None, None, None),
    };
    d.set_item("kind", kind)?;
    d.set_item("card", card)?;
    d.set_item("suit", suit)?;
    d.set_item("target", target)?;
    d.set_item("text", mv.describe(players))?;
    Ok(d)
}

/// A decision's analysis (`DecisionAnalysisInfo`).
pub fn decision<'py>(
    py: Python<'py>,
    a: &DecisionAnalysis,
    players: &[Text],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("player", players.get(a.seat).map(|p| p.to_string()))?;
    d.set_item("rollouts", a.rollouts)?;
    d.set_item("seed", a.seed)?;
    d.set_item("policy", POLICY)?;
    d.set_item("search", a.search.name())?;
    d.set_item(
        "trees",
        match a.search {
            Search::Flat => None,
            Search::Ismcts { trees } => Some(trees),
        },
    )?;
    d.set_item("truncated", a.truncated)?;
    d.set_item("faults", a.faults)?;
    d.set_item("best", a.best)?;
    let moves = PyList::empty(py);
    for m in &a.moves {
        let item = move_dict(py, &m.mv, players)?;
        item.set_item("mean", m.mean)?;
        item.set_item("se", m.se)?;
        item.set_item("win_rate", m.win_rate)?;
        item.set_item("visits", m.visits)?;
        item.set_item("loss", m.loss)?;
        item.set_item("loss_se", m.loss_se)?;
        item.set_item("significant", m.significant())?;
        moves.append(item)?;
    }
    d.set_item("moves", moves)?;
    Ok(d)
}

/// A seat's expected outcome from a position (`PositionValueInfo`).
pub fn position<'py>(
    py: Python<'py>,
    p: &PositionValue,
    players: &[Text],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("player", players.get(p.seat).map(|p| p.to_string()))?;
    d.set_item("mean", p.mean)?;
    d.set_item("se", p.se)?;
    d.set_item("win_rate", p.win_rate)?;
    d.set_item("rollouts", p.rollouts)?;
    d.set_item("truncated", p.truncated)?;
    d.set_item("policy", POLICY)?;
    Ok(d)
}
