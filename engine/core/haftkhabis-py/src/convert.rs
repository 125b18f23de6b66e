//! Core values as Python objects: plain dicts, lists and strings, in the shapes the
//! verdict contract and `engine`'s Python API document.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use haftkhabis_core::cards::Card;
use haftkhabis_core::game::{EventFact, Step};
use haftkhabis_core::json::{Text, Value};
use haftkhabis_core::machine::{
    HandOutcome, HandRecord, LineFact, Settings, Snapshot, TurnOptions,
};
use haftkhabis_core::violation::Violation;

pub fn card_list(cards: &[Card]) -> Vec<String> {
    cards.iter().map(|c| c.code()).collect()
}

/// A JSON value as Python's `json.loads` would give it (duplicate keys: the last counts).
pub fn value<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Int(n) => n.into_pyobject(py)?.into_any(),
        Value::UInt(n) => n.into_pyobject(py)?.into_any(),
        Value::Float(x) => x.into_pyobject(py)?.into_any(),
        Value::Str(s) => s.as_str().into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(self::value(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(entries) => {
            let dict = PyDict::new(py);
            for (key, item) in entries {
                dict.set_item(key.as_str(), self::value(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

pub fn points<'py>(py: Python<'py>, items: &[(Text, i64)]) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (player, points) in items {
        dict.set_item(player.as_str(), points)?;
    }
    Ok(dict)
}

/// Player names as Python takes them.
pub fn names(list: &[Text]) -> Vec<&str> {
    list.iter().map(Text::as_str).collect()
}

pub fn violation<'py>(py: Python<'py>, v: &Violation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("seq", v.seq)?;
    d.set_item("code", v.code.name())?;
    d.set_item("player", v.player.as_deref())?;
    d.set_item("message", &v.message)?;
    d.set_item("file", v.file.as_deref())?;
    d.set_item("line", v.line)?;
    Ok(d)
}

pub fn violations<'py>(py: Python<'py>, found: &[Violation]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for v in found {
        list.append(violation(py, v)?)?;
    }
    Ok(list)
}

/// A decided hand as the verdict lists it (`hand`, `winners`, `scores`, `reason`, `order`),
/// plus what the warehouse records (`winning_card`, `multiplier`).
pub fn outcome<'py>(py: Python<'py>, o: &HandOutcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("hand", o.hand)?;
    d.set_item("winners", names(&o.winners))?;
    match &o.scores {
        Some(scores) => d.set_item("scores", points(py, scores)?)?,
        None => d.set_item("scores", py.None())?,
    }
    d.set_item("reason", o.reason.name())?;
    d.set_item("order", o.order.as_deref().map(names))?;
    d.set_item("winning_card", o.winning_card.map(|c| c.code()))?;
    d.set_item("multiplier", o.multiplier)?;
    Ok(d)
}

pub fn options<'py>(py: Python<'py>, o: &TurnOptions) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("player", o.player.as_str())?;
    d.set_item("phase", o.phase.name())?;
    d.set_item("play", card_list(&o.playable))?;
    d.set_item("draw", o.draw)?;
    d.set_item("pass", o.may_pass)?;
    d.set_item("obliged", o.obliged)?;
    d.set_item("gift", o.gift)?;
    d.set_item("text", o.describe())?;
    Ok(d)
}

/// The state after a line (the keys of the replay views).
pub fn snapshot<'py>(py: Python<'py>, s: &Snapshot) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("hand", s.hand)?;
    d.set_item("open", s.open)?;
    d.set_item("dealer", s.dealer.as_str())?;
    d.set_item("phase", s.phase.name())?;
    let hands = PyDict::new(py);
    for (player, cards) in &s.hands {
        hands.set_item(player.as_str(), card_list(cards))?;
    }
    d.set_item("hands", hands)?;
    d.set_item("pile_top", s.pile_top.map(|c| c.code()))?;
    d.set_item("pile_size", s.pile_size)?;
    d.set_item("pile_recent", card_list(&s.pile_recent))?;
    d.set_item("pile", card_list(&s.pile))?;
    d.set_item("active", names(&s.active))?;
    d.set_item("stock_size", s.stock_size)?;
    d.set_item(
        "current_suit",
        s.current_suit.map(|x| x.letter().to_string()),
    )?;
    d.set_item("direction", s.direction())?;
    d.set_item("mover", s.mover.as_deref())?;
    d.set_item("turn", s.turn.as_deref())?;
    d.set_item("pending_total", s.pending_total)?;
    d.set_item("follow_card", s.follow_card.map(|c| c.code()))?;
    d.set_item("gift_target", s.gift_target.as_deref())?;
    d.set_item("call_due", names(&s.call_due))?;
    d.set_item("finished", names(&s.finished))?;
    d.set_item("waiting_sevens", names(&s.waiting_sevens))?;
    d.set_item("laid_aside", card_list(&s.laid_aside))?;
    match &s.legal {
        Some(legal) => d.set_item("legal", options(py, legal)?)?,
        None => d.set_item("legal", py.None())?,
    }
    match &s.outcome {
        Some(o) => d.set_item("outcome", outcome(py, o)?)?,
        None => d.set_item("outcome", py.None())?,
    }
    Ok(d)
}

pub fn settings<'py>(py: Python<'py>, s: &Settings) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ruleset", &s.ruleset.name)?;
    d.set_item("players", names(&s.players))?;
    d.set_item("mode", s.mode.name())?;
    d.set_item("decks", s.decks)?;
    d.set_item("match_hands", s.match_hands)?;
    d.set_item("match_target", s.match_target)?;
    let options = PyDict::new(py);
    for name in &s.ruleset.option_names {
        options.set_item(name, s.ruleset.options.get(name).unwrap_or(false))?;
    }
    d.set_item("options", options)?;
    Ok(d)
}

pub fn hand_record<'py>(py: Python<'py>, r: &HandRecord) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("hand", r.number)?;
    d.set_item("dealer", r.dealer.as_str())?;
    d.set_item("first_player", r.first_player.as_str())?;
    match &r.outcome {
        Some(o) => d.set_item("outcome", outcome(py, o)?)?,
        None => d.set_item("outcome", py.None())?,
    }
    let left = PyDict::new(py);
    for (player, cards) in &r.cards_left {
        left.set_item(player.as_str(), card_list(cards))?;
    }
    d.set_item("cards_left", left)?;
    d.set_item("reshuffles", r.reshuffles)?;
    d.set_item("closed", r.closed)?;
    Ok(d)
}

fn line_fact(py: Python<'_>, d: &Bound<'_, PyDict>, fact: &LineFact) -> PyResult<()> {
    d.set_item("draw_kind", fact.draw_kind.map(|k| k.name()))?;
    let laid = PyList::empty(py);
    for (player, cards) in &fact.laid_aside {
        laid.append((player.as_str(), card_list(cards)))?;
    }
    d.set_item("laid_aside", laid)?;
    d.set_item("expected", fact.expected.as_deref())?;
    d.set_item("gift_to", fact.gift_to.as_deref())?;
    Ok(())
}

pub fn event_fact<'py>(py: Python<'py>, f: &EventFact) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("seq", f.seq)?;
    d.set_item("hand", f.hand)?;
    d.set_item("phase", f.phase)?;
    let codes: Vec<&str> = f.codes.iter().map(|c| c.name()).collect();
    d.set_item("codes", codes)?;
    d.set_item("applied", f.detail.is_some())?;
    match &f.detail {
        Some(fact) => line_fact(py, &d, fact)?,
        None => line_fact(py, &d, &LineFact::default())?,
    }
    Ok(d)
}

/// A recorded step as a dict, with `state` the state after it (the step's own when it
/// kept one: `Some(s.state.as_ref())`).
pub fn step<'py>(
    py: Python<'py>,
    s: &Step,
    state: Option<&Snapshot>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("seq", s.seq)?;
    d.set_item("file", s.file.as_deref())?;
    d.set_item("line", s.line)?;
    match &s.event {
        Some(event) => d.set_item(
            "event",
            value(py, &haftkhabis_core::notation::encode(event))?,
        )?,
        None => d.set_item("event", py.None())?,
    }
    d.set_item("raw", value(py, &s.raw)?)?;
    d.set_item("violations", violations(py, &s.violations)?)?;
    match state {
        Some(state) => d.set_item("state", snapshot(py, state)?)?,
        None => d.set_item("state", py.None())?,
    }
    let fact = PyDict::new(py);
    d.set_item("applied", s.fact.is_some())?;
    match &s.fact {
        Some(f) => {
            fact.set_item("hand", f.hand)?;
            fact.set_item("phase", f.phase)?;
            line_fact(py, &fact, f)?;
        }
        None => line_fact(py, &fact, &LineFact::default())?,
    }
    d.set_item("fact", fact)?;
    Ok(d)
}
