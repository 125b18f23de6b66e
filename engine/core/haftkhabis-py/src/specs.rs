//! The codec's field table for Python (`engine._core.event_specs()`): every event type's
//! fields as `notation::EVENT_FIELDS` and `notation::COMMON_FIELDS` declare them, with
//! the value sets and limits the codec checks against. `engine/schema.py` generates the
//! published JSON Schema (`docs/schema/haftkhabis-1.schema.json`) from it, so the schema
//! has one source: the table the decoder reads lines with.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use haftkhabis_core::cards::{Rank, Suit};
use haftkhabis_core::event::{PenaltyReason, EVENT_TYPES};
use haftkhabis_core::notation::{self, Field, FieldKind};

/// A field kind's name in the table Python reads (snake case of the Rust variant).
///
/// The match is exhaustive on purpose: a new `FieldKind` in the codec does not compile
/// until it has a name here, and the schema generator refuses a name it has no schema for.
fn kind_name(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::GameId => "game_id",
        FieldKind::Seq => "seq",
        FieldKind::EventType => "event_type",
        FieldKind::Timestamp => "timestamp",
        FieldKind::Format => "format",
        FieldKind::Ruleset => "ruleset",
        FieldKind::Players => "players",
        FieldKind::Options => "options",
        FieldKind::Mode => "mode",
        FieldKind::Decks => "decks",
        FieldKind::Match => "match",
        FieldKind::Meta => "meta",
        FieldKind::HandNumber => "hand_number",
        FieldKind::PlayerId => "player_id",
        FieldKind::Hands => "hands",
        FieldKind::Starter => "starter",
        FieldKind::Stock => "stock",
        FieldKind::Card => "card",
        FieldKind::Suit => "suit",
        FieldKind::Target => "target",
        FieldKind::Cards => "cards",
        FieldKind::Call => "call",
        FieldKind::PenaltyCards => "penalty_cards",
        FieldKind::PenaltyReason => "penalty_reason",
        FieldKind::PlayerList => "player_list",
        FieldKind::PointsMap => "points_map",
        FieldKind::Text => "text",
    }
}

/// How the codec treats a bad value of the kind: `set_aside` (a `schema` issue and the
/// line is not replayed), `reported` (a `schema` issue, the line applied), `rules` (not a
/// notation issue: the rules judge it, e.g. `bad_suit`), `header` (judged when the header
/// is read), `router` (checked before decoding: the line belongs to no game or has no
/// usable `seq`).
fn kind_policy(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::GameId | FieldKind::Seq | FieldKind::EventType => "router",
        FieldKind::Timestamp
        | FieldKind::Call
        | FieldKind::PenaltyCards
        | FieldKind::PlayerList
        | FieldKind::PointsMap
        | FieldKind::Text => "reported",
        FieldKind::Format
        | FieldKind::Ruleset
        | FieldKind::Players
        | FieldKind::Options
        | FieldKind::Mode
        | FieldKind::Decks
        | FieldKind::Match
        | FieldKind::Meta => "header",
        FieldKind::HandNumber
        | FieldKind::PlayerId
        | FieldKind::Hands
        | FieldKind::Stock
        | FieldKind::Card
        | FieldKind::Cards
        | FieldKind::PenaltyReason => "set_aside",
        FieldKind::Starter | FieldKind::Suit | FieldKind::Target => "rules",
    }
}

fn field_dict<'py>(py: Python<'py>, field: &Field) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", field.name)?;
    d.set_item("required", field.required)?;
    d.set_item("kind", kind_name(field.kind))?;
    d.set_item("policy", kind_policy(field.kind))?;
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
