"""Live ingest under load: N simulated table servers push finished games to a real
`haftkhabis serve` (started here on a free loopback port, over a fresh warehouse) for a
bounded time, one game a push, each as soon as the last was accepted (the service's
saturation) or, with `--rate`, at an offered load (games ending at random, so many a
second in all: what a platform's latency is below saturation); figures printed, never
asserted.

    .venv/bin/python bench/bench_live.py                       # 32 servers, 60 s, local folder
    .venv/bin/python bench/bench_live.py --servers 8 --seconds 20
    .venv/bin/python bench/bench_live.py --rate 200            # 32 servers finishing 200 games a second
    .venv/bin/python bench/bench_live.py --s3                  # the warehouse on moto's S3 emulator

Printed: pushes (games) a second and lines a second accepted and committed (sustained:
over the run, the committer's drain after the deadline included), push-to-queryable
latency p50/p99/max (a push's start to the moment its receipt says committed: the service
refreshes its reader before it marks a receipt, so the game is then answered by
`GET /v1/games/{id}`, which is checked for a sample; the receipts are read from the
server's commits.log, the others by `GET /v1/batches/{id}`) and where it went (p50/p99 of: `late`,
the request started after the game's end, this pusher or the bench's process busy;
`answered`, the request to its 202; `received`, the game's end to the body received;
`waiting`, received to its group taken; `committed`, the group's commit and publication),
the commits (count, games and lines
per commit, seconds p50/p99, ms of commit a game in the first and the last sixth of them:
whether commits slow down as the warehouse's parts accumulate), the merge passes (count,
seconds p50/max), refusals (`429`: back-pressure) and errors, the server's
peak memory (its process and the writer's, RSS), and the machine's load. The figures are
kept in `bench/out/live-*.json`.

The games come from the simulator (a pool, `--pool`, of every ruleset), renamed for each
round so every push is a new game.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.simulate import SimConfig, simulate  # noqa: E402
from service.auth import key_entry, new_key  # noqa: E402

OUT = ROOT / "bench" / "out"


@dataclass
class Push:
    game: str
    lines: int
    started: float  # wall clock (time.time), comparable with the receipt's times
    receipt: str | None = None
    sent: float = 0.0  # when its request was started (after the game's end: the pusher was busy)
    answered: float = 0.0  # when its 202 came back
    status: int = 0


@dataclass
class Tally:
    pushes: list[Push] = field(default_factory=list)
    refused: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class PoolGame:
    game: str
    lines: int
    body: bytes  # its lines, each ended by a newline


def pool_of_games(size: int, seed: int) -> list[PoolGame]:
    """Simulated finished games of every ruleset."""
    games: list[PoolGame] = []
    per = max(1, size // 3)
    for ruleset in ("bazito", "persian", "pis-yedili"):
        for game in simulate(SimConfig(ruleset, games=per, seed=seed)):
            games.append(PoolGame(game.game, len(game.lines), b"".join(line + b"\n" for line in game.lines)))
    return games


def body_of(game: PoolGame, round_: int) -> tuple[str, bytes]:
    """The game's lines as a new game: its id (a JSON string wherever it occurs) suffixed
    with the round."""
    new = f"{game.game}-r{round_}"
    return new, game.body.replace(orjson.dumps(game.game), orjson.dumps(new))


class Connection:
    """One table server's HTTP/1.1 connection, kept alive between pushes, as a game server
    written in C++ or Go would keep it: a request is one `sendall` of bytes made here, an
    answer read to its `Content-Length`. (An HTTP client library in Python costs about as
    much CPU a push as the service's own handling of it; the pushers share the service's
    two cores, so their cost is kept to what a push needs.)"""

    def __init__(self, host: str, port: int, headers: dict[str, str], timeout: float) -> None:
        self.address = (host, port)
        self.head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": f"{host}:{port}", **headers}.items()).encode()
        self.timeout = timeout
        self.sock: socket.socket | None = None
        self.pending = b""

    def post(self, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """The answer's status, headers (lower-case names) and body. Raises OSError (or
        ConnectionError) on a transport failure; the connection is then made again on the
        next call."""
        if self.sock is None:
            self.sock = socket.create_connection(self.address, timeout=self.timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.pending = b""
        try:
            self.sock.sendall(b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s"
                              % (path.encode(), self.head, len(body), body))
            return self._answer()
        except (OSError, ValueError):
            self.close()
            raise

    def _answer(self) -> tuple[int, dict[str, str], bytes]:
        assert self.sock is not None
        data = self.pending
        while b"\r\n\r\n" not in data:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status_line, *fields = head.decode("latin-1").split("\r\n")
        headers = {}
        for field_ in fields:
            name, _, value = field_.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            rest += chunk
        self.pending = rest[length:]
        if headers.get("connection", "").lower() == "close":
            self.close()
        return int(status_line.split(" ", 2)[1]), headers, rest[:length]

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def rss_of_tree(pid: int) -> int:
    """Resident memory of a process and its children, bytes."""
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    return sum(rss_of(p) for p in pids)


def rss_of(pid: int) -> int:
    """Resident memory of one process, bytes (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a process has used, all its threads; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def writer_of(pid: int) -> int | None:
    """The server's writer process (its multiprocessing child that commits groups)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    for child in children:
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                return int(child)
        except OSError:
            continue
    return None


def writer_settled(pid: int, limit: float = 120.0) -> None:
    """Wait until the server's writer has started (its imports, its warm-up: seconds of
    CPU on a busy machine), so none of it is counted as the CPU the games cost: its CPU
    time unchanged over half a second, or `limit` seconds passed."""
    deadline = time.monotonic() + limit
    last = -1.0
    while time.monotonic() < deadline:
        writer = writer_of(pid)
        used = cpu_seconds(writer) if writer else -1.0
        if writer and used == last:
            print(f"the writer has started ({used:.1f} s of CPU)", flush=True)
            return
        last = used
        time.sleep(0.5)
    print("the writer did not settle: its start may be counted in its CPU a game", flush=True)


def _logged_receipts(state: Path, wanted: set[str]) -> dict[str, dict[str, Any]]:
    """The receipts of `wanted` that the server's commits.log files (`state`) hold, by id,
    the last written of each (the server's own record of a finished receipt: what
    `GET /v1/batches/{id}` answers for it once it is no longer kept in memory)."""
    found: dict[str, dict[str, Any]] = {}
    for path in (state / "commits.log.1", state / "commits.log"):
        try:
            with open(path, "rb") as lines:
                for line in lines:
                    try:
                        receipt = orjson.loads(line)
                    except orjson.JSONDecodeError:  # a line cut short: that receipt is read by GET
                        continue
                    if receipt.get("id") in wanted:
                        found[receipt["id"]] = {k: receipt.get(k) for k in
                                                ("status", "received_at", "started_at", "finished_at")}
        except FileNotFoundError:
            continue
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=int, default=32, help="table servers pushing at once")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long they push")
    parser.add_argument("--pool", type=int, default=600, help="simulated games to push (renamed each round)")
    parser.add_argument("--commit-interval", type=float, default=1.0)
    parser.add_argument("--commit-lines", type=int, default=100_000)
    parser.add_argument("--compact-every", type=int, default=None,
                        help="groups between the service's merge passes (default: serve's)")
    parser.add_argument("--s3", action="store_true", help="the warehouse on moto's S3 emulator")
    parser.add_argument("--rate", type=float, default=None, metavar="GAMES_A_SECOND",
                        help="an offered load: the servers together finish this many games a "
                             "second (Poisson arrivals, each server its share), latency counted "
                             "from a game's scheduled end, so a push delayed by a slow answer "
                             "counts its delay; default: each server pushes its next game as "
                             "soon as the last was accepted (the service's saturation)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true",
                        help="keep the run's folder (its warehouse, state and server log)")
    parser.add_argument("--trace-memory", action="store_true",
                        help="the server under tracemalloc (bench/traced_serve.py): what its Python "
                             "objects gained from the first sixth to the end, by where they were made")
    parser.add_argument("--accept-only", action="store_true",
                        help="no commits during the run (a commit interval of a day): how fast pushes are taken")
    args = parser.parse_args()

    print(f"simulating a pool of {args.pool} games …", flush=True)
    pool = pool_of_games(args.pool, args.seed)
    work = Path(tempfile.mkdtemp(prefix="haftkhabis-live-"))
    keys = {"ingest": new_key(), "support": new_key()}
    (work / "keys.toml").write_text(key_entry("ingest", keys["ingest"], ["ingest"])
                                    + key_entry("support", keys["support"], ["support"]))
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"))  # an S3 reader's part copies
    moto = None
    if args.s3:
        from tests.ingest.services import MotoServer

        moto = MotoServer(work / "moto.log")
        bucket = moto.bucket()
        warehouse = f"s3://{bucket}/wh"
        env.update(moto.env)
    else:
        warehouse = str(work / "wh")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args.trace_dir = work / "trace"  # the traced server's snapshots
    args.state_dir = work / "state"  # the server's journal and commits.log
    if args.trace_memory:
        env["HAFTKHABIS_TRACE_DIR"] = str(args.trace_dir)
    launcher = [str(ROOT / "bench" / "traced_serve.py")] if args.trace_memory else ["-m", "cli.app"]
    server = subprocess.Popen(
        [sys.executable, *launcher, "serve", "--warehouse", warehouse, "--port", str(port),
         "--keys", str(work / "keys.toml"), "--log-level", "warning", "--state", str(args.state_dir), "--rate", "0",
         "--commit-interval", str(86400 if args.accept_only else args.commit_interval),
         "--commit-lines", str(10**12 if args.accept_only else args.commit_lines),
         *(["--compact-every", str(args.compact_every)] if args.compact_every is not None else [])],
        cwd=ROOT, env=env, stdout=open(work / "serve.log", "wb"), stderr=subprocess.STDOUT)  # noqa: SIM115
    try:
        with httpx.Client(base_url=url, timeout=5) as probe:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if probe.get("/v1/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the server did not start:\n{(work / 'serve.log').read_text()}")
                time.sleep(0.1)
        writer_settled(server.pid)
        run(args, pool, url, port, keys, server, warehouse, moto.options if moto is not None else None)
    finally:
        server.terminate()
        server.wait(timeout=30)
        if moto is not None:
            moto.stop()
        if args.keep:
            print(f"the run's folder (warehouse, state, server log) is kept: {work}")
        else:  # a run leaves 0.4-1.4 GB: its warehouse, the journal, the bodies
            shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, pool: list[PoolGame], url: str, port: int, keys: dict[str, str],
        server: subprocess.Popen[bytes], warehouse: str, options: dict[str, str] | None) -> None:
    tally = Tally()
    counter = iter(range(10**9))
    stop = threading.Event()
    peak = [0]
    # (seconds from the start, the RSS of the server with its children), every half second,
    # and the server's own and its writer's
    rss: list[tuple[float, int]] = []
    rss_server: list[tuple[float, int]] = []
    rss_writer: list[tuple[float, int]] = []

    def pusher(server: int) -> None:
        headers = {"Authorization": f"Bearer {keys['ingest']}", "Content-Type": "application/x-ndjson"}
        arrivals = random.Random(args.seed * 1000 + server)
        due = time.time()
        client = Connection("127.0.0.1", port, headers, timeout=120)
        try:
            while not stop.is_set():
                if args.rate:  # the next game of this server ends at `due`, whatever the last push took
                    due += arrivals.expovariate(args.rate / args.servers)
                    if stop.wait(max(0.0, due - time.time())):
                        break
                n = next(counter)
                game = pool[n % len(pool)]
                name, body = body_of(game, n // len(pool))
                push = Push(name, game.lines, due if args.rate else time.time())
                push.sent = time.time()
                try:
                    status, answer_headers, answer = client.post("/v1/ingest", body)
                    push.answered = time.time()
                except (OSError, ValueError) as exc:
                    with tally.lock:
                        tally.errors[type(exc).__name__] = tally.errors.get(type(exc).__name__, 0) + 1
                    continue
                push.status = status
                if status == 202:
                    push.receipt = orjson.loads(answer)["id"]
                    with tally.lock:
                        tally.pushes.append(push)
                elif status == 429:
                    with tally.lock:
                        tally.refused += 1
                    stop.wait(float(answer_headers.get("retry-after", "1")))
                else:
                    with tally.lock:
                        key = f"HTTP {status}"
                        tally.errors[key] = tally.errors.get(key, 0) + 1
        finally:
            client.close()

    def sampler() -> None:
        while not stop.is_set():
            now, at = rss_of_tree(server.pid), time.time() - began
            peak[0] = max(peak[0], now)
            rss.append((at, now))
            rss_server.append((at, rss_of(server.pid)))
            if writer:
                rss_writer.append((at, rss_of(writer)))
            stop.wait(0.5)

    print(f"{args.servers} table servers push for {args.seconds:.0f} s …", flush=True)
    # CPU used from here to the drain, by the server's process and its writer's, and by
    # these pushers: what a game costs each, whatever else the machine is running
    writer = writer_of(server.pid)
    cpu_from = (cpu_seconds(server.pid), cpu_seconds(writer) if writer else 0.0, time.process_time())
    threads = [threading.Thread(target=pusher, args=(k,), daemon=True) for k in range(args.servers)]
    watcher = threading.Thread(target=sampler, daemon=True)
    began = time.time()
    watcher.start()
    for t in threads:
        t.start()
    snapshots: list[Path] = []
    if args.trace_memory:  # the first sixth, as the memory figures take it, and the end
        time.sleep(args.seconds / 6)
        snapshots.append(traced_snapshot(server.pid, args.trace_dir))
        time.sleep(max(0.0, began + args.seconds - time.time()))
    else:
        time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join()
    pushed_until = time.time()
    if args.trace_memory:
        snapshots.append(traced_snapshot(server.pid, args.trace_dir))
    support = httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {keys['support']}"})
    if args.accept_only:
        span = pushed_until - began
        served = (cpu_seconds(server.pid) - cpu_from[0]) * 1000 / max(1, len(tally.pushes))
        print(f"  accepted: {len(tally.pushes)} pushes in {span:.1f} s = {len(tally.pushes) / span:.0f}/s, "
              f"{sum(p.lines for p in tally.pushes) / span:.0f} lines/s; refused {tally.refused}; "
              f"errors {tally.errors}; the server's CPU {served:.3f} ms a push; "
              f"load {os.getloadavg()[0]:.2f}")
        return
    # the drain: every accepted push committed
    support = httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {keys['support']}"})
    while True:
        health = support.get("/v1/health").json()["ingest"]
        peak[0] = max(peak[0], rss_of_tree(server.pid))
        if health["waiting"] == 0 and health["committing"] == 0:
            break
        time.sleep(0.2)
    drained = time.time()
    cpu_to = (cpu_seconds(server.pid), cpu_seconds(writer) if writer else 0.0, time.process_time())
    latencies: list[float] = []
    # where a push's latency went: until the service received it (the push itself, and on
    # an offered load its wait for a free server connection), waiting for its group to be
    # taken, and its group's commit and publication (readers refreshed, receipt finished)
    # (`late`: the request started after the game's end because this pusher was still busy,
    # or the bench's own process slow; `answered`: the request to its 202)
    parts: dict[str, list[float]] = {"late": [], "answered": [], "received": [], "waiting": [], "committed": []}
    failed = 0
    local = threading.local()

    def receipt_of(push: Push) -> dict[str, Any]:
        # one client a thread: tens of thousands of receipts are read back
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=url, timeout=60,
                                        headers={"Authorization": f"Bearer {keys['support']}"})
        answer: dict[str, Any] = local.client.get(f"/v1/batches/{push.receipt}").json()
        return answer

    # the receipts the server finished, as it wrote them to its commits.log: past the
    # `RECENT_RECEIPTS` it keeps in memory, `GET /v1/batches/{id}` finds a receipt by
    # searching that file from its end, one look-up at a time, and a 10-minute run at
    # 1,000 games a second pushes 600,000 (read back that way, hours); the others by GET
    logged = _logged_receipts(args.state_dir, {p.receipt for p in tally.pushes if p.receipt})

    def receipt_or_logged(push: Push) -> dict[str, Any]:
        return logged.get(push.receipt or "") or receipt_of(push)

    with ThreadPoolExecutor(8) as readers:
        for push, receipt in zip(tally.pushes, readers.map(receipt_or_logged, tally.pushes), strict=True):
            if receipt["status"] != "committed":
                failed += 1
                continue
            finished = datetime.fromisoformat(receipt["finished_at"]).timestamp()
            latencies.append(finished - push.started)
            received = datetime.fromisoformat(receipt["received_at"]).timestamp()
            taken = datetime.fromisoformat(receipt["started_at"]).timestamp()
            parts["late"].append(push.sent - push.started)
            parts["answered"].append(push.answered - push.sent)
            parts["received"].append(received - push.started)
            parts["waiting"].append(taken - received)
            parts["committed"].append(finished - taken)
    sample = random.Random(1).sample(tally.pushes, min(20, len(tally.pushes)))
    queryable = sum(1 for p in sample if support.get(f"/v1/games/{p.game}").status_code == 200)
    batches = batches_of(warehouse, options)
    commits = [b for b in batches if b["kind"] == "ingest"]
    merges = [b["seconds"] for b in batches if b["kind"] == "compact"]
    sixth = max(len(commits) // 6, 1)
    games = len(tally.pushes)
    lines = sum(p.lines for p in tally.pushes)
    span = drained - began
    figures: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "servers": args.servers, "seconds": args.seconds, "s3": args.s3, "offered_rate": args.rate,
        "commit_interval": args.commit_interval, "commit_lines": args.commit_lines,
        "compact_every": args.compact_every,
        "games_accepted": games, "lines_accepted": lines,
        "games_per_second": round(games / span, 1), "lines_per_second": round(lines / span),
        "pushing_seconds": round(pushed_until - began, 1), "drain_seconds": round(drained - pushed_until, 1),
        "push_to_queryable_p50": _q(latencies, 0.5), "push_to_queryable_p99": _q(latencies, 0.99),
        "push_to_queryable_max": round(max(latencies), 3) if latencies else None,
        **{f"{name}_p50_p99": [_q(values, 0.5), _q(values, 0.99)] for name, values in parts.items()},
        "queryable_sampled": f"{queryable}/{len(sample)}",
        "receipts_not_committed": failed, "refused_429": tally.refused, "errors": tally.errors,
        "commits": len(commits),
        "games_per_commit_p50": _q([c["games"] for c in commits], 0.5),
        "commit_seconds_p50": _q([c["seconds"] for c in commits], 0.5),
        "commit_seconds_p99": _q([c["seconds"] for c in commits], 0.99),
        # commits that do not slow down as parts accumulate: ms of commit a game, in the
        # first and the last sixth of the commits
        "commit_ms_per_game_first_sixth": _per_game(commits[:sixth]),
        "commit_ms_per_game_last_sixth": _per_game(commits[-sixth:]),
        "merge_passes": len(merges),
        "merge_seconds_p50_max": [_q(merges, 0.5), round(max(merges), 3) if merges else None],
        "peak_rss_mib": round(peak[0] / 2**20),
        # flat memory: the largest RSS in the run's first and last sixth (after warming up)
        "rss_mib_first_sixth": _rss_between(rss, 0.0, args.seconds / 6),
        "rss_mib_last_sixth": _rss_between(rss, args.seconds * 5 / 6, args.seconds),
        # where it is: the server's process (receipts, readers) and its writer's (the index)
        "rss_mib_server_first_last_sixth": [_rss_between(rss_server, 0.0, args.seconds / 6),
                                            _rss_between(rss_server, args.seconds * 5 / 6, args.seconds)],
        "rss_mib_writer_first_last_sixth": [_rss_between(rss_writer, 0.0, args.seconds / 6),
                                            _rss_between(rss_writer, args.seconds * 5 / 6, args.seconds)],
        # the largest sample of each minute: a trend, or a level it stays at
        "rss_mib_server_by_minute": _rss_by_minute(rss_server, args.seconds),
        "rss_mib_writer_by_minute": _rss_by_minute(rss_writer, args.seconds),
        # glibc's malloc arenas, when the run's environment set their number (the server
        # and its writer make two of their own since 2026-12-08: `ingest.lifetime`)
        "malloc_arena_max": os.environ.get("MALLOC_ARENA_MAX"),
        # CPU milliseconds a game cost: the server (HTTP, journal), its writer (the
        # commits) and the pushers (this process); the machine's cores over the first two
        # is the rate the service would reach with the machine to itself (derived, not run)
        "cpu_ms_per_game_server": round(1000 * (cpu_to[0] - cpu_from[0]) / max(games, 1), 3),
        "cpu_ms_per_game_writer": round(1000 * (cpu_to[1] - cpu_from[1]) / max(games, 1), 3),
        "cpu_ms_per_game_pushers": round(1000 * (cpu_to[2] - cpu_from[2]) / max(games, 1), 3),
        "lines_per_game": round(lines / max(games, 1), 1),
        "load_average_1m": os.getloadavg()[0],
    }
    for key, value in figures.items():
        print(f"  {key}: {value}")
    if len(snapshots) == 2:
        print_traced_growth(snapshots[0], snapshots[1])
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"live-{figures['when'].replace(':', '')}.json"
    out.write_text(json.dumps(figures, indent=2))
    print(f"kept in {out.relative_to(ROOT)}")


def _rss_between(samples: list[tuple[float, int]], start: float, end: float) -> int | None:
    inside = [value for at, value in samples if start <= at <= end]
    return round(max(inside) / 2**20) if inside else None


def traced_snapshot(pid: int, folder: Path) -> Path:
    """Ask the traced server for a snapshot of its allocations (SIGUSR2) and wait for it."""
    number = len(list(folder.glob("*.snapshot"))) + 1
    path = folder / f"{number}.snapshot"
    os.kill(pid, signal.SIGUSR2)
    deadline = time.monotonic() + 600
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"the traced server wrote no {path.name} in 600 s")
        time.sleep(0.2)
    return path


def print_traced_growth(first: Path, last: Path, top: int = 12) -> None:
    """What the server's Python allocations gained between two snapshots: by the line that
    made them, then by their whole traceback."""
    import tracemalloc

    skip = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib._bootstrap>")]
    before = tracemalloc.Snapshot.load(str(first)).filter_traces(skip)
    after = tracemalloc.Snapshot.load(str(last)).filter_traces(skip)
    total = sum(s.size for s in after.statistics("filename")) - sum(s.size for s in before.statistics("filename"))
    print(f"  traced (Python's allocator) grew {total / 2**20:+.1f} MiB from the first sixth to the end; by line:")
    for stat in after.compare_to(before, "lineno")[:top]:
        frame = stat.traceback[0]
        print(f"    {stat.size_diff / 2**20:+7.2f} MiB {stat.count_diff:+9,d} blocks  {frame.filename}:{frame.lineno}")
    print("  by traceback (innermost last):")
    for stat in after.compare_to(before, "traceback")[:top]:
        print(f"    {stat.size_diff / 2**20:+7.2f} MiB {stat.count_diff:+9,d} blocks")
        for line in stat.traceback.format(limit=8):
            print(f"      {line}")


def _rss_by_minute(samples: list[tuple[float, int]], seconds: float) -> list[int | None]:
    return [_rss_between(samples, 60.0 * m, min(60.0 * (m + 1), seconds)) for m in range(int(-(-seconds // 60)))]


def _q(values: list[float] | list[int], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(float(ordered[min(len(ordered) - 1, int(q * len(ordered)))]), 3)


def _per_game(commits: list[dict[str, Any]]) -> float | None:
    games = sum(c["games"] for c in commits)
    return round(1000 * sum(c["seconds"] for c in commits) / games, 3) if games else None


def batches_of(warehouse: str, options: dict[str, str] | None) -> list[dict[str, Any]]:
    """Every batch's kind (`ingest`: a group; `compact`: a merge pass), games, lines and
    seconds, in order (from the warehouse's own record)."""
    from ingest.store import Warehouse

    store = Warehouse(warehouse, options)
    rows = store.dataset("batches", store.snapshot().versions["batches"]).to_table(
        columns=["id", "kind", "started", "ended", "lines", "games_new", "games_updated"]).to_pylist()
    return [{"kind": r["kind"], "games": r["games_new"] + r["games_updated"], "lines": r["lines"],
             "seconds": (r["ended"] - r["started"]).total_seconds()} for r in sorted(rows, key=lambda r: r["id"])]


if __name__ == "__main__":
    main()
