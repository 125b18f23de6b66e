"""The JSON Schema of a `haftkhabis/1` line (draft 2020-12), generated from the codec's
own field table (`engine._core.event_specs()`, i.e. `notation::EVENT_FIELDS`) and the
ruleset profiles (`engine._core.rulesets()`): one source, nothing hand-copied.

`haftkhabis schema --out docs/schema/haftkhabis-1.schema.json` writes it; the test
`tests/engine/test_schema.py` checks the committed file equals the generated one. What a
schema cannot say (seq order, the rules, player ids that must be the header's) is listed in
`docs/schema/README.md`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from engine import _core

SCHEMA_ID = "https://haftkhabis.example/schema/haftkhabis-1.schema.json"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _digits(n: int) -> str:
    return f"[0-9]{{{n}}}"


def _kinds(specs: _core.EventSpecs, rulesets: list[_core.RulesetInfo]) -> dict[str, Callable[[], dict[str, Any]]]:
    """Each field kind of the codec as a schema (a kind the table names but this map does
    not is an error: the generator refuses to guess)."""
    limits = specs["limits"]
    ranks, suits = specs["ranks"], specs["suits"]
    card = {"type": "string", "pattern": f"^[{ranks}][{suits}]$",
            "description": "a card: rank (A 2-9 T J Q K) then suit (C D H S), e.g. 7C, TH"}
    player = {"type": "string", "minLength": 1, "maxLength": limits["player_id_length"]}
    ts = ("^(?!0000)" + _digits(4) + "-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]"
          "([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?"
          "([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$")
    points = {"type": "object", "additionalProperties": {"type": "number"}}
    return {
        "game_id": lambda: {"type": "string",
                            "pattern": f"^[A-Za-z0-9._:-]{{1,{limits['game_id_length']}}}$"},
        "seq": lambda: {"type": "integer", "minimum": 0, "maximum": limits["seq"]},
        "event_type": lambda: {"enum": list(specs["event_types"])},
        "timestamp": lambda: {"type": "string", "pattern": ts,
                              "description": "RFC 3339 with an offset, e.g. 2026-11-29T18:04:11.250Z"},
        "format": lambda: {"const": specs["format"]},
        "ruleset": lambda: {"enum": [r["name"] for r in rulesets]},
        "players": lambda: {"type": "array", "items": player, "minItems": 2, "uniqueItems": True,
                            "description": "the players, clockwise"},
        "options": lambda: {"type": "object", "additionalProperties": {"type": "boolean"}},
        "mode": lambda: {"enum": sorted({m for r in rulesets for m in r["modes"]})},
        "decks": lambda: {"enum": [1, 2]},
        "match": lambda: {"oneOf": [
            {"type": "object", "required": [key], "additionalProperties": False,
             "properties": {key: {"type": "integer", "minimum": 1}}}
            for key in ("hands", "target")]},
        "meta": lambda: {"type": "object"},
        "hand_number": lambda: {"type": "integer", "minimum": 1, "maximum": limits["hand"]},
        "player_id": lambda: dict(player),
        "hands": lambda: {"type": "object", "propertyNames": dict(player),
                          "additionalProperties": {"type": "array", "items": card}},
        "starter": lambda: dict(card),
        "stock": lambda: {"type": "array", "items": card, "description": "top first"},
        "card": lambda: dict(card),
        "suit": lambda: {"enum": list(suits)},
        "target": lambda: dict(player),
        "cards": lambda: {"type": "array", "items": card, "minItems": 1},
        "call": lambda: {"enum": list(specs["calls"])},
        "penalty_cards": lambda: {"type": "array", "items": card, "minItems": 1, "maxItems": 1},
        "penalty_reason": lambda: {"enum": list(specs["penalty_reasons"])},
        "player_list": lambda: {"type": "array", "items": {"type": "string"}},
        "points_map": lambda: dict(points),
        "text": lambda: {"type": "string"},
    }


def _field_schema(field: _core.FieldSpec, kinds: dict[str, Callable[[], dict[str, Any]]]) -> dict[str, Any]:
    make = kinds.get(field["kind"])
    if make is None:
        raise ValueError(f"the codec's field kind {field['kind']!r} (field {field['name']!r}) "
                         "has no JSON Schema in engine/schema.py")
    schema = make()
    # "`null` in an optional field means the field is absent"
    return schema if field["required"] else {"anyOf": [{"type": "null"}, schema]}


def _ruleset_rules(rulesets: list[_core.RulesetInfo]) -> list[dict[str, Any]]:
    """What a header may say for each ruleset: its player counts, decks, options, modes."""
    out: list[dict[str, Any]] = []
    for info in rulesets:
        decks = [1, 2] if info["two_decks_above"] is not None else [1]
        props: dict[str, Any] = {
            "players": {"minItems": info["min_players"], "maxItems": info["max_players"]},
            "decks": {"anyOf": [{"type": "null"}, {"enum": decks}]},
            "options": {"anyOf": [{"type": "null"}, {
                "type": "object", "additionalProperties": False,
                "properties": {name: {"type": "boolean"} for name in info["option_names"]}}]},
            "mode": {"anyOf": [{"type": "null"}, {"enum": list(info["modes"])}]},
        }
        out.append({"if": {"properties": {"ruleset": {"const": info["name"]}}, "required": ["ruleset"]},
                    "then": {"properties": props}})
    # "a points target makes no sense in elimination play"
    out.append({"if": {"properties": {"mode": {"const": "elimination"}}, "required": ["mode"]},
                "then": {"properties": {"match": {"anyOf": [
                    {"type": "null"}, {"type": "object", "not": {"required": ["target"]}}]}}}})
    return out


def generate() -> dict[str, Any]:
    """The schema, as a JSON-ready dict."""
    specs = _core.event_specs()
    rulesets = _core.rulesets()
    kinds = _kinds(specs, rulesets)
    common = specs["common"]
    defs: dict[str, Any] = {}
    branches = []
    for event in specs["events"]:
        name = event["type"]
        props: dict[str, Any] = {}
        for f in common:
            props[f["name"]] = _field_schema(f, kinds)
        props["type"] = {"const": name}
        for f in event["fields"]:
            props[f["name"]] = _field_schema(f, kinds)
        body: dict[str, Any] = {
            "type": "object",
            "title": f"a {name} line",
            "required": [f["name"] for f in (*common, *event["fields"]) if f["required"]],
            "properties": props,
            "patternProperties": {f"^{specs['extension_prefix']}": True},
            "additionalProperties": False,
        }
        if name == "game":
            body["allOf"] = _ruleset_rules(rulesets)
        defs[name] = body
        branches.append({"if": {"properties": {"type": {"const": name}}, "required": ["type"]},
                         "then": {"$ref": f"#/$defs/{name}"}})
    type_field = next(f for f in common if f["name"] == "type")
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": f"{specs['format']} log line",
        "description": ("One line of a Haft Khabis game log. Generated from the codec's field "
                        "table (engine/core/haftkhabis-core/src/notation.rs) by `haftkhabis schema`; "
                        "do not edit. What a schema cannot check is listed in docs/schema/README.md."),
        "type": "object",
        "required": [f["name"] for f in common if f["required"]],
        "properties": {"type": _field_schema(type_field, kinds)},
        "allOf": branches,
        "$defs": defs,
    }


def render() -> bytes:
    """The schema as the committed file holds it (2-space indent, trailing newline)."""
    return orjson.dumps(generate(), option=orjson.OPT_INDENT_2) + b"\n"
