"""Test helper (not shipped): run the Python reference engine and the native core side by
side on the same logs and list every difference in their verdicts.

The verdicts compared are what the contract fixes: per game the status, the violations as
a multiset of (seq, code, player), the hands and the totals; per line error its (line,
code). Messages are free text and are not compared.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

Verdicts = tuple[dict[str, dict[str, Any]], Counter[tuple[Any, ...]]]


def reference_verdicts(paths: Sequence[str]) -> Verdicts:
    """The Python engine's verdicts (engine/machine.py, the reference being retired)."""
    from engine.validate import Validator  # the reference engine

    validator = Validator()
    validator.feed_paths(list(paths))
    games = {v.game: v.to_json() for v in validator.finish()}
    errors = Counter((e.line, e.code.value) for e in validator.errors)
    return games, errors


def core_verdicts(paths: Sequence[str]) -> Verdicts:
    """The native core's verdicts, read from the JSON lines it writes for `validate --json`."""
    from engine import _core

    games: dict[str, dict[str, Any]] = {}
    errors: Counter[tuple[Any, ...]] = Counter()
    for line in _core.validate_json(list(paths)).splitlines():
        record = orjson.loads(line)
        if record["kind"] == "game":
            games[record["game"]] = record
        else:
            errors[(record["line"], record["code"])] += 1
    return games, errors


def _violations(verdict: dict[str, Any]) -> Counter[tuple[Any, ...]]:
    return Counter((v["seq"], v["code"], v["player"]) for v in verdict["violations"])


def differences(reference: Verdicts, core: Verdicts) -> list[str]:
    """Every way the two sets of verdicts differ, in words (empty when they agree)."""
    ref_games, ref_errors = reference
    core_games, core_errors = core
    out: list[str] = []
    for game in sorted(set(ref_games) | set(core_games)):
        a, b = ref_games.get(game), core_games.get(game)
        if a is None or b is None:
            out.append(f"{game}: only in {'core' if a is None else 'reference'}")
            continue
        for key in ("ruleset", "status", "hands", "totals"):
            if a[key] != b[key]:
                out.append(f"{game}: {key}: reference {a[key]!r}, core {b[key]!r}")
        va, vb = _violations(a), _violations(b)
        if va != vb:
            out.append(f"{game}: violations: reference only {sorted(va - vb, key=repr)}, "
                       f"core only {sorted(vb - va, key=repr)}")
    if ref_errors != core_errors:
        out.append(f"errors: reference only {sorted(ref_errors - core_errors, key=repr)}, "
                   f"core only {sorted(core_errors - ref_errors, key=repr)}")
    return out


def compare_paths(paths: Sequence[str]) -> list[str]:
    return differences(reference_verdicts(paths), core_verdicts(paths))


# --------------------------------------------------------------------------- mutation

_CARDS = [r + s for s in "CDHS" for r in "A23456789TJQK"]


def mutate(lines: list[bytes], rng: random.Random) -> list[bytes]:
    """One random change a faulty server or shipper could make to a game's log."""
    if len(lines) < 3:
        return lines
    out = list(lines)
    i = rng.randrange(1, len(out))
    kind = rng.randrange(10)
    if kind == 0:  # a line lost
        del out[i]
    elif kind == 1:  # two lines swapped
        j = rng.randrange(1, len(out))
        out[i], out[j] = out[j], out[i]
    elif kind == 2:  # a shipper's retry
        out.insert(rng.randrange(i, len(out) + 1), out[i])
    else:
        try:
            obj = orjson.loads(out[i])
        except orjson.JSONDecodeError:  # a line the simulator garbled on purpose
            return out
        if not isinstance(obj, dict):
            return out
        _mutate_object(obj, rng, kind)
        out[i] = orjson.dumps(obj)
    return out


def _mutate_object(obj: dict[str, Any], rng: random.Random, kind: int) -> None:
    if kind == 3 and "card" in obj:
        obj["card"] = rng.choice(_CARDS)
    elif kind == 4 and "player" in obj:
        obj["player"] = rng.choice(["ghost", obj["player"], "sara", "omid"])
    elif kind == 5 and isinstance(obj.get("cards"), list) and obj["cards"]:
        cards = list(obj["cards"])
        if rng.random() < 0.5:
            cards.append(rng.choice(_CARDS))
        else:
            cards.pop()
        obj["cards"] = cards
    elif kind == 6:
        obj["type"] = rng.choice(["play", "draw", "pass", "end", "result", "reshuffle", "announce"])
    elif kind == 7 and "suit" in obj:
        obj["suit"] = rng.choice(["C", "D", "H", "S", None])
    elif kind == 8 and type(obj.get("seq")) is int:
        obj["seq"] = obj["seq"] + rng.choice([-1, 1, 2])
    else:
        obj["x_note"] = rng.random()


def write_games(path: Path, games: Iterable[list[bytes]]) -> None:
    with path.open("wb") as out:
        for lines in games:
            out.write(b"".join(line + b"\n" for line in lines))
