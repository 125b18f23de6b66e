"""The pair audit on known truth (issue 31): prints the case queue's false-positive rate at
honest tables, its power against a colluding pair, and the run time of the pair scores;
asserts nothing.

Games are simulated whole (bazito, 4 seats drawn from a club of 6 names, 3 hands a game,
fault-free) and ingested into a warehouse of their own under bench/out/, once per
collusion strength (`SimConfig(colluders=("sara", "omid"), collusion=p)`: with
probability p at each chance the pair spare each other 2s and 7 totals, declare the
other's suit with a J and hold back a 7 or a skip when the other is next on one card);
the audit (`ingest.pairs`) then runs on disjoint sets of games, so repetitions are
independent.

- fpr: honest pools (collusion 0), audits of `--fpr-games` games each; a false positive
  is a queue holding any pair; per audit the smallest family-wise p, so one pass gives the
  rate at 0.01, 0.05, 0.1 and 0.5 with its Clopper–Pearson interval, beside the size R
  relabellings can attain and the binomial tail of the count at that size.
- seating: co-seating's power (`SimConfig.seeking`: the pair seek each other's tables) by
  strength and games, on seatings drawn by the simulator's seat function without playing
  (`simulate_seatings`), and the same rule's false-positive rate on honest seatings.
- power: per strength and audit size (games), the share of audits whose queue holds the
  pair; the fewest games at which it reaches 0.9.
- time: the pair scores (`audit_pairs`, every signal, `--permutations` relabellings) on
  the decisions of `--time-hands` hands, made by tiling an ingested pool (each copy its own
  games and its own club of players), and the warehouse read at the pool's scale.

    .venv/bin/python bench/bench_pairs.py
    .venv/bin/python bench/bench_pairs.py --skip power time --fpr-pools 4
    .venv/bin/python bench/bench_pairs.py --skip power fpr time      # co-seating only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from scipy import stats

from engine.simulate import SimConfig, simulate_seatings, write_simulation
from ingest.pairs import PairData, PairRows, audit_pairs, co_seating, read_pair_rows

OUT = Path(__file__).parent / "out"
NAMES = ("sara", "omid", "lale", "reza", "neda", "kian")
PAIR = ("sara", "omid")
HANDS = 3


def pool(collusion: float, games: int, seed: int, seeking: float = 0.0) -> PairRows:
    """The pair audit's rows of a simulated and ingested pool (cached under bench/out/);
    `seeking`: the pair also seek each other's tables (`SimConfig.seeking`)."""
    from ingest.pipeline import ingest
    from ingest.read import connect

    folder = OUT / (f"pairs6-{collusion}-{games}-{seed}" + (f"-seek{seeking}" if seeking else ""))
    if not (folder / "wh").exists():
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "games.jsonl"
        with log.open("wb") as out:
            write_simulation(SimConfig("bazito", games=games, seed=seed, match={"hands": HANDS}, names=NAMES,
                                       colluders=PAIR, collusion=collusion, seeking=seeking), out)
        ingest([str(log)], str(folder / "wh"), workers=1)
    reader = connect(folder / "wh")
    try:
        return read_pair_rows(reader)
    finally:
        reader.close()


def chunks(rows: PairRows, size: int, limit: int | None = None) -> list[set[str]]:
    games = sorted(g for g, _ in rows.games)
    out = [set(games[i:i + size]) for i in range(0, len(games) - size + 1, size)]
    return out[:limit] if limit else out


def interval(k: int, n: int) -> str:
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k}/{n} = {k / n:.2%} [{ci.low:.2%}, {ci.high:.2%}]"


def fpr(args: argparse.Namespace, record: dict[str, object]) -> None:
    """Honest pools cut into disjoint audits; per audit the smallest (family-wise) p-value of
    any pair, so that one pass gives the rate at every level."""
    levels = sorted({args.level, 0.01, 0.05, 0.1, 0.5})
    smallest: list[float] = []
    pair_tests = 0
    took = 0.0
    seeds = args.fpr_seeds or [args.seed + 1000 + p for p in range(args.fpr_pools)]
    for seed in seeds:
        rows = pool(0.0, args.pool, seed)
        for i, games in enumerate(chunks(rows, args.fpr_games)):
            started = time.perf_counter()
            report = audit_pairs(rows.data(games), args.level, args.permutations, seed=i)
            took += time.perf_counter() - started
            smallest.append(min((pair.p_value for pair in report.pairs), default=1.0))
            pair_tests += report.pairs_scored
    audits = len(smallest)
    print(f"\n## False-positive rate: honest tables, audits of {args.fpr_games} games ({args.fpr_games * HANDS} "
          f"hands), {args.permutations} relabellings, {audits} audits from {len(seeds)} pools of {args.pool} "
          f"({pair_tests:,} pairs scored in all, {pair_tests / max(audits, 1):.1f} an audit); load average "
          f"{os.getloadavg()[0]:.2f}")
    print("| level | attainable size (R relabellings: ⌊(R + 1)α⌋ / (R + 1)) | audits with any case "
          "| rate [95 % interval, Clopper–Pearson] | P(this many or more) at the attainable size |")
    print("|---:|---:|---:|---|---:|")
    flagged: dict[str, int] = {}
    for level in levels:
        size = math.floor((args.permutations + 1) * level + 1e-9) / (args.permutations + 1)
        k = sum(p <= level + 1e-12 for p in smallest)
        flagged[str(level)] = k
        tail = stats.binom.sf(k - 1, audits, size) if k else 1.0
        print(f"| {level:g} | {size:.4%} | {k}/{audits} | {interval(k, audits)} | {tail:.3f} |")
    print(f"({took / max(audits, 1):.2f} s an audit)")
    record["fpr"] = {"games": args.fpr_games, "seeds": seeds, "audits": audits, "pair_tests": pair_tests,
                     "flagged": flagged,
                     "smallest_p": smallest, "permutations": args.permutations}


def power(args: argparse.Namespace, record: dict[str, object]) -> None:
    seeking = f", the pair seeking each other's tables with probability {args.power_seeking:g}" \
        if args.power_seeking else ""
    print(f"\n## Power at level {args.level}: audits whose queue holds the pair (and any other pair){seeking}")
    print("| collusion p | games an audit | hands | audits | pair in the queue | any other pair | s an audit |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    table = []
    needed: dict[float, int | None] = {}
    for strength in args.strengths:
        rows = pool(strength, args.pool, args.seed, args.power_seeking)
        needed[strength] = None
        for size in args.games:
            sets = chunks(rows, size, args.power_reps)
            if len(sets) < 5:
                continue
            started = time.perf_counter()
            found = other = 0
            for i, games in enumerate(sets):
                report = audit_pairs(rows.data(games), args.level, args.permutations, seed=i)
                pairs = {frozenset((c.a, c.b)) for c in report.cases}
                found += frozenset(PAIR) in pairs
                other += bool(pairs - {frozenset(PAIR)})
            took = (time.perf_counter() - started) / len(sets)
            n = len(sets)
            ci = stats.binomtest(found, n).proportion_ci(0.95, method="exact")
            print(f"| {strength:g} | {size} | {size * HANDS} | {n} | {found}/{n} [{ci.low:.0%}, {ci.high:.0%}] "
                  f"| {other}/{n} | {took:.2f} |", flush=True)
            table.append({"collusion": strength, "games": size, "audits": n, "detected": found,
                          "other_cases": other, "seconds": took})
            if needed[strength] is None and found >= 0.9 * n:
                needed[strength] = size
                if not args.full:
                    break
    print("\n| collusion p | fewest games (of the grid) with the pair in the queue ≥ 90 % | hands |")
    print("|---:|---:|---:|")
    for strength, size in needed.items():
        print(f"| {strength:g} | {size if size else f'> {max(args.games)}'} | {size * HANDS if size else ''} |")
    record["power"] = table


def seatings(seeking: float, games: int, seed: int) -> PairData:
    """The games of a club's seatings alone (`simulate_seatings`: the simulator's own seat
    drawing, nothing played), as the pair audit's games."""
    data = PairData()
    config = SimConfig("bazito", games=games, seed=seed, names=NAMES, colluders=PAIR, seeking=seeking)
    for g, players in enumerate(simulate_seatings(config)):
        data.add_game(f"s{seed}-{g}", players)
    return data


def seating(args: argparse.Namespace, record: dict[str, object]) -> None:
    """Co-seating's power: the planted pair's co-seating z at or above the one-sided
    threshold Bonferroni-corrected over the pairs who sat together (family-wise at the
    level), by seeking strength and games; the same rule's false-positive rate on honest
    seatings (any pair over the threshold)."""
    print(f"\n## Co-seating at level {args.level} (one-sided z, Bonferroni over the pairs who sat together): "
          f"{args.seating_reps} audits a point, each its own seed")
    print("| seeking | games an audit | pair together (mean) | expected from activity (mean) | audits "
          "| pair over the threshold [95 %] | any other pair |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    table = []
    needed: dict[float, int | None] = {}
    false_positives = honest_audits = 0
    for strength in [0.0, *args.seeking]:
        needed[strength] = None
        for size in args.seating_games:
            found = other = anyone = 0
            together = expected = 0.0
            for rep in range(args.seating_reps):
                signal = co_seating(seatings(strength, size, args.seed * 100_000 + size * 1_000 + rep))
                threshold = stats.norm.isf(args.level / max(len(signal.z), 1))
                over = {frozenset(p) for p, z in zip(zip(signal.a, signal.b, strict=True), signal.z, strict=True)
                        if z >= threshold}
                planted = next(i for i, p in enumerate(zip(signal.a, signal.b, strict=True)) if set(p) == set(PAIR))
                together += float(signal.together[planted])
                expected += float(signal.expected[planted])
                found += frozenset(PAIR) in over
                other += bool(over - {frozenset(PAIR)})
                anyone += bool(over)
            n = args.seating_reps
            ci = stats.binomtest(found, n).proportion_ci(0.95, method="exact")
            print(f"| {strength:g} | {size} | {together / n:.1f} | {expected / n:.1f} | {n} "
                  f"| {found}/{n} [{ci.low:.0%}, {ci.high:.0%}] | {other}/{n} |", flush=True)
            table.append({"seeking": strength, "games": size, "audits": n, "detected": found, "other": other,
                          "any": anyone, "together": together / n, "expected": expected / n})
            false_positives += anyone if not strength else 0
            honest_audits += n if not strength else 0
            if strength and needed[strength] is None and found >= 0.9 * n:
                needed[strength] = size
                break
    print(f"\nhonest seatings (seeking 0), audits with any pair over the threshold: "
          f"{interval(false_positives, honest_audits)}")
    print("\n| seeking | P(together) a game (a table drawn with one of them) | fewest games with the pair "
          "over the threshold ≥ 90 % |")
    print("|---:|---:|---:|")
    for strength, size in needed.items():
        if strength:
            share = 0.4 + (1 - 0.4 - 1 / 15) * strength  # both drawn 6/15, exactly one 8/15, neither 1/15
            print(f"| {strength:g} | {share:.3f} | {size if size else f'> {max(args.seating_games)}'} |")
    record["seating"] = table


def tiled(data: PairData, copies: int) -> PairData:
    """`copies` of a pool's decisions, each copy with its own games and its own players
    (what a warehouse of many clubs would give the audit), built from the pool's arrays."""
    out = PairData()
    rows = data.arrays()
    for copy in range(copies):
        first = len(out.game_ids)
        for g, players in enumerate(data.game_players):
            out.add_game(f"{data.game_ids[g]}.{copy}", [f"{data.names[n]}.{copy}" for n in players])
        chunk = dict(rows)
        chunk["game"] = rows["game"] + first
        out._chunks.append(chunk)  # the arrays as they are: the copy's games are numbered in order
    out.gifts = data.gifts * copies
    return out


def timing(args: argparse.Namespace, record: dict[str, object]) -> None:
    from ingest.read import connect

    pool(0.0, args.pool, args.seed + 1000)  # an honest pool, cached by the fpr runs (or made now)
    folder = OUT / f"pairs6-0.0-{args.pool}-{args.seed + 1000}"
    started = time.perf_counter()
    reader = connect(folder / "wh")
    try:
        rows = read_pair_rows(reader)
    finally:
        reader.close()
    read = time.perf_counter() - started
    started = time.perf_counter()
    data = rows.data()
    arrays = time.perf_counter() - started
    pool_hands = args.pool * HANDS
    copies = max(1, round(args.time_hands / pool_hands))
    big = tiled(data, copies)
    decisions = len(big.arrays()["signal"])
    started, cpu = time.perf_counter(), time.process_time()
    report = audit_pairs(big, args.level, args.permutations)
    scores, scores_cpu = time.perf_counter() - started, time.process_time() - cpu
    hands = copies * pool_hands
    print(f"\n## Run time (load average {os.getloadavg()[0]:.2f})")
    print("| what | scale | s (wall) |")
    print("|---|---:|---:|")
    print(f"| reading the pool's rows from its warehouse (`read_pair_rows`) | {pool_hands:,} hands | {read:.2f} |")
    print(f"| turning them into the audit's arrays (`PairRows.data`) | {pool_hands:,} hands | {arrays:.2f} |")
    print(f"| the pair scores (`audit_pairs`, {args.permutations} relabellings, {report.pairs_scored:,} pairs, "
          f"{decisions:,} decisions) | {hands:,} hands ({copies} copies) | {scores:.1f} "
          f"({scores_cpu:.1f} s of CPU) |")
    print(f"| reading + arrays, linear in hands (extrapolated) | {hands:,} hands | "
          f"{(read + arrays) * hands / pool_hands:.0f} |")
    record["time"] = {"pool_hands": pool_hands, "read": read, "arrays": arrays, "hands": hands,
                      "decisions": decisions, "pairs": report.pairs_scored, "scores": scores, "scores_cpu": scores_cpu,
                      "permutations": args.permutations}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", type=float, default=0.01)
    parser.add_argument("--pool", type=int, default=2400, help="games simulated per pool")
    parser.add_argument("--seed", type=int, default=31, help="the pools' simulation seed")
    parser.add_argument("--permutations", type=int, default=200)
    parser.add_argument("--fpr-games", type=int, default=30, help="games an honest audit")
    parser.add_argument("--fpr-pools", type=int, default=3, help="honest pools of --pool games")
    parser.add_argument("--fpr-seeds", type=int, nargs="*", default=None,
                        help="the honest pools' seeds (default: --fpr-pools of them from --seed + 1000)")
    parser.add_argument("--games", type=int, nargs="*", default=[12, 25, 50, 100, 200, 400])
    parser.add_argument("--strengths", type=float, nargs="*", default=[1.0, 0.6, 0.3, 0.15])
    parser.add_argument("--power-reps", type=int, default=24, help="audits a grid point, at most")
    parser.add_argument("--power-seeking", type=float, default=0.0,
                        help="the power pools' pair also seek each other's tables (SimConfig.seeking)")
    parser.add_argument("--full", action="store_true", help="every size, not only up to the first ≥ 90 %%")
    parser.add_argument("--time-hands", type=int, default=1_000_000)
    parser.add_argument("--seeking", type=float, nargs="*", default=[1.0, 0.5, 0.25, 0.1],
                        help="co-seating strengths: how often a table with one of the pair seats the other too")
    parser.add_argument("--seating-games", type=int, nargs="*", default=[25, 50, 100, 200, 400, 800, 1600, 3200])
    parser.add_argument("--seating-reps", type=int, default=100, help="co-seating audits a grid point")
    parser.add_argument("--skip", nargs="*", default=[], choices=["fpr", "power", "seating", "time"])
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; level {args.level}; "
          f"{args.permutations} relabellings an audit")
    record: dict[str, object] = {"level": args.level, "started": datetime.now(UTC).isoformat()}
    if "power" not in args.skip:
        power(args, record)
    if "seating" not in args.skip:
        seating(args, record)
    if "fpr" not in args.skip:
        fpr(args, record)
    if "time" not in args.skip:
        timing(args, record)
    record["load_end"] = os.getloadavg()[0]
    OUT.mkdir(exist_ok=True)
    path = OUT / f"pairs-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(record, indent=1, default=float))
    print(f"\nrecord: {path}")


if __name__ == "__main__":
    main()
