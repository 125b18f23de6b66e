"""The pair audit on known truth (issue 31): prints the case queue's false-positive rate at
honest tables and its power against a colluding pair; asserts nothing.

Games are simulated whole (bazito, 4 seats drawn from 6 names, 3 hands a game, fault-free)
and ingested into a warehouse of their own under bench/out/, once per collusion strength;
the audit (`ingest.pairs`) then runs on disjoint sets of `--games` games, so the
repetitions are independent. At honest tables a repetition is a false positive when the
queue holds any pair; with the colluding pair (sara and omid spare each other from their
2s with probability p), it is a detection when the queue holds that pair.

    .venv/bin/python bench/bench_pairs.py
    .venv/bin/python bench/bench_pairs.py --pool 1200 --games 100 200 --permutations 100
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from scipy import stats

from engine.simulate import SimConfig, write_simulation
from ingest.pairs import GiftSet, audit_pairs

OUT = Path(__file__).parent / "out"
NAMES = ("sara", "omid", "lale", "reza", "neda", "kian")
PAIR = ("sara", "omid")


def pool_rows(collusion: float, games: int, seed: int) -> list[tuple[object, ...]]:
    """The gift rows of a simulated and ingested pool (cached under bench/out/)."""
    from ingest.pipeline import ingest
    from ingest.read import connect

    folder = OUT / f"pairs-{collusion}-{games}-{seed}"
    if not (folder / "wh").exists():
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "games.jsonl"
        with log.open("wb") as out:
            write_simulation(SimConfig("bazito", games=games, seed=seed, match={"hands": 3}, names=NAMES,
                                       colluders=PAIR, collusion=collusion), out)
        ingest([str(log)], str(folder / "wh"), workers=1)
    reader = connect(folder / "wh")
    try:
        return reader.rows(
            "SELECT e.game_id, g.players, e.hand, e.seq, e.player, e.gift_to, list(hp.player)"
            " FROM events e JOIN games g ON g.game_id = e.game_id"
            " JOIN hand_players hp ON hp.game_id = e.game_id AND hp.hand = e.hand"
            " WHERE e.gift_to IS NOT NULL AND e.gift_to <> e.player AND NOT e.set_aside"
            " GROUP BY ALL ORDER BY e.game_id, e.seq")
    finally:
        reader.close()


def subsets(rows: list[tuple[object, ...]], size: int) -> list[GiftSet]:
    games = sorted({r[0] for r in rows})
    chunks = [set(games[i:i + size]) for i in range(0, len(games) - size + 1, size)]
    out = []
    for chunk in chunks:
        gifts = GiftSet()
        index: dict[str, int] = {}
        game_index: dict[str, int] = {}
        for game, players, hand, seq, giver, target, seated in rows:
            if game in chunk:
                gifts.add_gift(game, players, hand, seq, giver, target, seated, index,  # type: ignore[arg-type]
                               game_index)
        out.append(gifts)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", type=float, default=0.05)
    parser.add_argument("--pool", type=int, default=2400, help="games simulated per strength")
    parser.add_argument("--games", type=int, nargs="*", default=[50, 100, 200, 400])
    parser.add_argument("--strengths", type=float, nargs="*", default=[1.0, 0.6, 0.3])
    parser.add_argument("--permutations", type=int, default=100)
    parser.add_argument("--seed", type=int, default=31, help="the pools' simulation seed")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; level {args.level}; "
          f"{args.permutations} relabellings an audit")
    record: dict[str, object] = {"level": args.level, "started": datetime.now(UTC).isoformat()}
    table = []
    print("| collusion p | games an audit | audits | queue holds the pair (power) | any other pair (FPR) | s an audit |")
    print("|---:|---:|---:|---:|---:|---:|")
    for strength in [0.0, *args.strengths]:
        started = time.perf_counter()
        rows = pool_rows(strength, args.pool, args.seed)
        prepared = time.perf_counter() - started
        for size in args.games:
            sets = subsets(rows, size)
            if not sets:
                continue
            started = time.perf_counter()
            found = other = 0
            for i, gifts in enumerate(sets):
                report = audit_pairs(gifts, args.level, args.permutations, seed=i)
                pairs = {frozenset((c.a, c.b)) for c in report.cases}
                found += frozenset(PAIR) in pairs
                other += bool(pairs - {frozenset(PAIR)})
            took = (time.perf_counter() - started) / len(sets)
            n = len(sets)
            power = f"{found}/{n}" if strength else "—"
            ci = stats.binomtest(other, n).proportion_ci(0.95)
            fpr = f"{other}/{n} [{ci.low:.1%}, {ci.high:.1%}]"
            print(f"| {strength:g} | {size} | {n} | {power} | {fpr} | {took:.2f} |", flush=True)
            table.append({"collusion": strength, "games": size, "audits": n, "detected": found,
                          "other_cases": other, "seconds": took, "pool_seconds": prepared})
    record["table"] = table
    OUT.mkdir(exist_ok=True)
    path = OUT / f"pairs-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"\nrecord: {path}")


if __name__ == "__main__":
    main()
