//! The ingest's Python face: routing a batch's lines to shard spools, and an [`Ingestor`]
//! that replays a shard and hands its games' warehouse rows to Python as Arrow columns.
//!
//! The rows are the core's ([`haftkhabis_core::rows`]); this module lays them out in
//! columns and declares those columns, once (`table_columns!`: name, Arrow type,
//! nullability, doc), exported as `warehouse_columns()`: `ingest/schema.py` builds the
//! tables' Arrow schemas from that, and `ingest/columns.py` checks every column is given
//! and of the declared type.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use haftkhabis_core::reader::{display_name, LineReader, DEFAULT_MAX_LINE_BYTES};
use haftkhabis_core::rows::{GameRows, RowBuilder};
use haftkhabis_core::spool;
use haftkhabis_core::validator::{self, ErrorRecord, ValidatorOptions};
use haftkhabis_core::violation::Code;
use haftkhabis_core::ENGINE_VERSION;

use crate::columns::{
    BoolCol, Column, I32Col, I64Col, I8Col, I8ListCol, PointsCol, StrCol, StrListCol, TsCol,
};
use crate::error::CoreError;
use crate::validation::error_dict;

/// An error record with its line's bytes (`raw`), for the quarantine.
fn quarantine_dict<'py>(py: Python<'py>, e: &ErrorRecord) -> PyResult<Bound<'py, PyDict>> {
    let d = error_dict(py, e)?;
    d.set_item("raw", e.raw.as_deref().map(|raw| PyBytes::new(py, raw)))?;
    Ok(d)
}

/// The shard (0..`shards`) of a game: a stable hash of its id.
#[pyfunction]
pub fn shard_of(game: &str, shards: u32) -> u32 {
    spool::shard_of(game, shards)
}

/// Read `files` once and append each game line to its shard's spool
/// (`spools[shard_of(game, len(spools))]`, created or appended to). After each file,
/// `on_file(read, errors)` gets `{"file", "lines", "error": {"line", "message"} | None}`
/// and the file's lines that belong to no game (error records with their `raw` bytes).
/// Returns the lines written to each spool.
/// A line longer than `max_line_bytes` is one of those lines (`line_too_long`, `raw` None).
#[pyfunction]
#[pyo3(signature = (files, spools, on_file, *, max_line_bytes=DEFAULT_MAX_LINE_BYTES))]
pub fn route_files(
    py: Python<'_>,
    files: Vec<String>,
    spools: Vec<PathBuf>,
    on_file: Bound<'_, PyAny>,
    max_line_bytes: usize,
) -> PyResult<Vec<u64>> {
    let paths: Vec<&Path> = spools.iter().map(PathBuf::as_path).collect();
    let mut failure: Option<PyErr> = None;
    let report = |read: spool::FileRead, errors: Vec<ErrorRecord>| -> PyResult<()> {
        let d = file_read_dict(py, &read)?;
        let found: Vec<Bound<'_, PyDict>> = errors
            .iter()
            .map(|e| quarantine_dict(py, e))
            .collect::<PyResult<_>>()?;
        on_file.call1((d, found))?;
        Ok(())
    };
    let spooled = spool::route_files(&files, &paths, max_line_bytes, |read, errors| match report(
        read, errors,
    ) {
        Ok(()) => true,
        Err(error) => {
            failure = Some(error);
            false
        }
    })
    .map_err(CoreError::from)?;
    match failure {
        Some(error) => Err(error),
        None => Ok(spooled),
    }
}

/// What reading one file gave, as `route_files` and `Ingestor.feed_files` report it:
/// `{"file", "lines", "error": {"line", "message"} | None}`.
fn file_read_dict<'py>(py: Python<'py>, read: &spool::FileRead) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("file", &read.file)?;
    d.set_item("lines", read.lines)?;
    match &read.error {
        Some(error) => {
            let e = PyDict::new(py);
            e.set_item("line", error.line)?;
            e.set_item("message", &error.message)?;
            d.set_item("error", e)?;
        }
        None => d.set_item("error", py.None())?,
    }
    Ok(d)
}

/// Whether a column may hold nulls, as the declarations below say it.
macro_rules! nullable {
    (nullable) => {
        true
    };
    (required) => {
        false
    };
}

/// One warehouse table declared once: its column builders (each builder fixes the column's
/// Arrow type, [`Column::TYPE`]), in order, each `nullable` or `required` and with its
/// doc. The macro makes the struct, its export as `{name: ColumnData}` (a required column
/// holding a null is refused: a bug, not bad input) and its entry in
/// `engine._core.warehouse_columns()`, which `ingest/schema.py` builds the table's Arrow
/// schema from. A change of a table's columns is a change of the warehouse's schema: bump
/// `ingest.schema.SCHEMA_VERSION` with it.
macro_rules! table_columns {
    (
        $(#[$doc:meta])*
        $name:ident $table:literal {
            $($(#[doc = $help:literal])* $field:ident: $kind:ty, $null:ident;)*
        }
    ) => {
        $(#[$doc])*
        #[derive(Default)]
        struct $name {
            $($field: $kind,)*
        }

        impl $name {
            /// The table's name in the warehouse.
            const TABLE: &'static str = $table;

            /// The table's columns, in order.
            fn columns() -> Vec<ColumnSpec> {
                vec![$(ColumnSpec {
                    name: column_name(stringify!($field)),
                    arrow: <$kind as Column>::TYPE,
                    nullable: nullable!($null),
                    doc: doc_text(&[$($help),*]),
                },)*]
            }

            fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                let d = PyDict::new(py);
                $(
                    let name = column_name(stringify!($field));
                    let nulls = self.$field.nulls();
                    if !nullable!($null) && nulls > 0 {
                        return Err(PyValueError::new_err(format!(
                            "{}.{name}: {nulls} nulls in a required column",
                            Self::TABLE
                        )));
                    }
                    d.set_item(name, self.$field.export(py)?)?;
                )*
                Ok(d)
            }
        }
    };
}

/// One column as the warehouse's declarations give it.
struct ColumnSpec {
    name: &'static str,
    arrow: &'static str,
    nullable: bool,
    doc: Option<String>,
}

/// A field's name as its column's (`r#type` is `type`).
fn column_name(field: &'static str) -> &'static str {
    field.trim_start_matches("r#")
}

/// A column's doc comment as one line (None when it has none).
fn doc_text(lines: &[&str]) -> Option<String> {
    let text = lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

table_columns! {
    /// `games`: one row per game.
    GamesCols "games" {
        game_id: StrCol, required;
        /// the header's `ruleset` as written (null when not text)
        ruleset_declared: StrCol, nullable;
        mode: StrCol, nullable;
        decks: I32Col, nullable;
        match_hands: I32Col, nullable;
        match_target: I32Col, nullable;
        /// the header's `options` object as JSON text (keys sorted)
        options: StrCol, nullable;
        players: StrListCol, nullable;
        start_time: TsCol, nullable;
        end_time: TsCol, nullable;
        status: StrCol, required;
        complete: BoolCol, required;
        hands: I32Col, required;
        hands_decided: I32Col, required;
        winners: StrListCol, nullable;
        totals: PointsCol, nullable;
        /// the header's `meta` object as JSON text
        meta: StrCol, nullable;
        server_build: StrCol, nullable;
        source_files: StrListCol, nullable;
        lines: I32Col, required;
        violations: I32Col, required;
        /// a hash of the game's distinct lines, whatever their order: new, updated or unchanged
        content_hash: StrCol, required;
        ingest_batch: I64Col, required;
        /// the engine that judged the game (`ENGINE_VERSION`)
        engine_version: StrCol, required;
    }
}

table_columns! {
    /// `hands`: one row per hand dealt.
    HandsCols "hands" {
        game_id: StrCol, required;
        hand: I32Col, required;
        dealer: StrCol, nullable;
        first_player: StrCol, nullable;
        players: I32Col, required;
        winners: StrListCol, nullable;
        reason: StrCol, nullable;
        winning_card: StrCol, nullable;
        multiplier: I32Col, nullable;
        scores: PointsCol, nullable;
        decided: BoolCol, required;
        closed: BoolCol, required;
        events: I32Col, required;
        start_time: TsCol, nullable;
        end_time: TsCol, nullable;
        duration_ms: I64Col, nullable;
        reshuffles: I32Col, required;
        violations: I32Col, required;
        ingest_batch: I64Col, required;
        /// the dealer's seat (header order)
        dealer_seat: I32Col, required;
        /// the starter's card code (`card_codes()`: the card at that index); null where
        /// the ruleset has no starter
        starter: I8Col, nullable;
        /// the stock the deal logged, top first, as card codes; null when it logged none
        stock: I8ListCol, nullable;
        /// the violations found at the hand's `deal` line: 0 when it replayed clean (the
        /// deal audit reads only those)
        deal_violations: I32Col, nullable;
    }
}

table_columns! {
    /// `hand_players`: one row per hand and player.
    HandPlayersCols "hand_players" {
        game_id: StrCol, required;
        hand: I32Col, required;
        player: StrCol, required;
        seat: I32Col, required;
        turn_order: I32Col, nullable;
        points: I64Col, nullable;
        won: BoolCol, nullable;
        finishing_position: I32Col, nullable;
        cards_left: I32Col, nullable;
        left_cards: StrListCol, nullable;
        cards_played: I32Col, required;
        cards_drawn: I32Col, required;
        penalty_cards: I32Col, required;
        sevens_played: I32Col, required;
        seven_totals_drawn: I32Col, required;
        seven_cards_drawn: I32Col, required;
        twos_given: I32Col, required;
        twos_received: I32Col, required;
        jacks_played: I32Col, required;
        /// the player's fouls (`violations.foul`) on the hand's lines
        violations: I32Col, required;
        ingest_batch: I64Col, required;
        /// seats after the dealer, clockwise (0 = the dealer, 1 = the next seat)
        deal_position: I32Col, required;
        /// the cards the deal gave the seat, in the order written, as card codes
        /// (`card_codes()`)
        opening_cards: I8ListCol, required;
    }
}

table_columns! {
    /// `events`: one row per distinct line of a game.
    EventsCols "events" {
        game_id: StrCol, required;
        seq: I64Col, nullable;
        ordinal: I32Col, required;
        hand: I32Col, nullable;
        ts: TsCol, nullable;
        r#type: StrCol, nullable;
        player: StrCol, nullable;
        card: StrCol, nullable;
        suit: StrCol, nullable;
        target: StrCol, nullable;
        cards: StrListCol, nullable;
        phase: StrCol, nullable;
        /// the engine's fact of the line: what a draw was
        draw_kind: StrCol, nullable;
        /// the engine's fact of the line: whose gift a 2 gave
        gift_to: StrCol, nullable;
        code: StrCol, nullable;
        codes: StrListCol, nullable;
        set_aside: BoolCol, required;
        fingerprint: I64Col, required;
        raw: StrCol, required;
        file: StrCol, nullable;
        line: I64Col, nullable;
        ingest_batch: I64Col, required;
    }
}

table_columns! {
    /// `decisions`: one row per turn event a player made in their turn, with what they
    /// faced (the machine's `Decision`), for the pair audit (docs/fairplay.md).
    DecisionsCols "decisions" {
        game_id: StrCol, required;
        seq: I64Col, required;
        hand: I32Col, required;
        /// the player who moved (the line's `player`)
        player: StrCol, required;
        /// the phase before the line (as `events.phase`)
        phase: StrCol, nullable;
        /// the cards they held that could be played, in notation order
        playable: StrListCol, required;
        /// drawing or passing was `must_play`
        obliged: BoolCol, required;
        /// a draw was allowed
        may_draw: BoolCol, required;
        /// the next player in the current direction (a 7's total or a skip lands on them)
        next_player: StrCol, required;
        /// the cards the next player held
        next_cards: I32Col, required;
        /// a J that declares: each other player in the hand and the suits of their non-J
        /// cards, a bit a suit (C 1, D 2, H 4, S 8); null otherwise
        suits_held: PointsCol, nullable;
        /// a J that declares: the suits it could declare, bits as in `suits_held`
        suit_choices: I64Col, nullable;
        ingest_batch: I64Col, required;
    }
}

table_columns! {
    /// `violations`: one row per violation.
    ViolationsCols "violations" {
        game_id: StrCol, required;
        seq: I64Col, nullable;
        hand: I32Col, nullable;
        code: StrCol, required;
        /// a player's own foul (rules.md's list): what "a player's violations" counts everywhere
        foul: BoolCol, required;
        player: StrCol, nullable;
        message: StrCol, required;
        file: StrCol, nullable;
        line: I64Col, nullable;
        ingest_batch: I64Col, required;
    }
}

/// The columns of every table the engine fills, in the warehouse's order (games, hands,
/// hand_players, events, violations): `{table: [{"name", "type", "nullable", "doc"}]}`,
/// each table's columns in order. `ingest/schema.py` builds the tables' Arrow schemas from
/// it (adding the partition columns, which only Python writes).
#[pyfunction]
pub fn warehouse_columns(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let tables = PyDict::new(py);
    let declared = [
        (GamesCols::TABLE, GamesCols::columns()),
        (HandsCols::TABLE, HandsCols::columns()),
        (HandPlayersCols::TABLE, HandPlayersCols::columns()),
        (EventsCols::TABLE, EventsCols::columns()),
        (ViolationsCols::TABLE, ViolationsCols::columns()),
        (DecisionsCols::TABLE, DecisionsCols::columns()),
    ];
    for (table, columns) in declared {
        let list = PyList::empty(py);
        for column in columns {
            let d = PyDict::new(py);
            d.set_item("name", column.name)?;
            d.set_item("type", column.arrow)?;
            d.set_item("nullable", column.nullable)?;
            d.set_item("doc", column.doc)?;
            list.append(d)?;
        }
        tables.set_item(table, list)?;
    }
    Ok(tables)
}

/// A card code (0..52, `haftkhabis_core::cards::Card::index`) as an `int8` cell.
fn code_cell(code: u8) -> i8 {
    i8::try_from(code).unwrap_or(i8::MAX)
}

fn code_cells(codes: &[u8]) -> Vec<i8> {
    codes.iter().copied().map(code_cell).collect()
}

fn seq_cell(seq: Option<u64>) -> Option<i64> {
    // the notation caps seq at 2^63-1 (notation::MAX_SEQ)
    seq.and_then(|s| i64::try_from(s).ok())
}

/// The rows of one partition (ruleset, month), gathered until handed over.
#[derive(Default)]
struct Partition {
    rows: usize,
    games: GamesCols,
    hands: HandsCols,
    hand_players: HandPlayersCols,
    events: EventsCols,
    decisions: DecisionsCols,
    violations: ViolationsCols,
}

impl Partition {
    fn add(&mut self, rows: &GameRows, batch: i64) {
        let id = rows.game.game_id.as_str();
        let g = &rows.game;
        let c = &mut self.games;
        c.game_id.push(Some(id));
        c.ruleset_declared.push(g.ruleset_declared.as_deref());
        c.mode.push(g.mode.as_deref());
        c.decks.push(g.decks);
        c.match_hands.push(g.match_hands);
        c.match_target.push(g.match_target);
        c.options.push(g.options.as_deref());
        c.players.push(g.players.as_deref());
        c.start_time.push(g.start_time);
        c.end_time.push(g.end_time);
        c.status.push(Some(g.status));
        c.complete.push(Some(g.complete));
        c.hands.push(Some(g.hands));
        c.hands_decided.push(Some(g.hands_decided));
        c.winners.push(g.winners.as_deref());
        c.totals.push(g.totals.as_deref());
        c.meta.push(g.meta.as_deref());
        c.server_build.push(g.server_build.as_deref());
        c.source_files.push(Some(&g.source_files));
        c.lines.push(Some(g.lines));
        c.violations.push(Some(g.violations));
        c.content_hash.push(Some(&g.content_hash));
        c.ingest_batch.push(Some(batch));
        c.engine_version.push(Some(ENGINE_VERSION));

        let c = &mut self.hands;
        for h in &rows.hands {
            c.game_id.push(Some(id));
            c.hand.push(Some(h.hand));
            c.dealer.push(Some(&h.dealer));
            c.first_player.push(Some(&h.first_player));
            c.players.push(Some(h.players));
            c.winners.push(h.winners.as_deref());
            c.reason.push(h.reason);
            c.winning_card.push(h.winning_card.as_deref());
            c.multiplier.push(h.multiplier);
            c.scores.push(h.scores.as_deref());
            c.decided.push(Some(h.decided));
            c.closed.push(Some(h.closed));
            c.events.push(Some(h.events));
            c.start_time.push(h.start_time);
            c.end_time.push(h.end_time);
            c.duration_ms.push(h.duration_ms);
            c.reshuffles.push(Some(h.reshuffles));
            c.violations.push(Some(h.violations));
            c.ingest_batch.push(Some(batch));
            c.dealer_seat.push(Some(h.dealer_seat));
            c.starter.push(h.starter.map(code_cell));
            let stock = h.stock.as_deref().map(code_cells);
            c.stock.push(stock.as_deref());
            c.deal_violations.push(h.deal_violations);
        }

        let c = &mut self.hand_players;
        for p in &rows.hand_players {
            let t = &p.tally;
            c.game_id.push(Some(id));
            c.hand.push(Some(p.hand));
            c.player.push(Some(&p.player));
            c.seat.push(Some(p.seat));
            c.turn_order.push(p.turn_order);
            c.points.push(p.points);
            c.won.push(p.won);
            c.finishing_position.push(p.finishing_position);
            c.cards_left.push(p.cards_left);
            c.left_cards.push(p.left_cards.as_deref());
            c.cards_played.push(Some(t.cards_played));
            c.cards_drawn.push(Some(t.cards_drawn));
            c.penalty_cards.push(Some(t.penalty_cards));
            c.sevens_played.push(Some(t.sevens_played));
            c.seven_totals_drawn.push(Some(t.seven_totals_drawn));
            c.seven_cards_drawn.push(Some(t.seven_cards_drawn));
            c.twos_given.push(Some(t.twos_given));
            c.twos_received.push(Some(t.twos_received));
            c.jacks_played.push(Some(t.jacks_played));
            c.violations.push(Some(t.violations));
            c.ingest_batch.push(Some(batch));
            c.deal_position.push(Some(p.deal_position));
            c.opening_cards.push(Some(&code_cells(&p.opening_cards)));
        }

        let c = &mut self.events;
        for e in &rows.events {
            let cells = &e.cells;
            c.game_id.push(Some(id));
            c.seq.push(seq_cell(e.seq));
            c.ordinal.push(Some(e.ordinal));
            c.hand.push(e.hand);
            c.ts.push(cells.ts);
            c.r#type.push(cells.kind.as_deref());
            c.player.push(cells.player.as_deref());
            c.card.push(cells.card.as_deref());
            c.suit.push(cells.suit.as_deref());
            c.target.push(cells.target.as_deref());
            c.cards.push(cells.cards.as_deref());
            c.phase.push(e.phase);
            c.draw_kind.push(e.draw_kind);
            c.gift_to.push(e.gift_to.as_deref());
            c.code.push(e.codes.first().copied());
            c.codes
                .push((!e.codes.is_empty()).then_some(e.codes.as_slice()));
            c.set_aside.push(Some(e.set_aside));
            c.fingerprint.push(Some(e.fingerprint));
            c.raw.push_bytes(Some(&e.raw));
            c.file.push(Some(&e.file));
            c.line.push(Some(e.line));
            c.ingest_batch.push(Some(batch));
        }

        let c = &mut self.decisions;
        for d in &rows.decisions {
            let facts = &d.decision;
            let playable: Vec<String> =
                facts.playable.iter().map(|card| card.to_string()).collect();
            c.game_id.push(Some(id));
            c.seq.push(seq_cell(Some(d.seq)));
            c.hand.push(Some(d.hand));
            c.player.push(Some(&d.player));
            c.phase.push(d.phase);
            c.playable.push(Some(&playable));
            c.obliged.push(Some(facts.obliged));
            c.may_draw.push(Some(facts.may_draw));
            c.next_player.push(Some(&facts.next_player));
            c.next_cards.push(Some(i64::from(facts.next_cards)));
            c.suits_held.push(
                facts
                    .suit_choices
                    .is_some()
                    .then_some(facts.suits_held.as_slice()),
            );
            c.suit_choices.push(facts.suit_choices);
            c.ingest_batch.push(Some(batch));
        }

        let c = &mut self.violations;
        for v in &rows.violations {
            c.game_id.push(Some(id));
            c.seq.push(seq_cell(v.seq));
            c.hand.push(v.hand);
            c.code.push(Some(v.code));
            c.foul.push(Some(v.foul));
            c.player.push(v.player.as_deref());
            c.message.push(Some(&v.message));
            c.file.push(v.file.as_deref());
            c.line.push(v.line);
            c.ingest_batch.push(Some(batch));
        }
        self.rows += 1
            + rows.hands.len()
            + rows.hand_players.len()
            + rows.events.len()
            + rows.decisions.len();
    }

    /// `{table: {column: ColumnData}}`, the values moved out.
    fn export<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tables = PyDict::new(py);
        tables.set_item(GamesCols::TABLE, self.games.export(py)?)?;
        tables.set_item(HandsCols::TABLE, self.hands.export(py)?)?;
        tables.set_item(HandPlayersCols::TABLE, self.hand_players.export(py)?)?;
        tables.set_item(EventsCols::TABLE, self.events.export(py)?)?;
        tables.set_item(ViolationsCols::TABLE, self.violations.export(py)?)?;
        tables.set_item(DecisionsCols::TABLE, self.decisions.export(py)?)?;
        Ok(tables)
    }
}

/// What an [`Ingestor`] has judged so far.
#[derive(Default, Clone, Copy)]
struct Tally {
    games: u64,
    violations: u64,
}

/// Replays one shard of a batch (a spool, or lines handed in) and hands each judged
/// game's rows to `sink(ruleset, month, tables)` in column batches, one partition at a
/// time: the rows wait in the partition's builders (contiguous, one buffer a column)
/// until `flush_rows` rows are held across every partition, then the partition holding
/// the most is handed over. A batch is thus about twice one partition's share of the
/// rows held, large enough for its writer to write it as a row group at once, and memory
/// is bounded by `flush_rows` whatever the number of partitions.
#[pyclass(module = "engine._core")]
pub struct Ingestor {
    inner: validator::Validator<RowBuilder>,
    batch: i64,
    flush_rows: usize,
    partitions: HashMap<(String, String), Partition>,
    /// rows held across every partition
    held: usize,
    names: HashMap<String, Arc<str>>,
    tally: Tally,
}

impl Ingestor {
    /// Lay a judged game's rows into its partition; the partition's key when its
    /// `events.raw` nears what one Arrow string column can address (its offsets are
    /// 32-bit), so that it is handed over at once.
    fn take(&mut self, rows: GameRows) -> Option<(String, String)> {
        self.tally.games += 1;
        self.tally.violations += rows.violations.len() as u64;
        let key = (rows.ruleset.clone(), rows.month.clone());
        let partition = self.partitions.entry(key.clone()).or_default();
        let before = partition.rows;
        partition.add(&rows, self.batch);
        self.held += partition.rows - before;
        (partition.events.raw.data_len() >= (1 << 30)).then_some(key)
    }

    fn hand_over(
        &mut self,
        py: Python<'_>,
        key: &(String, String),
        sink: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if let Some(mut partition) = self.partitions.remove(key) {
            self.held = self.held.saturating_sub(partition.rows);
            let tables = partition.export(py)?;
            sink.call1((key.0.as_str(), key.1.as_str(), tables))?;
        }
        Ok(())
    }

    /// Hand over the partition holding the most rows (the first in partition order of
    /// those that hold as many) while `flush_rows` rows or more are held: each partition
    /// grows until it is the largest, so a batch is about twice a partition's average
    /// share of `flush_rows`.
    fn hand_over_largest(&mut self, py: Python<'_>, sink: &Bound<'_, PyAny>) -> PyResult<()> {
        while self.held >= self.flush_rows {
            let largest = self
                .partitions
                .iter()
                .max_by(|a, b| a.1.rows.cmp(&b.1.rows).then_with(|| b.0.cmp(a.0)))
                .map(|(key, _)| key.clone());
            let Some(key) = largest else {
                self.held = 0;
                break;
            };
            self.hand_over(py, &key, sink)?;
        }
        Ok(())
    }

    /// The games the last lines finished, handed over, then the progress told (lines
    /// read, games, violations so far): what every feeding loop does after a read.
    fn drain_built(
        &mut self,
        py: Python<'_>,
        sink: &Bound<'_, PyAny>,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let built = self.inner.sink_mut().take();
        self.drain(py, built, sink)?;
        if let Some(progress) = progress {
            let tally = self.tally;
            progress.call1((self.inner.lines_read(), tally.games, tally.violations))?;
        }
        Ok(())
    }

    fn drain(
        &mut self,
        py: Python<'_>,
        built: Vec<GameRows>,
        sink: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        for rows in built {
            if let Some(full) = self.take(rows) {
                self.hand_over(py, &full, sink)?;
            }
            self.hand_over_largest(py, sink)?;
        }
        Ok(())
    }

    /// Hand every partition's rows to `sink`, in partition order.
    fn hand_over_all(&mut self, py: Python<'_>, sink: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut keys: Vec<(String, String)> = self.partitions.keys().cloned().collect();
        keys.sort();
        for key in keys {
            self.hand_over(py, &key, sink)?;
        }
        Ok(())
    }

    fn name(&mut self, file: &str) -> Arc<str> {
        self.names
            .entry(file.to_string())
            .or_insert_with(|| Arc::from(display_name(file)))
            .clone()
    }
}

#[pymethods]
impl Ingestor {
    #[new]
    #[pyo3(signature = (*, batch, hold_lines=100_000, idle_lines=250_000, flush_rows=65_536))]
    fn new(batch: i64, hold_lines: u64, idle_lines: u64, flush_rows: usize) -> PyResult<Ingestor> {
        if flush_rows == 0 {
            return Err(PyValueError::new_err("flush_rows must be at least 1"));
        }
        Ok(Ingestor {
            inner: validator::Validator::with_sink(
                ValidatorOptions {
                    hold_lines,
                    ingest: true,
                    idle_lines,
                    // its lines were capped where they were read (the router, at the
                    // batch's `max_line_bytes`, or the warehouse they were stored in): a
                    // second, default cap here would refuse what the batch allowed
                    max_line_bytes: usize::MAX,
                    ..ValidatorOptions::default()
                },
                RowBuilder::default(),
            ),
            batch,
            flush_rows,
            partitions: HashMap::new(),
            held: 0,
            names: HashMap::new(),
            tally: Tally::default(),
        })
    }

    /// Replay every record of `spool` (written by `route_files`; its file indexes name
    /// `files`), handing full column batches to `sink`; `progress(lines, games,
    /// violations)` is called every 65,536 lines.
    #[pyo3(signature = (spool, files, sink, progress=None))]
    fn feed_spool(
        &mut self,
        py: Python<'_>,
        spool: PathBuf,
        files: Vec<String>,
        sink: Bound<'_, PyAny>,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let names: Vec<Arc<str>> = files.iter().map(|f| self.name(f)).collect();
        let mut reader =
            spool::SpoolReader::open(&spool).map_err(|e| CoreError::Spool(e, spool.clone()))?;
        loop {
            // read a stretch without Python, then hand over what is due
            let more = py.detach(|| -> std::io::Result<bool> {
                for _ in 0..65_536 {
                    let Some((index, number, raw)) = reader.next_record()? else {
                        return Ok(false);
                    };
                    let Some(file) = names.get(index as usize) else {
                        let message = format!("spool record names file {index} of {}", names.len());
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            message,
                        ));
                    };
                    self.inner.feed_line(raw, file, number);
                }
                Ok(true)
            });
            let more = more.map_err(|e| CoreError::Spool(e, spool.clone()))?;
            self.drain_built(py, &sink, progress.as_ref())?;
            if !more {
                return Ok(());
            }
        }
    }

    /// Read `files` once, in order, and replay their lines: the routing pass and the
    /// spool left out, for a batch replayed by this one shard (every game is its own),
    /// each line parsed once. After each file, `on_file(read, errors)` gets what
    /// `route_files` gives for it: `{"file", "lines", "error": {"line", "message"} |
    /// None}` and the file's lines that belong to no game (error records with their
    /// `raw` bytes, in line order), found by the same reading of a line as the router's
    /// ("the router and the validator never disagree on a line's game"). A line longer
    /// than `max_line_bytes` is one of those (`line_too_long`, `raw` None), read past.
    /// `progress(lines, games, violations)` every 65,536 lines, as `feed_spool`.
    /// `ranges`, one for each file: its bytes are `(source, offset, size)`, a range of
    /// a larger file (the live service's journal), the file's name what lines and
    /// reports say (no file of its own is made for each pushed body).
    #[pyo3(signature = (files, on_file, sink, progress=None, *, max_line_bytes=DEFAULT_MAX_LINE_BYTES, ranges=None))]
    #[allow(clippy::too_many_arguments)]
    fn feed_files(
        &mut self,
        py: Python<'_>,
        files: Vec<String>,
        on_file: Bound<'_, PyAny>,
        sink: Bound<'_, PyAny>,
        progress: Option<Bound<'_, PyAny>>,
        max_line_bytes: usize,
        ranges: Option<Vec<(String, u64, u64)>>,
    ) -> PyResult<()> {
        if let Some(ranges) = &ranges {
            if ranges.len() != files.len() {
                return Err(PyValueError::new_err(format!(
                    "{} ranges for {} files: one for each file",
                    ranges.len(),
                    files.len()
                )));
            }
        }
        for (at, file) in files.iter().enumerate() {
            let name = self.name(file);
            let reader = match ranges.as_ref().and_then(|r| r.get(at)) {
                Some((source, offset, size)) => {
                    LineReader::open_range(file, source, *offset, *size)
                }
                None => LineReader::open(file),
            };
            let mut reader = reader.max_line_bytes(max_line_bytes);
            let mut read = spool::FileRead {
                file: file.clone(),
                lines: 0,
                error: None,
            };
            let mut too_long: Vec<ErrorRecord> = Vec::new();
            loop {
                let inner = &mut self.inner;
                // read a stretch without Python, then hand over what is due
                let more = py.detach(|| {
                    for _ in 0..65_536 {
                        match reader.next_line() {
                            None => return false,
                            Some(Ok((number, raw))) => {
                                read.lines += 1;
                                inner.feed_line(raw, &name, number);
                            }
                            Some(Err(error)) if error.code == Code::LineTooLong => {
                                read.lines += 1;
                                too_long.push(ErrorRecord {
                                    file: name.clone(),
                                    line: error.line,
                                    code: error.code,
                                    message: error.message,
                                    raw: None,
                                });
                            }
                            Some(Err(error)) => read.error = Some(error),
                        }
                    }
                    true
                });
                self.drain_built(py, &sink, progress.as_ref())?;
                if !more {
                    break;
                }
            }
            let mut errors = self.inner.take_errors();
            errors.append(&mut too_long);
            errors.sort_by_key(|e| e.line); // stable: as the router lists them
            let found: Vec<Bound<'_, PyDict>> = errors
                .iter()
                .map(|e| quarantine_dict(py, e))
                .collect::<PyResult<_>>()?;
            on_file.call1((file_read_dict(py, &read)?, found))?;
        }
        Ok(())
    }

    /// Replay lines handed in (`(raw, file, line)`, in input order): a game being
    /// merged with lines an earlier batch or pass holds.
    fn feed_lines(
        &mut self,
        py: Python<'_>,
        lines: Vec<(Vec<u8>, String, u64)>,
        sink: Bound<'_, PyAny>,
    ) -> PyResult<()> {
        for (raw, file, line) in &lines {
            let name = self.name(file);
            self.inner.feed_line(raw, &name, *line);
        }
        self.drain_built(py, &sink, None)
    }

    /// The input has ended: judge every held game and hand every row over.
    fn finish(&mut self, py: Python<'_>, sink: Bound<'_, PyAny>) -> PyResult<()> {
        let inner = &mut self.inner;
        let built = py.detach(|| inner.finish().take());
        self.drain(py, built, &sink)?;
        self.hand_over_all(py, &sink)
    }

    /// Lines of games already handed over: `(game, raw, file, line, fingerprint)`, the
    /// fingerprint as the warehouse's signed `events.fingerprint`.
    fn take_late<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        self.inner
            .take_late()
            .into_iter()
            .map(|l| {
                (
                    l.game,
                    PyBytes::new(py, &l.raw),
                    l.file.as_ref(),
                    l.line,
                    l.fingerprint as i64,
                )
                    .into_pyobject(py)
            })
            .collect()
    }

    /// Lines that belong to no game, with their bytes (`raw`), handed over.
    fn take_errors<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .take_errors()
            .iter()
            .map(|e| quarantine_dict(py, e))
            .collect()
    }

    /// Games judged so far.
    #[getter]
    fn games(&self) -> u64 {
        self.tally.games
    }

    /// Violations found in the games judged so far.
    #[getter]
    fn violations(&self) -> u64 {
        self.tally.violations
    }

    /// Lines replayed so far.
    #[getter]
    fn lines_read(&self) -> u64 {
        self.inner.lines_read()
    }

    /// Games held now.
    #[getter]
    fn open_games(&self) -> usize {
        self.inner.open_games()
    }

    /// The most games held at once (what memory grows with).
    #[getter]
    fn peak_open_games(&self) -> usize {
        self.inner.peak_open_games()
    }
}

/// The fingerprint of one line (as the warehouse's signed `events.fingerprint`), or None
/// when it is not JSON.
#[pyfunction]
pub fn fingerprint(raw: &[u8]) -> Option<i64> {
    haftkhabis_core::json::parse_line_fingerprinted(raw)
        .ok()
        .map(|(_, fp)| fp as i64)
}
