//! Move quality by rollouts (`analysis.rs`): a planted best move is found, the hidden cards
//! as they lay never change an analysis, results do not depend on the threads, and the
//! rollout policy never makes a move the machine flags; and the same for the
//! information-set MCTS (`ismcts.rs`), which must also be reproducible by seed.

use haftkhabis_core::analysis::{
    analyse, analyse_decision, legal_moves, position_value, Config, Move, Rng, Search,
};
use haftkhabis_core::cards::{Card, Suit};
use haftkhabis_core::event::{Common, Deal, Event, Header, Kind};
use haftkhabis_core::json::Value;
use haftkhabis_core::machine::{read_header, Table};

const PLAYERS: [&str; 4] = ["sara", "omid", "lale", "reza"];

fn cards(text: &str) -> Vec<Card> {
    text.split_whitespace()
        .map(|c| Card::parse(c).expect("a card"))
        .collect()
}

fn table(ruleset: &str, players: &[&str]) -> Table {
    let header = Header {
        format: Some(Value::Str("haftkhabis/1".into())),
        ruleset: Some(Value::Str(ruleset.into())),
        players: Some(Value::Array(
            players.iter().map(|p| Value::Str((*p).into())).collect(),
        )),
        options: None,
        mode: None,
        decks: None,
        r#match: None,
        meta: None,
    };
    let reading = read_header(&header);
    assert!(reading.violations.is_empty(), "{:?}", reading.violations);
    Table::new(reading.settings.expect("usable header"), "an")
}

fn deal_event(hands: &[(&str, Vec<Card>)], starter: Option<Card>, dealer: &str) -> Event {
    Event {
        common: Common {
            game: "an".into(),
            seq: 1,
            ts: None,
        },
        kind: Kind::Deal(Deal {
            hand: 1,
            dealer: dealer.into(),
            hands: hands
                .iter()
                .map(|(p, c)| ((*p).into(), c.clone()))
                .collect(),
            starter,
            starter_unreadable: false,
            stock: None,
        }),
    }
}

/// A random legal deal of `ruleset` for four players, from `seed`.
fn random_deal(ruleset: &str, seed: u64) -> Table {
    let mut t = table(ruleset, &PLAYERS);
    let mut deck: Vec<Card> = Card::deck().collect();
    let mut rng = Rng::stream(seed, 0, 9);
    rng.shuffle(&mut deck);
    let hands: Vec<(&str, Vec<Card>)> = PLAYERS
        .iter()
        .map(|p| (*p, deck.drain(..7).collect()))
        .collect();
    let starter = if ruleset == "pis-yedili" {
        None
    } else {
        // bazito forbids J 2 7 8 T A as a starter: take the first plain card
        let at = deck
            .iter()
            .position(|c| "345679QK".contains(c.rank().letter()) && c.rank().letter() != '7');
        at.map(|i| deck.remove(i))
    };
    let found = t.apply(&deal_event(&hands, starter, "reza"));
    assert!(found.is_empty(), "{found:?}");
    t
}

fn config(rollouts: usize, seed: u64, threads: usize) -> Config {
    Config {
        rollouts,
        seed,
        threads,
    }
}

/// Persian: sara holds only J♠ (a hand dealt short, applied as the table recorded it)
/// and no match on 5♦: the wild J wins the hand at once; a draw does not.
fn a_lone_jack_wins() -> Table {
    let mut t = table("persian", &PLAYERS);
    let hands = vec![
        ("sara", cards("JS")),
        ("omid", cards("3C 4C 5C 6C QC KC AC")),
        ("lale", cards("3H 4H 5H 6H QH KH AH")),
        ("reza", cards("3S 4S 5S 6S QS KS AS")),
    ];
    t.apply(&deal_event(&hands, Card::parse("5D"), "reza"));
    t
}

#[test]
fn a_planted_winning_move_is_found() {
    let t = a_lone_jack_wins();
    let moves = legal_moves(&t);
    assert!(moves.contains(&Move::Draw), "{moves:?}");
    assert_eq!(
        moves.len(),
        5,
        "four suits for the J, and a draw: {moves:?}"
    );
    let a = analyse_decision(&t, &config(400, 7, 0)).expect("a decision");
    assert_eq!(a.faults, 0);
    let best = &a.moves[a.best];
    assert!(matches!(best.mv, Move::Play { .. }), "{best:?}");
    assert_eq!(best.mean, 0.0);
    let draw = a.moves.iter().find(|m| m.mv == Move::Draw).expect("draw");
    assert!(draw.loss > 0.0 && draw.significant(), "{draw:?}");
    for m in a.moves.iter().filter(|m| m.mv != Move::Draw) {
        assert_eq!(m.loss, 0.0, "every J goes out: {m:?}");
    }
}

#[test]
fn the_hidden_cards_as_they_lay_never_change_the_analysis() {
    // two tables sara cannot tell apart: omid and lale's hands swapped, and a card of
    // reza's exchanged with one of the stock (sara sees neither)
    let (a, b) = tables_sara_cannot_tell_apart();
    assert_eq!(a.unseen_by(0), b.unseen_by(0));
    let first = analyse_decision(&a, &config(300, 11, 2)).expect("a decision");
    let second = analyse_decision(&b, &config(300, 11, 2)).expect("a decision");
    assert_eq!(first, second);
    // and the table's own truth is not what the rollouts read: from omid's seat the
    // unseen cards differ, so a planted difference would show
    assert_ne!(a.unseen_by(1), b.unseen_by(1));
}

#[test]
fn results_do_not_depend_on_the_threads() {
    let t = random_deal("bazito", 3);
    let one = analyse_decision(&t, &config(200, 5, 1));
    let three = analyse_decision(&t, &config(200, 5, 3));
    if one.is_some() {
        assert_eq!(one, three);
    }
    let p1 = position_value(&t, 2, &config(200, 5, 1));
    let p3 = position_value(&t, 2, &config(200, 5, 3));
    assert_eq!(p1, p3);
}

#[test]
fn the_rollout_policy_never_makes_a_move_the_machine_flags() {
    let mut decisions = 0;
    for ruleset in ["bazito", "persian", "pis-yedili"] {
        for seed in 0..12 {
            let t = random_deal(ruleset, seed);
            if let Some(a) = analyse_decision(&t, &config(40, seed, 0)) {
                decisions += 1;
                assert_eq!(a.faults, 0, "{ruleset} seed {seed}");
                assert_eq!(a.truncated, 0, "{ruleset} seed {seed}");
                for m in &a.moves {
                    assert!(m.se.is_finite() && m.loss >= -1e-9 || m.loss_se > 0.0);
                }
            }
            let p = position_value(&t, 1, &config(40, seed, 0)).expect("open hand");
            assert_eq!(p.truncated, 0, "{ruleset} seed {seed}");
        }
    }
    assert!(
        decisions > 5,
        "only {decisions} decisions with two moves or more"
    );
}

#[test]
fn a_jack_declares_every_suit_its_rules_allow() {
    // bazito: a J is legal on anything and declares any of the four suits
    let mut t = table("bazito", &PLAYERS);
    let hands = vec![
        ("sara", cards("JC 9H 3H 4H 5H 6H KH")),
        ("omid", cards("3C 4C 5C 6C QC KC AC")),
        ("lale", cards("3D 4D 5D 6D QD KD AD")),
        ("reza", cards("3S 4S 5S 6S QS KS AS")),
    ];
    assert!(t
        .apply(&deal_event(&hands, Card::parse("9S"), "reza"))
        .is_empty());
    let moves = legal_moves(&t);
    let jacks: Vec<Option<Suit>> = moves
        .iter()
        .filter_map(|m| match m {
            Move::Play { card, suit, .. } if card.rank().letter() == 'J' => Some(*suit),
            _ => None,
        })
        .collect();
    assert_eq!(
        jacks,
        Suit::ALL.iter().copied().map(Some).collect::<Vec<_>>()
    );
    // must play if able: no draw; 9♥ matches by rank
    assert!(!moves.contains(&Move::Draw));
    assert_eq!(moves.len(), 5);
}

const ISMCTS: Search = Search::Ismcts { trees: 2 };

/// The two tables of `the_hidden_cards_as_they_lay_never_change_the_analysis`: sara sees
/// the same in both; omid and lale's hands are swapped and a card of reza's exchanged
/// with one of the stock.
fn tables_sara_cannot_tell_apart() -> (Table, Table) {
    let sara = cards("9H 3H 2C 4H 5H JD KH");
    let a_hands = vec![
        ("sara", sara.clone()),
        ("omid", cards("3C 4C 5C 6C QC KC AC")),
        ("lale", cards("3D 4D 5D 6D QD KD AD")),
        ("reza", cards("3S 4S 5S 6S QS KS AS")),
    ];
    let b_hands = vec![
        ("sara", sara),
        ("omid", cards("3D 4D 5D 6D QD KD AD")),
        ("lale", cards("3C 4C 5C 6C QC KC AC")),
        ("reza", cards("3S 4S 5S 6S QS KS 8C")),
    ];
    let mut a = table("bazito", &PLAYERS);
    let mut b = table("bazito", &PLAYERS);
    assert!(a
        .apply(&deal_event(&a_hands, Card::parse("9S"), "reza"))
        .is_empty());
    assert!(b
        .apply(&deal_event(&b_hands, Card::parse("9S"), "reza"))
        .is_empty());
    (a, b)
}

#[test]
fn ismcts_reads_the_information_set_only() {
    let (a, b) = tables_sara_cannot_tell_apart();
    assert_eq!(a.unseen_by(0), b.unseen_by(0));
    let first = analyse(&a, &config(60, 11, 2), ISMCTS).expect("a decision");
    let second = analyse(&b, &config(60, 11, 2), ISMCTS).expect("a decision");
    assert_eq!(first, second);
    assert_eq!(first.search, ISMCTS);
    // from omid's seat the tables differ: a search there is not blind to the difference
    // by construction, so the equality above is the information set's doing
    assert_ne!(a.unseen_by(1), b.unseen_by(1));
}

#[test]
fn ismcts_is_reproduced_by_its_seed_whatever_the_threads() {
    let t = random_deal("bazito", 3);
    let one = analyse(&t, &config(50, 5, 1), ISMCTS).expect("a decision");
    let again = analyse(&t, &config(50, 5, 1), ISMCTS).expect("a decision");
    let two = analyse(&t, &config(50, 5, 2), ISMCTS).expect("a decision");
    assert_eq!(one, again);
    assert_eq!(one, two);
    let other_seed = analyse(&t, &config(50, 6, 1), ISMCTS).expect("a decision");
    assert_ne!(
        one.moves.iter().map(|m| m.visits).collect::<Vec<_>>(),
        other_seed
            .moves
            .iter()
            .map(|m| m.visits)
            .collect::<Vec<_>>(),
        "another seed searches other worlds"
    );
    // every iteration is counted once at the root
    let visits: usize = one.moves.iter().map(|m| m.visits).sum();
    assert_eq!(visits, one.rollouts);
    assert_eq!(one.rollouts, 50 * one.moves.len());
}

#[test]
fn ismcts_makes_only_legal_moves() {
    let mut decisions = 0;
    for ruleset in ["bazito", "persian", "pis-yedili"] {
        for seed in 0..8 {
            let t = random_deal(ruleset, seed);
            let Some(a) = analyse(&t, &config(20, seed, 0), ISMCTS) else {
                continue;
            };
            decisions += 1;
            // the tree's and the playouts' lines: none the machine flags
            assert_eq!(a.faults, 0, "{ruleset} seed {seed}");
            assert_eq!(a.truncated, 0, "{ruleset} seed {seed}");
            // the root's moves are exactly the legal moves, each tried
            let listed: Vec<Move> = a.moves.iter().map(|m| m.mv.clone()).collect();
            assert_eq!(listed, legal_moves(&t), "{ruleset} seed {seed}");
            assert!(a.moves.iter().all(|m| m.visits >= 1), "{a:?}");
            let best = &a.moves[a.best];
            assert!(a.moves.iter().all(|m| m.visits <= best.visits));
        }
    }
    assert!(decisions > 5, "only {decisions} decisions");
}

#[test]
fn ismcts_finds_a_planted_winning_move() {
    let t = a_lone_jack_wins();
    let a = analyse(&t, &config(100, 7, 0), ISMCTS).expect("a decision");
    let best = &a.moves[a.best];
    assert!(matches!(best.mv, Move::Play { .. }), "{best:?}");
    assert_eq!(best.mean, 0.0);
    let draw = a.moves.iter().find(|m| m.mv == Move::Draw).expect("draw");
    assert!(draw.mean > 0.0, "{draw:?}");
    // the search spends its playouts on the winning moves, not on the draw
    assert!(draw.visits < best.visits, "{a:?}");
}
