"""CLI start-up benchmark: how long `haftkhabis --help` takes, whole process.

    .venv/bin/python bench/bench_startup.py               # 20 runs of `haftkhabis --help`
    .venv/bin/python bench/bench_startup.py --runs 50 -- validate --help

The target (issue 9) is under 0.5 s: the CLI imports its heavy libraries (DuckDB, polars,
pyarrow, deltalake, Streamlit) only inside the commands that use them, so printing help
loads the interpreter, typer and rich and nothing else. Each run is a fresh process
started from the virtualenv's entry point, timed wall-clock from spawn to exit; the
figures printed are the minimum, median and maximum, with the load average beside them.
The modules a run imported are checked too: a heavy library among them is reported, as
it would be a regression whatever the timing. Results go to `bench/out/startup-*.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
ENTRY = ROOT / ".venv" / "bin" / "haftkhabis"
HEAVY = ("duckdb", "polars", "pyarrow", "deltalake", "streamlit", "pandas", "numpy")

PROBE = """
import runpy, sys
sys.argv = [{entry!r}] + {args!r}
try:
    runpy.run_path({entry!r}, run_name="__main__")
except SystemExit:
    pass
print("\\n#MODULES " + " ".join(sorted({{m.split(".")[0] for m in sys.modules}})), file=sys.stderr)
"""


def time_once(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([str(ENTRY), *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def heavy_imports(args: list[str]) -> list[str]:
    """The heavy libraries a run of `haftkhabis ARGS` imports (run once, not timed)."""
    probe = PROBE.format(entry=str(ENTRY), args=args)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    line = done.stderr.rsplit("#MODULES ", 1)[-1].split()
    return [name for name in HEAVY if name in line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("args", nargs="*", default=["--help"],
                        help="arguments to haftkhabis (after --)")
    options = parser.parse_args()
    if not ENTRY.exists():
        sys.exit(f"{ENTRY} is missing: run `make setup` first")
    time_once(options.args)  # warm the page cache; not counted
    times = sorted(time_once(options.args) for _ in range(options.runs))
    heavy = heavy_imports(options.args)
    result = {
        "command": ["haftkhabis", *options.args],
        "runs": options.runs,
        "min_s": round(times[0], 4),
        "median_s": round(statistics.median(times), 4),
        "max_s": round(times[-1], 4),
        "heavy_imports": heavy,
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    print(f"haftkhabis {' '.join(options.args)}: min {result['min_s']:.3f} s, "
          f"median {result['median_s']:.3f} s, max {result['max_s']:.3f} s "
          f"over {options.runs} runs (load {result['load']})")
    print("heavy libraries imported: " + (", ".join(heavy) if heavy else "none"))
    OUT.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    report = OUT / f"startup-{stamp}.json"
    report.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {report.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
