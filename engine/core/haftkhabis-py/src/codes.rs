//! The violation codes for Python, read from the core's one table
//! (`haftkhabis_core::violation::CODES`): `violation_codes()` exports it, as pydantic-core's
//! `list_all_errors()` exports its error types, and `Code`, a `enum.StrEnum` made from it
//! when the module loads, is what Python code compares, stores and validates codes with.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use haftkhabis_core::violation::CODES;

/// Every violation code in the contract's order: `{"code", "foul", "explanation"}`, where
/// `foul` says whether it is a player's own foul (rules.md's list).
#[pyfunction]
pub fn violation_codes(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for info in CODES {
        let d = PyDict::new(py);
        d.set_item("code", info.name)?;
        d.set_item("foul", info.foul)?;
        d.set_item("explanation", info.explanation)?;
        list.append(d)?;
    }
    Ok(list)
}

/// `Code`: a `StrEnum` with a member per code, named as the code in upper case
/// (`Code.MUST_PLAY == "must_play"`), in the contract's order; pickled and imported as
/// `engine._core.Code`.
pub fn code_enum(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let members: Vec<(String, &str)> = CODES
        .iter()
        .map(|info| (info.name.to_ascii_uppercase(), info.name))
        .collect();
    let kwargs = PyDict::new(py);
    kwargs.set_item("module", "engine._core")?;
    kwargs.set_item("qualname", "Code")?;
    let code = py
        .import("enum")?
        .getattr("StrEnum")?
        .call(("Code", members), Some(&kwargs))?;
    code.setattr(
        "__doc__",
        "A violation code (the contract's closed list; a message says the specifics).",
    )?;
    Ok(code)
}
