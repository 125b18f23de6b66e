//! The worked checks of rules.md, asked of the state machine directly (the scenario logs
//! in tests/cases/ check them again through the validator, from Python).

use haftkhabis_core::cards::Card;
use haftkhabis_core::event::{Common, Deal, Draw, Event, Header, Kind, Play};
use haftkhabis_core::json::Value;
use haftkhabis_core::machine::{read_header, Phase, Table};

const BAZITO: [&str; 4] = ["sara", "omid", "lale", "reza"];

fn cards(text: &str) -> Vec<Card> {
    text.split_whitespace()
        .map(|c| Card::parse(c).expect("a card"))
        .collect()
}

fn card(text: &str) -> Card {
    Card::parse(text).expect("a card")
}

fn event(seq: u64, kind: Kind) -> Event {
    Event {
        common: Common {
            game: "wc".into(),
            seq,
            ts: None,
        },
        kind,
    }
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
    Table::new(reading.settings.expect("usable header"), "wc")
}

fn deal(table: &mut Table, hands: &[(&str, &str)], starter: Option<&str>, dealer: &str) {
    let found = table.apply(&event(
        1,
        Kind::Deal(Deal {
            hand: 1,
            dealer: dealer.into(),
            hands: hands.iter().map(|(p, c)| ((*p).into(), cards(c))).collect(),
            starter: starter.map(card),
            starter_unreadable: false,
            stock: None,
        }),
    ));
    assert!(found.is_empty(), "{found:?}");
}

fn play(seq: u64, player: &str, c: &str) -> Event {
    event(
        seq,
        Kind::Play(Play {
            player: player.into(),
            card: card(c),
            suit: None,
            suit_unreadable: false,
            target: None,
            target_given: false,
        }),
    )
}

fn draw(seq: u64, player: &str, c: &str) -> Event {
    event(
        seq,
        Kind::Draw(Draw {
            player: player.into(),
            cards: cards(c),
        }),
    )
}

const FILLER: [(&str, &str); 3] = [
    ("omid", "3C 4C 5C 6C QC KC AC"),
    ("lale", "3D 4D 5D 6D QD KD AD"),
    ("reza", "3S 4S 5S 6S QS KS AS"),
];

#[test]
fn check_1_only_the_match_is_legal() {
    let mut t = table("bazito", &BAZITO);
    let mut hands = vec![("sara", "9H 3H 2C 4H 5H 6H KH")];
    hands.extend(FILLER);
    deal(&mut t, &hands, Some("9S"), "reza");
    let options = t.options().expect("someone moves");
    assert_eq!(options.player, "sara");
    assert_eq!(options.playable, cards("9H"));
}

#[test]
fn check_2_two_sevens_then_a_draw_of_four_and_the_next_moves() {
    let mut t = table("bazito", &BAZITO);
    let hands = [
        ("sara", "7C 2H 3H 4H 5H 6H KH"),
        ("omid", "7D 4C 5C 6C QC KC AC"),
        FILLER[1],
        FILLER[2],
    ];
    deal(&mut t, &hands, Some("9C"), "reza");
    assert!(t.apply(&play(2, "sara", "7C")).is_empty());
    assert!(t.apply(&play(3, "omid", "7D")).is_empty());
    let options = t.options().expect("someone moves");
    assert_eq!(options.phase, Phase::Seven);
    assert_eq!(options.draw, Some(4));
    assert!(t.apply(&draw(4, "lale", "8H 9H TH JH")).is_empty());
    assert_eq!(t.expected_actor(), Some("reza"));
}

#[test]
fn check_3_after_8d_jd_follows_jh_does_not() {
    let mut t = table("bazito", &BAZITO);
    let hands = [
        ("sara", "8D JD JH 2S 7S 8S KH"),
        FILLER[0],
        ("lale", "3H 4H 5H 6H QH TH 9H"),
        FILLER[2],
    ];
    deal(&mut t, &hands, Some("9D"), "reza");
    assert!(t.apply(&play(2, "sara", "8D")).is_empty());
    let options = t.options().expect("someone moves");
    assert_eq!(options.phase, Phase::Follow);
    assert!(options.playable.contains(&card("JD")));
    assert!(!options.playable.contains(&card("JH")));
    let mut follow = play(3, "sara", "JD");
    if let Kind::Play(p) = &mut follow.kind {
        p.suit = Some(haftkhabis_core::cards::Suit::Spades);
    }
    assert!(t.apply(&follow).is_empty());
    assert_eq!(t.current_suit(), Some(haftkhabis_core::cards::Suit::Spades));
}

#[test]
fn check_4_a_two_targets_the_fourth_seat_and_the_second_still_moves() {
    let mut t = table("bazito", &BAZITO);
    let mut hands = vec![("sara", "2C 3H 4H 5H 6H KH QH")];
    hands.extend(FILLER);
    deal(&mut t, &hands, Some("9C"), "reza");
    let mut two = play(2, "sara", "2C");
    if let Kind::Play(p) = &mut two.kind {
        p.target = Some("reza".into());
        p.target_given = true;
    }
    assert!(t.apply(&two).is_empty());
    assert_eq!(t.expected_actor(), Some("reza"));
    assert!(t.apply(&draw(3, "reza", "8H")).is_empty());
    assert_eq!(t.expected_actor(), Some("omid"));
}

#[test]
fn pis_yedili_check_7_out_on_a_seven() {
    // a player out on a 7 while a rival holds J♠ 4♦: 29 × 3 = 87
    let rules = haftkhabis_core::ruleset::ruleset("pis-yedili").expect("profile");
    let left = cards("JS 4D");
    let points: u32 = left.iter().map(|&c| rules.points_of(c)).sum();
    assert_eq!(points * rules.multiplier_of(card("7C")), 87);
}

#[test]
fn bazito_check_5_points_table() {
    let rules = haftkhabis_core::ruleset::ruleset("bazito").expect("profile");
    let left = cards("5H QS 7D");
    let points: u32 = left.iter().map(|&c| rules.points_of(c)).sum();
    assert_eq!(points, 8);
    assert_eq!(points * rules.multiplier_of(card("JC")), 16);
}
