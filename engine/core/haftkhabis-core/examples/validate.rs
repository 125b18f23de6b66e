//! `cargo run --release --example validate -- PATH…`: the verdicts as `validate --json`
//! writes them, straight from the core (for profiling without Python).

use haftkhabis_core::validator::{Validator, ValidatorOptions};
use haftkhabis_core::verdict::VerdictWriter;

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let stdout = std::io::stdout();
    let writer = VerdictWriter::new(stdout.lock(), 1 << 20);
    let mut validator = Validator::with_sink(ValidatorOptions::default(), writer);
    if let Err(error) = validator.feed_paths(&paths) {
        eprintln!("{error}");
        std::process::exit(2);
    }
    validator.finish();
    let errors = validator.take_errors();
    let mut writer = validator.into_sink();
    writer.write_errors(&errors);
    if let Err(error) = writer.flush() {
        eprintln!("{error}");
        std::process::exit(1);
    }
}
