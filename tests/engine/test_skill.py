"""Issue 32: ratings, accuracy and luck (engine/skill.py) on planted truth."""

from __future__ import annotations

import random

import pytest

from engine.skill import HandResult, accuracy, luck, mean_interval, rate, wilson


def _hands(n: int, seed: int) -> list[HandResult]:
    """Four players of planted skill: each hand's points are skill + deal + noise; the
    deals favour `lucky` (lower expected points) and the player's result follows its deal."""
    rng = random.Random(seed)
    skill = {"strong": -6.0, "mid": 0.0, "weak": 6.0, "lucky": 0.0}
    out = []
    for i in range(n):
        expected = {p: 20.0 + rng.gauss(0, 6) - (8.0 if p == "lucky" else 0.0) for p in skill}
        points = {p: max(0.0, expected[p] + skill[p] + rng.gauss(0, 4)) for p in skill}
        out.append(HandResult(f"g{i}", 1, points, expected))
    return out


def test_ratings_rank_planted_skill() -> None:
    ratings = rate(_hands(300, 1))
    assert ratings["strong"].mu > ratings["mid"].mu > ratings["weak"].mu
    assert all(r.hands == 300 and r.games == 300 for r in ratings.values())
    assert ratings["strong"].sigma < 25 / 3  # uncertainty shrinks with hands


def test_the_deal_adjustment_takes_out_planted_luck() -> None:
    hands = _hands(300, 2)
    plain, adjusted = rate(hands), rate(hands, adjusted=True)
    # plain: the lucky player looks better than the equally skilled `mid`
    assert plain["lucky"].mu > plain["mid"].mu + 2
    # adjusted: the two are within each other's uncertainty, and skill still ranks
    assert abs(adjusted["lucky"].mu - adjusted["mid"].mu) < adjusted["mid"].sigma + adjusted["lucky"].sigma
    assert adjusted["strong"].mu > adjusted["mid"].mu > adjusted["weak"].mu


def test_ties_share_a_rank_and_hands_without_deal_values_are_skipped_when_adjusted() -> None:
    tied = [HandResult("g", 1, {"a": 5, "b": 5})] * 10
    ratings = rate(tied)
    assert ratings["a"].mu == pytest.approx(ratings["b"].mu)
    assert rate(tied, adjusted=True) == {}


def test_intervals_are_the_textbook_ones() -> None:
    # Wilson 95% for 8 of 10: (0.490, 0.943) (Agresti & Coull, 1998)
    w = wilson(8, 10)
    assert w is not None and w.low == pytest.approx(0.4902, abs=1e-3) and w.high == pytest.approx(0.9433, abs=1e-3)
    m = mean_interval([1.0, 2.0, 3.0, 4.0])
    assert m is not None and m.estimate == 2.5 and m.high - m.estimate == pytest.approx(1.96 * 0.6455, abs=1e-3)
    assert wilson(0, 0) is None and mean_interval([]) is None


def test_accuracy_and_luck_per_player() -> None:
    acc = accuracy([("a", 0.0, False), ("a", 2.0, False), ("a", 10.0, True), ("b", 1.0, False)])
    assert acc["a"].mean_loss.estimate == 4.0 and acc["a"].mistakes.estimate == pytest.approx(1 / 3)
    assert acc["b"].mean_loss.n == 1
    lk = luck([("a", 1.0), ("a", 3.0)])
    assert lk["a"].estimate == 2.0 and lk["a"].low < 2.0 < lk["a"].high


def test_the_history_ends_at_the_rating() -> None:
    history: dict[str, list[tuple[str, int, float, float]]] = {}
    ratings = rate(_hands(20, 3), history=history)
    assert len(history["strong"]) == 20
    assert history["strong"][-1][2:] == (ratings["strong"].mu, ratings["strong"].sigma)
