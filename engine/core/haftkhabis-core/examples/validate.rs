//! `cargo run --release --example validate -- PATH…`: the verdicts as `validate --json`
//! writes them, straight from the core (for profiling without Python).

use std::io::Write;

use haftkhabis_core::validator::{Validator, ValidatorOptions};

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let mut validator = Validator::new(ValidatorOptions::default());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut buffer = Vec::with_capacity(4096);
    let mut write = |verdict: haftkhabis_core::verdict::GameVerdict| {
        buffer.clear();
        verdict.write_json(&mut buffer);
        buffer.push(b'\n');
        let _ = out.write_all(&buffer);
    };
    if let Err(error) = validator.feed_paths_with(&paths, &mut write) {
        eprintln!("{error}");
        std::process::exit(2);
    }
    for verdict in validator.finish() {
        write(verdict);
    }
    for error in validator.take_errors() {
        let mut line = Vec::new();
        error.write_json(&mut line);
        line.push(b'\n');
        let _ = out.write_all(&line);
    }
}
