//! A game's warehouse rows, built from a real log in ingest mode: every distinct line is a
//! row (repeats once, set-aside lines flagged), counts agree with the lines, and a
//! player's violations are their fouls.

use std::path::PathBuf;
use std::sync::Arc;

use haftkhabis_core::rows::{GameRows, RowBuilder, UNKNOWN_MONTH};
use haftkhabis_core::validator::{Validator, ValidatorOptions};

fn fixture(name: &str) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../tests/engine/fixtures")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every game's rows, as the ingest builds them (the validator in ingest mode, telling a
/// row builder).
fn ingest(lines: &[String]) -> Vec<GameRows> {
    let options = ValidatorOptions {
        ingest: true,
        ..ValidatorOptions::default()
    };
    let mut validator = Validator::with_sink(options, RowBuilder::default());
    let file: Arc<str> = Arc::from("log.jsonl");
    for (i, line) in lines.iter().enumerate() {
        validator.feed_line(line.as_bytes(), &file, i as u64 + 1);
    }
    validator.finish().take()
}

#[test]
fn every_distinct_line_is_a_row_and_counts_agree() {
    let mut lines = fixture("fx-bazito-points.jsonl");
    let original = lines.len();
    // a shipper's retry (dropped: one row), and a different line at a seq already seen
    // (set aside: a row of its own, flagged)
    lines.push(lines[5].clone());
    lines.push(lines[5].replace("\"KH\"", "\"KS\""));
    let built = ingest(&lines);
    assert_eq!(built.len(), 1);
    let rows = built.into_iter().next().expect("a game's rows");

    assert_eq!(rows.ruleset, "bazito");
    assert_eq!(rows.month, UNKNOWN_MONTH, "the fixture has no timestamps");
    assert_eq!(rows.events.len(), original + 1);
    assert_eq!(rows.game.lines, rows.events.len() as i64);
    let aside: Vec<_> = rows.events.iter().filter(|e| e.set_aside).collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(aside[0].codes, vec!["sequence"]);
    assert_eq!(aside[0].hand, None, "a set-aside line was not replayed");
    // replayed lines in seq order, the set-aside one last
    assert!(rows.events.last().is_some_and(|e| e.set_aside));

    // every line of a hand, the `end` included, names its hand
    for event in rows.events.iter().filter(|e| !e.set_aside) {
        let kind = event.cells.kind.as_deref();
        if matches!(kind, Some("play" | "draw" | "deal" | "end")) {
            assert_eq!(event.hand, Some(1), "{:?} at seq {:?}", kind, event.seq);
        }
    }

    assert_eq!(rows.hands.len(), 1);
    let hand = &rows.hands[0];
    let in_hand = rows.events.iter().filter(|e| e.hand == Some(1)).count() as i64;
    assert_eq!(hand.events, in_hand);
    assert_eq!(rows.hand_players.len(), 4);
    for player in &rows.hand_players {
        let plays = rows
            .events
            .iter()
            .filter(|e| e.hand == Some(1) && e.cells.kind.as_deref() == Some("play"))
            .filter(|e| e.cells.player.as_deref() == Some(player.player.as_str()))
            .count() as i64;
        assert_eq!(player.tally.cards_played, plays, "{}", player.player);
        let fouls = rows
            .violations
            .iter()
            .filter(|v| v.foul && v.player.as_deref() == Some(player.player.as_str()))
            .count() as i64;
        assert_eq!(player.tally.violations, fouls, "{}", player.player);
    }
    // the set-aside line's `sequence` is nobody's foul
    assert!(rows
        .violations
        .iter()
        .any(|v| v.code == "sequence" && !v.foul));
    assert_eq!(rows.game.violations, rows.violations.len() as i64);
}

#[test]
fn the_content_hash_ignores_order_and_repeats() {
    let lines = fixture("fx-persian-points.jsonl");
    let mut shuffled = lines.clone();
    shuffled.reverse();
    shuffled.push(lines[3].clone());
    let a = ingest(&lines).remove(0);
    let b = ingest(&shuffled).remove(0);
    assert_eq!(a.game.content_hash, b.game.content_hash);
    assert_eq!(a.game.status, b.game.status);
    let mut fewer = lines.clone();
    fewer.pop();
    let c = ingest(&fewer).remove(0);
    assert_ne!(a.game.content_hash, c.game.content_hash);
}

#[test]
fn fouls_after_a_lost_line_are_not_the_players() {
    // seq 4 (p3's 9H) never arrived: p0's KH at seq 5 is judged as if it were p3's turn
    // (not_your_turn). It is reported, but it is not p0's own foul: the log broke there.
    let lines: Vec<String> = fixture("fx-bazito-points.jsonl")
        .into_iter()
        .filter(|line| !line.contains("\"seq\":4,"))
        .collect();
    let rows = ingest(&lines).remove(0);
    let at_five: Vec<_> = rows
        .violations
        .iter()
        .filter(|v| v.seq == Some(5))
        .collect();
    assert!(at_five.iter().any(|v| v.code == "sequence"));
    assert!(
        at_five.iter().any(|v| v.code == "not_your_turn"),
        "{at_five:?}"
    );
    assert!(at_five.iter().all(|v| !v.foul), "{at_five:?}");
    let p0 = rows
        .hand_players
        .iter()
        .find(|p| p.player == "p0")
        .expect("p0 played");
    assert_eq!(p0.tally.violations, 0);
}

/// "A played 7 puts `k` cards on the next player"; a J "sets the current suit": the
/// `decisions` rows hold what each mover faced (their options, the next player, and for a
/// J the suits the others held), one per turn event made in turn.
#[test]
fn each_move_in_turn_is_a_decision_with_what_the_mover_faced() {
    let lines: Vec<String> = [
        r#"{"game":"bz-pairs","seq":0,"type":"game","format":"haftkhabis/1","ruleset":"bazito","players":["sara","omid","lale","reza"]}"#,
        r#"{"game":"bz-pairs","seq":1,"type":"deal","hand":1,"dealer":"reza","starter":"6C","hands":{"sara":["7C","5C","KD","3H","4H","9S","QS"],"omid":["JD","2S","3S","4S","5S","6S","8S"],"lale":["AH","2H","5H","6H","7H","8H","9H"],"reza":["TD","2D","3D","4D","5D","6D","7D"]}}"#,
        r#"{"game":"bz-pairs","seq":2,"type":"play","player":"sara","card":"5C"}"#,
        r#"{"game":"bz-pairs","seq":3,"type":"play","player":"omid","card":"JD","suit":"H"}"#,
        r#"{"game":"bz-pairs","seq":4,"type":"play","player":"lale","card":"7H"}"#,
        r#"{"game":"bz-pairs","seq":5,"type":"draw","player":"reza","cards":["AC","AD"]}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows = ingest(&lines).into_iter().next().expect("a game's rows");
    let seen: Vec<_> = rows
        .decisions
        .iter()
        .map(|d| {
            let f = &d.decision;
            let playable: Vec<String> = f.playable.iter().map(|c| c.to_string()).collect();
            (
                d.seq,
                d.player.to_string(),
                playable,
                f.obliged,
                f.next_player.to_string(),
                f.next_cards,
            )
        })
        .collect();
    let own = |s: &[&str]| s.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    assert_eq!(
        seen,
        vec![
            (2, "sara".into(), own(&["5C", "7C"]), true, "omid".into(), 7),
            (3, "omid".into(), own(&["5S", "JD"]), true, "lale".into(), 7),
            (
                4,
                "lale".into(),
                own(&["2H", "5H", "6H", "7H", "8H", "9H", "AH"]),
                true,
                "reza".into(),
                7
            ),
            // bazito: drawing the total is a free choice even holding a 7
            (5, "reza".into(), own(&["7D"]), false, "sara".into(), 6),
        ]
    );
    let jack = &rows.decisions[1].decision;
    assert_eq!(jack.suit_choices, Some(15));
    let held: Vec<(String, i64)> = jack
        .suits_held
        .iter()
        .map(|(p, b)| (p.to_string(), *b))
        .collect();
    assert_eq!(
        held,
        vec![("sara".into(), 15), ("lale".into(), 4), ("reza".into(), 2)]
    );
    assert!(rows
        .decisions
        .iter()
        .filter(|d| d.seq != 3)
        .all(|d| d.decision.suit_choices.is_none()));
}

/// The card codes of `cards` in notation (`Card::index`, what the warehouse stores).
fn codes(cards: &[&str]) -> Vec<u8> {
    cards
        .iter()
        .map(|c| {
            haftkhabis_core::cards::Card::parse(c)
                .map(|card| card.index() as u8)
                .unwrap_or_else(|| panic!("{c} is a card"))
        })
        .collect()
}

#[test]
fn a_hand_keeps_what_its_deal_dealt() {
    // notation.md: "`deal` | `hand`, `dealer`, `hands` (player → list of cards, every
    // player in the hand), `starter` …, optional `stock` (the rest of the deck, top first)"
    let lines = fixture("fx-bazito-points.jsonl");
    let rows = ingest(&lines).into_iter().next().expect("a game's rows");
    let hand = &rows.hands[0];
    assert_eq!(hand.dealer_seat, 0, "p0 deals");
    assert_eq!(hand.starter, Some(codes(&["4C"])[0]));
    let stock = hand.stock.as_deref().expect("the deal logged its stock");
    assert_eq!(stock.len(), 52 - 4 * 7 - 1);
    assert_eq!(&stock[..3], codes(&["8H", "6D", "2D"]).as_slice());
    assert_eq!(hand.deal_violations, Some(0));
    let seats: Vec<(i64, i64)> = rows
        .hand_players
        .iter()
        .map(|p| (p.seat, p.deal_position))
        .collect();
    assert_eq!(seats, vec![(0, 0), (1, 1), (2, 2), (3, 3)]);
    assert_eq!(
        rows.hand_players[1].opening_cards,
        codes(&["QC", "TH", "6C", "4H", "KS", "5S", "3D"])
    );

    // a misspelt card in the deal ("7d" is repaired, and flagged at the line): the hand
    // is dealt as the table did, and its deal line's violation is counted
    let mut lines = fixture("fx-bazito-points.jsonl");
    lines[1] = lines[1]
        .replace("\"7D\"", "\"7d\"")
        .replace("\"dealer\":\"p0\"", "\"dealer\":\"p2\"");
    let rows = ingest(&lines).into_iter().next().expect("a game's rows");
    let hand = &rows.hands[0];
    assert_eq!(hand.dealer_seat, 2);
    assert!(hand.deal_violations.is_some_and(|n| n >= 1));
    let positions: Vec<i64> = rows.hand_players.iter().map(|p| p.deal_position).collect();
    assert_eq!(positions, vec![2, 3, 0, 1]);
    assert_eq!(rows.hand_players[0].opening_cards[6], codes(&["7D"])[0]);
}
