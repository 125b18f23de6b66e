//! What one player could know of a running hand, and a world consistent with it.
//!
//! The move-quality analysis ([`crate::analysis`]) never reads another player's cards or
//! the stock: it asks [`Table::unseen_by`] for the cards the player has not seen and
//! [`Table::determinized`] for a table whose hidden cards are a fresh deal of those.
//! The rule for what a player sees is the project's one (engine/player_view.py): their
//! own cards, the discard pile, the 7s laid aside, everyone's hand size; never another's
//! cards nor the stock.

use std::collections::VecDeque;

use super::{Phase, Table};
use crate::cards::{Card, CardCounts};
use crate::ruleset::Effect;

/// What a play of a card must say besides the card: the machine's own reading
/// (`Table::declare`, `Table::judge_target`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayNeeds {
    /// the card declares a suit (a J outside a pis-yedili opening)
    pub declares: bool,
    /// the card names a 2's target (a 2 that is not its player's last card)
    pub takes_target: bool,
}

impl Table {
    /// The cards `seat` has not seen in the running hand: every card not in their hand,
    /// not on the pile and not laid aside — the union of the others' hands and the
    /// stock, sorted (so the same information set gives the same list, however the
    /// hidden cards really lie). None without an open hand.
    pub fn unseen_by(&self, seat: usize) -> Option<Vec<Card>> {
        let hand = self.open_hand()?;
        let mut unseen = hand.stock.cards();
        for (other, held) in hand.hands.iter().enumerate() {
            if other != seat {
                unseen.extend_from_slice(held);
            }
        }
        unseen.sort_unstable();
        Some(unseen)
    }

    /// A copy of the table in which the cards `seat` has not seen are dealt again:
    /// `order` (a permutation of [`Table::unseen_by`]) fills the other players' hands in
    /// seat order, each to its true size, and the rest is the stock, top first. None
    /// without an open hand or when `order` is not exactly the unseen cards.
    pub fn determinized(&self, seat: usize, order: &[Card]) -> Option<Table> {
        let unseen = self.unseen_by(seat)?;
        if CardCounts::of(order) != CardCounts::of(&unseen) {
            return None;
        }
        let mut world = self.clone();
        let hand = world.hand.as_deref_mut()?;
        let mut next = order.iter().copied();
        for (other, held) in hand.hands.iter_mut().enumerate() {
            if other != seat {
                let size = held.len();
                held.clear();
                held.extend(next.by_ref().take(size));
            }
        }
        let stock: Vec<Card> = next.collect();
        hand.stock = CardCounts::of(&stock);
        hand.stock_order = Some(stock.into_iter().collect::<VecDeque<Card>>());
        // a card a player drew and may still play is theirs: it went with their hand
        if hand.drawn_card.is_some() && hand.mover != seat {
            hand.drawn_card = hand.hands[hand.mover].last().copied();
        }
        Some(world)
    }

    /// The cards `seat` holds in the running hand.
    pub fn held(&self, seat: usize) -> Option<&[Card]> {
        Some(self.open_hand()?.hands.get(seat)?.as_slice())
    }

    /// The running hand's phase (None without an open hand).
    pub fn phase(&self) -> Option<Phase> {
        self.open_hand().map(|h| h.phase)
    }

    /// Cards in the stock now.
    pub fn stock_size(&self) -> u32 {
        self.open_hand().map_or(0, |h| h.stock_size())
    }

    /// The stock's next `n` cards, top first: its order when the table knows it (a
    /// determinized world always does), else pack order.
    pub fn stock_front(&self, n: usize) -> Vec<Card> {
        let Some(hand) = self.open_hand() else {
            return Vec::new();
        };
        match &hand.stock_order {
            Some(order) => order.iter().copied().take(n).collect(),
            None => hand.stock.cards().into_iter().take(n).collect(),
        }
    }

    /// The discard pile below its top card (what a reshuffle turns into the stock).
    pub fn pile_under_top(&self) -> Vec<Card> {
        let Some(hand) = self.open_hand() else {
            return Vec::new();
        };
        let keep = hand.pile.len().saturating_sub(1);
        hand.pile[..keep].to_vec()
    }

    /// The seats a 2's target may be now: in the hand, not finished, not `seat`.
    pub fn target_seats(&self, seat: usize) -> Vec<usize> {
        let Some(hand) = self.open_hand() else {
            return Vec::new();
        };
        (0..hand.hands.len())
            .filter(|&s| s != seat && hand.active[s] && !hand.finished.contains(&s))
            .collect()
    }

    /// Cards held per seat in the running hand.
    pub fn hand_sizes(&self) -> Vec<usize> {
        self.open_hand()
            .map(|h| h.hands.iter().map(Vec::len).collect())
            .unwrap_or_default()
    }

    /// What playing `card` now must say besides the card (the machine's reading in
    /// `Table::play`: a declaring card outside an opening declares; a 2 that is not the
    /// player's last card names a target).
    pub fn play_needs(&self, seat: usize, card: Card) -> PlayNeeds {
        let Some(hand) = self.open_hand() else {
            return PlayNeeds {
                declares: false,
                takes_target: false,
            };
        };
        let opening =
            hand.phase == Phase::Opening && Some(card.suit()) == self.rules().opening_suit;
        let last_card = hand.hands.get(seat).is_some_and(|h| h.len() <= 1);
        PlayNeeds {
            declares: self.effect(card) == Effect::Declare && !opening,
            takes_target: self.effect(card) == Effect::Gift && !opening && !last_card,
        }
    }

    /// The running hand's outcome once it is over (decided and, in persian points play,
    /// settled); None before.
    pub fn settled_outcome(&self) -> Option<&super::HandOutcome> {
        let hand = self.open_hand()?;
        if hand.phase == Phase::Over {
            hand.outcome.as_ref()
        } else {
            None
        }
    }

    /// The current suit and the pile's top card of the running hand.
    pub fn pile_top(&self) -> Option<Card> {
        self.open_hand().and_then(|h| h.top())
    }
}
