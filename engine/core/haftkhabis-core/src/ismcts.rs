//! Move quality by single-observer information-set Monte Carlo tree search (SO-ISMCTS;
//! Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree Search", IEEE TCIAIG
//! 4(2), 2012), on the one state machine (docs/analysis.md, "ISMCTS").
//!
//! The observer is the player to move. Each iteration:
//! 1. **Determinize from the information set only**: the cards the observer has not seen
//!    ([`Table::unseen_by`], sorted) are dealt again for that iteration
//!    ([`crate::analysis`]'s `world_for`, the rollouts' own), so the search never reads the
//!    hidden cards as they lay.
//! 2. **Select** down the tree: at a node, the moves legal *in this determinization*
//!    ([`legal_moves`], the machine's legality) each raise their child's availability
//!    count; a legal move without a child is expanded (one per iteration, chosen at
//!    random); otherwise the child with the highest UCB among the available ones is taken,
//!    `q̄ + c·√(ln availability / visits)`, with `q̄` the mover's mean outcome rescaled to
//!    [0, 1] over the outcomes the tree has seen (lower points is better).
//! 3. **Play out** the rest of the hand by the fixed policy (greedy-1, as the rollouts).
//! 4. **Back up** every seat's outcome: each node adds the outcome of the player who made
//!    its move (every player minimises their own points).
//!
//! A move's edge is the move as its player says it: a draw is one edge whatever card it
//! brings (the card is a chance outcome the tree does not split on), a J one edge per
//! suit, a 2 one per target. Root parallelisation: `trees` independent trees, each with
//! its share of the iterations and its own worlds, merged at the root by summing each
//! move's visits and outcomes; the best move is the most visited (the robust child). The
//! trees, not the threads, fix the result: it depends on the seed and the number of trees
//! only.

use crate::analysis::{
    ending_of, legal_moves, make_move, play_out, run_indexed, world_for, Config, DecisionAnalysis,
    Move, MoveValue, Rng, Search, MAX_ROLLOUT_EVENTS,
};
use crate::machine::Table;

/// UCB's exploration constant on outcomes rescaled to [0, 1] (0.7, the value Cowling et
/// al. use for their card games).
pub const EXPLORATION: f64 = 0.7;

/// Root-parallel trees when the caller does not say.
pub const DEFAULT_TREES: usize = 2;

/// One edge of the tree and the node it leads to.
#[derive(Clone, Debug)]
struct Node {
    mv: Move,
    /// the seat that makes `mv`
    mover: usize,
    children: Vec<u32>,
    visits: u32,
    /// iterations in which `mv` was legal when its parent was reached
    available: u32,
    /// the mover's outcomes over the visits: sum, sum of squares, wins
    sum: f64,
    sum_sq: f64,
    wins: u32,
}

impl Node {
    fn new(mv: Move, mover: usize) -> Node {
        Node {
            mv,
            mover,
            children: Vec::new(),
            visits: 0,
            available: 0,
            sum: 0.0,
            sum_sq: 0.0,
            wins: 0,
        }
    }
}

/// One search tree, its root the observer's decision.
#[derive(Clone, Debug, Default)]
struct Tree {
    nodes: Vec<Node>,
    /// the lowest and highest outcome any seat has had in this tree (UCB's scale)
    low: f64,
    high: f64,
    truncated: usize,
    faults: usize,
}

impl Tree {
    fn new(observer: usize) -> Tree {
        Tree {
            nodes: vec![Node::new(Move::Pass, observer)],
            low: f64::INFINITY,
            high: f64::NEG_INFINITY,
            truncated: 0,
            faults: 0,
        }
    }

    fn child(&self, node: usize, mv: &Move) -> Option<usize> {
        self.nodes
            .get(node)?
            .children
            .iter()
            .map(|&c| c as usize)
            .find(|&c| self.nodes[c].mv == *mv)
    }

    fn add(&mut self, parent: usize, mv: Move, mover: usize) -> usize {
        let at = self.nodes.len();
        self.nodes.push(Node::new(mv, mover));
        self.nodes[parent].children.push(at as u32);
        at
    }

    /// The available child with the highest UCB for its mover (the first on ties).
    fn select(&self, available: &[usize], exploration: f64) -> Option<usize> {
        let span = self.high - self.low;
        let mut best = None;
        let mut best_score = f64::NEG_INFINITY;
        for &c in available {
            let node = &self.nodes[c];
            let score = if node.visits == 0 {
                f64::INFINITY
            } else {
                let visits = f64::from(node.visits);
                let mean = node.sum / visits;
                let exploit = if span > 0.0 {
                    (self.high - mean) / span
                } else {
                    0.5
                };
                let avail = f64::from(node.available.max(1));
                exploit + exploration * (avail.ln() / visits).sqrt()
            };
            if score > best_score {
                best_score = score;
                best = Some(c);
            }
        }
        best
    }

    /// One iteration from `table`, in world `index` (determinized from `observer`'s
    /// information set).
    fn iterate(&mut self, table: &Table, observer: usize, seed: u64, index: u64) {
        let Some(mut world) = world_for(table, observer, seed, index) else {
            return;
        };
        let mut rng = Rng::stream(seed, index, 1);
        let mut seq = 1_000_000_000u64;
        let mut node = 0usize;
        let mut path: Vec<usize> = Vec::new();
        let mut faults = 0;
        while path.len() < MAX_ROLLOUT_EVENTS && world.settled_outcome().is_none() {
            let Some(opts) = world.options() else {
                break;
            };
            let Some(mover) = world.seat(&opts.player) else {
                break;
            };
            let mut untried = Vec::new();
            let mut available = Vec::new();
            for mv in legal_moves(&world) {
                match self.child(node, &mv) {
                    Some(c) => {
                        self.nodes[c].available += 1;
                        available.push(c);
                    }
                    None => untried.push(mv),
                }
            }
            let expanding = !untried.is_empty();
            let next = if expanding {
                let mv = untried.swap_remove(rng.below(untried.len()));
                let c = self.add(node, mv, mover);
                self.nodes[c].available = 1;
                c
            } else {
                match self.select(&available, EXPLORATION) {
                    Some(c) => c,
                    None => break,
                }
            };
            let mv = self.nodes[next].mv.clone();
            path.push(next);
            node = next;
            match make_move(&mut world, opts, &mv, &mut seq, &mut rng) {
                Some(f) => faults += f,
                None => break,
            }
            if expanding {
                break;
            }
        }
        let budget = MAX_ROLLOUT_EVENTS.saturating_sub(path.len());
        let (more, _) = play_out(&mut world, &mut rng, &mut seq, budget);
        let seats = world.players().len();
        let endings: Vec<_> = (0..seats).map(|s| ending_of(&world, s, 0)).collect();
        self.faults += faults + more;
        if endings.get(observer).is_some_and(|e| e.truncated) {
            self.truncated += 1;
        }
        for e in &endings {
            self.low = self.low.min(e.value);
            self.high = self.high.max(e.value);
        }
        for &n in &path {
            let node = &mut self.nodes[n];
            let Some(e) = endings.get(node.mover) else {
                continue;
            };
            node.visits += 1;
            node.sum += e.value;
            node.sum_sq += e.value * e.value;
            node.wins += u32::from(e.won);
        }
    }
}

/// The iterations of tree `k` of `trees`: world indices k, k + trees, k + 2·trees, …
fn grow(
    table: &Table,
    observer: usize,
    seed: u64,
    iterations: usize,
    trees: usize,
    k: usize,
) -> Tree {
    let mut tree = Tree::new(observer);
    let mut index = k;
    while index < iterations {
        tree.iterate(table, observer, seed, index as u64);
        index += trees;
    }
    tree
}

/// Analyse the decision of the player to move in `table` by SO-ISMCTS: `config.rollouts`
/// × the legal moves iterations in all (the playouts flat Monte Carlo would spend), over
/// `trees` root-parallel trees on `config.threads` threads. Each move's mean and error are
/// over the iterations that took it at the root (not paired: its loss's error combines the
/// two means' errors); the best move is the most visited. None when nobody is to move or
/// there is only one move.
pub fn search_decision(table: &Table, config: &Config, trees: usize) -> Option<DecisionAnalysis> {
    let opts = table.options()?;
    let observer = table.seat(&opts.player)?;
    let moves = legal_moves(table);
    if moves.len() < 2 || config.rollouts == 0 {
        return None;
    }
    let iterations = config.rollouts.saturating_mul(moves.len());
    let trees = trees.clamp(1, iterations);
    let seed = config.seed;
    let per_tree = Config {
        rollouts: trees,
        ..*config
    };
    let grown: Vec<Tree> = run_indexed(&per_tree, |k| {
        grow(table, observer, seed, iterations, trees, k)
    });
    let mut values: Vec<MoveValue> = Vec::with_capacity(moves.len());
    let mut sums: Vec<(f64, f64)> = Vec::with_capacity(moves.len());
    for mv in &moves {
        let (mut visits, mut sum, mut sum_sq, mut wins) = (0u64, 0.0, 0.0, 0u64);
        for tree in &grown {
            if let Some(c) = tree.child(0, mv) {
                let node = &tree.nodes[c];
                visits += u64::from(node.visits);
                sum += node.sum;
                sum_sq += node.sum_sq;
                wins += u64::from(node.wins);
            }
        }
        let n = visits as f64;
        let (mean, se) = if visits == 0 {
            (0.0, 0.0)
        } else if visits == 1 {
            (sum, 0.0)
        } else {
            let mean = sum / n;
            let var = ((sum_sq - n * mean * mean) / (n - 1.0)).max(0.0);
            (mean, (var / n).sqrt())
        };
        sums.push((mean, se));
        values.push(MoveValue {
            mv: mv.clone(),
            mean,
            se,
            win_rate: if visits == 0 { 0.0 } else { wins as f64 / n },
            visits: visits as usize,
            loss: 0.0,
            loss_se: 0.0,
        });
    }
    // the robust child: most visits, then the lower mean, then the first listed
    let best = (0..values.len())
        .min_by(|&a, &b| {
            values[b]
                .visits
                .cmp(&values[a].visits)
                .then(values[a].mean.total_cmp(&values[b].mean))
        })
        .unwrap_or(0);
    let (best_mean, best_se) = sums[best];
    for (m, value) in values.iter_mut().enumerate() {
        if m != best && value.visits > 0 {
            value.loss = value.mean - best_mean;
            value.loss_se = (value.se.powi(2) + best_se.powi(2)).sqrt();
        }
    }
    Some(DecisionAnalysis {
        search: Search::Ismcts { trees },
        seat: observer,
        moves: values,
        best,
        rollouts: iterations,
        truncated: grown.iter().map(|t| t.truncated).sum(),
        faults: grown.iter().map(|t| t.faults).sum(),
        seed,
    })
}
