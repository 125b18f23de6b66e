"""Issue 29: the typed stub's dict shapes are what the core returns.

`engine/_core.pyi` declares each dict the core hands Python as a TypedDict (ViolationInfo,
ErrorInfo, RulesetInfo, the verdict's, a step's, a state's …). Nothing checks a stub's
TypedDict against the extension at run time (stubtest compares names and signatures), so
this test does: it evaluates the stub, calls each function and method on real data (the
scenario cases and the bundled sample, recorded, with facts; a game fed line by line; an
ingest's routing and replay) and holds every value to its declared type, key by key — a
key missing or extra, or a value of another type, fails. A method the stub types
`dict[str, Any]` (its Python callers annotate it so) names its shape in a `# shape:`
comment, and is held to that shape.
"""

from __future__ import annotations

import ast
import functools
import sys
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from engine import _core
from tests.corekit import drain

REPO = Path(__file__).resolve().parents[2]
STUB = REPO / "engine" / "_core.pyi"
SAMPLE = REPO / "data" / "sample"
CASES = REPO / "tests" / "cases"


def _stub() -> dict[str, Any]:
    """The stub's names, evaluated (annotations left as strings, resolved on demand)."""
    # a module of its own: a TypedDict resolves its fields in the module it was made in
    module = types.ModuleType("tests.engine._core_stub")
    sys.modules[module.__name__] = module
    namespace: dict[str, Any] = module.__dict__
    source = "from __future__ import annotations\n" + STUB.read_text(encoding="utf-8")
    # `typing.type_check_only` is the type checkers' only (typeshed); at run time the stub's
    # classes are plain ones
    lent = not hasattr(typing, "type_check_only")
    if lent:
        typing.type_check_only = lambda thing: thing  # type: ignore[attr-defined]
    try:
        exec(compile(source, str(STUB), "exec"), namespace)
    finally:
        if lent:
            del typing.type_check_only  # type: ignore[attr-defined]
    return namespace


NAMESPACE = _stub()
#: each class of the stub → the classes it derives from (a TypedDict's fields include its
#: bases'; the runtime class does not remember them)
BASES = {node.name: [ast.unparse(base) for base in node.bases]
         for node in ast.parse(STUB.read_text(encoding="utf-8")).body
         if isinstance(node, ast.ClassDef)}


@functools.cache
def _returns(owner: str | None, name: str) -> Any:
    """The declared return type of `owner.name` (a function when `owner` is None), with a
    `# shape: T` comment's T put in for its `dict[str, Any]`."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    lines = STUB.read_text(encoding="utf-8").splitlines()
    body = tree.body
    if owner is not None:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner).body
    node = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == name)
    assert node.returns is not None, f"{owner}.{name} declares no return type"
    annotation = ast.unparse(node.returns)
    comment = lines[node.lineno - 1].partition("# shape:")[2].strip()
    if comment:
        assert "dict[str, Any]" in annotation, f"{owner}.{name}: a shape comment on a typed return"
        annotation = annotation.replace("dict[str, Any]", comment)
    return eval(annotation, NAMESPACE)


@functools.cache
def _fields(typeddict: Any) -> tuple[dict[str, Any], frozenset[str], frozenset[str]]:
    """A TypedDict's field types, required keys and optional keys."""
    return (get_type_hints(typeddict, NAMESPACE), frozenset(typeddict.__required_keys__),
            frozenset(typeddict.__optional_keys__))


def _hint_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or repr(hint)


def _expect(holds: bool, message: str) -> None:
    # a plain raise, not an `assert`: pytest's rewritten asserts would describe every
    # failed branch of a union, and the checker tries many
    if not holds:
        raise AssertionError(message)


def check(value: Any, hint: Any, where: str) -> None:
    """Assert `value` is of the declared type `hint` (TypedDicts key by key; an `int` is
    not a `bool`)."""
    if hint is Any or hint is object:
        return
    if isinstance(hint, str):
        hint = eval(hint, NAMESPACE)
    origin, args = get_origin(hint), get_args(hint)
    if is_typeddict(hint):
        _expect(type(value) is dict, f"{where}: {type(value).__name__}, not a {_hint_name(hint)}")
        fields, required, optional = _fields(hint)
        keys = value.keys()
        _expect(required <= keys <= required | optional,
                f"{where} ({_hint_name(hint)}): missing {sorted(required - keys)}, "
                f"extra {sorted(keys - required - optional)}")
        for key, item in value.items():
            check(item, fields[key], f"{where}.{key}")
        return
    if origin in (Union, types.UnionType):
        failures = []
        for option in args:
            try:
                check(value, option, where)
                return
            except AssertionError as failure:
                failures.append(str(failure))
        raise AssertionError(f"{where}: none of {args}: {failures}")
    if origin is Literal:
        _expect(value in args, f"{where}: {value!r} is not one of {args}")
        return
    if origin is list:
        _expect(type(value) is list, f"{where}: {type(value).__name__}, not a list")
        for index, item in enumerate(value):
            check(item, args[0], f"{where}[{index}]")
        return
    if origin is dict:
        _expect(type(value) is dict, f"{where}: {type(value).__name__}, not a dict")
        for key, item in value.items():
            check(key, args[0], f"{where} key {key!r}")
            check(item, args[1], f"{where}[{key!r}]")
        return
    if origin is tuple:
        _expect(type(value) is tuple and len(value) == len(args),
                f"{where}: {type(value).__name__} of {len(value)}, not a tuple of {len(args)}")
        for index, (item, kind) in enumerate(zip(value, args, strict=True)):
            check(item, kind, f"{where}[{index}]")
        return
    if hint is None or hint is type(None):
        _expect(value is None, f"{where}: {type(value).__name__}, not None")
        return
    if hint in (int, bool, str, bytes, float):
        _expect(type(value) is hint, f"{where}: {type(value).__name__}, not {hint.__name__}")
        return
    raise AssertionError(f"{where}: the checker does not know {hint!r}")


# -------------------------------------------------------------------- the checker


def test_the_checker_refuses_what_it_should() -> None:
    info = NAMESPACE["ViolationInfo"]
    good = {"seq": 1, "code": "schema", "player": None, "message": "m", "file": "f", "line": 2}
    check(good, info, "good")
    for bad in ({**good, "extra": 1}, {k: v for k, v in good.items() if k != "line"},
                {**good, "seq": "1"}, {**good, "line": True}, {**good, "player": 3}):
        with pytest.raises(AssertionError):
            check(bad, info, "bad")
    with pytest.raises(AssertionError):
        check({"name": "x", "type": "string", "nullable": 1, "doc": None},
              NAMESPACE["WarehouseColumn"], "bad")
    with pytest.raises(AssertionError):
        check("sideways", NAMESPACE["_Phase"], "bad")


# -------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def verdicts() -> tuple[list[_core.Verdict], list[_core.ErrorInfo]]:
    """Every game of the scenario cases and the first dozen of each sample file (every
    ruleset and mode), recorded, with facts."""
    paths = [str(CASES), str(SAMPLE)]
    games: set[str] = set()
    per_file: dict[str, int] = {}
    for verdict in drain(_feed(_core.Validator(), paths))[0]:
        source = verdict.files[0]
        if SAMPLE.name not in source or per_file.get(source, 0) < 12:
            games.add(verdict.game)
            per_file[source] = per_file.get(source, 0) + 1
    return drain(_feed(_core.Validator(record=games, only=games, facts=True, states=False),
                       paths))


def _feed(validator: _core.Validator, paths: list[str]) -> _core.Validator:
    validator.feed_paths(paths)
    return validator


@functools.cache
def _verdict_returns(name: str) -> Any:
    """The declared type of `Verdict.name`, a property or a method."""
    member = getattr(NAMESPACE["Verdict"], name)
    if isinstance(member, property):
        return get_type_hints(member.fget, NAMESPACE)["return"]
    return _returns("Verdict", name)


def _calls(verdict: _core.Verdict) -> Iterator[tuple[str, Callable[[], Any]]]:
    for name in ("violations", "hands", "files", "winners", "totals", "status", "lines",
                 "complete", "game", "ruleset"):
        yield name, lambda name=name: getattr(verdict, name)
    for name in ("settings", "header", "hand_records", "facts", "steps", "outline",
                 "unplaced_violations", "to_json"):
        yield name, getattr(verdict, name)
    steps = len(verdict.outline())
    for index in {0, steps // 2, steps - 1} if steps else ():
        yield "step", lambda index=index: verdict.step(index)
        yield "state", lambda index=index: verdict.state(index)


def test_a_verdict_and_its_steps_are_their_declared_shapes(
        verdicts: tuple[list[_core.Verdict], list[_core.ErrorInfo]]) -> None:
    games, errors = verdicts
    assert len(games) > 300 and errors
    assert {v.ruleset for v in games} >= {"bazito", "persian", "pis-yedili"}
    check(errors, _returns("Validator", "take_errors"), "take_errors()")
    seen = set()
    for verdict in games:
        for name, call in _calls(verdict):
            check(call(), _verdict_returns(name), f"{verdict.game}.{name}")
            seen.add(name)
    assert {"steps", "step", "state", "facts", "hand_records", "to_json"} <= seen


def test_a_game_fed_line_by_line_is_its_declared_shapes() -> None:
    lines = (SAMPLE / "pis-yedili.jsonl").read_bytes().splitlines()
    game = next(line for line in lines if b'"type":"game"' in line).split(b'"game":"')[1]
    game_id = game.split(b'"')[0].decode()
    mine = [line for line in lines if f'"game":"{game_id}"'.encode() in line]
    run = _core.GameRun(game_id, record=True)
    feed = _returns("GameRun", "feed")
    options, snapshot = _returns("GameRun", "options"), _returns("GameRun", "snapshot")
    for number, line in enumerate(mine, 1):
        check(run.feed(line, number), feed, f"feed line {number}")
        check(run.options(), options, f"options after line {number}")
        check(run.snapshot(), snapshot, f"snapshot after line {number}")
    for name in ("settings", "decided_outcomes", "steps", "totals", "match_winners"):
        check(getattr(run, name)(), _returns("GameRun", name), f"GameRun.{name}")
    # a decision analysed by rollouts, and a deal's value (issue 32)
    analysed = _core.GameRun(game_id)
    seen = 0
    for line in mine:
        player = analysed.expected_actor()
        if player is not None and seen < 3:
            check(analysed.legal_moves(), _returns("GameRun", "legal_moves"), "GameRun.legal_moves")
            check(analysed.policy_move(), _returns("GameRun", "policy_move"), "GameRun.policy_move")
            found = analysed.analyse(rollouts=10, seed=1)
            if found is not None:
                seen += 1
                check(found, _returns("GameRun", "analyse"), "GameRun.analyse")
                check(analysed.analyse(rollouts=10, seed=1, search="ismcts"), _returns("GameRun", "analyse"),
                      "GameRun.analyse(search='ismcts')")
                check(analysed.position_value(player, rollouts=10), _returns("GameRun", "position_value"),
                      "GameRun.position_value")
        analysed.feed(line)
    assert seen, "no decision analysed"
    check(run.violations, get_type_hints(NAMESPACE["GameRun"].violations.fget, NAMESPACE)["return"],
          "GameRun.violations")


def test_the_exported_tables_are_their_declared_shapes() -> None:
    for name in ("rulesets", "event_specs", "violation_codes", "warehouse_columns"):
        check(getattr(_core, name)(), _returns(None, name), f"{name}()")


def test_validate_to_counts_are_their_declared_shape() -> None:
    counts = _core.validate_to([str(SAMPLE)], lambda chunk: None)
    check(counts, _returns(None, "validate_to"), "validate_to()")
    assert counts["games"] > 0 and counts["statuses"]


def test_the_ingest_reports_are_their_declared_shapes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"game":"x","seq":0,"type":"game"}\nnot json\n{"seq":1}\n')
    missing = str(tmp_path / "gone.jsonl")
    reports: list[tuple[Any, Any]] = []
    on_file = get_type_hints(NAMESPACE["route_files"], NAMESPACE)["on_file"]
    file_read, found = get_args(on_file)[0]
    routed = _core.route_files([str(bad), missing, str(SAMPLE / "bazito.jsonl")],
                               [str(tmp_path / "0.spool")],
                               lambda read, errors: reports.append((read, errors)))
    check(routed, _returns(None, "route_files"), "route_files()")
    # a file with lines of no game, a file that cannot be read (its error), a clean one
    assert len(reports) == 3 and reports[0][1] and reports[1][0]["error"] is not None
    for read, errors in reports:
        check(read, file_read, "on_file read")
        check(errors, found, "on_file errors")
    ingestor = _core.Ingestor(batch=1)
    ingestor.feed_lines([(b"not json", "f.jsonl", 1)], lambda *handed: None)
    errors = ingestor.take_errors()
    assert errors
    check(errors, _returns("Ingestor", "take_errors"), "Ingestor.take_errors")


def test_every_typeddict_of_the_stub_is_held_here() -> None:
    """A TypedDict added to the stub is checked by this file: it is reachable from a
    return type (or a callback's argument) that a test above calls."""
    declared = {name for name, value in NAMESPACE.items() if is_typeddict(value)}
    reached: set[str] = set()

    def walk(hint: Any) -> None:
        if isinstance(hint, str):
            hint = eval(hint, NAMESPACE)
        if get_origin(hint) is Literal:
            return
        if is_typeddict(hint):
            if hint.__name__ in reached:
                return
            reached.add(hint.__name__)
            for base in BASES.get(hint.__name__, ()):
                walk(NAMESPACE[base])
            for field in get_type_hints(hint, NAMESPACE).values():
                walk(field)
        for arg in get_args(hint):
            walk(arg)
        if isinstance(hint, list):
            for item in hint:
                walk(item)

    for owner, name in [(None, "rulesets"), (None, "event_specs"), (None, "violation_codes"),
                        (None, "warehouse_columns"), (None, "validate_to"),
                        ("Validator", "take_errors"), ("Ingestor", "take_errors"),
                        ("GameRun", "feed"), ("GameRun", "options"), ("GameRun", "snapshot"),
                        ("GameRun", "settings"), ("GameRun", "decided_outcomes"),
                        ("GameRun", "steps"), ("GameRun", "analyse"), ("GameRun", "position_value"),
                        ("GameRun", "legal_moves"), ("GameRun", "policy_move"),
                        ("Verdict", "settings"), ("Verdict", "header"),
                        ("Verdict", "hand_records"), ("Verdict", "facts"), ("Verdict", "steps"),
                        ("Verdict", "state"), ("Verdict", "to_json")]:
        walk(_returns(owner, name))
    walk(get_type_hints(NAMESPACE["Verdict"].hands.fget, NAMESPACE)["return"])
    walk(get_type_hints(NAMESPACE["route_files"], NAMESPACE)["on_file"])
    walk(NAMESPACE["ReplayError"].__annotations__["violation"])
    assert declared == reached, f"not checked: {sorted(declared - reached)}"

