"""`haftkhabis ingest --follow` measured: a backlog, and a steady trickle of lines, through a
real follower process over a fresh warehouse; figures printed, never asserted.

    .venv/bin/python bench/bench_follow.py                        # 5,000 games, 1,000 lines/s for 90 s
    .venv/bin/python bench/bench_follow.py --games 1000 --seconds 20

1. **Backlog**: a simulated bazito log (`--games`) is in the directory when the follower
   starts; it commits it in groups of at most `--commit-lines`. Printed: the batches, their
   lines and seconds, the whole time to the last commit; beside it, a one-shot
   `haftkhabis ingest -j 1` of the same file.
2. **Trickle**: an empty directory followed, a writer appending `--rate` lines a second
   (five writes a second) for `--seconds`; printed: the batches, lines per batch, commit
   seconds p50/p90/max (each batch's own line), the delay from the writer's last line to
   its commit, and the follower's resident memory, sampled every second.

The machine's load is printed beside them; the figures go to `bench/out/follow-*.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.simulate import SimConfig, simulate  # noqa: E402

OUT = ROOT / "bench" / "out"
BATCH = re.compile(r"batch ([0-9]+): ([0-9,]+) files?, ([0-9,]+) lines?, ([0-9,]+) games?, ([0-9.]+) s")


def follower(directory: Path, warehouse: Path, out: Path, interval: float, lines: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "cli.app", "ingest", "--follow", str(directory), "-w", str(warehouse),
               "--commit-interval", str(interval), "--commit-lines", str(lines)]
    return subprocess.Popen(command, cwd=ROOT, stdout=open(out, "wb"), stderr=subprocess.DEVNULL)


def batches(out: Path) -> list[dict[str, float]]:
    found = []
    for line in out.read_text().splitlines():
        match = BATCH.match(line)
        if match:
            found.append({"batch": int(match[1]), "lines": int(match[3].replace(",", "")),
                          "games": int(match[4].replace(",", "")), "seconds": float(match[5])})
    return found


def wait_for_lines(out: Path, total: int, deadline: float = 3600.0) -> float:
    """Seconds until the follower has printed batches holding `total` lines."""
    start = time.monotonic()
    while sum(b["lines"] for b in batches(out)) < total:
        if time.monotonic() - start > deadline:
            raise SystemExit(f"the follower did not commit {total} lines in {deadline:.0f} s")
        time.sleep(0.05)
    return time.monotonic() - start


def rss_mib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return 0


def stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=300)


def _shown(batch: dict[str, float]) -> str:
    return f"{batch['lines']:,.0f} lines {batch['seconds']:.2f} s"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=5000, help="bazito games in the backlog's log")
    parser.add_argument("--rate", type=int, default=1000, help="lines a second in the trickle")
    parser.add_argument("--seconds", type=float, default=90.0, help="the trickle's length")
    parser.add_argument("--commit-interval", type=float, default=1.0)
    parser.add_argument("--commit-lines", type=int, default=100_000)
    options = parser.parse_args()
    load = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="follow-", dir=OUT if OUT.exists() else None))
    lines = [line for game in simulate(SimConfig("bazito", games=options.games, seed=3))
             for line in game.lines]
    record: dict[str, Any] = {"started": datetime.now(UTC).isoformat(), "load_at_start": load,
                              "games": options.games, "lines": len(lines),
                              "commit_interval": options.commit_interval,
                              "commit_lines": options.commit_lines}

    # 1. the backlog
    logs = work / "backlog"
    logs.mkdir()
    log = logs / "server.log"
    log.write_bytes(b"".join(line + b"\n" for line in lines))
    clock = time.monotonic()
    subprocess.run([sys.executable, "-m", "cli.app", "ingest", str(log), "-w", str(work / "once"), "-j", "1", "-q"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    one_shot = time.monotonic() - clock
    process = follower(logs, work / "wh-backlog", work / "backlog.out", options.commit_interval,
                       options.commit_lines)
    took = wait_for_lines(work / "backlog.out", len(lines))
    stop(process)
    found = batches(work / "backlog.out")
    record["backlog"] = {"seconds_to_last_commit": took, "one_shot_seconds": one_shot, "batches": found}
    print(f"backlog: {len(lines):,} lines in {len(found)} batches "
          f"({', '.join(_shown(b) for b in found)}); "
          f"{took:.1f} s from the start to the last commit; one-shot ingest -j 1: {one_shot:.1f} s")

    # 2. the trickle
    logs = work / "trickle"
    logs.mkdir()
    log = logs / "server.log"
    process = follower(logs, work / "wh-trickle", work / "trickle.out", options.commit_interval,
                       options.commit_lines)
    per_write = max(1, options.rate // 5)
    written = 0
    samples: list[tuple[float, int]] = []
    start = time.monotonic()
    with open(log, "ab") as out:
        while time.monotonic() - start < options.seconds:
            chunk = lines[written % len(lines):written % len(lines) + per_write]
            out.write(b"".join(line + b"\n" for line in chunk))
            out.flush()
            written += len(chunk)
            if not samples or time.monotonic() - start - samples[-1][0] >= 1.0:
                samples.append((time.monotonic() - start, rss_mib(process.pid)))
            time.sleep(0.2)
    last_write = time.monotonic()
    wait_for_lines(work / "trickle.out", written)
    lag = time.monotonic() - last_write
    stop(process)
    found = batches(work / "trickle.out")
    seconds = [b["seconds"] for b in found]
    sizes = [b["lines"] for b in found]
    rss = [m for _, m in samples[1:]]
    record["trickle"] = {"lines": written, "seconds": options.seconds, "batches": found,
                         "last_line_to_commit": lag, "rss_mib": samples}
    record["load_at_end"] = os.getloadavg()
    print(f"trickle: {written:,} lines in {options.seconds:.0f} s ({written / options.seconds:,.0f}/s): "
          f"{len(found)} batches, {percentile(sizes, 0.5):,.0f} lines at the median; commit "
          f"p50 {percentile(seconds, 0.5):.2f} s, p90 {percentile(seconds, 0.9):.2f} s, max {max(seconds):.2f} s; "
          f"last line committed {lag:.2f} s after it was written; RSS at most "
          f"{max(rss, default=0)} MiB, {rss[-1] if rss else 0} MiB at the end")
    print(f"load average {load[0]:.1f} at the start, {record['load_at_end'][0]:.1f} at the end")
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / f"follow-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    target.write_text(json.dumps(record, indent=1))
    print(f"record: {target.relative_to(ROOT)} (the warehouses are in {work})")


if __name__ == "__main__":
    main()
