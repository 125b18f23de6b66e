"""Who is good, and who was lucky: ratings, accuracy and luck over many analysed hands.

- **Ratings** (`rate`): a Plackett–Luce rating per player (openskill), each hand a
  free-for-all ranked by points (lower is better, ties share a rank). With the deal
  adjustment the hand is ranked by *points − the deal's expected points* (the player's
  `play`, engine.analysis): what the deal gave is taken out before the ranking.
- **Accuracy** (`accuracy`): per player, the mean expected loss per decision with a normal
  95% interval, and the share of clear mistakes with a Wilson 95% interval.
- **Luck** (`luck`): per player, the mean of each hand's luck (the table's mean deal value
  minus theirs, points) with its interval.

Plain functions of rows, so the CLI, the API and the benchmark share them; docs/analysis.md
says what each figure means.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import NormalDist, fmean, stdev

from openskill.models import PlackettLuce

#: the two-sided 95% quantile of the normal distribution
Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True, slots=True)
class HandResult:
    """One decided hand: points per player and, when analysed, each deal's expected points."""

    game: str
    hand: int
    points: Mapping[str, float]
    expected: Mapping[str, float] | None = None


@dataclass(frozen=True, slots=True)
class Rating:
    player: str
    mu: float
    sigma: float
    hands: int
    games: int

    @property
    def ordinal(self) -> float:
        """The conservative rating, mu − 3 sigma (the leaderboard's order)."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    low: float
    high: float
    n: int


def _ranks(scores: Mapping[str, float]) -> tuple[list[str], list[int]]:
    """Players and their ranks (1 best) by ascending score; equal scores share a rank."""
    players = sorted(scores, key=lambda p: (scores[p], p))
    ranks: list[int] = []
    for i, player in enumerate(players):
        if i and math.isclose(scores[player], scores[players[i - 1]]):
            ranks.append(ranks[-1])
        else:
            ranks.append(i + 1)
    return players, ranks


def rate(results: Iterable[HandResult], *, adjusted: bool = False,
         history: dict[str, list[tuple[str, int, float, float]]] | None = None) -> dict[str, Rating]:
    """Plackett–Luce ratings from hands in the order given (openskill's defaults: mu 25,
    sigma 25/3). `adjusted`: rank each hand by points − expected points (hands without
    deal values are skipped then). `history`, when given, receives each player's (game,
    hand, mu, sigma) after every hand they were rated on."""
    model = PlackettLuce()
    current: dict[str, object] = {}
    hands: dict[str, int] = {}
    games: dict[str, set[str]] = {}
    for result in results:
        if adjusted:
            if result.expected is None:
                continue
            expected = result.expected
            scores = {p: v - expected[p] for p, v in result.points.items() if p in expected}
        else:
            scores = dict(result.points)
        if len(scores) < 2:
            continue
        players, ranks = _ranks(scores)
        teams = [[current.get(p) or model.rating(name=p)] for p in players]
        rated = model.rate(teams, ranks=ranks)  # type: ignore[arg-type]
        for player, team in zip(players, rated, strict=True):
            current[player] = team[0]
            if history is not None:
                mu, sigma = float(team[0].mu), float(team[0].sigma)
                history.setdefault(player, []).append((result.game, result.hand, mu, sigma))
            hands[player] = hands.get(player, 0) + 1
            games.setdefault(player, set()).add(result.game)
    out: dict[str, Rating] = {}
    for player, rating in current.items():
        mu, sigma = float(rating.mu), float(rating.sigma)  # type: ignore[attr-defined]
        out[player] = Rating(player, mu, sigma, hands[player], len(games[player]))
    return out


def mean_interval(values: list[float]) -> Interval | None:
    """The mean with a normal 95% interval (None without values; a single value has no
    spread, so its interval is the value itself)."""
    if not values:
        return None
    mean = fmean(values)
    if len(values) < 2:
        return Interval(mean, mean, mean, 1)
    half = Z95 * stdev(values) / math.sqrt(len(values))
    return Interval(mean, mean - half, mean + half, len(values))


def wilson(successes: int, n: int) -> Interval | None:
    """A proportion with its Wilson 95% interval."""
    if n == 0:
        return None
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), n)


@dataclass(frozen=True, slots=True)
class Accuracy:
    player: str
    mean_loss: Interval
    mistakes: Interval


def accuracy(decisions: Iterable[tuple[str, float, bool]]) -> dict[str, Accuracy]:
    """Per player, from (player, loss, clear mistake) per decision."""
    losses: dict[str, list[float]] = {}
    mistakes: dict[str, int] = {}
    for player, loss, mistake in decisions:
        losses.setdefault(player, []).append(loss)
        mistakes[player] = mistakes.get(player, 0) + int(mistake)
    out: dict[str, Accuracy] = {}
    for player, values in losses.items():
        mean = mean_interval(values)
        share = wilson(mistakes[player], len(values))
        if mean is not None and share is not None:
            out[player] = Accuracy(player, mean, share)
    return out


def luck(rows: Iterable[tuple[str, float]]) -> dict[str, Interval]:
    """Per player, the mean luck per hand (from (player, luck) rows) with its interval."""
    values: dict[str, list[float]] = {}
    for player, value in rows:
        values.setdefault(player, []).append(value)
    return {p: i for p, v in values.items() if (i := mean_interval(v)) is not None}
