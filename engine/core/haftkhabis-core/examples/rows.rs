//! `cargo run --release --example rows -- PATH…`: the ingest's replay without Python — the
//! validator in ingest mode (every distinct line kept, facts on) and each judged game's
//! warehouse rows built, as an `engine._core.Ingestor` worker does before it lays them out
//! in columns. Prints the rows per table (for profiling the row path with callgrind).

use haftkhabis_core::rows::GameRows;
use haftkhabis_core::validator::{Validator, ValidatorOptions};
use haftkhabis_core::verdict::GameVerdict;

#[derive(Default)]
struct Counts {
    games: usize,
    hands: usize,
    hand_players: usize,
    events: usize,
    violations: usize,
}

impl Counts {
    fn add(&mut self, verdict: GameVerdict) {
        let rows = GameRows::build(verdict);
        self.games += 1;
        self.hands += rows.hands.len();
        self.hand_players += rows.hand_players.len();
        self.events += rows.events.len();
        self.violations += rows.violations.len();
    }
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let mut validator = Validator::new(ValidatorOptions {
        facts: true,
        keep_lines: true,
        idle_lines: 250_000,
        ..ValidatorOptions::default()
    });
    let mut counts = Counts::default();
    if let Err(error) = validator.feed_paths_with(&paths, &mut |v| counts.add(v)) {
        eprintln!("{error}");
        std::process::exit(2);
    }
    for verdict in validator.finish() {
        counts.add(verdict);
    }
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
