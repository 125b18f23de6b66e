"""Two deal-audit reports (`haftkhabis audit deals --format json`) compared key by key:
every count, string, status, flag and detail must be equal and in the same order; floats
may differ by rounding (sums made in another order). Prints the largest relative and
absolute difference per field and per test family; exits 1 on any other difference or on
a float whose relative difference exceeds --rel.

    .venv/bin/python bench/compare_deal_reports.py before.json after.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson


def differences(a: Any, b: Any, path: str, floats: list[tuple[float, float, str]]) -> list[str]:
    """Where `a` and `b` differ other than in a float's value (those go to `floats`)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}.{k}", floats)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items against {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]", floats)]
    if isinstance(a, float) and isinstance(b, float):
        if a != b:
            floats.append((abs(a - b) / max(abs(a), abs(b)), abs(a - b), path))
        return []
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} against {b!r}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rel", type=float, default=1e-9, help="largest relative float difference allowed")
    args = parser.parse_args()
    a, b = (orjson.loads(Path(path).read_bytes()) for path in (args.before, args.after))
    floats: list[tuple[float, float, str]] = []
    other = differences(a, b, "", floats)
    print(f"{len(a['tests'])} tests, {len(a['findings'])} findings, {a['deals']:,} deals, {a['hands']:,} hands; "
          f"{len(other)} differences other than floats; {len(floats)} floats differ")
    for line in other[:10]:
        print("  " + line)
    fields: dict[str, tuple[float, float]] = {}
    families: dict[str, tuple[float, float]] = {}
    for rel, absolute, path in floats:
        name = path.rsplit(".", 1)[-1]
        fields[name] = max(fields.get(name, (0.0, 0.0)), (rel, absolute))
        if path.startswith(".tests["):
            family = a["tests"][int(path[len(".tests["):path.index("]")])]["family"]
            families[family] = max(families.get(family, (0.0, 0.0)), (rel, absolute))
    for title, largest in (("field", fields), ("family", families)):
        print(f"  largest relative (absolute) difference per {title}: "
              + ", ".join(f"{k} {r:.2g} ({d:.2g})" for k, (r, d) in sorted(largest.items())))
    worst = max((rel for rel, _, _ in floats), default=0.0)
    return 1 if other or worst > args.rel else 0


if __name__ == "__main__":
    sys.exit(main())
