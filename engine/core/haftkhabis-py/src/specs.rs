//! The codec's field table for Python (`engine._core.event_specs()`): every event type's
//! fields as `notation::EVENT_FIELDS` and `notation::COMMON_FIELDS` declare them (each
//! kind's name and policy are `notation::FieldKind`'s own), with the value sets and limits
//! the codec checks against. `engine/schema.py` generates the published JSON Schema
//! (`docs/schema/haftkhabis-1.schema.json`) from it, so the schema has one source: the
//! table the decoder reads lines with.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use haftkhabis_core::cards::{Rank, Suit};
use haftkhabis_core::event::{PenaltyReason, EVENT_TYPES};
use haftkhabis_core::notation::{self, Field};

fn field_dict<'py>(py: Python<'py>, field: &Field) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", field.name)?;
    d.set_item("required", field.required)?;
    d.set_item("kind", field.kind.name())?;
    d.set_item("policy", field.kind.policy().name())?;
    Ok(d)
}

fn fields_list<'py>(py: Python<'py>, fields: &[Field]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for field in fields {
        list.append(field_dict(py, field)?)?;
    }
    Ok(list)
}

/// The codec's field table: `format`, `extension_prefix`, `common` (the fields every line
/// carries), `events` (per type, in notation order: `type` and its `fields`, each with
/// `name`, `required`, `kind`, `policy`), and the value sets and limits the kinds are
/// checked against (`ranks`, `suits`, `calls`, `penalty_reasons`, `limits`).
#[pyfunction]
pub fn event_specs(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("format", notation::FORMAT)?;
    d.set_item("extension_prefix", notation::EXTENSION_PREFIX)?;
    d.set_item("common", fields_list(py, notation::COMMON_FIELDS)?)?;
    let events = PyList::empty(py);
    for spec in notation::EVENT_FIELDS {
        let e = PyDict::new(py);
        e.set_item("type", spec.type_name)?;
        e.set_item("fields", fields_list(py, spec.fields)?)?;
        events.append(e)?;
    }
    d.set_item("events", events)?;
    d.set_item("event_types", EVENT_TYPES.to_vec())?;
    let ranks: String = Rank::ALL.iter().map(|r| r.letter()).collect();
    let suits: String = Suit::ALL.iter().map(|s| s.letter()).collect();
    d.set_item("ranks", ranks)?;
    d.set_item("suits", suits)?;
    d.set_item("calls", notation::CALLS.to_vec())?;
    let reasons: Vec<&str> = PenaltyReason::ALL.iter().map(|r| r.name()).collect();
    d.set_item("penalty_reasons", reasons)?;
    let limits = PyDict::new(py);
    limits.set_item("game_id_length", notation::MAX_GAME_ID_LEN)?;
    limits.set_item("player_id_length", notation::MAX_PLAYER_ID_LEN)?;
    limits.set_item("seq", notation::MAX_SEQ)?;
    limits.set_item("hand", notation::MAX_HAND)?;
    d.set_item("limits", limits)?;
    Ok(d)
}
