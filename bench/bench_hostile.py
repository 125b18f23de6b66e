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
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def server(keys: dict[str, str]) -> Iterator[str]:
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
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
            yield url
        finally:
            process.terminate()
            process.wait(30)


ONE_LINE = (b'{"game":"probe","seq":0,"type":"game","format":"haftkhabis/1",'
            b'"ruleset":"bazito","players":["a","b","c","d"]}\n')


#: the probe's pace: one request every 50 ms at most (a key's default rate, 20 a second),
#: so that it measures the server under the attack rather than loading it as a flood would
PROBE_EVERY = 0.05


def latencies(url: str, key: str, samples: int) -> list[float]:
    out = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as client:
        client.post("/v1/validate", content=ONE_LINE)  # a warm connection
        for _ in range(samples):
            clock = time.perf_counter()
            response = client.post("/v1/validate", content=ONE_LINE)
            out.append(time.perf_counter() - clock)
            assert response.status_code == 200, response.text
            time.sleep(max(0.0, PROBE_EVERY - out[-1]))  # pacing, not synchronisation
    return out


def show_latency(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)

    def rank(q: float) -> float:
        return ms[min(len(ms) - 1, round(q * (len(ms) - 1)))]

    print(f"  {label:<24} median {statistics.median(ms):6.1f} ms  p95 {rank(0.95):6.1f} ms  "
          f"p99 {rank(0.99):6.1f} ms  max {ms[-1]:6.1f} ms  ({len(ms)} requests, "
          f"{sum(m >= 100 for m in ms)} at 100 ms or more)", flush=True)


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
    per key, then prints how long each took."""
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
    print(json.dumps(done), flush=True)


def attacker(kind: str, url: str, keys: list[str], huge: Path | None = None) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, "--attack", kind, "--url", url, *(
        ["--huge", str(huge)] if huge else []), *(f"--key={key}" for key in keys)]
    return subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def bench_api(samples: int, scale: float) -> None:
    names = [f"attacker-{n}" for n in range(8)] + ["probe"]
    keys = {name: os.urandom(16).hex() for name in names}
    huge = open_games_file(max(10_000, int(550_000 * scale)))
    size = min(huge.stat().st_size, 60 * MiB)
    print(f"one-line POST /v1/validate (huge bodies: {size / MiB:.0f} MiB each; the attackers "
          "in a process of their own)", flush=True)
    attackers = [keys[name] for name in names[:8]]
    with server(keys) as url:
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
        show_latency("alone", latencies(url, keys["probe"], samples))
        slow = attacker("slow", url, attackers)
        assert slow.stdout is not None and slow.stdout.readline() == "started\n"
        time.sleep(2.0)  # the slow bodies are in flight
        show_latency("under 8 slow bodies", latencies(url, keys["probe"], samples))
        slow.communicate("")
        big = attacker("huge", url, attackers, huge)
        measured: list[float] = []
        while big.poll() is None:
            measured.extend(latencies(url, keys["probe"], 5))
        show_latency("under 8 huge bodies", measured)
        assert big.stdout is not None
        done = json.loads(big.stdout.read())
        print(f"  the huge bodies took {min(done):.1f}-{max(done):.1f} s each", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="scale the inputs' sizes")
    parser.add_argument("--only", choices=SECTIONS, action="append", help="run these sections")
    parser.add_argument("--samples", type=int, default=50, help="one-line validates per figure")
    parser.add_argument("--query-memory-mb", type=int, default=1024)
    parser.add_argument("--query-seconds", type=float, default=10.0)
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
        bench_api(args.samples, args.scale)
    print(f"load average at end: {load()}", flush=True)


if __name__ == "__main__":
    main()
