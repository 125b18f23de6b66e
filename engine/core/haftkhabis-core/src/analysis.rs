//! Move quality: the expected hand outcome of each legal move at a decision, estimated
//! by determinized Monte Carlo rollouts on the one state machine (docs/analysis.md).
//!
//! At a decision of the player to move, each rollout deals the cards that player has not
//! seen ([`Table::unseen_by`]: the others' hands and the stock) again at random
//! ([`Table::determinized`]), so the analysis reads only their information set, never the
//! hidden cards as they lay. Every legal move is then played in that same world and the
//! hand played out by a fixed policy ([`policy_move`], greedy-legal) through
//! [`Table::apply`]: legality is the machine's, never decided here. A move's value is the
//! player's points at the hand's end (lower is better; elimination play: their finishing
//! place, 0 first). All moves share each rollout's world and random stream (common random
//! numbers), so the differences between moves are estimated from paired rollouts.
//!
//! Rollouts are seeded per index (`seed`, rollout `i`): the result does not depend on the
//! number of threads.

use crate::cards::{Card, Suit};
use crate::event::{Common, Draw, Event, Kind, Play};
use crate::json::Text;
use crate::machine::{Phase, Table, TurnOptions};
use crate::ruleset::{Effect, Mode};
use crate::violation::Code;

/// The rollout policy's name and version, stored with every analysis: a stored analysis
/// is recomputed when this or the engine's version changes.
pub const POLICY: &str = "greedy-1";

/// z for a two-sided 5% test: a move's loss is significant when it exceeds `Z * se`.
pub const Z: f64 = 1.959_963_984_540_054;

/// The most lines one rollout plays before it is cut off (its value is then the points
/// the player holds, and it is counted as truncated).
pub const MAX_ROLLOUT_EVENTS: usize = 3_000;

/// A small, fast, seedable generator (SplitMix64): rollouts need reproducible streams,
/// not cryptographic ones.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for the stream (`seed`, `index`, `lane`): distinct triples give
    /// independent-looking streams.
    pub fn stream(seed: u64, index: u64, lane: u64) -> Rng {
        let mut rng = Rng(seed ^ 0x9E37_79B9_7F4A_7C15);
        let a = rng.next_u64() ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut rng = Rng(a);
        let b = rng.next_u64() ^ lane.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        Rng(b)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0; 0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Fisher–Yates.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// One move a player may make at a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Move {
    /// a card, with the suit it declares and the seat a 2 targets when it must say them
    Play {
        card: Card,
        suit: Option<Suit>,
        target: Option<usize>,
    },
    /// draw what the rules owe now (1 card, a 7 total, a gift, a settlement draw)
    Draw,
    Pass,
}

impl Move {
    /// The move in words, with seats named from `players`.
    pub fn describe(&self, players: &[Text]) -> String {
        match self {
            Move::Play { card, suit, target } => {
                let mut text = format!("play {}", card.pretty());
                if let Some(s) = suit {
                    text.push_str(&format!(" declaring {}", s.name()));
                }
                if let Some(t) = target.and_then(|t| players.get(t)) {
                    text.push_str(&format!(" at {t}"));
                }
                text
            }
            Move::Draw => "draw".to_string(),
            Move::Pass => "pass".to_string(),
        }
    }
}

/// How many rollouts, from which seed, on how many threads.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub rollouts: usize,
    pub seed: u64,
    /// 0: every core available
    pub threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rollouts: 1_000,
            seed: 0,
            threads: 0,
        }
    }
}

/// One move's estimate at a decision.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveValue {
    pub mv: Move,
    /// the mean of the player's hand outcome over the rollouts (lower is better)
    pub mean: f64,
    /// its standard error
    pub se: f64,
    /// the share of rollouts the player won the hand
    pub win_rate: f64,
    /// the playouts behind `mean` (flat: the rollouts; ISMCTS: the move's visits)
    pub visits: usize,
    /// the mean of (this move's outcome − the best move's) over the paired rollouts
    pub loss: f64,
    /// its standard error (paired: the rollouts share worlds)
    pub loss_se: f64,
}

impl MoveValue {
    /// The loss exceeds `Z` standard errors (5% two-sided, before any correction for
    /// picking the best of many moves). A move seen in fewer than 2 playouts has no error
    /// estimate and is never significant.
    pub fn significant(&self) -> bool {
        self.visits >= 2 && self.loss > Z * self.loss_se && self.loss > 0.0
    }
}

/// How a decision's moves are valued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Search {
    /// flat Monte Carlo: every legal move played out `rollouts` times in the same worlds
    /// (paired), the policy after it
    #[default]
    Flat,
    /// single-observer information-set MCTS ([`crate::ismcts`]): the same number of
    /// playouts in all (`rollouts` × the legal moves), spent by a search over `trees`
    /// root-parallel trees merged at the root
    Ismcts { trees: usize },
}

impl Search {
    /// The name stored with an analysis: `flat` or `ismcts`.
    pub fn name(&self) -> &'static str {
        match self {
            Search::Flat => "flat",
            Search::Ismcts { .. } => "ismcts",
        }
    }
}

/// A decision's analysis: every legal move's estimate, the best one first-class.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionAnalysis {
    /// how the moves were valued
    pub search: Search,
    /// the deciding player's seat
    pub seat: usize,
    pub moves: Vec<MoveValue>,
    /// the index in `moves` of the best move: the lowest mean (flat), the most visited
    /// (ISMCTS's robust child)
    pub best: usize,
    /// flat: the rollouts per move; ISMCTS: the search's iterations over all its trees
    pub rollouts: usize,
    /// rollouts cut off at [`MAX_ROLLOUT_EVENTS`] (over all moves)
    pub truncated: usize,
    /// rollout lines the machine flagged (a policy bug if not 0; last-card calls, which
    /// the rollouts do not make, are not counted)
    pub faults: usize,
    pub seed: u64,
}

/// An estimate of one seat's hand outcome from a position (deal strength).
#[derive(Clone, Debug, PartialEq)]
pub struct PositionValue {
    pub seat: usize,
    pub mean: f64,
    pub se: f64,
    pub win_rate: f64,
    pub rollouts: usize,
    pub truncated: usize,
}

/// What one rollout ended with.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ending {
    pub(crate) value: f64,
    pub(crate) won: bool,
    pub(crate) truncated: bool,
    pub(crate) faults: usize,
}

fn event(seq: u64, kind: Kind) -> Event {
    Event {
        common: Common {
            game: Text::default(),
            seq,
            ts: None,
        },
        kind,
    }
}

fn play_event(table: &Table, seat: usize, mv: &Move, seq: u64) -> Option<Event> {
    let player = table.players().get(seat)?.clone();
    Some(match mv {
        Move::Play { card, suit, target } => event(
            seq,
            Kind::Play(Play {
                player,
                card: *card,
                suit: *suit,
                suit_unreadable: false,
                target: target.and_then(|t| table.players().get(t).cloned()),
                target_given: target.is_some(),
            }),
        ),
        Move::Pass => event(seq, Kind::Pass { player }),
        Move::Draw => return None,
    })
}

/// Faults a rollout line carries: every violation but a missed last-card call (rollouts
/// never announce; a missed call changes nothing on the table without a penalty line).
fn faults(found: &[crate::violation::Violation]) -> usize {
    found.iter().filter(|v| v.code != Code::MissedCall).count()
}

/// Make `mv` for the player to move, as a table would log it: a draw takes the stock's
/// top (the pile turned with a `reshuffle` line first when the stock is empty). Returns
/// the lines' faults, or None when the move cannot be made (a draw with no card anywhere).
pub(crate) fn make_move(
    table: &mut Table,
    opts: TurnOptions,
    mv: &Move,
    seq: &mut u64,
    rng: &mut Rng,
) -> Option<usize> {
    let seat = table.seat(&opts.player)?;
    let mut found = 0;
    if let Move::Draw = mv {
        let owed = opts.draw? as usize;
        if table.stock_size() == 0 {
            let mut under = table.pile_under_top();
            if under.is_empty() || !table.settings.ruleset.reshuffles {
                return None;
            }
            rng.shuffle(&mut under);
            *seq += 1;
            found += faults(&table.apply(&event(*seq, Kind::Reshuffle { stock: Some(under) })));
        }
        let take = owed.min(table.stock_size() as usize);
        if take == 0 {
            return None;
        }
        let cards = table.stock_front(take);
        *seq += 1;
        let player = opts.player;
        found += faults(&table.apply(&event(*seq, Kind::Draw(Draw { player, cards }))));
        return Some(found);
    }
    *seq += 1;
    let line = play_event(table, seat, mv, *seq)?;
    found += faults(&table.apply(&line));
    Some(found)
}

/// The greedy policy's wish to be rid of `card` now (the simulator's greedy bot, made
/// deterministic): its points, a 7 kept to answer totals, a J kept as a wild card unless
/// it can go out on it, a 2's gift welcome, an 8 played when its suit can follow.
fn shed_value(table: &Table, phase: Phase, card: Card, held: &[Card]) -> i64 {
    let rules = &table.settings.ruleset;
    let mut value = i64::from(rules.points_of(card));
    match rules.effect(card) {
        Effect::Stack if phase != Phase::Seven => value -= 40,
        Effect::Declare => value = if held.len() <= 2 { 60 } else { -25 },
        Effect::Gift => value += 6,
        Effect::Follow => {
            let same = held.iter().filter(|c| c.suit() == card.suit()).count();
            value += if same > 1 { 4 } else { -4 };
        }
        _ => {}
    }
    value
}

/// The suit a greedy player declares with `card`: the one it holds most of (J aside),
/// among the suits the rules allow.
fn greedy_suit(table: &Table, card: Card, held: &[Card]) -> Suit {
    let rules = &table.settings.ruleset;
    let current = table.current_suit();
    let mut best = Suit::ALL[0];
    let mut best_count = -1i64;
    for suit in Suit::ALL {
        if rules.jack_suit_must_differ && Some(suit) == current {
            continue;
        }
        let mut count = 0i64;
        let mut skipped = false;
        for &c in held {
            if c == card && !skipped {
                skipped = true;
                continue;
            }
            if c.suit() == suit && rules.effect(c) != Effect::Declare {
                count += 1;
            }
        }
        if count > best_count {
            best = suit;
            best_count = count;
        }
    }
    best
}

/// The fixed rollout policy (greedy-legal, [`POLICY`]): play whenever it can, the card it
/// most wants rid of (a lone wild J kept while it holds more than 3 cards and may draw);
/// declare its longest suit; aim a 2 at the player with fewest cards; otherwise draw,
/// and pass when nothing else is allowed. It reads only its own hand and public facts.
pub fn policy_move(table: &Table) -> Option<Move> {
    policy_move_for(table, &table.options()?)
}

/// [`policy_move`] for the options already read.
fn policy_move_for(table: &Table, opts: &TurnOptions) -> Option<Move> {
    if opts.gift || opts.phase == Phase::Settlement {
        return Some(Move::Draw);
    }
    let seat = table.seat(&opts.player)?;
    let held = table.held(seat)?;
    let can_draw = opts.draw.is_some() && !opts.obliged && drawable(table);
    if !opts.playable.is_empty() {
        let rules = &table.settings.ruleset;
        let only_jacks = opts
            .playable
            .iter()
            .all(|&c| rules.effect(c) == Effect::Declare);
        let keep_jack = only_jacks && can_draw && opts.phase == Phase::Turn && held.len() > 3;
        if !keep_jack {
            let mut card = opts.playable[0];
            let mut best = i64::MIN;
            for &c in &opts.playable {
                let v = shed_value(table, opts.phase, c, held);
                if v > best {
                    best = v;
                    card = c;
                }
            }
            return Some(play_move(table, seat, card, held));
        }
    }
    if can_draw && !(opts.phase == Phase::Drawn && opts.may_pass) {
        return Some(Move::Draw);
    }
    if opts.may_pass {
        return Some(Move::Pass);
    }
    if opts.draw.is_some() && drawable(table) {
        return Some(Move::Draw);
    }
    None
}

/// A draw can take a card now: the stock holds one, or the pile may be turned.
pub(crate) fn drawable(table: &Table) -> bool {
    table.stock_size() > 0
        || (table.settings.ruleset.reshuffles && !table.pile_under_top().is_empty())
}

fn play_move(table: &Table, seat: usize, card: Card, held: &[Card]) -> Move {
    let needs = table.play_needs(seat, card);
    let suit = needs.declares.then(|| greedy_suit(table, card, held));
    let target = if needs.takes_target {
        let sizes = table.hand_sizes();
        table
            .target_seats(seat)
            .into_iter()
            .min_by_key(|&s| sizes.get(s).copied().unwrap_or(usize::MAX))
    } else {
        None
    };
    Move::Play { card, suit, target }
}

/// The legal moves of the player to move, each once: every playable card (a declaring
/// card once per suit it may declare, a 2 once per target), a draw when one is allowed
/// and not a fault, a pass when allowed. Each play is checked by applying it to a copy of
/// the table: a move the machine flags is not listed.
pub fn legal_moves(table: &Table) -> Vec<Move> {
    let Some(opts) = table.options() else {
        return Vec::new();
    };
    if opts.gift || opts.phase == Phase::Settlement {
        return vec![Move::Draw];
    }
    let Some(seat) = table.seat(&opts.player) else {
        return Vec::new();
    };
    let mut moves = Vec::new();
    for &card in &opts.playable {
        let needs = table.play_needs(seat, card);
        let suits: Vec<Option<Suit>> = if needs.declares {
            Suit::ALL.iter().copied().map(Some).collect()
        } else {
            vec![None]
        };
        let targets: Vec<Option<usize>> = if needs.takes_target {
            table.target_seats(seat).into_iter().map(Some).collect()
        } else {
            vec![None]
        };
        for &suit in &suits {
            for &target in &targets {
                let mv = Move::Play { card, suit, target };
                let mut copy = table.clone();
                if let Some(line) = play_event(table, seat, &mv, 0) {
                    if faults(&copy.apply(&line)) == 0 {
                        moves.push(mv);
                    }
                }
            }
        }
    }
    if opts.draw.is_some_and(|n| n > 0) && !opts.obliged && drawable(table) {
        moves.push(Move::Draw);
    }
    if opts.may_pass {
        moves.push(Move::Pass);
    }
    moves
}

/// `seat`'s outcome of the hand once it is over: (value, won). Points play: their points
/// (0 for the winner); elimination: their finishing place (0 first).
pub(crate) fn outcome_of(table: &Table, seat: usize) -> Option<(f64, bool)> {
    let outcome = table.settled_outcome()?;
    let name = table.players().get(seat)?;
    let won = outcome.winners.iter().any(|w| w == name);
    if table.settings.mode == Mode::Elimination {
        let place = outcome
            .order
            .as_ref()
            .and_then(|o| o.iter().position(|p| p == name))
            .unwrap_or(table.players().len().saturating_sub(1));
        return Some((place as f64, won));
    }
    let points = outcome
        .scores
        .as_ref()
        .and_then(|s| s.get(seat))
        .map_or(0, |(_, p)| *p);
    Some((points as f64, won))
}

/// Play the hand out from `world` by the policy, at most `budget` lines: the lines'
/// faults, and whether the hand ended (the outcome is then `world`'s settled one).
pub(crate) fn play_out(
    world: &mut Table,
    rng: &mut Rng,
    seq: &mut u64,
    budget: usize,
) -> (usize, bool) {
    let mut found = 0;
    for _ in 0..budget {
        if world.settled_outcome().is_some() {
            return (found, true);
        }
        let Some(opts) = world.options() else {
            break;
        };
        let Some(mv) = policy_move_for(world, &opts) else {
            break;
        };
        match make_move(world, opts, &mv, seq, rng) {
            Some(f) => found += f,
            None => break,
        }
    }
    (found, world.settled_outcome().is_some())
}

/// `seat`'s outcome of `world` once played out: the settled one, or (cut off) the points
/// the seat holds.
pub(crate) fn ending_of(world: &Table, seat: usize, faults: usize) -> Ending {
    let ending = Ending {
        faults,
        ..Ending::default()
    };
    match outcome_of(world, seat) {
        Some((value, won)) => Ending {
            value,
            won,
            ..ending
        },
        None => truncated(world, seat, ending),
    }
}

/// Play the hand out from `world` by the policy (after `first`, when given, for the
/// player to move) and read `seat`'s outcome.
fn rollout(mut world: Table, seat: usize, first: Option<&Move>, rng: &mut Rng) -> Ending {
    let mut seq = 1_000_000_000u64;
    let mut found = 0;
    if let Some(mv) = first {
        let Some(opts) = world.options() else {
            return truncated(&world, seat, Ending::default());
        };
        match make_move(&mut world, opts, mv, &mut seq, rng) {
            Some(f) => found += f,
            None => return truncated(&world, seat, Ending::default()),
        }
    }
    let (more, _) = play_out(&mut world, rng, &mut seq, MAX_ROLLOUT_EVENTS);
    ending_of(&world, seat, found + more)
}

/// A rollout that could not finish: the points `seat` holds stand for its outcome.
fn truncated(world: &Table, seat: usize, mut ending: Ending) -> Ending {
    let rules = &world.settings.ruleset;
    let held = world.held(seat).unwrap_or(&[]);
    ending.value = held.iter().map(|&c| f64::from(rules.points_of(c))).sum();
    ending.won = false;
    ending.truncated = true;
    ending
}

/// A world for rollout `index`: the cards `seat` has not seen, dealt again.
pub(crate) fn world_for(table: &Table, seat: usize, seed: u64, index: u64) -> Option<Table> {
    let mut unseen = table.unseen_by(seat)?;
    let mut rng = Rng::stream(seed, index, 0);
    rng.shuffle(&mut unseen);
    table.determinized(seat, &unseen)
}

pub(crate) fn threads_for(config: &Config) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let wanted = if config.threads == 0 {
        cores
    } else {
        config.threads
    };
    wanted.clamp(1, config.rollouts.max(1))
}

/// Run `work(i)` for every rollout index on the configured threads; results by index.
pub(crate) fn run_indexed<T: Send + Default + Clone>(
    config: &Config,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let n = config.rollouts;
    let threads = threads_for(config);
    let mut out = vec![T::default(); n];
    let chunk = n.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (part, slots) in out.chunks_mut(chunk).enumerate() {
            let work = &work;
            scope.spawn(move || {
                for (k, slot) in slots.iter_mut().enumerate() {
                    *slot = work(part * chunk + k);
                }
            });
        }
    });
    out
}

pub(crate) fn mean_se(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, (var / n as f64).sqrt())
}

/// Analyse the decision of the player to move in `table` by `search`: every legal move's
/// expected hand outcome from their information set. None when nobody is to move or
/// there is only one move (no decision).
pub fn analyse(table: &Table, config: &Config, search: Search) -> Option<DecisionAnalysis> {
    match search {
        Search::Flat => analyse_decision(table, config),
        Search::Ismcts { trees } => crate::ismcts::search_decision(table, config, trees),
    }
}

/// Analyse the decision of the player to move in `table` by flat Monte Carlo: every legal
/// move's expected hand outcome from their information set. None when nobody is to move
/// or there is only one move (no decision).
pub fn analyse_decision(table: &Table, config: &Config) -> Option<DecisionAnalysis> {
    let opts = table.options()?;
    let seat = table.seat(&opts.player)?;
    let moves = legal_moves(table);
    if moves.len() < 2 || config.rollouts == 0 {
        return None;
    }
    let seed = config.seed;
    let results: Vec<Vec<Ending>> = run_indexed(config, |i| {
        let Some(world) = world_for(table, seat, seed, i as u64) else {
            return Vec::new();
        };
        moves
            .iter()
            .map(|mv| {
                // the same stream for every move: paired rollouts
                let mut rng = Rng::stream(seed, i as u64, 1);
                rollout(world.clone(), seat, Some(mv), &mut rng)
            })
            .collect()
    });
    let n = results.len();
    let column = |m: usize| -> Vec<f64> {
        results
            .iter()
            .map(|r| r.get(m).map_or(0.0, |e| e.value))
            .collect()
    };
    let columns: Vec<Vec<f64>> = (0..moves.len()).map(column).collect();
    let means: Vec<(f64, f64)> = columns.iter().map(|c| mean_se(c)).collect();
    let best = means
        .iter()
        .enumerate()
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
        .map_or(0, |(i, _)| i);
    let values = moves
        .iter()
        .enumerate()
        .map(|(m, mv)| {
            let diffs: Vec<f64> = columns[m]
                .iter()
                .zip(&columns[best])
                .map(|(a, b)| a - b)
                .collect();
            let (loss, loss_se) = mean_se(&diffs);
            let wins = results
                .iter()
                .filter(|r| r.get(m).is_some_and(|e| e.won))
                .count();
            MoveValue {
                mv: mv.clone(),
                mean: means[m].0,
                se: means[m].1,
                win_rate: wins as f64 / n.max(1) as f64,
                visits: n,
                loss,
                loss_se,
            }
        })
        .collect();
    let truncated = results.iter().flatten().filter(|e| e.truncated).count();
    let faults = results.iter().flatten().map(|e| e.faults).sum();
    Some(DecisionAnalysis {
        search: Search::Flat,
        seat,
        moves: values,
        best,
        rollouts: n,
        truncated,
        faults,
        seed,
    })
}

/// `seat`'s expected hand outcome from the position in `table` (after a deal: the
/// strength of what they were dealt), every move made by the policy, from `seat`'s
/// information set. None without an open hand.
pub fn position_value(table: &Table, seat: usize, config: &Config) -> Option<PositionValue> {
    table.unseen_by(seat)?;
    let seed = config.seed;
    let endings: Vec<Ending> = run_indexed(config, |i| {
        let Some(world) = world_for(table, seat, seed, i as u64) else {
            return Ending::default();
        };
        let mut rng = Rng::stream(seed, i as u64, 1);
        rollout(world, seat, None, &mut rng)
    });
    let values: Vec<f64> = endings.iter().map(|e| e.value).collect();
    let (mean, se) = mean_se(&values);
    let wins = endings.iter().filter(|e| e.won).count();
    Some(PositionValue {
        seat,
        mean,
        se,
        win_rate: wins as f64 / endings.len().max(1) as f64,
        rollouts: endings.len(),
        truncated: endings.iter().filter(|e| e.truncated).count(),
    })
}
