"""The published JSON Schema (issue 13): generated from the codec's field table, committed
as generated, passed by every bundled line the codec reads without a notation issue, and
failed by every line the codec rejects as `schema` — but for the differences
docs/schema/README.md lists (what a schema cannot express)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson
import pytest
from jsonschema import Draft202012Validator

from engine import _core
from engine.reader import read_lines
from engine.schema import generate, render

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "docs" / "schema" / "haftkhabis-1.schema.json"
BUNDLED = sorted([*REPO.glob("data/sample/*.jsonl"), *REPO.glob("data/sample/*.jsonl.gz"),
                  *REPO.glob("tests/cases/**/*.jsonl")])
FIXTURES = sorted((REPO / "tests" / "engine" / "fixtures").glob("*.jsonl"))
#: codec `schema` messages a schema cannot reproduce (docs/schema/README.md, "Differences")
INEXPRESSIBLE = (
    re.compile(r"unknown (player|dealer)"),  # ids must be the header's players: another line
    re.compile(r"must be a whole number .* got -?\d+\.0\b"),  # 1.0 is an integer to JSON Schema
    re.compile(r"duplicate key"),  # a parsed object has one value per key
    re.compile(r"'ts'|\bts\b"),  # the calendar (days of the month, leap years) beyond a pattern
)
#: the rules judge these field values, the schema is stricter (README.md, "Stricter")
RULE_CODES = {"bad_suit", "bad_target", "bad_deal", "unknown_ruleset"}

#: The lines are judged by jsonschema-rs (the same draft, compiled: 0.2 s for the 86,674
#: objects these tests judge, where the Python `jsonschema` took about 33 s); the Python
#: one checks the schema itself, and the two are held to the same answers below.
VALIDATOR = jsonschema_rs.Draft202012Validator(generate())


def test_the_committed_schema_is_the_generated_one() -> None:
    assert COMMITTED.read_bytes() == render(), "run: haftkhabis schema --out docs/schema/haftkhabis-1.schema.json"
    Draft202012Validator.check_schema(json.loads(COMMITTED.read_bytes()))


def test_every_field_of_the_codec_table_is_in_the_schema() -> None:
    specs = _core.event_specs()
    schema = generate()
    assert [e["type"] for e in specs["events"]] == specs["event_types"]
    for event in specs["events"]:
        body = schema["$defs"][event["type"]]
        names = [f["name"] for f in (*specs["common"], *event["fields"])]
        assert list(body["properties"]) == names
        assert body["required"] == [f["name"] for f in (*specs["common"], *event["fields"]) if f["required"]]


def _codes_by_line(path: Path) -> tuple[dict[int, set[str]], dict[int, list[str]]]:
    validator = _core.Validator()
    validator.feed_file(str(path))
    codes: dict[int, set[str]] = defaultdict(set)
    messages: dict[int, list[str]] = defaultdict(list)
    found: list[Any] = [v for verdict in validator.finish() for v in verdict.violations]
    found += validator.take_errors()
    for v in found:
        if v["line"] is not None:
            codes[v["line"]].add(v["code"])
            if v["code"] == "schema":
                messages[v["line"]].append(v["message"])
    return codes, messages


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a parsed JSON value, equal to another's exactly when the
    values are equal (as `==` compares them: `1 == 1.0`)."""
    if isinstance(value, dict):
        return frozenset((key, _frozen(item)) for key, item in value.items())
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value


def _judged(path: Path) -> Iterator[tuple[int, Any, set[str], list[str]]]:
    codes, messages = _codes_by_line(path)
    seen: set[Any] = set()
    for number, raw in read_lines(str(path)):  # type: ignore[misc]
        try:
            obj = json.loads(raw)
        except ValueError:
            continue  # not JSON: no schema applies (malformed_json)
        key = _frozen(obj)
        if key in seen:
            continue  # an identical repeat (a shipper's retry): dropped before it is judged
        seen.add(key)
        yield number, obj, codes.get(number, set()), messages.get(number, [])


def _check(path: Path) -> list[str]:
    problems = []
    for number, obj, codes, messages in _judged(path):
        valid = VALIDATOR.is_valid(obj)
        explained = all(any(p.search(m) for p in INEXPRESSIBLE) for m in messages)
        if "schema" in codes and valid and not explained:
            problems.append(f"{path.name}:{number}: the codec says schema ({messages}), the schema passes it")
        if not valid and not codes & ({"schema", "malformed_json"} | RULE_CODES):
            error = next(VALIDATOR.iter_errors(obj)).message
            problems.append(f"{path.name}:{number}: the codec reads it ({sorted(codes)}), the schema fails it: {error}")
    return problems


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(REPO)))
def test_bundled_lines_against_the_codec(path: Path) -> None:
    assert _check(path) == []


BAD_VALUES: tuple[Any, ...] = (None, 3.5, -1, "XX", "", [], {}, ["XX"], True, "10H", "h", "x" * 200)


def _mutations(lines: list[bytes]) -> Iterator[list[bytes]]:
    """Each line with each field removed or set to a bad value, and an unknown field."""
    for i, raw in enumerate(lines):
        obj = orjson.loads(raw)
        for key in obj:
            if key in ("game",):
                continue
            for value in (*BAD_VALUES, "missing"):
                mutated = dict(obj)
                if value == "missing":
                    del mutated[key]
                else:
                    mutated[key] = value
                yield [*lines[:i], orjson.dumps(mutated), *lines[i + 1:]]
        yield [*lines[:i], orjson.dumps({**obj, "colour": "red"}), *lines[i + 1:]]


def test_both_validators_judge_alike() -> None:
    """jsonschema-rs, which judges the lines here, and Python's `jsonschema`, the
    reference implementation, say the same of each distinct line of a fixture and of its
    mutations (every one of the 54,375 distinct objects these tests judge agreed when the
    switch was made)."""
    reference = Draft202012Validator(generate())
    lines = [raw for raw in FIXTURES[0].read_bytes().splitlines() if raw.strip()][:6]
    objects = {orjson.dumps(obj, option=orjson.OPT_SORT_KEYS): obj
               for mutated in _mutations(lines) for raw in mutated for obj in [orjson.loads(raw)]}
    verdicts = [(VALIDATOR.is_valid(obj), reference.is_valid(obj)) for obj in objects.values()]
    assert sum(not fast for fast, _ in verdicts) > 50  # mutations the schema fails, among them
    assert all(fast == slow for fast, slow in verdicts)


@pytest.mark.parametrize("path", FIXTURES[:3], ids=lambda p: p.name)
def test_mutated_lines_the_codec_rejects_fail_the_schema(path: Path, tmp_path: Path) -> None:
    lines = [raw for raw in path.read_bytes().splitlines() if raw.strip()][:14]
    problems: list[str] = []
    checked = 0
    for n, mutated in enumerate(_mutations(lines)):
        file = tmp_path / f"m{n}.jsonl"
        file.write_bytes(b"\n".join(mutated) + b"\n")
        problems += _check(file)
        checked += 1
        file.unlink()
    assert checked > 150
    assert problems == []
