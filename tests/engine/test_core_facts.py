"""Issue 29: each fact declared once, in the core, and read from it.

The engine's version is the workspace's (`engine/core/Cargo.toml`, `CARGO_PKG_VERSION`).
The violation codes (name, foul, explanation) are the core's table
(`haftkhabis-core/src/violation.rs`, `CODES`); `engine._core.Code`, `engine.violations`
and the table in docs/notation.md are made from it, and the typed stub declares the same
members (stubtest checks a stub member exists at runtime, not its value, nor that the stub
has no member the runtime lacks: this file does).
"""

from __future__ import annotations

import ast
import importlib.metadata
import pickle
import tomllib
from enum import StrEnum
from pathlib import Path

import pytest

import engine
from engine import _core, violations
from tests.corekit import validate_paths

REPO = Path(__file__).resolve().parents[2]
STUB = REPO / "engine" / "_core.pyi"
NOTATION_DOC = REPO / "docs" / "notation.md"
CASES = REPO / "tests" / "cases"


def _stub_class(name: str) -> ast.ClassDef:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    found = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name]
    assert len(found) == 1, f"engine/_core.pyi declares class {name} {len(found)} times"
    return found[0]


def test_code_is_the_cores_table_in_order() -> None:
    table = _core.violation_codes()
    assert issubclass(_core.Code, StrEnum)
    assert [member.value for member in _core.Code] == [c["code"] for c in table]
    assert [member.name for member in _core.Code] == [c["code"].upper() for c in table]
    assert violations.Code is _core.Code


def test_the_stub_declares_every_member_with_its_value() -> None:
    declared = [
        (target.id, statement.value.value)
        for statement in _stub_class("Code").body
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
        for target in statement.targets
        if isinstance(target, ast.Name)
    ]
    assert declared == [(member.name, member.value) for member in _core.Code]


def test_a_code_behaves_as_the_python_enum_did() -> None:
    code = _core.Code("must_play")
    assert code is _core.Code.MUST_PLAY
    assert code == "must_play" and str(code) == "must_play" and f"{code}" == "must_play"
    assert code.value == "must_play" and isinstance(code, str)
    assert {code: 1}["must_play"] == 1  # hashes as its value
    assert pickle.loads(pickle.dumps(code)) is code
    assert repr(code) == "<Code.MUST_PLAY: 'must_play'>"
    with pytest.raises(ValueError, match="not_a_code"):
        _core.Code("not_a_code")


def test_fouls_and_explanations_come_from_the_core() -> None:
    table = _core.violation_codes()
    assert {_core.Code(c["code"]) for c in table if c["foul"]} == violations.FOULS
    assert {_core.Code(c["code"]): c["explanation"] for c in table} == violations.EXPLANATIONS
    assert all(isinstance(c["foul"], bool) and c["explanation"].strip() for c in table)


def test_every_code_the_core_emits_has_its_facts_and_a_docs_row() -> None:
    """Every code met over the scenario cases (verdicts and line errors) is in the table,
    with its foul flag, its explanation and its row in docs/notation.md, and the cases meet
    every code of the table (none is dead)."""
    verdicts, errors = validate_paths([str(CASES)])
    emitted = {v["code"] for verdict in verdicts for v in verdict.violations}
    emitted |= {e["code"] for e in errors}
    table = {c["code"]: c for c in _core.violation_codes()}
    assert emitted == set(table)
    doc = NOTATION_DOC.read_text(encoding="utf-8")
    for code in emitted:
        info = table[code]
        assert f"| `{code}` | {'yes' if info['foul'] else 'no'} | {info['explanation']} |" in doc


def test_the_docs_table_of_codes_is_current() -> None:
    text = NOTATION_DOC.read_text(encoding="utf-8")
    assert violations.with_codes_table(text) == text, (
        "run: .venv/bin/python -m engine.violations docs/notation.md")
    assert text.count(violations.TABLE_START) == 1 and text.count(violations.TABLE_END) == 1


def test_the_docs_table_is_rewritten_from_the_core() -> None:
    stale = f"before\n{violations.TABLE_START}\n| `old` | no | gone |\n{violations.TABLE_END}\nafter\n"
    fresh = violations.with_codes_table(stale)
    assert "`old`" not in fresh and fresh.startswith("before\n") and fresh.endswith("after\n")
    assert violations.codes_table() in fresh
    with pytest.raises(ValueError, match="markers"):
        violations.with_codes_table("no markers here")


def test_one_engine_version() -> None:
    """The version every verdict, warehouse row, batch, report and /health carries is the
    core's, and the Python package's."""
    cargo = tomllib.loads((REPO / "engine" / "core" / "Cargo.toml").read_text(encoding="utf-8"))
    version = cargo["workspace"]["package"]["version"]
    assert engine.ENGINE_VERSION is _core.ENGINE_VERSION
    assert _core.ENGINE_VERSION == version == importlib.metadata.version("haftkhabis")
