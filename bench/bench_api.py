"""HTTP API load check: concurrent clients for a bounded time against a real `haftkhabis
serve` (started here on a free loopback port), printing figures — never asserting them.

    .venv/bin/python bench/bench_dashboard.py build --hands 1000000   # the big warehouse, once
    .venv/bin/python bench/bench_api.py                                # both phases, 20 s each
    .venv/bin/python bench/bench_api.py --phase step --clients 4 --seconds 30 --warehouse DIR
    .venv/bin/python bench/bench_api.py --phase game --clients 1 --seconds 30 --warehouse DIR

Phase `validate`: each client POSTs the bundled sample logs (`data/sample/*`, one file a
request, in turn) to `/v1/validate` and reads the whole answer. Phase `step`: each client
GETs `/v1/games/{id}/steps/{seq}` for (game, seq) pairs drawn at random from the
warehouse's events (seeded), so most requests open a game not seen before (its lines read
and replayed) and some step through one already replayed. Phase `game` (only when asked
for): each client GETs `/v1/games/{id}` for the games of such lines. The step and game
phases start once the server's game index covers the warehouse (`/v1/health`'s
`games_indexed`; the time it took is printed): before that, a step scans its game's
partition, which is what the index is there to avoid on a large warehouse (and a game's
partition is looked up in `games`, which the index names too). For each phase: requests a second, events (log lines)
a second for validate, p50/p99/max latency, and errors (any status but 200, or a transport
failure: there must be none, and the script exits 1 if there are). The server, the clients
and whatever else runs on the machine share its cores: `load_average_1m` is printed and
saved with the figures in `bench/out/api-*.json`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.auth import key_entry, new_key  # noqa: E402

OUT = ROOT / "bench" / "out"
SAMPLE = ROOT / "data" / "sample"


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    events: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, ok: bool, events: int, kind: str = "") -> None:
        with self.lock:
            self.latencies.append(seconds)
            if ok:
                self.events += events
            else:
                self.errors += 1
                self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(warehouse: Path, keys: Path, validate_threads: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    # pushed bodies and receipts (none here) beside the keys, not in the measured warehouse
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.app", "serve", "--warehouse", str(warehouse), "--port", str(port),
         "--keys", str(keys), "--state", str(keys.parent / "state"), "--rate", "0",
         "--log-level", "warning", "--validate-threads", str(validate_threads)], cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise SystemExit(f"haftkhabis serve exited ({process.returncode})")
        try:
            if httpx.get(f"{url}/v1/health", timeout=5).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            process.terminate()
            raise SystemExit("haftkhabis serve did not come up")
        time.sleep(0.05)


def run_clients(clients: int, seconds: float, one: Any) -> tuple[Tally, float]:
    tally = Tally()
    stop = time.monotonic() + seconds
    started = time.monotonic()

    def loop(number: int) -> None:
        rng = random.Random(number)
        with httpx.Client(timeout=120) as client:
            while time.monotonic() < stop:
                one(client, rng, tally)

    threads = [threading.Thread(target=loop, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally, time.monotonic() - started


def figures(name: str, tally: Tally, elapsed: float) -> dict[str, Any]:
    lat = sorted(tally.latencies)
    n = len(lat)
    out = {
        "phase": name, "requests": n, "seconds": round(elapsed, 2),
        "requests_per_s": round(n / elapsed, 1) if elapsed else 0.0,
        "events_per_s": round(tally.events / elapsed) if elapsed else 0,
        "p50_ms": round(statistics.median(lat) * 1000, 1) if n else None,
        "p99_ms": round(lat[min(n - 1, int(n * 0.99))] * 1000, 1) if n else None,
        "max_ms": round(lat[-1] * 1000, 1) if n else None,
        "errors": tally.errors, "error_kinds": tally.error_kinds,
    }
    print(f"  {name}: {out['requests']} requests in {out['seconds']} s = {out['requests_per_s']} req/s"
          + (f", {out['events_per_s']:,} events/s" if tally.events else "")
          + f"; p50 {out['p50_ms']} ms, p99 {out['p99_ms']} ms, max {out['max_ms']} ms; "
          f"errors {out['errors']}" + (f" {tally.error_kinds}" if tally.errors else ""))
    return out


def validate_phase(url: str, key: str, clients: int, seconds: float) -> dict[str, Any]:
    files = sorted(p for p in SAMPLE.iterdir() if p.suffix in (".jsonl", ".gz"))
    bodies = []
    for path in files:
        data = path.read_bytes()
        lines = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        bodies.append((path.name, data, sum(1 for line in lines.splitlines() if line.strip())))
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"}

    def one(client: httpx.Client, rng: random.Random, tally: Tally) -> None:
        _, body, events = bodies[rng.randrange(len(bodies))]
        began = time.perf_counter()
        try:
            response = client.post(f"{url}/v1/validate", content=body, headers=headers)
            ok, kind = response.status_code == 200, str(response.status_code)
        except httpx.HTTPError as exc:
            ok, kind = False, type(exc).__name__
        tally.add(time.perf_counter() - began, ok, events, kind)

    print(f"validate: {clients} clients for {seconds:.0f} s, bodies {', '.join(b[0] for b in bodies)}")
    return figures("validate", *run_clients(clients, seconds, one))


def wait_for_index(url: str, timeout: float) -> float:
    """Seconds until the server's game index covers the warehouse it reads."""
    started = time.monotonic()
    while not httpx.get(f"{url}/v1/health", timeout=30).json().get("games_indexed"):
        if time.monotonic() - started > timeout:
            raise SystemExit(f"the server's game index was not ready after {timeout:.0f} s")
        time.sleep(0.2)
    return time.monotonic() - started


def draw_lines(warehouse: Path, lines: int) -> tuple[list[tuple[str, int]], tuple[int, int], float]:
    """(game, seq) pairs drawn at random from the warehouse's replayed lines (seeded), its
    (hands, games), and the seconds the draw took."""
    from ingest import read

    began = time.monotonic()
    reader = read.connect(warehouse)
    total = reader.rows("SELECT sum(hands)::BIGINT, count(*) FROM games")[0]
    picks = reader.rows(
        "SELECT game_id, seq FROM events WHERE seq IS NOT NULL AND NOT set_aside "
        f"USING SAMPLE reservoir({lines} ROWS) REPEATABLE (7)")
    reader.close()
    return [(g, s) for g, s in picks], (total[0], total[1]), time.monotonic() - began


def timed_get(client: httpx.Client, url: str, headers: dict[str, str], tally: Tally) -> None:
    """GET `url` and count its latency: a success is a 200, anything else (another status,
    a transport failure) an error of that kind."""
    began = time.perf_counter()
    try:
        response = client.get(url, headers=headers)
        ok, kind = response.status_code == 200, str(response.status_code)
    except httpx.HTTPError as exc:
        ok, kind = False, type(exc).__name__
    tally.add(time.perf_counter() - began, ok, 0, kind)


def step_phase(url: str, key: str, warehouse: Path, clients: int, seconds: float, lines: int) -> dict[str, Any]:
    picks, total, drawn = draw_lines(warehouse, lines)
    indexed = wait_for_index(url, timeout=1800)
    print(f"step: {len(picks)} lines drawn in {drawn:.1f} s; the server's game index was ready "
          f"{indexed:.1f} s later")
    headers = {"Authorization": f"Bearer {key}"}

    def one(client: httpx.Client, rng: random.Random, tally: Tally) -> None:
        game, seq = picks[rng.randrange(len(picks))]
        timed_get(client, f"{url}/v1/games/{game}/steps/{seq}", headers, tally)

    print(f"step: {clients} clients for {seconds:.0f} s over {warehouse} ({total[0]:,} hands, "
          f"{total[1]:,} games), {len(picks)} lines drawn")
    result = figures("step", *run_clients(clients, seconds, one))
    result["hands"], result["games"] = total
    result["index_wait_s"] = round(indexed, 2)
    return result


def game_phase(url: str, key: str, warehouse: Path, clients: int, seconds: float, lines: int) -> dict[str, Any]:
    """`GET /v1/games/{id}` (the game's verdict, hands, players and violations) for the
    games of lines drawn at random, once the game index is ready (it names the game's
    partition)."""
    picks, total, drawn = draw_lines(warehouse, lines)
    games = sorted({game for game, _ in picks})
    indexed = wait_for_index(url, timeout=1800)
    print(f"game: {len(games)} games drawn in {drawn:.1f} s; the server's game index was ready "
          f"{indexed:.1f} s later")
    headers = {"Authorization": f"Bearer {key}"}

    def one(client: httpx.Client, rng: random.Random, tally: Tally) -> None:
        timed_get(client, f"{url}/v1/games/{games[rng.randrange(len(games))]}", headers, tally)

    print(f"game: {clients} clients for {seconds:.0f} s over {warehouse} ({total[0]:,} hands, "
          f"{total[1]:,} games)")
    result = figures("game", *run_clients(clients, seconds, one))
    result["hands"], result["games"] = total
    result["index_wait_s"] = round(indexed, 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warehouse", type=Path, default=None,
                        help="for the step phase (default: bench/out/wh-1000000 when built, "
                             "else data/warehouse)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--validate-threads", type=int, default=2)
    parser.add_argument("--lines", type=int, default=2000, help="lines drawn for the step phase")
    parser.add_argument("--phase", choices=("validate", "step", "game", "both"), default="both",
                        help="both: validate, then step")
    args = parser.parse_args()
    warehouse = args.warehouse or next((w for w in (OUT / "wh-1000000", ROOT / "data" / "warehouse")
                                        if (w / "batches").exists()), OUT / "wh-1000000")
    with tempfile.TemporaryDirectory() as folder:
        key = new_key()
        keys = Path(folder) / "keys.toml"
        keys.write_text(key_entry("bench", key, ["support", "ingest"]), encoding="utf-8")
        process, url = start_server(warehouse, keys, args.validate_threads)
        results: dict[str, Any] = {"when": datetime.now(UTC).isoformat(), "clients": args.clients,
                                   "cpus": os.cpu_count(), "warehouse": str(warehouse)}
        try:
            if args.phase in ("validate", "both"):
                results["validate"] = validate_phase(url, key, args.clients, args.seconds)
            if args.phase in ("step", "both"):
                if (warehouse / "batches").exists():
                    results["step"] = step_phase(url, key, warehouse, args.clients, args.seconds, args.lines)
                else:
                    print(f"step: no warehouse at {warehouse} (bench/bench_dashboard.py build makes one)")
            if args.phase == "game":
                if (warehouse / "batches").exists():
                    results["game"] = game_phase(url, key, warehouse, args.clients, args.seconds, args.lines)
                else:
                    print(f"game: no warehouse at {warehouse} (bench/bench_dashboard.py build makes one)")
        finally:
            process.terminate()
            process.wait(timeout=30)
    results["load_average_1m"] = os.getloadavg()[0]
    print(f"load average (1 min): {results['load_average_1m']:.2f} on {os.cpu_count()} cores")
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"api-{datetime.now(UTC):%Y%m%dT%H%M%S}.json"
    out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"written to {out.relative_to(ROOT)}")
    errors = sum(results[p]["errors"] for p in ("validate", "step", "game") if p in results)
    if errors:
        raise SystemExit(f"{errors} requests failed: the figures above do not count")


if __name__ == "__main__":
    main()
