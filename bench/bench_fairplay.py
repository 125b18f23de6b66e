"""The deal audit on known truth (issue 31): prints its false-positive rate on fair
shuffles, its power against each planted bias, and its run time; asserts nothing.

Deals come from `engine.simulate.simulate_deals` (the simulated games' own dealing code,
without playing the hands out), tables of 4, the dealer passing clockwise, 10 hands a
game; `ShuffleBias` plants the truth. Every figure is the audit's whole battery
(`ingest.fairplay.audit_deals`, Benjamini–Hochberg over every test it makes) at `--level`.

- false-positive rate: the share of fair audits (`--fpr-reps` per ruleset, `--fpr-deals`
  deals each) with any finding, with its Clopper–Pearson interval;
- power: for each bias and strength, the fewest deals (on a ×1.5 grid) at which at least
  90 % of `--power-reps` audits find it (a finding of the right family at the right seat
  or card; for repeats, the repeat test);
- run time: the audit of `--time-deals` simulated deals (load from records, then tests),
  and, with `--warehouse`, reading the deals of a warehouse plus the audit.

    .venv/bin/python bench/bench_fairplay.py
    .venv/bin/python bench/bench_fairplay.py --fpr-reps 100 --power-reps 20 --time-deals 100000
    .venv/bin/python bench/bench_fairplay.py --warehouse bench/out/wh-10000
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from scipy import stats

from engine.simulate import ShuffleBias, simulate_deals
from ingest.fairplay import AuditReport, DealSet, TestResult, audit_deals, deals_from_records

OUT = Path(__file__).parent / "out"
RULESETS = ("bazito", "persian", "pis-yedili")


def audit(ruleset: str, deals: int, seed: int, bias: ShuffleBias | None, level: float,
          stock_rate: float = 0.5) -> AuditReport:
    records = simulate_deals(ruleset, deals, seed=seed, bias=bias, stock_rate=stock_rate)
    return audit_deals(deals_from_records(records, ruleset=ruleset), level, intervals=False)


def proportion(hits: int, n: int) -> str:
    ci = stats.binomtest(hits, n).proportion_ci(0.95)
    return f"{hits}/{n} = {hits / n:.2%} [{ci.low:.2%}, {ci.high:.2%}]"


#: (name, ruleset, strength label, bias, is the finding the planted one)
Case = tuple[str, str, str, ShuffleBias, Callable[[TestResult], bool]]


def cases() -> list[Case]:
    out: list[Case] = []
    for rate in (0.5, 0.2, 0.1, 0.05):
        out.append(("extra special card, seat 0", "bazito", f"{rate:.0%} of deals",
                    ShuffleBias("extra_special", rate=rate, seat=0),
                    lambda t: t.family == "hand.special" and t.scope.get("seat") == 0))
    for rate in (0.25, 0.1, 0.05, 0.02):
        out.append(("stuck card QH (stock logged in half the deals)", "persian", f"{rate:.0%} of deals",
                    ShuffleBias("stuck_card", rate=rate, card="QH"),
                    lambda t: t.family == "stock.position" and t.scope.get("card") == "QH"))
    for seeds in (1_000, 10_000, 100_000, 1_000_000):
        out.append(("clock-seeded shuffle", "pis-yedili", f"{seeds:,} seeds",
                    ShuffleBias("clock_seed", seeds=seeds),
                    lambda t: t.family == "deals.repeat"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", type=float, default=0.01)
    parser.add_argument("--fpr-reps", type=int, default=300)
    parser.add_argument("--fpr-deals", type=int, default=500)
    parser.add_argument("--power-reps", type=int, default=40)
    parser.add_argument("--max-deals", type=int, default=60_000)
    parser.add_argument("--time-deals", type=int, default=200_000)
    parser.add_argument("--warehouse", help="also time reading this warehouse's deals and auditing them")
    parser.add_argument("--skip", nargs="*", default=[], choices=["fpr", "power", "time"])
    parser.add_argument("--only", help="power: only the biases whose name holds this text")
    args = parser.parse_args()
    record: dict[str, object] = {"level": args.level, "started": datetime.now(UTC).isoformat(),
                                 "load_average": os.getloadavg()[0]}
    print(f"load average at start: {os.getloadavg()[0]:.2f}; level {args.level}")

    if "fpr" not in args.skip:
        print(f"\n## False-positive rate: fair shuffles, {args.fpr_deals} deals an audit")
        fpr: dict[str, object] = {}
        all_hits = all_n = 0
        for ruleset in RULESETS:
            started = time.perf_counter()
            hits, tests = 0, 0
            for rep in range(args.fpr_reps):
                report = audit(ruleset, args.fpr_deals, 1_000_000 + rep, None, args.level)
                hits += bool(report.findings)
                tests = report.tests_made
            took = time.perf_counter() - started
            all_hits += hits
            all_n += args.fpr_reps
            print(f"{ruleset:11} audits with any finding: {proportion(hits, args.fpr_reps)}"
                  f" ({tests} tests an audit; {took:.0f} s)")
            fpr[ruleset] = {"hits": hits, "audits": args.fpr_reps, "tests_per_audit": tests}
        print(f"{'all':11} audits with any finding: {proportion(all_hits, all_n)}")
        record["fpr"] = fpr

    if "power" not in args.skip:
        print(f"\n## Power: fewest deals for >= 90 % detection ({args.power_reps} audits a point)")
        print("| bias | ruleset | strength | deals | games (10 hands) | detected | audit time (s) |")
        print("|---|---|---|---:|---:|---:|---:|")
        power: list[dict[str, object]] = []
        for name, ruleset, strength, bias, planted in cases():
            if args.only and args.only not in name:
                continue
            n = 50
            found: dict[str, object] | None = None
            while n <= args.max_deals:
                started = time.perf_counter()
                hits = sum(any(planted(t) for t in audit(ruleset, n, 2_000_000 + rep, bias, args.level).findings)
                           for rep in range(args.power_reps))
                took = (time.perf_counter() - started) / args.power_reps
                if hits >= 0.9 * args.power_reps:
                    found = {"deals": n, "hits": hits, "seconds_per_audit": took}
                    break
                n = int(n * 1.5)
            row = {"bias": name, "ruleset": ruleset, "strength": strength, **(found or {})}
            power.append(row)
            if found is None:
                print(f"| {name} | {ruleset} | {strength} | > {args.max_deals:,} | | | |")
            else:
                print(f"| {name} | {ruleset} | {strength} | {n:,} | {n / 10:,.0f} | "
                      f"{hits}/{args.power_reps} | {took:.2f} |", flush=True)
        record["power"] = power

    if "time" not in args.skip:
        print(f"\n## Run time: {args.time_deals:,} simulated bazito deals (4 seats, stock in half)")
        # simulated a chunk at a time (a list of a million deals' dicts would not fit), each
        # chunk loaded into the one DealSet; only the loading is timed
        deals = DealSet()
        simulated = loaded = 0.0
        chunk = 100_000
        records_made = 0
        while records_made < args.time_deals:
            size = min(chunk, args.time_deals - records_made)
            started = time.perf_counter()
            records = list(simulate_deals("bazito", size, seed=5 + records_made, stock_rate=0.5))
            simulated += time.perf_counter() - started
            started = time.perf_counter()
            deals_from_records(records, ruleset="bazito", into=deals)
            loaded += time.perf_counter() - started
            records_made += size
            del records
        started = time.perf_counter()
        report = audit_deals(deals, args.level)
        audited = time.perf_counter() - started
        print(f"simulate {simulated:.1f} s (not the audit's); load into arrays {loaded:.1f} s; "
              f"audit {audited:.1f} s ({report.tests_made} tests, {len(report.findings)} findings)")
        record["time"] = {"deals": args.time_deals, "load_s": loaded, "audit_s": audited,
                          "tests": report.tests_made, "findings": len(report.findings)}
        if args.warehouse:
            from ingest.fairplay import deals_from_warehouse
            from ingest.read import connect

            started = time.perf_counter()
            reader = connect(args.warehouse)
            try:
                found_deals = deals_from_warehouse(reader)  # copied and sorted into its folder
            finally:
                reader.close()
            read = time.perf_counter() - started
            started = time.perf_counter()
            with found_deals:
                report = audit_deals(found_deals, args.level)
            audited = time.perf_counter() - started
            print(f"warehouse {args.warehouse}: {report.deals:,} deals read in {read:.1f} s, "
                  f"audited in {audited:.1f} s ({report.tests_made} tests, {len(report.findings)} findings)")
            record["warehouse"] = {"path": args.warehouse, "deals": report.deals, "read_s": read,
                                   "audit_s": audited, "findings": len(report.findings)}

    OUT.mkdir(exist_ok=True)
    path = OUT / f"fairplay-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"\nrecord: {path}")


if __name__ == "__main__":
    main()
