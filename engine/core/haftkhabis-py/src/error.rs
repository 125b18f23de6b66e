//! The core's errors as Python exceptions, as delta-rs's `python/src/error.rs` does it:
//! the exception classes live in `engine._core` (`create_exception!`) and every error of
//! the core reaches Python through one conversion, `From<CoreError> for PyErr`, so a
//! caller catches a type and reads its attributes, never a message. An operating system's
//! refusal is an `OSError` that keeps its errno (the CLI tells a full disk or a read-only
//! warehouse from any other failure by `exc.errno`).
//!
//! PyO3's own `From<io::Error> for PyErr` keeps only the message: an `io::Error` goes
//! through [`CoreError`], never through `?` in a `PyResult` function.

use std::io;
use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;

use haftkhabis_core::game::ReplayError as CoreReplayError;
use haftkhabis_core::reader::InputPathError;

use crate::convert;

create_exception!(
    engine._core,
    ReplayError,
    PyException,
    "A strict replay met a violation (its `violation` attribute holds it as a dict), or was \
     given no line."
);

create_exception!(
    engine._core,
    SpoolError,
    PyOSError,
    "A spool (a batch's lines routed to one worker) that cannot be read back: cut short, or \
     naming a file the batch does not have."
);

/// An error of the core on its way to Python.
#[derive(Debug)]
pub enum CoreError {
    /// reading or writing a file failed: `OSError` (of the subclass its errno names, with
    /// `errno` set; with `filename` when the file is known), `ValueError` for arguments
    /// the core refused
    Io(io::Error, Option<PathBuf>),
    /// a spool could not be read: an `OSError` as above when the system refused, else
    /// `SpoolError`
    Spool(io::Error, PathBuf),
    /// a path given does not exist: `FileNotFoundError`, `errno` ENOENT
    InputPath(InputPathError),
    /// a strict replay stopped: `ReplayError`
    Replay(CoreReplayError),
}

impl From<io::Error> for CoreError {
    fn from(error: io::Error) -> Self {
        CoreError::Io(error, None)
    }
}

impl From<InputPathError> for CoreError {
    fn from(error: InputPathError) -> Self {
        CoreError::InputPath(error)
    }
}

impl From<CoreReplayError> for CoreError {
    fn from(error: CoreReplayError) -> Self {
        CoreError::Replay(error)
    }
}

/// `OSError(errno, strerror[, filename])` of an error the system reported: Python picks
/// the subclass from the errno (`FileNotFoundError`, `PermissionError`, …) and sets
/// `errno`, `strerror` and `filename`. None when the error carries no errno.
fn os_error(error: &io::Error, path: Option<&PathBuf>) -> Option<PyErr> {
    let code = error.raw_os_error()?;
    // std writes an OS error as "{strerror} (os error {code})"
    let shown = error.to_string();
    let strerror = shown
        .strip_suffix(&format!(" (os error {code})"))
        .unwrap_or(&shown)
        .to_string();
    Some(match path {
        // as Python's own `open()` reports it: the path as the string it was given
        Some(path) => PyOSError::new_err((code, strerror, path.to_string_lossy().into_owned())),
        None => PyOSError::new_err((code, strerror)),
    })
}

impl From<CoreError> for PyErr {
    fn from(error: CoreError) -> PyErr {
        match error {
            CoreError::Io(error, path) => os_error(&error, path.as_ref()).unwrap_or_else(|| {
                if error.kind() == io::ErrorKind::InvalidInput {
                    PyValueError::new_err(error.to_string())
                } else {
                    PyOSError::new_err(error.to_string())
                }
            }),
            CoreError::Spool(error, path) => os_error(&error, Some(&path)).unwrap_or_else(|| {
                SpoolError::new_err(format!("spool {}: {error}", path.display()))
            }),
            CoreError::InputPath(error) => {
                // the message as the CLI shows it; `errno` set (a `filename` would make
                // Python show "[Errno 2] None: …")
                let err = PyFileNotFoundError::new_err(error.to_string());
                Python::attach(|py| {
                    if let Ok(enoent) = py.import("errno").and_then(|e| e.getattr("ENOENT")) {
                        let _ = err.value(py).setattr("errno", enoent);
                    }
                });
                err
            }
            CoreError::Replay(error) => {
                let message = error.to_string();
                Python::attach(|py| {
                    let err = ReplayError::new_err(message);
                    if let CoreReplayError::Violation(v) = &error {
                        if let Ok(info) = convert::violation(py, v) {
                            let _ = err.value(py).setattr("violation", info);
                        }
                    }
                    err
                })
            }
        }
    }
}
