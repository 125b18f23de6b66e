//! `engine._core`: the thin Python face of `haftkhabis-core`. Conversions only; every rule
//! lives in the core crate.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use haftkhabis_core::cards::Rank;
use haftkhabis_core::ruleset::{self, Effect, Ruleset};

/// A per-rank table as a dict `{"A": …, "2": …, …, "K": …}`, in notation order.
fn rank_table<'py, T: Copy, V: IntoPyObject<'py>>(
    py: Python<'py>,
    table: &[T; 13],
    value: impl Fn(T) -> V,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for rank in Rank::ALL {
        dict.set_item(rank.letter().to_string(), value(table[rank.index()]))?;
    }
    Ok(dict)
}

fn ruleset_dict<'py>(py: Python<'py>, rules: &Ruleset) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &rules.name)?;
    d.set_item("min_players", rules.min_players)?;
    d.set_item("max_players", rules.max_players)?;
    d.set_item("two_decks_above", rules.two_decks_above)?;
    d.set_item("has_starter", rules.has_starter)?;
    let forbidden: String = rules
        .forbidden_starter_ranks
        .iter()
        .map(|r| r.letter())
        .collect();
    d.set_item("forbidden_starter_ranks", forbidden)?;
    d.set_item(
        "opening_suit",
        rules.opening_suit.map(|s| s.letter().to_string()),
    )?;
    d.set_item("seven_total", rules.seven_total)?;
    d.set_item("seven_answer_compulsory", rules.seven_answer_compulsory)?;
    d.set_item("must_play", rules.must_play.name())?;
    d.set_item("jack", rules.jack.name())?;
    d.set_item("jack_suit_must_differ", rules.jack_suit_must_differ)?;
    d.set_item("after_draw", rules.after_draw.name())?;
    d.set_item("failed_follow_ends_turn", rules.failed_follow_ends_turn)?;
    d.set_item("reshuffles", rules.reshuffles)?;
    d.set_item("last_card_call", rules.last_card_call)?;
    d.set_item("table_penalties", rules.table_penalties)?;
    d.set_item("settlement_sevens", rules.settlement_sevens)?;
    d.set_item(
        "first_player_previous_winner",
        rules.first_player_previous_winner,
    )?;
    d.set_item("default_hands", rules.default_hands)?;
    d.set_item("points", rank_table(py, &rules.points, |v| v)?)?;
    d.set_item("multipliers", rank_table(py, &rules.multipliers, |v| v)?)?;
    d.set_item("effects", rank_table(py, &rules.effects, Effect::name)?)?;
    d.set_item("option_names", PyList::new(py, &rules.option_names)?)?;
    let options = PyDict::new(py);
    for option in &rules.option_names {
        options.set_item(option, rules.options.get(option).unwrap_or(false))?;
    }
    d.set_item("options", options)?;
    let modes: Vec<&str> = rules.modes.iter().map(|m| m.name()).collect();
    d.set_item("modes", modes)?;
    Ok(d)
}

mod analysis;
mod codes;
mod columns;
mod concat;
mod convert;
mod error;
mod ingest;
/// The core's allocations go to jemalloc on Linux (why: `Cargo.toml`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read once when it starts (a C string: `const char *malloc_conf`,
/// under the crate's `_rjem_` prefix; the `_RJEM_MALLOC_CONF` environment variable still
/// overrides it). Pages freed are given back after a second rather than ten, and at once
/// rather than kept "muzzy": an ingest worker's resident memory follows what it holds
/// (24 MiB less a worker at 250,000 hands, at the same speed).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[export_name = "_rjem_malloc_conf"]
pub static JEMALLOC_CONF: &u8 = &b"dirty_decay_ms:1000,muzzy_decay_ms:0\0"[0];

mod specs;
mod table;
mod validation;

/// The Haft Khabis rules engine, compiled (`haftkhabis-core`).
#[pymodule(name = "_core")]
mod core_module {
    use super::*;

    #[pymodule_export]
    use crate::specs::event_specs;

    #[pymodule_export]
    use crate::codes::violation_codes;

    #[pymodule_export]
    use crate::columns::ColumnBuffer;

    #[pymodule_export]
    use crate::ingest::{fingerprint, route_files, shard_of, warehouse_columns, Ingestor};

    #[pymodule_export]
    use crate::table::{GameRun, ParsedLines};

    #[pymodule_export]
    use crate::concat::concat_parquet;

    #[pymodule_export]
    use crate::error::{ReplayError, SpoolError};

    #[pymodule_export]
    use crate::validation::{
        expand_paths, replay_game, validate_each, validate_json, validate_to, Validator, Verdict,
    };

    /// The move-quality rollouts' policy and its version (stored with every analysis).
    #[pymodule_export]
    const ANALYSIS_POLICY: &str = haftkhabis_core::analysis::POLICY;

    /// The engine's version, recorded with every verdict and warehouse row.
    #[pymodule_export]
    const ENGINE_VERSION: &str = haftkhabis_core::ENGINE_VERSION;

    /// The longest line read by default, in bytes (`max_line_bytes`).
    #[pymodule_export]
    const DEFAULT_MAX_LINE_BYTES: usize = haftkhabis_core::reader::DEFAULT_MAX_LINE_BYTES;

    /// The most games a validation holds at once by default (`max_open_games`).
    #[pymodule_export]
    const DEFAULT_MAX_OPEN_GAMES: usize = haftkhabis_core::validator::DEFAULT_MAX_OPEN_GAMES;

    /// The most lines one game holds waiting for a missing seq by default
    /// (`max_waiting_lines`).
    #[pymodule_export]
    const DEFAULT_MAX_WAITING_LINES: usize = haftkhabis_core::validator::DEFAULT_MAX_WAITING_LINES;

    /// The most bytes of lines all games together hold waiting for a missing seq by default
    /// (`max_waiting_bytes`).
    #[pymodule_export]
    const DEFAULT_MAX_WAITING_BYTES: usize = haftkhabis_core::validator::DEFAULT_MAX_WAITING_BYTES;

    /// `Code`, the violation codes as a `StrEnum` made from the core's table.
    #[pymodule_init]
    fn init(module: &Bound<'_, PyModule>) -> PyResult<()> {
        module.add("Code", crate::codes::code_enum(module.py())?)
    }

    /// The card codes the warehouse stores (`hands.starter`, `hands.stock`,
    /// `hand_players.opening_cards`): the card of code `i` is `card_codes()[i]`, in
    /// notation (`"7C"`); one deck, suit-major (the core's `Card::index`).
    #[pyfunction]
    fn card_codes() -> Vec<String> {
        haftkhabis_core::cards::Card::deck()
            .map(|card| card.code())
            .collect()
    }

    /// Every ruleset profile's parameters, in the contract's order (bazito, persian,
    /// pis-yedili).
    #[pyfunction]
    fn rulesets(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
        ruleset::rulesets()
            .iter()
            .map(|rules| ruleset_dict(py, rules))
            .collect()
    }
}
