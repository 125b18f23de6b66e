//! A recorded game that keeps no states works them out again from its steps: every state,
//! of every game in the scenario cases and the sample logs, is the one a recording that
//! kept them holds.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use haftkhabis_core::game::GameVerdict;
use haftkhabis_core::validator::{Validator, ValidatorOptions};

/// Every log under the scenario cases and the sample data.
fn project_logs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("tests/cases"), root.join("data/sample")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().contains(".jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Every game of `path`, recorded, with or without its states.
fn recorded(path: &Path, states: bool) -> Vec<GameVerdict> {
    // the games of the file: a first pass without recording names them
    let file = path.to_string_lossy().into_owned();
    let mut survey = Validator::new(ValidatorOptions::default());
    survey
        .feed_paths(std::slice::from_ref(&file))
        .expect("readable");
    let games: HashSet<String> = survey.finish().take().into_iter().map(|v| v.game).collect();
    let mut validator = Validator::new(ValidatorOptions {
        record: games,
        record_states: states,
        hold_lines: u64::MAX,
        ..ValidatorOptions::default()
    });
    validator.feed_paths(&[file]).expect("readable");
    let mut verdicts = validator.finish().take();
    verdicts.sort_by(|a, b| a.game.cmp(&b.game));
    verdicts
}

#[test]
fn replayed_states_are_the_recorded_ones() {
    let logs = project_logs();
    assert!(logs.len() > 100, "found only {} logs", logs.len());
    let mut states = 0;
    for path in &logs {
        let kept = recorded(path, true);
        let replayed = recorded(path, false);
        assert_eq!(kept.len(), replayed.len(), "{}", path.display());
        for (k, r) in kept.iter().zip(&replayed) {
            assert!(k.states_kept && !r.states_kept);
            assert_eq!(
                k.steps.len(),
                r.steps.len(),
                "{} {}",
                path.display(),
                k.game
            );
            assert!(r.steps.iter().all(|s| s.state.is_none()));
            let mut index = 0;
            r.visit_states(0..r.steps.len(), |step, state| {
                let original = &k.steps[index];
                assert_eq!(step.seq, original.seq);
                assert_eq!(step.hand, original.hand, "{} seq {}", k.game, step.seq);
                assert_eq!(
                    state,
                    original.state.as_ref(),
                    "{} {} seq {}",
                    path.display(),
                    k.game,
                    step.seq
                );
                index += 1;
                states += 1;
            });
            assert_eq!(index, k.steps.len());
            // one state asked for alone, and a window, are the same states
            if let Some(last) = k.steps.len().checked_sub(1) {
                assert_eq!(r.state(last), k.steps[last].state);
                let mut window = Vec::new();
                r.visit_states(last / 2..last + 1, |_, state| window.push(state.cloned()));
                let expected: Vec<_> = k.steps[last / 2..]
                    .iter()
                    .map(|s| s.state.clone())
                    .collect();
                assert_eq!(window, expected);
            }
        }
    }
    assert!(states > 10_000, "compared only {states} states");
}
