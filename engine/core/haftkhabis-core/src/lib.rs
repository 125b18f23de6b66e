//! The Haft Khabis rules engine: cards, ruleset profiles (data), the `haftkhabis/1`
//! notation, the one state machine that replays a game, scoring, and the validator.
//!
//! Layers, bottom up: [`cards`] → [`ruleset`] → [`json`] / [`event`] / [`notation`] →
//! [`machine`] → [`game`] (one game's replay) → [`validator`] (routing, with [`reader`]
//! for files), which tells a sink what it learns: [`verdict`] writes verdicts, [`rows`]
//! builds the warehouse's rows; [`spool`] routes an ingest's lines to its workers;
//! [`analysis`] estimates move quality by rollouts on the machine, [`ismcts`] by a
//! search over the same rollouts. Nothing
//! here knows Python; the `haftkhabis-py` crate is the thin binding.

#[macro_use]
mod named;

pub mod analysis;
pub mod cards;
pub mod event;
pub mod fastline;
pub mod game;
pub mod ismcts;
pub mod json;
pub mod machine;
pub mod notation;
pub mod reader;
pub mod rows;
pub mod ruleset;
pub mod spool;
pub mod validator;
pub mod verdict;
pub mod violation;

/// The engine's version (the workspace's, `engine/core/Cargo.toml`): the one version of the
/// project, recorded with every warehouse row and batch, shown by the API and the report,
/// and the Python package's own (`pyproject.toml` reads it through maturin).
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
