//! `cargo run --release --example rows -- PATH…`: the ingest's replay without Python — the
//! validator in ingest mode (every distinct line kept, facts on) and each judged game's
//! warehouse rows built, as an `engine._core.Ingestor` worker does before it lays them out
//! in columns. Prints the rows per table (for profiling the row path with callgrind).

use haftkhabis_core::rows::{GameRows, RowBuilder};
use haftkhabis_core::validator::{Validator, ValidatorOptions};

#[derive(Default)]
struct Counts {
    games: usize,
    hands: usize,
    hand_players: usize,
    events: usize,
    violations: usize,
}

impl Counts {
    fn add(&mut self, rows: GameRows) {
        self.games += 1;
        self.hands += rows.hands.len();
        self.hand_players += rows.hand_players.len();
        self.events += rows.events.len();
        self.violations += rows.violations.len();
    }
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let options = ValidatorOptions {
        ingest: true,
        idle_lines: 250_000,
        ..ValidatorOptions::default()
    };
    let mut validator = Validator::with_sink(options, RowBuilder::default());
    let mut counts = Counts::default();
    for file in haftkhabis_core::reader::expand_paths(&paths).unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(2);
    }) {
        validator.feed_file(&file);
        // the rows of the games judged so far leave the builder, as a worker hands them over
        validator
            .sink_mut()
            .take()
            .into_iter()
            .for_each(|rows| counts.add(rows));
    }
    validator
        .finish()
        .take()
        .into_iter()
        .for_each(|rows| counts.add(rows));
    println!(
        "games {} hands {} hand_players {} events {} violations {} errors {}",
        counts.games,
        counts.hands,
        counts.hand_players,
        counts.events,
        counts.violations,
        validator.take_errors().len()
    );
}
