"""Validation throughput benchmark (issue 2): prints figures, asserts nothing.

Simulates N bazito hands once (cached under bench/out/), then, each in a fresh process so
peak memory is its own, times
  1. a bare `orjson.loads` of every line of the file (the decoder the validator uses), and
  2. `Validator` over the same file (reading, decoding, routing, replay, verdicts),
and prints events/s, games/s, peak RSS and the ratio validate ÷ bare decode.

    .venv/bin/python bench/bench_validate.py              # 100,000 hands
    .venv/bin/python bench/bench_validate.py --hands 20000
    .venv/bin/python bench/bench_validate.py --compiled  # also time a mypyc build of the engine

`--compiled` builds `engine/machine.py` and `engine/validate.py` with mypyc into
bench/out/mypyc/ (never into the source tree, so nothing stale can shadow the code) and
times validation with that build too. The project itself runs the pure-Python engine.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
MYPYC = OUT / "mypyc"


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child_decode(path: str) -> dict[str, float]:
    import orjson

    started = time.perf_counter()
    lines = 0
    with open(path, "rb") as handle:
        for raw in handle:
            orjson.loads(raw)
            lines += 1
    seconds = time.perf_counter() - started
    return {"lines": lines, "seconds": seconds, "peak_mib": _peak_rss_mib()}


def _child_validate(path: str, compiled: bool = False) -> dict[str, float]:
    sys.path.insert(0, str(MYPYC if compiled else ROOT))
    import engine.machine
    from engine.validate import Validator

    if compiled and not engine.machine.__file__.endswith(".so"):
        raise SystemExit(f"the mypyc build was not picked up: {engine.machine.__file__}")

    started = time.perf_counter()
    validator = Validator()
    validator.feed_file(path)
    games = 0
    compliant = 0
    for verdict in validator.finish():
        games += 1
        compliant += verdict.status == "compliant"
    seconds = time.perf_counter() - started
    return {
        "lines": validator.lines_read, "games": games, "compliant": compliant,
        "seconds": seconds, "peak_mib": _peak_rss_mib(),
    }


def _build_mypyc() -> None:
    if MYPYC.exists():
        shutil.rmtree(MYPYC)
    shutil.copytree(ROOT / "engine", MYPYC / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    print("building the engine with mypyc into bench/out/mypyc/ …", flush=True)
    subprocess.run(
        [str(Path(sys.executable).with_name("mypyc")), "engine/machine.py", "engine/validate.py"],
        cwd=MYPYC, check=True, capture_output=True,
    )


def _run_child(kind: str, path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)],
        check=True, capture_output=True, text=True,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def _ensure_sample(hands: int, seed: int) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"bazito-{hands}-s{seed}.jsonl"
    if path.exists():
        return path
    sys.path.insert(0, str(ROOT))
    from engine.simulate import SimConfig, write_simulation

    print(f"simulating {hands:,} bazito hands (once; cached in {path.relative_to(ROOT)}) …", flush=True)
    started = time.perf_counter()
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as out:
        # a bazito game is one hand unless its header asks for more
        summary = write_simulation(SimConfig("bazito", games=hands, seed=seed), out)
    partial.rename(path)
    print(f"  {summary.games:,} games, {summary.lines:,} lines in {time.perf_counter() - started:.1f} s")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compiled", action="store_true", help="also time a mypyc build of the engine")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, path = args.child
        if kind == "decode":
            result = _child_decode(path)
        else:
            result = _child_validate(path, compiled=kind == "compiled")
        print(json.dumps(result))
        return
    path = _ensure_sample(args.hands, args.seed)
    size_mib = path.stat().st_size / 2**20
    decode = _run_child("decode", path)
    validate = _run_child("validate", path)
    lines = validate["lines"]
    print(f"file: {path.relative_to(ROOT)}  ({size_mib:,.1f} MiB, {lines:,.0f} lines, "
          f"{validate['games']:,.0f} games, {validate['compliant']:,.0f} compliant)")
    print(f"bare orjson decode : {decode['lines'] / decode['seconds']:>12,.0f} lines/s  "
          f"({decode['seconds']:.2f} s, peak {decode['peak_mib']:.0f} MiB)")
    print(f"validate           : {lines / validate['seconds']:>12,.0f} events/s  "
          f"{validate['games'] / validate['seconds']:,.0f} games/s  "
          f"({validate['seconds']:.2f} s, peak {validate['peak_mib']:.0f} MiB)")
    print(f"ratio validate ÷ bare decode: {decode['seconds'] / validate['seconds']:.3f} "
          f"(validate takes {validate['seconds'] / decode['seconds']:.1f}× the decode time)")
    if args.compiled:
        _build_mypyc()
        compiled = _run_child("compiled", path)
        print(f"validate, mypyc    : {compiled['lines'] / compiled['seconds']:>12,.0f} events/s  "
              f"{compiled['games'] / compiled['seconds']:,.0f} games/s  "
              f"({compiled['seconds']:.2f} s, peak {compiled['peak_mib']:.0f} MiB; "
              f"{validate['seconds'] / compiled['seconds']:.2f}× the pure-Python speed)")


if __name__ == "__main__":
    main()
