//! Ruleset profiles: each ruleset is data (a TOML file in `profiles/`), read into one
//! frozen `Ruleset` that validates itself. The state machine reads only these parameters;
//! a fourth house ruleset is a new profile file, not a new branch in the machine.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::cards::{Card, Rank, Suit};

named_enum! {
    /// What obliges a player to play rather than draw.
    pub enum MustPlay {
        /// bazito: any legal card held, a J included
        AnyLegal = "any_legal",
        /// persian: a card of the current suit or the top's rank
        Match = "match",
        /// pis-yedili: drawing is always allowed
        Never = "never",
    }
}

named_enum! {
    /// When a J that does not match may be played.
    pub enum JackRule {
        /// bazito: on anything in a normal turn
        Always = "always",
        /// persian: only when its player holds no match
        NoMatchHeld = "no_match_held",
        /// pis-yedili: on anything but a J
        NotOnJack = "not_on_jack",
    }
}

named_enum! {
    /// What a normal-turn draw leads to.
    pub enum AfterDraw {
        /// bazito: a drawn card that fits may be played, or pass
        MayPlayFit = "may_play_fit",
        /// persian: a drawn match must be played
        MustPlayMatch = "must_play_match",
        /// pis-yedili: draw again, play, or pass
        Free = "free",
    }
}

named_enum! {
    /// What a card does when played (its rank's entry in the profile's `effects`).
    pub enum Effect {
        /// no effect
        Plain = "plain",
        /// "a played 7 puts `k` cards (per ruleset) on the next player"
        Stack = "stack",
        /// "the same player follows, with a card of the 8's suit or another 8"
        Follow = "follow",
        /// "the next player is skipped"
        Skip = "skip",
        /// "direction reverses"
        Reverse = "reverse",
        /// "the player names a target among the other players; the target draws 1 card"
        Gift = "gift",
        /// "sets the current suit"
        Declare = "declare",
        /// pis-yedili's A: "the player may follow with one more card matching the A's suit or rank"
        OptionalFollow = "optional_follow",
    }
}

named_enum! {
    /// Play modes (header `mode`).
    pub enum Mode {
        Points = "points",
        Elimination = "elimination",
    }
}

/// The persian sub-rule options, typed (a typo must not read as `false`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// sub-rule 1: `out_of_turn`, `delay` and `other` penalties are part of the game
    pub extra_fouls: bool,
    /// sub-rule 2: "a player whose last card is an 8 has not won yet: they draw 1 card"
    pub last_eight_draws: bool,
    /// sub-rule 3: "a player whose last card is a 7 has not won yet. The chain runs on"
    pub tarkesh: bool,
    /// sub-rule 4: "the player an A would skip may play any A to pass the skip on"
    pub ace_deflect: bool,
    /// "after an 8 the player may pass instead of following, without penalty"
    pub eight_bonus_optional: bool,
}

/// The option names, in the order the contract lists them.
pub const OPTION_NAMES: [&str; 5] = [
    "extra_fouls",
    "last_eight_draws",
    "tarkesh",
    "ace_deflect",
    "eight_bonus_optional",
];

impl Options {
    pub fn get(&self, name: &str) -> Option<bool> {
        Some(match name {
            "extra_fouls" => self.extra_fouls,
            "last_eight_draws" => self.last_eight_draws,
            "tarkesh" => self.tarkesh,
            "ace_deflect" => self.ace_deflect,
            "eight_bonus_optional" => self.eight_bonus_optional,
            _ => return None,
        })
    }

    /// Set option `name`; false for a name that is not an option.
    pub fn set(&mut self, name: &str, value: bool) -> bool {
        let slot = match name {
            "extra_fouls" => &mut self.extra_fouls,
            "last_eight_draws" => &mut self.last_eight_draws,
            "tarkesh" => &mut self.tarkesh,
            "ace_deflect" => &mut self.ace_deflect,
            "eight_bonus_optional" => &mut self.eight_bonus_optional,
            _ => return false,
        };
        *slot = value;
        true
    }
}

/// One table's rules as parameters.
#[derive(Clone, Debug)]
pub struct Ruleset {
    pub name: String,
    pub min_players: usize,
    pub max_players: usize,
    /// players above which two decks are used by default (None: always one deck)
    pub two_decks_above: Option<usize>,
    pub has_starter: bool,
    pub forbidden_starter_ranks: Vec<Rank>,
    /// pis-yedili: the opener must lay a club onto the empty pile
    pub opening_suit: Option<Suit>,
    pub seven_total: u32,
    /// persian: a player facing a total who holds a 7 must play it
    pub seven_answer_compulsory: bool,
    pub must_play: MustPlay,
    pub jack: JackRule,
    pub jack_suit_must_differ: bool,
    pub after_draw: AfterDraw,
    /// bazito: the failed-follow draw ends the turn
    pub failed_follow_ends_turn: bool,
    /// false: the hand is blocked when the stock runs dry
    pub reshuffles: bool,
    pub last_card_call: bool,
    pub table_penalties: bool,
    /// persian points play: 7s laid aside, two cards drawn for each
    pub settlement_sevens: bool,
    pub first_player_previous_winner: bool,
    /// None: open-ended
    pub default_hands: Option<u32>,
    pub effects: [Effect; 13],
    pub points: [u32; 13],
    pub multipliers: [u32; 13],
    /// the options this ruleset has (the others are unknown to it)
    pub option_names: Vec<String>,
    /// their defaults
    pub options: Options,
    pub modes: Vec<Mode>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    name: String,
    min_players: usize,
    max_players: usize,
    two_decks_above: Option<usize>,
    starter: bool,
    forbidden_starter_ranks: String,
    opening_suit: Option<String>,
    seven_total: u32,
    seven_answer_compulsory: bool,
    must_play: MustPlay,
    jack: JackRule,
    jack_suit_must_differ: bool,
    after_draw: AfterDraw,
    failed_follow_ends_turn: bool,
    reshuffles: bool,
    last_card_call: bool,
    table_penalties: bool,
    settlement_sevens: bool,
    first_player_previous_winner: bool,
    default_hands: Option<u32>,
    modes: Vec<Mode>,
    effects: BTreeMap<String, Effect>,
    points: BTreeMap<String, u32>,
    multipliers: BTreeMap<String, u32>,
    options: BTreeMap<String, bool>,
}

fn rank_key(key: &str, profile: &str) -> Result<Rank, String> {
    match key.as_bytes() {
        [letter] => Rank::from_letter(*letter),
        _ => None,
    }
    .ok_or_else(|| format!("{profile}: {key:?} is not a rank (A 2 … T J Q K)"))
}

impl Ruleset {
    /// Read and check a profile written in TOML (the files in `profiles/`).
    pub fn from_toml(text: &str) -> Result<Ruleset, String> {
        let file: ProfileFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let name = file.name.clone();
        if !(2 <= file.min_players && file.min_players <= file.max_players) {
            return Err(format!("{name}: bad player range"));
        }
        if file.seven_total < 1 {
            return Err(format!(
                "{name}: a 7 must put at least one card on the next player"
            ));
        }
        let mut effects = [Effect::Plain; 13];
        for (key, effect) in &file.effects {
            effects[rank_key(key, &name)?.index()] = *effect;
        }
        let mut points = [u32::MAX; 13];
        for (key, value) in &file.points {
            points[rank_key(key, &name)?.index()] = *value;
        }
        if points.contains(&u32::MAX) {
            return Err(format!("{name}: the points table must name every rank"));
        }
        let mut multipliers = [1; 13];
        for (key, value) in &file.multipliers {
            multipliers[rank_key(key, &name)?.index()] = *value;
        }
        let mut forbidden = Vec::new();
        for letter in file.forbidden_starter_ranks.bytes() {
            forbidden.push(
                Rank::from_letter(letter)
                    .ok_or_else(|| format!("{name}: bad forbidden starter rank"))?,
            );
        }
        let opening_suit = match &file.opening_suit {
            None => None,
            Some(text) => Some(
                match text.as_bytes() {
                    [letter] => Suit::from_letter(*letter),
                    _ => None,
                }
                .ok_or_else(|| format!("{name}: bad opening suit {text:?}"))?,
            ),
        };
        if !file.starter && opening_suit.is_none() {
            return Err(format!(
                "{name}: without a starter an opening suit is needed"
            ));
        }
        if file.modes.is_empty() {
            return Err(format!("{name}: a ruleset needs at least one mode"));
        }
        let mut options = Options::default();
        let mut option_names = Vec::new();
        for option in OPTION_NAMES {
            if let Some(&value) = file.options.get(option) {
                options.set(option, value);
                option_names.push(option.to_string());
            }
        }
        if let Some(unknown) = file
            .options
            .keys()
            .find(|k| !OPTION_NAMES.contains(&k.as_str()))
        {
            return Err(format!("{name}: unknown option {unknown:?}"));
        }
        Ok(Ruleset {
            name,
            min_players: file.min_players,
            max_players: file.max_players,
            two_decks_above: file.two_decks_above,
            has_starter: file.starter,
            forbidden_starter_ranks: forbidden,
            opening_suit,
            seven_total: file.seven_total,
            seven_answer_compulsory: file.seven_answer_compulsory,
            must_play: file.must_play,
            jack: file.jack,
            jack_suit_must_differ: file.jack_suit_must_differ,
            after_draw: file.after_draw,
            failed_follow_ends_turn: file.failed_follow_ends_turn,
            reshuffles: file.reshuffles,
            last_card_call: file.last_card_call,
            table_penalties: file.table_penalties,
            settlement_sevens: file.settlement_sevens,
            first_player_previous_winner: file.first_player_previous_winner,
            default_hands: file.default_hands,
            effects,
            points,
            multipliers,
            option_names,
            options,
            modes: file.modes,
        })
    }

    pub fn effect(&self, card: Card) -> Effect {
        self.effects[card.rank().index()]
    }

    pub fn points_of(&self, card: Card) -> u32 {
        self.points[card.rank().index()]
    }

    pub fn multiplier_of(&self, card: Card) -> u32 {
        self.multipliers[card.rank().index()]
    }

    pub fn decks_for(&self, players: usize) -> u8 {
        match self.two_decks_above {
            Some(above) if players > above => 2,
            _ => 1,
        }
    }

    pub fn has_option(&self, name: &str) -> bool {
        self.option_names.iter().any(|n| n == name)
    }

    pub fn has_mode(&self, mode: Mode) -> bool {
        self.modes.contains(&mode)
    }
}

const PROFILE_FILES: [&str; 3] = [
    include_str!("../profiles/bazito.toml"),
    include_str!("../profiles/persian.toml"),
    include_str!("../profiles/pis-yedili.toml"),
];

/// Every profile the engine knows, in the contract's order (bazito, persian, pis-yedili).
pub fn rulesets() -> &'static [Ruleset] {
    static PROFILES: OnceLock<Vec<Ruleset>> = OnceLock::new();
    PROFILES.get_or_init(|| {
        PROFILE_FILES
            .iter()
            .map(|text| match Ruleset::from_toml(text) {
                Ok(profile) => profile,
                // the bundled profiles are checked by `cargo test`; a broken one is a build bug
                Err(error) => panic!("a bundled ruleset profile is broken: {error}"),
            })
            .collect()
    })
}

/// The profile named `name`.
pub fn ruleset(name: &str) -> Option<&'static Ruleset> {
    rulesets().iter().find(|r| r.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_profiles_load() {
        let names: Vec<&str> = rulesets().iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["bazito", "persian", "pis-yedili"]);
        let persian = ruleset("persian").unwrap();
        assert!(persian.options.tarkesh && !persian.options.eight_bonus_optional);
        assert_eq!(persian.option_names.len(), 5);
        assert_eq!(persian.decks_for(6), 2);
        let pis = ruleset("pis-yedili").unwrap();
        assert_eq!(pis.effect(Card::parse("8C").unwrap()), Effect::Skip);
        assert_eq!(pis.multiplier_of(Card::parse("7C").unwrap()), 3);
        assert!(ruleset("bazito").unwrap().option_names.is_empty());
    }

    #[test]
    fn a_broken_profile_is_refused() {
        let text = include_str!("../profiles/bazito.toml").replace("K = 4\n", "");
        assert!(Ruleset::from_toml(&text)
            .unwrap_err()
            .contains("every rank"));
    }

    #[test]
    fn a_choice_is_read_by_the_name_it_is_declared_with() {
        let bazito = include_str!("../profiles/bazito.toml");
        for &rule in MustPlay::ALL {
            let text = bazito.replace(
                "must_play = \"any_legal\"",
                &format!("must_play = {:?}", rule.name()),
            );
            assert_eq!(Ruleset::from_toml(&text).map(|r| r.must_play), Ok(rule));
        }
        let text = bazito.replace("must_play = \"any_legal\"", "must_play = \"anyLegal\"");
        let error = Ruleset::from_toml(&text).unwrap_err();
        assert!(
            error.contains(
                "unknown variant `anyLegal`, expected one of `any_legal`, `match`, `never`"
            ),
            "{error}"
        );
        for &effect in Effect::ALL {
            assert_eq!(Effect::parse(effect.name()), Some(effect));
        }
        for &rule in JackRule::ALL {
            assert_eq!(JackRule::parse(rule.name()), Some(rule));
        }
        for &rule in AfterDraw::ALL {
            assert_eq!(AfterDraw::parse(rule.name()), Some(rule));
        }
        assert_eq!(Mode::parse("elimination"), Some(Mode::Elimination));
    }
}
