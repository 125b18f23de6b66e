"""Ingest benchmark: simulated logs in, the warehouse out, timed end to end.

    .venv/bin/python bench/bench_ingest.py                 # the issue's size: 1,000,000 hands
    .venv/bin/python bench/bench_ingest.py --hands 20000   # a quick run

What it does, in one run:

1. Logs: a pool of games is simulated with `engine.simulate` (all three rulesets, a few
   injected faults), then copied under new game ids until the logs hold `--hands` hands
   (simulating a million hands one by one would take the simulator hours; every copy is
   a distinct game to the warehouse and costs the validator exactly what the original
   does). The logs are cached under `bench/out/` and reused by later runs.
2. The yardstick: DuckDB's own `COPY (SELECT * FROM read_json(...)) TO '....parquet'` of
   the same files, which parses and stores but validates nothing.
3. Ours: `haftkhabis ingest` with `--workers` processes (2 by default), in a fresh
   warehouse, timed end to end (process start to committed batch).
4. The leaderboard (`haftkhabis stats players`' query) on the result: its latency.

Peak memory is the largest sum of the resident sets of the process and its children,
sampled every 50 ms from /proc (the figure the targets are about); the largest sum of their
proportional sets (PSS: a shared library's pages counted once over the processes that map
it, not once in each) is recorded next to it, as what the machine actually gives them. Figures go to standard output and to
`bench/out/result-*.json`. Targets (issue 9): ratio >= 0.5 (floor 0.25), peak memory < 1 GiB
and flat as the input grows,
leaderboard < 1 s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.simulate import SimConfig, simulate  # noqa: E402

OUT = REPO / "bench" / "out"
RULESETS = ("bazito", "persian", "pis-yedili")
LEADERBOARD = """
    SELECT ruleset, row_number() OVER (PARTITION BY ruleset
               ORDER BY wins DESC, win_rate DESC NULLS LAST, player) AS rank,
           player, games, games_won, hands, wins, win_rate, mean_points, total_points, violations
    FROM player_stats
    QUALIFY rank <= 20
    ORDER BY ruleset, rank
"""


@dataclass
class Run:
    seconds: float
    peak_rss: int
    returncode: int
    peak_pss: int = 0
    #: each process's own peak resident set (pid → bytes), and the tree's resident sets
    #: once a second ([seconds, total, {pid: bytes}]): where the peak is, and whether it
    #: is flat in time
    peaks_by_process: dict[int, int] = field(default_factory=dict)
    timeline: list[tuple[float, int, dict[int, int]]] = field(default_factory=list)


def measure(command: list[str], env: dict[str, str] | None = None) -> Run:
    """Run `command`, sampling the resident memory of its whole process tree."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=REPO, env=dict(os.environ, **(env or {})))
    peak = peak_pss = 0
    peaks: dict[int, int] = {}
    timeline: list[tuple[float, int, dict[int, int]]] = []
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, peak_pss
        next_mark = 0.0
        while not done.is_set():
            each, pss = _tree_memory(process.pid)
            rss = sum(each.values())
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            for pid, size in each.items():
                peaks[pid] = max(peaks.get(pid, 0), size)
            now = time.monotonic() - started
            if now >= next_mark:
                timeline.append((round(now, 2), rss, each))
                next_mark = now + 1.0
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = process.wait()
    done.set()
    sampler.join()
    return Run(time.monotonic() - started, peak, code, peak_pss, peaks, timeline)


def _tree_memory(root: int) -> tuple[dict[int, int], int]:
    """The resident set of `root` and of each of its descendants (pid → bytes), and
    their proportional set sizes, summed."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm") as handle:
                pages = int(handle.read().split()[1])
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = pages * os.sysconf("SC_PAGE_SIZE")
    each: dict[int, int] = {}
    pss = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in rss:
            each[pid] = rss[pid]
            pss += _pss(pid)
        stack.extend(children.get(pid, []))
    return each, pss


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# ---------------------------------------------------------------------------- the logs


def _simulate_pool(job: tuple[str, int, int, float]) -> tuple[str, list[list[bytes]], int]:
    ruleset, hands, seed, fault_rate = job
    games: list[list[bytes]] = []
    total = 0
    batch = 0
    while total < hands:
        config = SimConfig(ruleset, games=50, seed=seed * 1000 + batch, fault_rate=fault_rate)
        for game in simulate(config):
            games.append(game.lines)
            total += game.hands
            if total >= hands:
                break
        batch += 1
    return ruleset, games, total


def make_logs(hands: int, pool_hands: int, files: int, seed: int, fault_rate: float) -> tuple[Path, dict[str, int]]:
    """The benchmark's logs (cached): `files` JSON-lines files holding `hands` hands."""
    folder = OUT / f"logs-{hands}h-{pool_hands}p-{files}f-s{seed}-f{fault_rate}"
    manifest = folder / "manifest.json"
    if manifest.exists():
        return folder, json.loads(manifest.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.monotonic()
    per_ruleset = max(1, pool_hands // len(RULESETS))
    jobs = [(r, per_ruleset, seed + i, fault_rate) for i, r in enumerate(RULESETS)]
    with mp.get_context("spawn").Pool(min(len(jobs), os.cpu_count() or 1)) as pool:
        pools = pool.map(_simulate_pool, jobs)
    pool_games = [(lines, _hands_of(lines)) for _, games, _ in pools for lines in games]
    pool_total = sum(h for _, h in pool_games)
    print(f"simulated a pool of {len(pool_games):,} games, {pool_total:,} hands "
          f"in {time.monotonic() - started:.0f}s", flush=True)
    outputs = [open(folder / f"server-{i:02d}.jsonl", "wb") for i in range(files)]  # noqa: SIM115
    written_hands = written_games = lines = size = copy = 0
    try:
        while written_hands < hands:
            for game, game_hands in pool_games:
                if written_hands >= hands:
                    break
                old = _game_id(game[0])
                new = f"{old}.c{copy}" if copy else old
                prefix_old = b'{"game":"' + old.encode() + b'"'
                prefix_new = b'{"game":"' + new.encode() + b'"'
                data = b"".join((prefix_new + line[len(prefix_old):]
                                 if line.startswith(prefix_old) else line) + b"\n"
                                for line in game)
                outputs[written_games % files].write(data)
                written_games += 1
                written_hands += game_hands
                lines += len(game)
                size += len(data)
            copy += 1
    finally:
        for handle in outputs:
            handle.close()
    facts = {"hands": written_hands, "games": written_games, "lines": lines, "bytes": size,
             "pool_games": len(pool_games), "pool_hands": pool_total, "files": files}
    manifest.write_text(json.dumps(facts, indent=2))
    print(f"wrote {written_games:,} games, {written_hands:,} hands, {lines:,} lines, "
          f"{size / 2**30:.2f} GiB in {time.monotonic() - started:.0f}s", flush=True)
    return folder, facts


def _game_id(line: bytes) -> str:
    start = line.index(b'"game":"') + 8
    return line[start:line.index(b'"', start)].decode()


def _hands_of(lines: list[bytes]) -> int:
    return sum(1 for line in lines if b'"type":"deal"' in line)


# ---------------------------------------------------------------------------- the runs


def duckdb_yardstick(logs: Path, target: Path) -> Run:
    script = (
        "import duckdb, sys\n"
        "con = duckdb.connect()\n"
        "con.execute('SET enable_progress_bar = false')\n"
        "con.execute(\"COPY (SELECT * FROM read_json(?, format='newline_delimited', "
        "ignore_errors=true, maximum_object_size=16777216)) TO '" + str(target) +
        "' (FORMAT parquet, COMPRESSION zstd)\", [sys.argv[1]])\n"
    )
    return measure([sys.executable, "-c", script, str(logs / "*.jsonl")])


def leaderboard_latency(warehouse: Path, repeat: int = 5) -> dict[str, float]:
    from ingest.queries import open_warehouse

    started = time.perf_counter()
    reader = open_warehouse(str(warehouse))
    opened = time.perf_counter() - started
    timings = []
    rows = 0
    for _ in range(repeat):
        started = time.perf_counter()
        rows = len(reader.sql(LEADERBOARD).fetchall())
        timings.append(time.perf_counter() - started)
    reader.close()
    return {"open_seconds": opened, "first_seconds": timings[0], "best_seconds": min(timings),
            "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=1_000_000, help="hands in the logs")
    parser.add_argument("--pool-hands", type=int, default=None,
                        help="hands actually simulated (default: min(hands, 30000))")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--files", type=int, default=8, help="log files to spread games over")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--fault-rate", type=float, default=0.02)
    parser.add_argument("--skip-duckdb", action="store_true")
    args = parser.parse_args()
    pool_hands = args.pool_hands or min(args.hands, 30_000)

    OUT.mkdir(parents=True, exist_ok=True)
    logs, facts = make_logs(args.hands, pool_hands, args.files, args.seed, args.fault_rate)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    work = OUT / f"run-{stamp}"
    work.mkdir()
    print(f"logs: {logs} ({facts['lines']:,} lines, {facts['hands']:,} hands, "
          f"{facts['bytes'] / 2**30:.2f} GiB)", flush=True)

    duck: Run | None = None
    if not args.skip_duckdb:
        duck = duckdb_yardstick(logs, work / "duckdb.parquet")
        print(f"duckdb COPY read_json -> parquet: {duck.seconds:.1f}s "
              f"(exit {duck.returncode}), peak {duck.peak_rss / 2**20:.0f} MiB", flush=True)
        (work / "duckdb.parquet").unlink(missing_ok=True)

    warehouse = work / "warehouse"
    ours = measure([sys.executable, "-m", "cli.app", "ingest", str(logs), "--warehouse",
                    str(warehouse), "--workers", str(args.workers), "--quiet"])
    print(f"haftkhabis ingest: {ours.seconds:.1f}s (exit {ours.returncode}), "
          f"peak {ours.peak_rss / 2**20:.0f} MiB (PSS {ours.peak_pss / 2**20:.0f} MiB)",
          flush=True)
    print("  each process's own peak: " + ", ".join(
        f"{pid} {size / 2**20:.0f} MiB" for pid, size in ours.peaks_by_process.items()
        if size > 32 * 2**20), flush=True)
    latency = leaderboard_latency(warehouse) if ours.returncode == 0 else {}

    ours_rate = facts["lines"] / ours.seconds
    duck_rate = facts["lines"] / duck.seconds if duck else None
    result = {
        "command": " ".join(sys.argv),
        "load_average_1m": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "logs": facts,
        "ours": asdict(ours) | {"events_per_second": ours_rate},
        "duckdb": (asdict(duck) | {"events_per_second": duck_rate}) if duck else None,
        "ratio": ours_rate / duck_rate if duck_rate else None,
        "leaderboard": latency,
        "warehouse_bytes": sum(p.stat().st_size for p in warehouse.rglob("*") if p.is_file()),
    }
    (OUT / f"result-{stamp}.json").write_text(json.dumps(result, indent=2))
    print()
    print(f"events (log lines)      {facts['lines']:>14,}   ({facts['hands']:,} hands, "
          f"{facts['games']:,} games)")
    print(f"ours, {args.workers} workers          {ours_rate:>14,.0f} events/s   "
          f"{ours.seconds:8.1f} s   peak {ours.peak_rss / 2**30:.2f} GiB")
    if duck and duck_rate:
        print(f"duckdb read_json->parquet {duck_rate:>12,.0f} events/s   "
              f"{duck.seconds:8.1f} s   peak {duck.peak_rss / 2**30:.2f} GiB")
        print(f"ratio ours / duckdb     {ours_rate / duck_rate:>14.3f}   (target >= 0.5, floor 0.25)")
    print(f"peak memory (ours)      {ours.peak_rss / 2**30:>14.2f} GiB (target < 1 GiB, flat in the input); "
          f"PSS {ours.peak_pss / 2**30:.2f} GiB")
    if latency:
        print(f"leaderboard query       {latency['first_seconds']:>14.3f} s first, "
              f"{latency['best_seconds']:.3f} s best of 5 (target < 1 s); "
              f"opening the warehouse {latency['open_seconds']:.3f} s")
    print(f"warehouse on disk       {result['warehouse_bytes'] / 2**20:>14,.0f} MiB")
    print(f"results: {OUT / f'result-{stamp}.json'}; warehouse kept in {warehouse}")


if __name__ == "__main__":
    main()
