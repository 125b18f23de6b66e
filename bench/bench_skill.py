"""Skill, luck and move quality against known truth (issue 32): prints figures, asserts nothing.

Four bots of known, different strength play bazito hands through the core (`GameRun`, the
one machine; every bot move is a legal move the core lists, and a line the core flags
stops the bench): `rollout` (at each decision, the move with the best mean of K greedy
rollouts per move), `greedy` and `greedy-2` (the rollout policy itself,
`GameRun.policy_move`), `random` (a uniformly random legal move). Known luck: every deal
is played four times with the bots rotated over the seats, so each bot plays each hand.

It prints:
- each bot's mean points per hand over all hands (the truth the ratings should find);
- the truth: the pairs of bots whose points differ significantly over the whole pool
  (paired by hand), and how many hands the Plackett–Luce rating needs to order every such
  pair rightly with probability >= 0.9: hands drawn at random from the pool, rated plain
  and with the deal adjustment; and whole rotation blocks (the same deal, seats rotated),
  rated plain;
- the accuracy measure (mean expected loss per decision, clear-mistake share) per bot on a
  subset of hands, its ranking, and its agreement with the rating's ranking;
- rollouts per second per core (flat and ismcts), the time to analyse one hand;
- whether information-set MCTS pays ("search"): an ismcts bot, the flat rollout bot and
  greedy twice over the same deals, seats rotated, both searchers spending the same
  playouts a decision: mean points per hand with intervals, paired differences, the time
  per decision, and how often the two searches name the same best move (against flat's
  agreement with itself under another seed, the noise floor);
- a 1,000-game player history, measured ("history"): simulated, ingested, every decision
  and deal analysed and stored as `stats ratings` does;
- with --sample, the whole bundled sample (data/sample: 380 games of the three rulesets).

    .venv/bin/python bench/bench_skill.py                      # every part but the sample
    .venv/bin/python bench/bench_skill.py --parts ratings --deals 60 --resamples 60
    .venv/bin/python bench/bench_skill.py --parts search --search-rollouts 300 --search-deals 100
    .venv/bin/python bench/bench_skill.py --parts history --history-rollouts 100
    .venv/bin/python bench/bench_skill.py --parts throughput --sample
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from engine import _core
from engine.analysis import Search, analyse_lines
from engine.skill import HandResult, accuracy, mean_interval, rate, wilson

BOTS = ("rollout", "greedy", "greedy-2", "random")
#: the searches compared: information-set MCTS, flat Monte Carlo (the rollout bot), greedy twice
SEARCH_BOTS = ("ismcts", "rollout", "greedy", "greedy-2")
RANKS = "A23456789TJQK"
SUITS = "CDHS"
#: bazito never turns up a J, 2, 7, 8, T or A as the starter
FORBIDDEN_STARTERS = frozenset("J278TA")
HAND_LINE_LIMIT = 800
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


@dataclass
class PlayedHand:
    deal: int
    rotation: int
    game: str
    lines: list[dict[str, Any]]
    points: dict[str, float]
    expected: dict[str, float]  # the deal's expected points per bot (by its seat)


class IllegalBotMove(RuntimeError):
    """A bot's move the core flagged: the bench is wrong, not the figures."""


def _deck(seed: int) -> list[str]:
    deck = [r + s for s in SUITS for r in RANKS]
    random.Random(seed).shuffle(deck)
    return deck  # top LAST


def _deal_line(game: str, seating: Sequence[str], deal_seed: int) -> tuple[dict[str, Any], list[str]]:
    deck = _deck(deal_seed)
    hands = {p: [deck.pop() for _ in range(7)] for p in seating}
    at = len(deck) - 1
    while deck[at][0] in FORBIDDEN_STARTERS:
        at -= 1
    starter = deck.pop(at)
    line = {"game": game, "seq": 1, "type": "deal", "hand": 1, "dealer": seating[-1],
            "hands": hands, "starter": starter}
    return line, deck


class _Table:
    """One bazito hand played by bots through a GameRun, its lines kept."""

    def __init__(self, game: str, seating: Sequence[str], deal_seed: int,
                 planted: dict[str, Any] | None = None) -> None:
        self.game = game
        self.run = _core.GameRun(game)
        self.lines: list[dict[str, Any]] = []
        self.seq = 0
        self.feed({"game": game, "seq": 0, "type": "game", "format": "haftkhabis/1",
                   "ruleset": "bazito", "players": list(seating)})
        deal, self.stock = _deal_line(game, seating, deal_seed)
        if planted is not None:
            deal = {**deal, **planted}
        self.feed(deal)

    def feed(self, line: dict[str, Any]) -> None:
        line["seq"] = self.seq
        self.seq += 1
        found = self.run.feed(orjson.dumps(line))
        if found:
            raise IllegalBotMove(f"{self.game} seq {line['seq']}: {found[0]['code']}: {found[0]['message']}")
        self.lines.append(line)

    def make(self, player: str, move: Any, owed: int | None, rng: random.Random) -> None:
        base = {"game": self.game, "player": player}
        if move["kind"] == "play":
            line = {**base, "type": "play", "card": move["card"]}
            if move["suit"]:
                line["suit"] = move["suit"]
            if move["target"]:
                line["target"] = move["target"]
            self.feed(line)
        elif move["kind"] == "pass":
            self.feed({**base, "type": "pass"})
        else:
            if not self.stock:
                state = self.run.snapshot()
                under = list(state["pile"][:-1]) if state else []
                rng.shuffle(under)
                self.stock = under
                self.feed({"game": self.game, "type": "reshuffle"})
            take = min(owed or 1, len(self.stock))
            self.feed({**base, "type": "draw", "cards": [self.stock.pop() for _ in range(take)]})


#: seconds per searched decision, by bot kind (rollout, ismcts)
DECISION_SECONDS: dict[str, list[float]] = {}


def _choose(table: _Table, kind: str, rng: random.Random, rollouts: int, seed: int) -> Any:
    run = table.run
    if kind == "random":
        return rng.choice(run.legal_moves())
    if kind in ("rollout", "ismcts"):
        t0 = time.perf_counter()
        found = run.analyse(rollouts=rollouts, seed=seed, threads=1,
                            search="ismcts" if kind == "ismcts" else "flat")
        if found is not None:
            DECISION_SECONDS.setdefault(kind, []).append(time.perf_counter() - t0)
            return found["moves"][found["best"]]
    return run.policy_move()


def play_hand(deal: int, rotation: int, rollouts: int, deal_values: dict[int, list[float]] | None,
              deal_rollouts: int, lineup: Sequence[str] = BOTS) -> PlayedHand:
    """`lineup` rotated `rotation` seats over deal `deal`; with `deal_values`, every seat's
    deal value (kept per deal: the same for every rotation)."""
    seating = [lineup[(seat + rotation) % len(lineup)] for seat in range(len(lineup))]
    game = f"bench-{deal}-{rotation}"
    table = _Table(game, seating, 1_000 + deal)
    if deal_values is not None and deal not in deal_values:
        deal_values[deal] = []
        for player in seating:
            value = table.run.position_value(player, rollouts=deal_rollouts, seed=deal, threads=0)
            deal_values[deal].append(value["mean"] if value else 0.0)
    rng = random.Random(deal * 10 + rotation)
    while len(table.lines) < HAND_LINE_LIMIT:
        options = table.run.options()
        if options is None:
            break
        player = options["player"]
        move = _choose(table, player.split("-")[0], rng, rollouts, deal * 7919 + table.seq)
        if move is None:
            break
        table.make(player, move, options["draw"], rng)
    outcomes = table.run.decided_outcomes()
    scores = outcomes[0]["scores"] if outcomes else None
    if not scores:
        raise IllegalBotMove(f"{game}: the hand was not decided in {HAND_LINE_LIMIT} lines")
    expected = {} if deal_values is None else {seating[s]: deal_values[deal][s] for s in range(len(seating))}
    return PlayedHand(deal, rotation, game, table.lines, {p: float(v) for p, v in scores.items()}, expected)


def true_pairs(pool: Sequence[PlayedHand]) -> list[tuple[str, str, float, float]]:
    """The truth the ratings should find: (better, worse, mean difference, its se) for every
    pair of bots whose points differ significantly (paired by hand, 1.96 se) over the whole
    pool."""
    out = []
    for i, a in enumerate(BOTS):
        for b in BOTS[i + 1:]:
            diffs = [h.points[a] - h.points[b] for h in pool]
            mean, se = statistics.fmean(diffs), statistics.stdev(diffs) / len(diffs) ** 0.5
            if abs(mean) > 1.96 * se:
                out.append((a, b, -mean, se) if mean < 0 else (b, a, mean, se))
    return out


def _correct(ratings: dict[str, Any], pairs: Sequence[tuple[str, str, float, float]]) -> bool:
    return all(b in ratings and w in ratings and ratings[b].mu > ratings[w].mu for b, w, _, _ in pairs)


def _results(hands: Sequence[PlayedHand]) -> list[HandResult]:
    return [HandResult(h.game, 1, h.points, h.expected) for h in hands]


def hands_needed(pairs: Sequence[tuple[str, str, float, float]], sizes: Sequence[int], resamples: int,
                 draw: Callable[[random.Random, int], list[PlayedHand]], adjusted: bool) -> dict[int, float]:
    rng = random.Random(4)
    out: dict[int, float] = {}
    for n in sizes:
        ok = sum(_correct(rate(_results(draw(rng, n)), adjusted=adjusted), pairs) for _ in range(resamples))
        out[n] = ok / resamples
    return out


def _first_reaching(probabilities: dict[int, float], level: float = 0.9) -> str:
    for n, p in sorted(probabilities.items()):
        if p >= level:
            return str(n)
    return f"> {max(probabilities)}"


def _kendall(a: Sequence[str], b: Sequence[str]) -> float:
    pos = {p: i for i, p in enumerate(b)}
    pairs = [(x, y) for i, x in enumerate(a) for y in a[i + 1:]]
    agree = sum(1 if pos[x] < pos[y] else -1 for x, y in pairs)
    return agree / len(pairs)


def _print_means(pool: Sequence[PlayedHand], bots: Sequence[str]) -> None:
    for bot in bots:
        m = mean_interval([h.points[bot] for h in pool])
        assert m is not None
        print(f"  {bot:9s} {m.estimate:6.2f}  [{m.low:6.2f}, {m.high:6.2f}]  (n={m.n})")


def ratings_part(args: argparse.Namespace, cores: int) -> None:
    """The bots of known strength: truth, ratings (plain, deal-adjusted, rotation blocks),
    accuracy and its agreement with the rating."""
    started = time.perf_counter()
    deal_values: dict[int, list[float]] = {}
    pool = [play_hand(d, r, args.bot_rollouts, deal_values, args.deal_rollouts)
            for d in range(args.deals) for r in range(len(BOTS))]
    print(f"\n{len(pool)} hands played ({args.deals} deals x 4 rotations) in "
          f"{time.perf_counter() - started:.1f} s; rollout bot {args.bot_rollouts} rollouts a move, "
          f"deal values {args.deal_rollouts} rollouts")
    print("truth: mean points per hand (lower is better), 95% interval")
    _print_means(pool, BOTS)
    full_plain, full_adjusted = rate(_results(pool)), rate(_results(pool), adjusted=True)
    print("ratings on every hand (mu ± sigma): plain / deal-adjusted")
    for bot in BOTS:
        p, q = full_plain[bot], full_adjusted[bot]
        print(f"  {bot:9s} {p.mu:6.2f} ± {p.sigma:4.2f}   {q.mu:6.2f} ± {q.sigma:4.2f}")
    luck_check = statistics.correlation([h.expected[b] for h in pool for b in BOTS],
                                        [h.points[b] for h in pool for b in BOTS])
    print(f"deal value vs points scored: correlation {luck_check:.2f} (how much the deal explains)")

    started = time.perf_counter()
    sizes = [s for s in (4, 8, 16, 32, 64, 128, 256, 512, 1024) if s <= len(pool)]
    blocks = {d: [h for h in pool if h.deal == d] for d in range(args.deals)}

    def any_hands(rng: random.Random, n: int) -> list[PlayedHand]:
        return [rng.choice(pool) for _ in range(n)]

    def rotated(rng: random.Random, n: int) -> list[PlayedHand]:
        chosen = [rng.randrange(args.deals) for _ in range(max(1, n // len(BOTS)))]
        return [h for d in chosen for h in blocks[d]]

    pairs = true_pairs(pool)
    print("\nthe truth (pairs whose points differ significantly over the pool, paired by hand): " + (
        "; ".join(f"{b} < {w} by {d:.2f} ± {se:.2f} points" for b, w, d, se in pairs) or "none"))
    plain = hands_needed(pairs, sizes, args.resamples, any_hands, adjusted=False)
    adjusted = hands_needed(pairs, sizes, args.resamples, any_hands, adjusted=True)
    blocked = hands_needed(pairs, sizes, args.resamples, rotated, adjusted=False)
    print(f"P(the rating orders every such pair rightly), {args.resamples} resamples "
          f"({time.perf_counter() - started:.1f} s)")
    print("  hands   random hands, plain   random hands, deal-adjusted   rotation blocks, plain")
    for n in sizes:
        print(f"  {n:5d}   {plain[n]:19.2f}   {adjusted[n]:27.2f}   {blocked[n]:22.2f}")
    print(f"  hands needed for P >= 0.9: plain {_first_reaching(plain)}, deal-adjusted "
          f"{_first_reaching(adjusted)}, rotation blocks {_first_reaching(blocked)}")

    started = time.perf_counter()
    rows: list[tuple[str, float, bool]] = []
    decisions = 0
    for hand in pool[:args.accuracy_hands]:
        result = analyse_lines(hand.game, hand.lines, rollouts=args.accuracy_rollouts, seed=1, deals=False)
        for d in result.decisions:
            if d.loss is not None:
                decisions += 1
                rows.append((d.player, max(d.loss, 0.0), d.mistake))
    took = time.perf_counter() - started
    acc = accuracy(rows)
    print(f"\naccuracy on {args.accuracy_hands} hands ({decisions} decisions, {args.accuracy_rollouts} "
          f"rollouts a move, {took:.1f} s): mean loss per decision [95%], clear-mistake share [95%]")
    for bot in BOTS:
        a = acc[bot]
        print(f"  {bot:9s} {a.mean_loss.estimate:5.2f} [{a.mean_loss.low:5.2f}, {a.mean_loss.high:5.2f}]"
              f"  {a.mistakes.estimate:5.3f} [{a.mistakes.low:5.3f}, {a.mistakes.high:5.3f}]  n={a.mean_loss.n}")
    by_accuracy = sorted(BOTS, key=lambda b: acc[b].mean_loss.estimate)
    by_rating = sorted(BOTS, key=lambda b: -full_plain[b].mu)
    print(f"  ranking by accuracy: {' > '.join(by_accuracy)}; by rating: {' > '.join(by_rating)}; "
          f"Kendall tau {_kendall(by_accuracy, by_rating):.2f}")



def throughput_part(args: argparse.Namespace, cores: int) -> None:
    """Rollouts per second (flat and ismcts) on engine/core's example decision; one hand."""
    print("\nthroughput")
    # the decision of engine/core's examples/analyse.rs: four Js, a 2 and two hearts on K♥
    planted = {"hands": {"rollout": ["JC", "JD", "JH", "JS", "2H", "5H", "9H"],
                         "greedy": ["3C", "4C", "5C", "6C", "QC", "KC", "AC"],
                         "greedy-2": ["3D", "4D", "5D", "6D", "QD", "KD", "AD"],
                         "random": ["3S", "4S", "5S", "6S", "QS", "KS", "AS"]}, "starter": "KH"}
    table = _Table("bench-speed", list(BOTS), 77, planted)
    found = None
    for threads in (1, 0):
        t0 = time.perf_counter()
        found = table.run.analyse(rollouts=2000, seed=1, threads=threads)
        dt = time.perf_counter() - t0
        assert found is not None
        playouts = len(found["moves"]) * found["rollouts"]
        label = "1 thread" if threads == 1 else f"{cores} threads"
        print(f"  one decision, {len(found['moves'])} moves x 2000 rollouts, {label}: {dt:.3f} s = "
              f"{playouts / dt:,.0f} rollouts/s ({playouts / dt / (1 if threads == 1 else cores):,.0f} per core)")
        if threads == 1:
            t0 = time.perf_counter()
            searched = table.run.analyse(rollouts=2000, seed=1, threads=1, search="ismcts")
            dt = time.perf_counter() - t0
            assert searched is not None
            print(f"  the same decision by ismcts (the same {searched['rollouts']} playouts, 1 thread): "
                  f"{dt:.3f} s = {searched['rollouts'] / dt:,.0f} playouts/s")
    hand = play_hand(0, 0, args.bot_rollouts, None, 0)
    t0 = time.perf_counter()
    one = analyse_lines(hand.game, hand.lines, rollouts=500, seed=1)
    per_hand = time.perf_counter() - t0
    print(f"  one hand ({len(one.decisions)} decisions + 4 deal values, 500 rollouts a move): {per_hand:.2f} s")


def _paired(pool: Sequence[PlayedHand], a: str, b: str, tests: int) -> str:
    """a's points minus b's, paired by hand, with its 95% interval; significant at 5%
    alone and after a Bonferroni correction over `tests` comparisons."""
    diffs = [h.points[a] - h.points[b] for h in pool]
    mean, se = statistics.fmean(diffs), statistics.stdev(diffs) / len(diffs) ** 0.5
    corrected = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * tests))
    verdict = ("significant, also after Bonferroni" if abs(mean) > corrected * se else
               "significant alone, not after Bonferroni" if abs(mean) > 1.96 * se else "not significant")
    return f"{a} - {b}: {mean:+.2f} ± {1.96 * se:.2f} points (95%; {verdict} over {tests} comparisons)"


def search_part(args: argparse.Namespace) -> None:
    """Does information-set MCTS pay? ismcts, the flat rollout bot and greedy (twice) over
    the same deals, seats rotated, both searchers with the same playouts a decision; then
    how often the two searches name the same best move."""
    DECISION_SECONDS.clear()
    started = time.perf_counter()
    pool = [play_hand(d, r, args.search_rollouts, None, 0, SEARCH_BOTS)
            for d in range(args.search_deals) for r in range(len(SEARCH_BOTS))]
    print(f"\nismcts vs flat vs greedy: {len(pool)} hands ({args.search_deals} deals x 4 rotations) in "
          f"{time.perf_counter() - started:.1f} s; {args.search_rollouts} playouts a legal move for both "
          f"searchers, 1 thread each; load average now {os.getloadavg()[0]:.2f}")
    print("  mean points per hand (lower is better), 95% interval")
    _print_means(pool, SEARCH_BOTS)
    comparisons = (("ismcts", "rollout"), ("ismcts", "greedy"), ("rollout", "greedy"), ("greedy", "greedy-2"))
    for a, b in comparisons:
        print(f"  paired by hand: {_paired(pool, a, b, len(comparisons))}")
    for kind in ("ismcts", "rollout"):
        times = DECISION_SECONDS.get(kind, [])
        if times:
            print(f"  time per decision, {kind}: mean {statistics.fmean(times) * 1000:.1f} ms, median "
                  f"{statistics.median(times) * 1000:.1f} ms, 90th percentile "
                  f"{sorted(times)[int(0.9 * len(times))] * 1000:.1f} ms ({len(times)} decisions)")
    started = time.perf_counter()
    same = baseline = n = 0
    for hand in pool[:args.agreement_hands]:
        kwargs: dict[str, Any] = {"rollouts": args.search_rollouts, "deals": False}
        flat = analyse_lines(hand.game, hand.lines, seed=1, **kwargs)
        again = {d.seq: d for d in analyse_lines(hand.game, hand.lines, seed=2, **kwargs).decisions}
        tree = {d.seq: d for d in analyse_lines(hand.game, hand.lines, seed=1, search=Search.ISMCTS,
                                                **kwargs).decisions}
        for d in flat.decisions:
            if d.seq in tree and d.seq in again:
                n += 1
                same += d.best_move.notation == tree[d.seq].best_move.notation
                baseline += d.best_move.notation == again[d.seq].best_move.notation
    agree, noise = wilson(same, n), wilson(baseline, n)
    if agree is not None and noise is not None:
        print(f"  best-move agreement over {n} decisions of {args.agreement_hands} hands "
              f"({time.perf_counter() - started:.1f} s): ismcts vs flat {agree.estimate:.2f} "
              f"[{agree.low:.2f}, {agree.high:.2f}]; flat vs flat with another seed (the noise floor) "
              f"{noise.estimate:.2f} [{noise.low:.2f}, {noise.high:.2f}] (Wilson 95%)")


def history_part(args: argparse.Namespace) -> None:
    """A 1,000-game player history, measured: the simulator makes the games (zeynep at
    every table, bazito, matches as the simulator draws them), they are ingested into a
    folder warehouse, and `ingest.analyses.refresh` (what `stats ratings` runs) analyses
    and stores every decision and deal of every game; then a second refresh (all stored)
    and the ratings read."""
    import tempfile

    from engine.simulate import SimConfig, write_simulation
    from ingest import analyses, read
    from ingest.pipeline import ingest

    with tempfile.TemporaryDirectory(prefix="bench-skill-") as work:
        log = Path(work) / "history.jsonl"
        config = SimConfig("bazito", games=args.history_games, seed=32, players=(4, 4),
                           names=("zeynep", "sara", "omid", "lale"))
        with log.open("wb") as out:
            summary = write_simulation(config, out)
        ingest([str(log)], str(Path(work) / "wh"), workers=1)
        reader = read.connect(Path(work) / "wh")
        try:
            print(f"\na {summary.games}-game history of zeynep ({summary.hands} hands, {summary.lines} lines), "
                  f"{args.history_rollouts} rollouts a move, flat; load average at start "
                  f"{os.getloadavg()[0]:.2f}")
            t0 = time.perf_counter()
            counts = analyses.refresh(reader, rollouts=args.history_rollouts, seed=0)
            took = time.perf_counter() - t0
            table = analyses.stored(reader)
            rows = table.to_pylist()
            decisions = sum(r["kind"] == "decision" for r in rows)
            mine = sum(r["kind"] == "decision" and r["player"] == "zeynep" for r in rows)
            print(f"  analysed and stored: {counts.analysed} games, {decisions} decisions ({mine} zeynep's), "
                  f"{sum(r['kind'] == 'deal' for r in rows)} deal values in {took:.1f} s "
                  f"({took / max(counts.analysed, 1) * 1000:.0f} ms a game); load average at end "
                  f"{os.getloadavg()[0]:.2f}")
            t0 = time.perf_counter()
            again = analyses.refresh(reader, rollouts=args.history_rollouts, seed=0)
            ratings = analyses.ratings_rows(analyses.stored(reader))
            print(f"  again, all stored ({again.kept} kept): refresh and ratings in {time.perf_counter() - t0:.1f} s; "
                  f"zeynep: {next(r for r in ratings if r['player'] == 'zeynep')}")
        finally:
            reader.close()


def sample_part(args: argparse.Namespace) -> None:
    """Every game of the bundled sample, analysed."""
    from engine.reader import read_lines

    games: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(SAMPLE.glob("*.jsonl*")):
        if path.name.endswith(".json"):
            continue
        for item in read_lines(str(path)):
            if not isinstance(item, tuple):
                continue
            try:
                obj = orjson.loads(item[1])
            except orjson.JSONDecodeError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("game"), str) and isinstance(obj.get("seq"), int):
                games.setdefault(obj["game"], []).append(obj)
    t0 = time.perf_counter()
    analysed = 0
    for game, lines in games.items():
        lines.sort(key=lambda o: o["seq"])
        try:
            analyse_lines(game, lines, rollouts=args.sample_rollouts, seed=1)
            analysed += 1
        except ValueError:
            pass
    print(f"  the bundled sample: {analysed} of {len(games)} games at {args.sample_rollouts} rollouts a move: "
          f"{time.perf_counter() - t0:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=120, help="deals, each played in 4 rotations")
    parser.add_argument("--bot-rollouts", type=int, default=150, help="the rollout bot's rollouts a move")
    parser.add_argument("--deal-rollouts", type=int, default=300, help="rollouts for a deal's value")
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--accuracy-hands", type=int, default=40)
    parser.add_argument("--accuracy-rollouts", type=int, default=100)
    parser.add_argument("--parts", default="ratings,throughput,search,history",
                        help="comma-separated: ratings, throughput, search, history, sample")
    parser.add_argument("--sample", action="store_true", help="also time the whole bundled sample")
    parser.add_argument("--search-deals", type=int, default=250,
                        help="deals for ismcts vs flat vs greedy, each played in 4 rotations")
    parser.add_argument("--search-rollouts", type=int, default=100,
                        help="playouts a legal move for both searching bots (ismcts spends them in a tree)")
    parser.add_argument("--agreement-hands", type=int, default=40,
                        help="hands whose decisions both searches value (best-move agreement)")
    parser.add_argument("--history-games", type=int, default=1000)
    parser.add_argument("--history-rollouts", type=int, default=20)
    parser.add_argument("--sample-rollouts", type=int, default=20)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {cores} cores; policy {_core.ANALYSIS_POLICY}")

    parts = {p.strip() for p in args.parts.split(",") if p.strip()} | ({"sample"} if args.sample else set())
    unknown = parts - {"ratings", "throughput", "search", "history", "sample"}
    if unknown:
        parser.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    if "ratings" in parts:
        ratings_part(args, cores)
    if "throughput" in parts:
        throughput_part(args, cores)
    if "search" in parts:
        search_part(args)
    if "history" in parts:
        history_part(args)
    if "sample" in parts:
        sample_part(args)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
