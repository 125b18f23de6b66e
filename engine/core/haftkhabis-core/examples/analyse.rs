//! Times one decision's analysis without Python: bazito, sara to move holding four Js, a
//! 2 and two hearts on K♥ (21 legal moves: each J declares one of four suits, the 2
//! names one of three targets). Prints the time and the rollouts per second.
//!
//! `cargo run --release --example analyse [ROLLOUTS] [THREADS] [flat|ismcts]` (defaults
//! 2000, every core, flat); THREADS=1 gives the per-core figure. `ismcts` spends the same
//! playouts (ROLLOUTS x the legal moves) on an information-set search of 2 trees.

use std::time::Instant;

use haftkhabis_core::analysis::{analyse, Config, Search};
use haftkhabis_core::cards::Card;
use haftkhabis_core::event::{Common, Deal, Event, Header, Kind};
use haftkhabis_core::ismcts::DEFAULT_TREES;
use haftkhabis_core::json::Value;
use haftkhabis_core::machine::{read_header, Table};

fn cards(text: &str) -> Vec<Card> {
    text.split_whitespace().filter_map(Card::parse).collect()
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let rollouts: usize = args
        .next()
        .map_or(Ok(2000), |a| a.parse())
        .map_err(|e| format!("ROLLOUTS: {e}"))?;
    let threads: usize = args
        .next()
        .map_or(Ok(0), |a| a.parse())
        .map_err(|e| format!("THREADS: {e}"))?;
    let search = match args.next().as_deref() {
        None | Some("flat") => Search::Flat,
        Some("ismcts") => Search::Ismcts {
            trees: DEFAULT_TREES,
        },
        Some(other) => return Err(format!("SEARCH: flat or ismcts, not {other:?}")),
    };
    let players = ["sara", "omid", "lale", "reza"];
    let header = Header {
        format: Some(Value::Str("haftkhabis/1".into())),
        ruleset: Some(Value::Str("bazito".into())),
        players: Some(Value::Array(
            players.iter().map(|p| Value::Str((*p).into())).collect(),
        )),
        options: None,
        mode: None,
        decks: None,
        r#match: None,
        meta: None,
    };
    let settings = read_header(&header).settings.ok_or("unusable header")?;
    let mut table = Table::new(settings, "bench");
    let hands = [
        ("sara", "JC JD JH JS 2H 5H 9H"),
        ("omid", "3C 4C 5C 6C QC KC AC"),
        ("lale", "3D 4D 5D 6D QD KD AD"),
        ("reza", "3S 4S 5S 6S QS KS AS"),
    ];
    let deal = Event {
        common: Common {
            game: "bench".into(),
            seq: 1,
            ts: None,
        },
        kind: Kind::Deal(Deal {
            hand: 1,
            dealer: "reza".into(),
            hands: hands.iter().map(|(p, c)| ((*p).into(), cards(c))).collect(),
            starter: Card::parse("KH"),
            starter_unreadable: false,
            stock: None,
        }),
    };
    let found = table.apply(&deal);
    if !found.is_empty() {
        return Err(format!("the deal is flagged: {found:?}"));
    }
    let config = Config {
        rollouts,
        seed: 1,
        threads,
    };
    let start = Instant::now();
    let analysis = analyse(&table, &config, search).ok_or("no decision")?;
    let seconds = start.elapsed().as_secs_f64();
    let moves = analysis.moves.len();
    let playouts = match search {
        Search::Flat => moves * analysis.rollouts,
        Search::Ismcts { .. } => analysis.rollouts,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{}: {moves} legal moves x {rollouts} rollouts = {playouts} playouts in {seconds:.3} s \
         ({:.0} playouts/s; threads {}, cores {cores}; truncated {}, faults {})",
        search.name(),
        playouts as f64 / seconds,
        if threads == 0 { cores } else { threads },
        analysis.truncated,
        analysis.faults,
    );
    let best = &analysis.moves[analysis.best];
    println!(
        "best: {} (mean {:.2} ± {:.2} points)",
        best.mv.describe(table.players()),
        best.mean,
        best.se
    );
    Ok(())
}
