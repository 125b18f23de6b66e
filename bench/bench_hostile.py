"""Hostile inputs benchmark (issue #34, "Bounded by design"): prints figures, asserts nothing.

For each input the issue measured, the peak RSS of the command that reads it — the
command run by a fresh interpreter that reports `resource.getrusage(RUSAGE_CHILDREN)`, so
the figure covers the command and every process it waited for (the query's sandbox
process included) — its wall time and its exit status:

  * a one-line gzip bomb (4 GiB of spaces, about 4 MB compressed): `validate --json` and
    `ingest`;
  * 1 M and 10 M open games (one header line each, never closed): `validate --json`, and
    `ingest` of the 1 M;
  * the SQL sandbox's hostile statements (`tests/cli/test_sandbox.py`, HOSTILE) through
    `haftkhabis query` under --memory-limit and --timeout;

and, against a running `haftkhabis serve`, the latency of a one-line `POST /v1/validate`
(median, 95th and 99th percentiles, max over --samples requests, at most 20 a second)
alone, while 8 slow bodies trickle in (8 keys, one line a second each), and while 8 huge
bodies (about 60 MB each) are validated — the attackers in a process of their own. Targets (the issue): validate and ingest at most 1 GiB whatever the input; a
query at most its memory limit; the one-line validate under 100 ms under attack.

Inputs are cached under bench/out/hostile/. The load average is printed at the start and
the end (others may share the machine).

    .venv/bin/python bench/bench_hostile.py                 # everything, at full size
    .venv/bin/python bench/bench_hostile.py --scale 0.1     # a tenth of the sizes
    .venv/bin/python bench/bench_hostile.py --only api
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "hostile"
MiB = 1 << 20
GiB = 1 << 30
SECTIONS = ("bomb", "open", "sql", "api")

PEAK_OF = """
import json, resource, subprocess, sys, time
clock = time.monotonic()
code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(json.dumps({"code": code, "seconds": time.monotonic() - clock,
                  "peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""


def peak_of(command: list[str]) -> dict[str, float]:
    """Exit status, wall seconds and peak RSS (bytes) of `command` and what it waited for."""
    done = subprocess.run([sys.executable, "-c", PEAK_OF, *command], capture_output=True,
                          text=True, check=True, cwd=ROOT)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def haftkhabis(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.app", *args]


def row(label: str, figures: dict[str, float]) -> None:
    print(f"  {label:<58} peak {figures['peak'] / MiB:8,.0f} MiB  "
          f"{figures['seconds']:7.1f} s  exit {int(figures['code'])}", flush=True)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# ----------------------------------------------------------------------------- inputs


def bomb_file(size: int) -> Path:
    """A gzip file inflating to one line of `size` spaces (then one short line)."""
    path = OUT / f"bomb-{size // MiB}MiB.jsonl.gz"
    if not path.exists():
        deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
        piece = b" " * (64 * MiB)
        with open(f"{path}.part", "wb") as out:
            for _ in range(size // len(piece)):
                out.write(deflate.compress(piece))
            out.write(deflate.compress(b"\n{}\n"))
            out.write(deflate.flush())
        os.replace(f"{path}.part", path)
    return path


def open_games_file(games: int) -> Path:
    """`games` games of one header line each, never dealt."""
    path = OUT / f"open-{games}.jsonl"
    if not path.exists():
        head = ('{"game":"open-%09d","seq":0,"type":"game","format":"haftkhabis/1",'
                '"ruleset":"bazito","players":["a","b","c","d"]}\n')
        with open(f"{path}.part", "w") as out:
            for start in range(0, games, 100_000):
                out.write("".join(head % n for n in range(start, min(games, start + 100_000))))
        os.replace(f"{path}.part", path)
    return path


# --------------------------------------------------------------------------- sections


def bench_bomb(scale: float) -> None:
    size = max(64 * MiB, int(4 * GiB * scale) // (64 * MiB) * 64 * MiB)
    bomb = bomb_file(size)
    print(f"one-line gzip bomb: {size / GiB:.2f} GiB of spaces, {bomb.stat().st_size / MiB:.1f} MiB "
          "of gzip", flush=True)
    row("validate --json", peak_of(haftkhabis("validate", "--json", str(bomb))))
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as folder:
        row("ingest (one worker)", peak_of(haftkhabis("ingest", "-q", "-j", "1", str(bomb),
                                                      "--warehouse", f"{folder}/wh")))


def bench_open(scale: float) -> None:
    for games in (1_000_000, 10_000_000):
        n = max(10_000, int(games * scale))
        log = open_games_file(n)
        print(f"{n:,} open games ({log.stat().st_size / MiB:,.0f} MiB)", flush=True)
        row("validate --json", peak_of(haftkhabis("validate", "--json", str(log))))
        if games == 1_000_000:
            with tempfile.TemporaryDirectory(prefix="bench-hostile-") as folder:
                row("ingest (one worker)", peak_of(haftkhabis(
                    "ingest", "-q", "-j", "1", str(log), "--warehouse", f"{folder}/wh")))


def bench_sql(memory_mb: int, seconds: float) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.cli.test_sandbox import HOSTILE

    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as folder:
        warehouse = f"{folder}/wh"
        subprocess.run(haftkhabis("ingest", "-q", "data/sample", "--warehouse", warehouse),
                       cwd=ROOT, check=True, capture_output=True)
        print(f"SQL sandbox: {len(HOSTILE)} hostile statements under --memory-limit "
              f"{memory_mb}MB --timeout {seconds:g}", flush=True)
        for statement, _limit in HOSTILE:
            figures = peak_of(haftkhabis("query", statement, "-w", warehouse, "--memory-limit",
                                         f"{memory_mb}MB", "--timeout", str(seconds)))
            row(statement[:58], figures)


# ----------------------------------------------------------------------------- the API


@dataclass
class Served:
    """A running `haftkhabis serve`: its address and process id (its event loop is the
    process's main thread, so the thread id is the pid)."""

    url: str
    pid: int


@contextmanager
def server(keys: dict[str, str], own_session: bool, priority: int | None) -> Iterator[Served]:
    from service.auth import key_entry

    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as folder:
        keys_file = Path(folder) / "keys.toml"
        keys_file.write_text("\n".join(key_entry(name, key, ["support"])
                                       for name, key in keys.items()))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = subprocess.Popen(
            haftkhabis("serve", "--warehouse", f"{folder}/wh", "--port", str(port), "--keys",
                       str(keys_file), "--rate", "0", "--log-level", "warning"),
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=own_session)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit("haftkhabis serve did not come up")
                time.sleep(0.1)
            if priority is not None:
                # the niceness of the server's autogroup (its session against the others)
                Path(f"/proc/{process.pid}/autogroup").write_text(str(priority))
            yield Served(url, process.pid)
        finally:
            process.terminate()
            process.wait(30)


ONE_LINE = (b'{"game":"probe","seq":0,"type":"game","format":"haftkhabis/1",'
            b'"ruleset":"bazito","players":["a","b","c","d"]}\n')


#: the probe's pace: one request every 50 ms at most (a key's default rate, 20 a second),
#: so that it measures the server under the attack rather than loading it as a flood would
PROBE_EVERY = 0.05


def schedstat(path: str) -> tuple[int, int]:
    """A thread's nanoseconds on a core and waiting on a run queue for one
    (`/proc/…/schedstat`), or (0, 0) once it is gone."""
    try:
        with open(path) as stat:
            on_cpu, run_delay, _ = stat.read().split()
    except (OSError, ValueError):
        return 0, 0
    return int(on_cpu), int(run_delay)


@dataclass
class Probe:
    """One one-line validate: its wall time as the probe saw it, and what that time held:
    the server's event loop on a core, the loop waiting for one, and the probe's own
    thread waiting for one (seconds; the rest is the loop waiting for the GIL or the
    network, and the probe on its core)."""

    seconds: float
    loop_cpu: float
    loop_wait: float
    probe_wait: float


def latencies(served: Served, key: str, samples: int) -> list[Probe]:
    """`samples` one-line validates over one keep-alive connection, from a raw socket (the
    probe's own CPU stays a few hundred microseconds a request: what is measured is the
    server and the machine), at most one every PROBE_EVERY seconds."""
    host, port = served.url.removeprefix("http://").split(":")
    loop = f"/proc/{served.pid}/task/{served.pid}/schedstat"
    own = "/proc/thread-self/schedstat"
    request = (f"POST /v1/validate HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer {key}\r\n"
               f"Content-Length: {len(ONE_LINE)}\r\n\r\n").encode() + ONE_LINE
    out = []
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = sock.makefile("rb")

        def ask() -> None:
            sock.sendall(request)
            status = reader.readline()
            assert status.startswith(b"HTTP/1.1 200"), status
            length = 0
            while (header := reader.readline()) not in (b"\r\n", b""):
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            reader.read(length)

        ask()  # a warm connection
        for _ in range(samples):
            loop_before, own_before = schedstat(loop), schedstat(own)
            clock = time.perf_counter()
            ask()
            seconds = time.perf_counter() - clock
            loop_after, own_after = schedstat(loop), schedstat(own)
            out.append(Probe(seconds, (loop_after[0] - loop_before[0]) / 1e9,
                             (loop_after[1] - loop_before[1]) / 1e9,
                             (own_after[1] - own_before[1]) / 1e9))
            time.sleep(max(0.0, PROBE_EVERY - seconds))  # pacing, not synchronisation
    return out


def show_latency(label: str, probes: list[Probe]) -> None:
    ms = sorted(p.seconds * 1000 for p in probes)

    def rank(q: float) -> float:
        return ms[min(len(ms) - 1, round(q * (len(ms) - 1)))]

    print(f"  {label:<24} median {statistics.median(ms):6.1f} ms  p95 {rank(0.95):6.1f} ms  "
          f"p99 {rank(0.99):6.1f} ms  max {ms[-1]:6.1f} ms  ({len(ms)} requests, "
          f"{sum(m >= 100 for m in ms)} at 100 ms or more)", flush=True)
    slow = sorted(probes, key=lambda p: p.seconds)[-max(1, len(probes) // 50):]
    total = sum(p.seconds for p in slow)
    parts = {"the loop waiting for a core": sum(p.loop_wait for p in slow),
             "the loop on a core": sum(p.loop_cpu for p in slow),
             "the probe waiting for a core": sum(p.probe_wait for p in slow)}
    print(f"    its slowest {len(slow)} ({total / len(slow) * 1000:.0f} ms on average): "
          + ", ".join(f"{part} {share / total:.0%}" for part, share in parts.items())
          + f", the rest {1 - sum(parts.values()) / total:.0%}", flush=True)


def slow_body(url: str, key: str, stop: threading.Event) -> None:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(f"POST /v1/validate HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer {key}\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        line = ONE_LINE.rstrip() + b" " * 16 * 1024 + b"\n"  # above the default minimum rate
        while not stop.wait(1.0):
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(line), line))
            except OSError:
                return


def huge_body(url: str, key: str, body: bytes, done: list[float]) -> None:
    """Post `body` and read the answer to its end, over a raw socket: the attacker spends
    no CPU parsing what it reads (the server's, not the client's, is measured)."""
    host, port = url.removeprefix("http://").split(":")
    clock = time.perf_counter()
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(f"POST /v1/validate HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer {key}\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode())
        sock.sendall(body)
        buffer = bytearray(1 << 20)
        head = b""
        while sock.recv_into(buffer):
            head = head or bytes(buffer[:12])
    assert head.startswith(b"HTTP/1.1 200"), head
    done.append(time.perf_counter() - clock)


def attack(kind: str, url: str, keys: list[str], huge: str | None) -> None:
    """The attackers' process (`--attack`), apart from the probe's, so that the probe's
    figures are the server's, not those of a client sharing a GIL with eight uploads: `slow`
    trickles a body per key until its standard input closes; `huge` posts the file `huge`
    per key, then prints how long each took and its own CPU."""
    if kind == "slow":
        stop = threading.Event()
        slow = [threading.Thread(target=slow_body, args=(url, key, stop), daemon=True) for key in keys]
        for thread in slow:
            thread.start()
        print("started", flush=True)
        sys.stdin.read()
        stop.set()
        return
    assert huge is not None
    body = Path(huge).read_bytes()[: 60 * MiB]
    done: list[float] = []
    big = [threading.Thread(target=huge_body, args=(url, key, body, done)) for key in keys]
    for thread in big:
        thread.start()
    for thread in big:
        thread.join()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"seconds": done, "cpu": usage.ru_utime + usage.ru_stime}), flush=True)


def attacker(kind: str, url: str, keys: list[str], huge: Path | None,
             own_session: bool) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, "--attack", kind, "--url", url, *(
        ["--huge", str(huge)] if huge else []), *(f"--key={key}" for key in keys)]
    return subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, start_new_session=own_session)


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def bench_api(samples: int, scale: float, one_session: bool, priority: int | None) -> None:
    from bench_live import cpu_seconds  # the same /proc reading (bench/ is the script's path)

    names = [f"attacker-{n}" for n in range(8)] + ["probe"]
    keys = {name: os.urandom(16).hex() for name in names}
    huge = open_games_file(max(10_000, int(550_000 * scale)))
    size = min(huge.stat().st_size, 60 * MiB)
    print(f"one-line POST /v1/validate (huge bodies: {size / MiB:.0f} MiB each; the attackers "
          "in a process of their own" + (", all in the bench's session)" if one_session else
                                          ", it and the server each in a session of its own)"),
          flush=True)
    attackers = [keys[name] for name in names[:8]]
    own_session = not one_session
    with server(keys, own_session, priority) as served:
        url = served.url
        # a server that has judged large bodies before: its two bulk workers started (each
        # takes about a second of CPU to start, once in the server's life)
        warm = huge.read_bytes()[: 2 * MiB]
        warming: list[float] = []
        both = [threading.Thread(target=huge_body, args=(url, keys[name], warm, warming))
                for name in names[:2]]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join()
        show_latency("alone", latencies(served, keys["probe"], samples))
        slow = attacker("slow", url, attackers, None, own_session)
        assert slow.stdout is not None and slow.stdout.readline() == "started\n"
        time.sleep(2.0)  # the slow bodies are in flight
        show_latency("under 8 slow bodies", latencies(served, keys["probe"], samples))
        slow.communicate("")
        workers = children(served.pid)
        before = {pid: cpu_seconds(pid) for pid in [served.pid, *workers]}
        probe_before = time.process_time()
        clock = time.monotonic()
        big = attacker("huge", url, attackers, huge, own_session)
        measured: list[Probe] = []
        while big.poll() is None:
            measured.extend(latencies(served, keys["probe"], 5))
        wall = time.monotonic() - clock
        show_latency("under 8 huge bodies", measured)
        # the control: the probe alone as long again (at most 30 s), the machine's other
        # load as it is now
        show_latency("alone, just after", latencies(served, keys["probe"], min(len(measured), 600)))
        assert big.stdout is not None
        report = json.loads(big.stdout.read())
        done, attacker_cpu = report["seconds"], report["cpu"]
        print(f"  the huge bodies took {min(done):.1f}-{max(done):.1f} s each", flush=True)
        used = {pid: cpu_seconds(pid) - was for pid, was in before.items()}
        print(f"  CPU over those {wall:.0f} s: the server {used.pop(served.pid):.1f} s, its bulk "
              f"workers {sum(used.values()):.1f} s, the attackers {attacker_cpu:.1f} s, "
              f"the probe {time.process_time() - probe_before:.1f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="scale the inputs' sizes")
    parser.add_argument("--only", choices=SECTIONS, action="append", help="run these sections")
    parser.add_argument("--samples", type=int, default=50, help="one-line validates per figure")
    parser.add_argument("--query-memory-mb", type=int, default=1024)
    parser.add_argument("--query-seconds", type=float, default=10.0)
    parser.add_argument("--one-session", action="store_true",
                        help="run the server and the attackers in the bench's own session "
                             "(autogroup), as before: their CPU then counts as one")
    parser.add_argument("--server-autogroup-nice", type=int, metavar="N",
                        help="the niceness of the server's session (its autogroup, "
                             "/proc/PID/autogroup; below 0 needs root): its share of the "
                             "cores against the machine's other sessions")
    parser.add_argument("--attack", choices=("slow", "huge"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--huge", help=argparse.SUPPRESS)
    parser.add_argument("--key", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attack:
        attack(args.attack, args.url, args.key, args.huge)
        return
    OUT.mkdir(parents=True, exist_ok=True)
    sections = args.only or list(SECTIONS)
    print(f"load average at start: {load()}", flush=True)
    if "bomb" in sections:
        bench_bomb(args.scale)
    if "open" in sections:
        bench_open(args.scale)
    if "sql" in sections:
        bench_sql(args.query_memory_mb, args.query_seconds)
    if "api" in sections:
        bench_api(args.samples, args.scale, args.one_session, args.server_autogroup_nice)
    print(f"load average at end: {load()}", flush=True)


if __name__ == "__main__":
    main()
