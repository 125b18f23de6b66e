"""Hostile input (issue #14) against the native core, `engine._core`: duplicate keys,
blank-looking lines, deep nesting, out-of-range numbers, sparse seqs, huge player lists,
and fuzzing that must never crash or leave the contract's vocabulary.

The decisions pinned here are in docs/decisions.md, "Reading hostile input".
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import _core

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
BAZITO = (FIXTURES / "fx-bazito-points.jsonl").read_bytes().splitlines()
BAZITO_GAME = "fx-bazito-points"

# the contract's closed lists (notation.md, "The validator's verdict")
CODES = frozenset({
    "malformed_json", "schema", "sequence", "no_header", "unknown_ruleset", "bad_deal",
    "unexpected_event", "not_your_turn", "card_not_in_hand", "illegal_card", "must_play",
    "illegal_draw", "stock_mismatch", "illegal_pass", "bad_suit", "bad_target",
    "unjustified_penalty", "missed_call", "score_mismatch", "winner_mismatch",
})
STATUSES = frozenset({"compliant", "violations", "incomplete", "aborted", "invalid"})


def _case_logs() -> list[list[bytes]]:
    """The non-blank lines of every scenario case log (multi-file cases included)."""
    logs = []
    for path in sorted((ROOT / "tests" / "cases").glob("**/*.jsonl")):
        lines = [line for line in path.read_bytes().splitlines() if line.strip()]
        if lines:
            logs.append(lines)
    return logs


CASE_LOGS = _case_logs()


def _run(
    lines: Iterable[bytes], *, file: str = "t.jsonl", hold_lines: int = 100000
) -> tuple[dict[str, _core.Verdict], list[_core.ErrorInfo]]:
    validator = _core.Validator(hold_lines=hold_lines)
    for number, raw in enumerate(lines, 1):
        validator.feed_line(raw, file, number)
    verdicts = validator.finish()
    by_game = {v.game: v for v in verdicts}
    assert len(by_game) == len(verdicts), [v.game for v in verdicts]
    return by_game, validator.take_errors()


def _codes(verdict: _core.Verdict) -> list[tuple[int | None, str]]:
    return [(v["seq"], v["code"]) for v in verdict.violations]


def _with_raw(raw: bytes, key: str, value: bytes) -> bytes:
    """`raw` with `key` set to the JSON text `value` (which orjson may not write)."""
    obj = orjson.loads(raw)
    obj[key] = "\x00placeholder"
    return orjson.dumps(obj).replace(b'"\\u0000placeholder"', value)


def _parse_json_lines(output: bytes) -> list[dict[str, Any]]:
    assert output.endswith(b"\n")
    return [orjson.loads(line) for line in output.splitlines()]


# ---------------------------------------------------------------- 1. duplicate keys


@pytest.mark.parametrize(("first", "last"), [("t-1", "g-two"), ("g-two", "t-1")])
def test_a_repeated_game_key_is_schema_and_the_last_one_routes(
    tmp_path: Path, first: str, last: str
) -> None:
    t1 = [line.replace(BAZITO_GAME.encode(), b"t-1") for line in BAZITO[:6]]
    g2 = [line.replace(BAZITO_GAME.encode(), b"g-two") for line in BAZITO[:6]]
    target = t1 if last == "t-1" else g2
    prefix = b'{"game":"' + last.encode() + b'"'
    assert target[3].startswith(prefix)
    target[3] = b'{"game":"' + first.encode() + b'","game" :"' + last.encode() + b'"' + target[3][len(prefix):]
    log = [line for pair in zip(t1, g2, strict=True) for line in pair]  # interleaved

    verdicts, errors = _run(log)
    assert errors == []
    assert set(verdicts) == {"t-1", "g-two"}
    decided, other = verdicts[last], verdicts[first]
    assert _codes(other) == [] and other.status == "incomplete" and other.lines == 6
    assert _codes(decided) == [(3, "schema")] and decided.lines == 6
    (violation,) = decided.violations
    assert "duplicate key 'game'" in violation["message"]
    assert "the last value counts" in violation["message"]
    assert violation["line"] == log.index(target[3]) + 1

    # validate --json: exactly the two games, each once, nothing lost, no error record
    path = tmp_path / "two.jsonl"
    path.write_bytes(b"\n".join(log) + b"\n")
    records = _parse_json_lines(_core.validate_json([str(path)]))
    assert sorted(r["game"] for r in records if r["kind"] == "game") == ["g-two", "t-1"]
    assert [r for r in records if r["kind"] != "game"] == []
    by_game = {r["game"]: r for r in records}
    assert [(v["seq"], v["code"]) for v in by_game[last]["violations"]] == [(3, "schema")]
    assert by_game[first]["violations"] == []


def test_duplicate_keys_elsewhere_are_schema_and_the_last_value_counts() -> None:
    line = BAZITO[3]
    assert line.startswith(b'{"game":"fx-bazito-points","seq":3,')
    nested = line[:-1] + b',"x_m":{"k":1,"k" :2}}'
    seq_twice = line.replace(b'"seq":3,', b'"seq":99,"seq" :3,')
    for raw, key in ((nested, "x_m.k"), (seq_twice, "seq")):
        verdicts, errors = _run([*BAZITO[:3], raw, *BAZITO[4:]])
        assert errors == []
        verdict = verdicts[BAZITO_GAME]
        # the line counts at the last seq given and is replayed: nothing else goes wrong
        assert _codes(verdict) == [(3, "schema")], verdict.violations
        assert f"duplicate key '{key}'" in verdict.violations[0]["message"]


# ---------------------------------------------------------------- 2. blank-looking lines


def test_form_feed_and_vertical_tab_lines_are_malformed_blank_ones_skipped(
    tmp_path: Path,
) -> None:
    junk = [b"\x0c", b"\x0b", b"   \t\r", b"\t", b"", b" \x0c ", b"\r", b"\x0b\r", b"  \t  "]
    lines = [*BAZITO[:3], *junk, *BAZITO[3:]]
    path = tmp_path / "ff.jsonl"
    path.write_bytes(b"\r\n".join(lines) + b"\r\n")
    malformed = [number for number, raw in enumerate(lines, 1) if re.search(rb"[\x0b\x0c]", raw)]
    assert len(malformed) == 4

    validator = _core.Validator()
    validator.feed_paths([str(path)])
    (verdict,) = validator.finish()
    assert verdict.status == "compliant" and verdict.lines == len(BAZITO)
    errors = validator.take_errors()
    assert [(e["file"], e["line"], e["code"]) for e in errors] == [
        (str(path), number, "malformed_json") for number in malformed
    ]
    assert validator.lines_read == len(BAZITO) + len(malformed)  # blank lines not counted

    records = _parse_json_lines(_core.validate_json([str(path)]))
    assert [(r["kind"], r.get("line"), r.get("code")) for r in records] == [
        ("game", None, None), *[("error", n, "malformed_json") for n in malformed]
    ]


# ---------------------------------------------------------------- 3. deep nesting


def _nested(depth: int, kind: str) -> bytes:
    if kind == "array":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize("depth", [254, 255, 1000, 1023])
def test_deep_nesting_in_an_extension_field_is_read(depth: int, kind: str) -> None:
    # the line itself is level 1: an x_ value `depth` deep makes the line depth + 1 deep
    raw = BAZITO[3][:-1] + b',"x_deep":' + _nested(depth, kind) + b"}"
    verdicts, errors = _run([*BAZITO[:3], raw, *BAZITO[4:]])
    assert errors == []
    assert verdicts[BAZITO_GAME].status == "compliant"


@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize("depth", [1024, 5000, 100_000])
def test_nesting_deeper_than_1024_levels_is_malformed_not_a_crash(depth: int, kind: str) -> None:
    raw = BAZITO[3][:-1] + b',"x_deep":' + _nested(depth, kind) + b"}"
    verdicts, errors = _run([*BAZITO[:3], raw, *BAZITO[4:]])
    assert [(e["line"], e["code"]) for e in errors] == [(4, "malformed_json")]
    assert "nested deeper than 1024 levels" in errors[0]["message"]
    # the game goes on without the line: its seq is missing
    assert (4, "sequence") in _codes(verdicts[BAZITO_GAME])


def test_a_bare_deep_line_is_malformed() -> None:
    _, errors = _run([b"[" * 200_000, b"{" * 200_000, _nested(1025, "array")])
    assert [(e["line"], e["code"]) for e in errors] == [
        (1, "malformed_json"), (2, "malformed_json"), (3, "malformed_json")
    ]


# ---------------------------------------------------------------- 4. numbers that must fit


@pytest.mark.parametrize("seq", [2**64 - 1, 2**63, 2**64, -1])
def test_a_seq_out_of_range_is_schema_and_set_aside(seq: int) -> None:
    raw = _with_raw(BAZITO[3], "seq", str(seq).encode())
    verdicts, errors = _run([*BAZITO[:3], raw, *BAZITO[4:]])
    assert errors == []
    codes = _codes(verdicts[BAZITO_GAME])
    assert codes[0] == (None, "schema")
    assert "'seq' must be a whole number" in verdicts[BAZITO_GAME].violations[0]["message"]
    assert (4, "sequence") in codes  # set aside: seq 3 is missing
    assert all(s is None or s < 2**63 for s, _ in codes)


def test_the_largest_seq_is_accepted() -> None:
    raw = _with_raw(BAZITO[-1], "seq", str(2**63 - 1).encode())
    verdicts, _ = _run([*BAZITO[:-1], raw])
    assert (2**63 - 1, "sequence") in _codes(verdicts[BAZITO_GAME])


@pytest.mark.parametrize("hand", [2**40, 2**31, 2**64 - 1, 2**64])
def test_a_deal_hand_out_of_range_is_schema(hand: int) -> None:
    raw = _with_raw(BAZITO[1], "hand", str(hand).encode())
    verdicts, errors = _run([BAZITO[0], raw, *BAZITO[2:]])
    assert errors == []
    verdict = verdicts[BAZITO_GAME]
    assert (1, "schema") in _codes(verdict) and verdict.status == "violations"
    assert "'hand' must be a whole number" in verdict.violations[0]["message"]


def test_an_end_hand_out_of_range_is_schema() -> None:
    assert orjson.loads(BAZITO[-1])["type"] == "end"
    raw = _with_raw(BAZITO[-1], "hand", str(2**64 - 1).encode())
    verdicts, _ = _run([*BAZITO[:-1], raw])
    assert (len(BAZITO) - 1, "schema") in _codes(verdicts[BAZITO_GAME])


def test_match_hands_of_2_40_is_accepted_as_written() -> None:
    # Pinned as the core does it: 2**40 is a whole number >= 1 that fits, so no schema;
    # the match simply is not over after one hand (decisions.md bounds seq and hand only).
    header = _with_raw(BAZITO[0], "match", b'{"hands":' + str(2**40).encode() + b"}")
    verdicts, errors = _run([header, *BAZITO[1:]])
    verdict = verdicts[BAZITO_GAME]
    assert errors == [] and _codes(verdict) == []
    assert verdict.status == "incomplete" and not verdict.complete
    assert verdict.totals is not None and verdict.hands is not None and len(verdict.hands) == 1


def test_match_hands_beyond_64_bits_is_schema_and_the_default_is_used() -> None:
    header = _with_raw(BAZITO[0], "match", b'{"hands":' + str(2**64).encode() + b"}")
    verdicts, _ = _run([header, *BAZITO[1:]])
    verdict = verdicts[BAZITO_GAME]
    assert _codes(verdict) == [(0, "schema")]
    # the header is still usable: the game replays with bazito's one hand, and completes
    assert verdict.status == "violations" and verdict.complete and verdict.totals is not None


@pytest.mark.parametrize("target", [2**63, 2**64 - 1])
def test_a_points_target_beyond_i64_does_not_end_the_match(target: int) -> None:
    header = _with_raw(BAZITO[0], "match", b'{"target":' + str(target).encode() + b"}")
    verdicts, _ = _run([header, *BAZITO[1:]])
    verdict = verdicts[BAZITO_GAME]
    # either fix is acceptable: the target as written (the match goes on: incomplete),
    # or schema with bazito's default of one hand (complete, with the violation)
    assert (verdict.status, verdict.complete, _codes(verdict)) in (
        ("incomplete", False, []),
        ("violations", True, [(0, "schema")]),
    )


def test_the_largest_points_target_that_fits_is_not_reached() -> None:
    header = _with_raw(BAZITO[0], "match", b'{"target":' + str(2**63 - 1).encode() + b"}")
    verdicts, _ = _run([header, *BAZITO[1:]])
    verdict = verdicts[BAZITO_GAME]
    assert verdict.status == "incomplete" and not verdict.complete


@pytest.mark.parametrize(
    ("ts", "good"),
    [
        ("9999-12-31T23:59:59-23:59", False),  # UTC moment in year 10000
        ("0000-01-01T00:00:00Z", False),
        ("0001-01-01T00:00:00+00:01", False),  # UTC moment in year 0
        ("2023-02-29T00:00:00Z", False),
        ("2026-01-01T00:00:00+24:00", False),
        ("2026-01-01T00:00:00", False),
        ("9999-12-31T23:59:59+23:59", True),
        ("0001-01-01T23:59:00+23:59", True),
        ("9999-12-31t23:59:59.999999999z", True),
        ("2024-02-29T00:00:00Z", True),
    ],
)
def test_timestamps_must_be_real_instants_and_the_line_is_still_applied(
    ts: str, good: bool
) -> None:
    obj = orjson.loads(BAZITO[3])
    obj["ts"] = ts
    verdicts, errors = _run([*BAZITO[:3], orjson.dumps(obj), *BAZITO[4:]])
    verdict = verdicts[BAZITO_GAME]
    assert errors == []
    if good:
        assert verdict.status == "compliant"
    else:
        # only the ts: the play itself was applied, so the rest of the game replays clean
        assert _codes(verdict) == [(3, "schema")]
        assert "'ts'" in verdict.violations[0]["message"]


def test_a_number_beyond_a_double_is_malformed() -> None:
    raw = BAZITO[3][:-1] + b',"x_n":1e400}'
    _, errors = _run([*BAZITO[:3], raw, *BAZITO[4:]])
    assert [(e["line"], e["code"]) for e in errors] == [(4, "malformed_json")]


# ---------------------------------------------------------------- 5, 6. memory bounds

# The workload runs in a grandchild; the child reports the grandchild's peak RSS
# (RUSAGE_CHILDREN, so nothing else this test process ran counts) and kills it on timeout.
_MEASURE = textwrap.dedent(
    """
    import resource, subprocess, sys
    try:
        done = subprocess.run([sys.executable, "-c", sys.argv[1]], capture_output=True,
                              timeout=float(sys.argv[2]))
    except subprocess.TimeoutExpired:
        print("TIMEOUT")
        sys.exit(3)
    sys.stderr.buffer.write(done.stderr)
    sys.stdout.buffer.write(done.stdout)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    sys.exit(done.returncode)
    """
)


@dataclass
class Measured:
    output: dict[str, Any]
    peak_mb: float


def _measure(script: str, *, timeout: float = 120.0) -> Measured:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, textwrap.dedent(script), str(timeout)],
        capture_output=True, cwd=ROOT, timeout=timeout + 60,
    )
    lines = done.stdout.splitlines()
    assert lines != [b"TIMEOUT"], f"did not finish within {timeout} s"
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    *out, rss = lines
    return Measured(orjson.loads(out[-1]), int(rss) / 1024)  # ru_maxrss: KiB on Linux


_SPARSE = """
    import orjson
    from engine import _core
    path, game, step = {path!r}, "sparse-1", 4095
    with open(path, "wb") as out:
        out.write(orjson.dumps({{"game": game, "seq": 0, "type": "game",
                   "format": "haftkhabis/1", "ruleset": "bazito",
                   "players": ["a", "b", "c", "d"]}}) + b"\\n")
        for i in range(1, 100_000):
            out.write(orjson.dumps({{"game": game, "seq": i * step, "type": "pass",
                                    "player": "abcd"[i % 4]}}) + b"\\n")
    validator = _core.Validator()
    validator.feed_paths([path])
    (verdict,) = validator.finish()
    text = verdict.json()  # bytes: no Python object per violation
    print(orjson.dumps({{
        "status": verdict.status, "lines": verdict.lines, "errors": len(validator.take_errors()),
        "sequence": text.count(b'"code":"sequence"'),
        "first": b'"seq":4095,"code":"sequence","player":null,"message":"seqs 1-4094 missing' in text,
        "last": b'"seq":409495905,"code":"sequence"' in text,
    }}).decode())
"""


def test_sparse_seqs_do_not_blow_up_memory(tmp_path: Path) -> None:
    measured = _measure(_SPARSE.format(path=str(tmp_path / "sparse.jsonl")))
    assert measured.output == {
        "status": "violations", "lines": 100_000, "errors": 0,
        "sequence": 99_999, "first": True, "last": True,
    }
    # a functional bound (a dense array over seqs 0..409,495,905 would be far above it)
    assert measured.peak_mb < 300, measured.peak_mb


_MANY_PLAYERS = """
    import orjson
    from engine import _core
    n, lines = {players}, {lines}
    deal = orjson.loads({deal!r})
    players = [f"p{{i}}" for i in range(n)]
    assert list(deal["hands"]) == players[:4]
    validator = _core.Validator()
    validator.feed_line(orjson.dumps({{"game": deal["game"], "seq": 0, "type": "game",
                        "format": "haftkhabis/1", "ruleset": "bazito",
                        "players": players}}), "many.jsonl", 1)
    validator.feed_line(orjson.dumps(deal), "many.jsonl", 2)
    for seq in range(2, lines + 1):
        validator.feed_line(orjson.dumps({{"game": deal["game"], "seq": seq, "type": "pass",
                            "player": players[seq % 4]}}), "many.jsonl", seq + 1)
    (verdict,) = validator.finish()
    text = verdict.json()
    first = orjson.loads(text)["violations"][0]
    print(orjson.dumps({{"status": verdict.status, "lines": verdict.lines,
                        "first": [first["seq"], first["code"], first["message"]],
                        "errors": len(validator.take_errors())}}).decode())
"""


def _many_players(players: int, *, timeout: float = 120.0) -> Measured:
    script = _MANY_PLAYERS.format(players=players, lines=3000, deal=BAZITO[1].decode())
    return _measure(script, timeout=timeout)


def test_a_huge_player_list_is_schema_within_bounded_memory() -> None:
    # 20,000 players here; the 100,000 below
    measured = _many_players(20_000)
    assert measured.output == {
        "status": "violations", "lines": 3001, "errors": 0,
        "first": [0, "schema", "bazito is played by 4 players, not 20000"],
    }
    assert measured.peak_mb < 500, measured.peak_mb


def test_a_100000_player_header_finishes() -> None:
    # about a second now that seats are looked up, not scanned (it took > 50 s when the
    # work grew with the square of the players); the timeout only guards against a hang
    measured = _many_players(100_000, timeout=300)
    assert measured.output["first"] == [0, "schema", "bazito is played by 4 players, not 100000"]
    assert measured.peak_mb < 500, measured.peak_mb


# ---------------------------------------------------------------- 8. one verdict per game


def test_each_game_gets_one_verdict_and_the_output_parses(tmp_path: Path) -> None:
    logs = {path.stem: path.read_bytes().splitlines() for path in sorted(FIXTURES.glob("*.jsonl"))}
    interleaved: list[bytes] = []
    longest = max(len(lines) for lines in logs.values())
    for i in range(longest):
        for lines in logs.values():
            if i < len(lines):
                interleaved.append(lines[i])
        if i % 50 == 7:
            interleaved += [b"\x0c", b"not json", b'{"seq":1}', b"[1,2]", b"\xff\xfe"]
    interleaved += [logs[BAZITO_GAME][5], logs[BAZITO_GAME][5]]  # late retries
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join(interleaved) + b"\n")

    output = _core.validate_json([str(path)])
    records = _parse_json_lines(output)
    games = [r["game"] for r in records if r["kind"] == "game"]
    assert sorted(games) == sorted(logs)
    errors = [r for r in records if r["kind"] == "error"]
    assert errors and all(r["file"] == str(path) and r["code"] in CODES for r in errors)
    assert all(r["kind"] in ("game", "error") for r in records)

    chunks: list[bytes] = []
    counts = _core.validate_to([str(path)], chunks.append)
    # the same records (streamed, errors may come before games: any order is allowed)
    assert sorted(b"".join(chunks).splitlines()) == sorted(output.splitlines()), counts
    assert counts["games"] == len(logs)
    # the counts say what the records hold (a status named "violations" once overwrote
    # the violation count)
    games_out = [orjson.loads(r) for r in output.splitlines() if b'"kind":"game"' in r]
    assert counts["violations"] == sum(len(g["violations"]) for g in games_out)
    assert sum(counts["statuses"].values()) == counts["games"]

    # streaming with a tiny hold window: verdicts come out early, still once per game, and
    # a line of a game already written is an error record, not a second verdict
    for hold in (1, 3, 100):
        validator = _core.Validator(hold_lines=hold)
        seen: list[str] = []
        for number, raw in enumerate(interleaved, 1):
            validator.feed_line(raw, "mixed.jsonl", number)
            seen += [v.game for v in validator.take_verdicts()]
        seen += [v.game for v in validator.finish()]
        assert sorted(seen) == sorted(logs), hold


# ---------------------------------------------------------------- 7. fuzzing

FIELDS = [
    "game", "seq", "type", "ts", "format", "ruleset", "players", "options", "mode", "decks",
    "match", "meta", "hand", "dealer", "hands", "starter", "stock", "player", "card", "suit",
    "target", "cards", "call", "reason", "winners", "scores", "order", "totals", "x_", "x_a",
    "hands ", "Game", "",
]
BIG_INTS = [2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**100,
            -(2**63), -(2**63) - 1, -1, 0, 1]


@dataclass(frozen=True)
class Raw:
    """JSON text put in as it is (deep nesting, raw control characters, junk)."""

    text: bytes


@dataclass(frozen=True)
class Obj:
    """A JSON object as its key/value pairs, so a key may come twice."""

    pairs: tuple[tuple[str, Any], ...]


def dump(value: Any) -> bytes:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Obj):
        return b"{" + b",".join(dump(k) + b":" + dump(v) for k, v in value.pairs) + b"}"
    if isinstance(value, dict):
        return dump(Obj(tuple(value.items())))
    if isinstance(value, list | tuple):
        return b"[" + b",".join(dump(v) for v in value) + b"]"
    if isinstance(value, bool) or value is None:
        return orjson.dumps(value)
    if isinstance(value, int):
        return str(value).encode()  # beyond 64 bits too
    if isinstance(value, str):
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:  # a lone surrogate
            return b'"' + value.encode("utf-8", "backslashreplace") + b'"'
    return orjson.dumps(value)


texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["7C", "10H", "7c", "7♣", "♥J", "JS", "C", "clubs", "last_card",
                     "haftkhabis/1", "bazito", "persian", "pis-yedili", "p0", "p1", "sara",
                     "game", "deal", "play", "draw", "pass", "end", "result", "abort",
                     "\x00", "\u2028", "\ud800", "x" * 300, "2026-11-29T18:04:11.250Z",
                     "9999-12-31T23:59:59-23:59"]),
)
leaves = st.one_of(
    st.none(), st.booleans(), st.sampled_from(BIG_INTS), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False), texts,
    st.sampled_from([1024, 1025, 5000]).map(lambda d: Raw(b"[" * d + b"]" * d)),
    st.sampled_from([b'"a\x01b"', b'"\xff"', b"1e400", b"-0", b"01", b"NaN", b'"\\ud800"',
                     b"[1,]", b"{}", b"[]"]).map(Raw),
)
json_values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(st.tuples(texts, inner), max_size=4).map(lambda p: Obj(tuple(p))),
    ),
    max_leaves=12,
)


def _lenient(raw: bytes) -> Obj | None:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return Obj(tuple(obj.items())) if isinstance(obj, dict) else None


@st.composite
def perturbed_line(draw: st.DrawFn, raw: bytes) -> bytes:
    obj = _lenient(raw)
    if obj is None:
        return raw
    pairs = list(obj.pairs)
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["set", "drop", "dup", "retype", "nest", "rename"]))
        keys = [k for k, _ in pairs]
        key = draw(st.sampled_from(keys)) if keys else draw(st.sampled_from(FIELDS))
        if how == "set":
            pairs.append((draw(st.sampled_from(FIELDS)), draw(json_values)))
        elif how == "drop" and keys:
            pairs = [p for p in pairs if p[0] != key]
        elif how == "dup":
            value = dict(pairs).get(key)
            pairs.append((key, draw(st.one_of(st.just(value), json_values))))
        elif how == "retype":
            pairs = [(k, draw(leaves) if k == key else v) for k, v in pairs]
        elif how == "nest":
            pairs = [(k, [v] if k == key else v) for k, v in pairs]
        else:
            pairs = [(draw(texts) if k == key else k, v) for k, v in pairs]
    text = dump(Obj(tuple(pairs)))
    if draw(st.integers(0, 9)) == 0:  # a byte-level accident
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from([b"\x00", b"\x0c", b"\x1f", b"\xff", b"",
                                                 b"}", b'"', b"\\"])) + text[at + 1:]
    return text


@st.composite
def hostile_logs(draw: st.DrawFn) -> list[bytes]:
    log = draw(st.sampled_from(CASE_LOGS))
    start = draw(st.integers(0, max(0, len(log) - 1)))
    start = 0 if draw(st.booleans()) else start  # often keep the header
    lines = list(log[start:start + draw(st.integers(1, 40))])
    out: list[bytes] = []
    for raw in lines:
        roll = draw(st.integers(0, 9))
        if roll < 3:
            out.append(draw(perturbed_line(raw)))
        elif roll == 3:
            out += [raw, raw]  # a retry
        else:
            out.append(raw)
    if draw(st.booleans()):
        out = draw(st.permutations(out))
    return out


def _check(lines: Sequence[bytes], hold_lines: int) -> None:
    validator = _core.Validator(hold_lines=hold_lines)
    verdicts: list[_core.Verdict] = []
    for number, raw in enumerate(lines, 1):
        validator.feed_line(raw, "fuzz.jsonl", number)
        if number % 7 == 0:
            verdicts += validator.take_verdicts()
    verdicts += validator.finish()
    errors = validator.take_errors()

    games = [v.game for v in verdicts]
    assert len(games) == len(set(games)), games  # one verdict per game
    for verdict in verdicts:
        assert verdict.status in STATUSES
        as_json = verdict.to_json()
        orjson.dumps(as_json)
        assert orjson.loads(verdict.json())["game"] == verdict.game
        assert {v["code"] for v in as_json["violations"]} <= CODES, as_json["violations"]
        assert [v["code"] for v in verdict.violations] == [
            v["code"] for v in as_json["violations"]
        ]
        assert as_json["status"] == verdict.status
    for error in errors:
        assert error["kind"] == "error" and error["file"] == "fuzz.jsonl"
        assert error["code"] in CODES
        assert error["line"] is None or 1 <= error["line"] <= len(lines)
    orjson.dumps(errors)


FUZZ = settings(max_examples=300, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
holds = st.sampled_from([1, 4, 100_000])


@FUZZ
@given(st.lists(st.binary(max_size=120), max_size=12), holds)
def test_fuzz_arbitrary_bytes_lines(lines: list[bytes], hold_lines: int) -> None:
    _check(lines, hold_lines)


@FUZZ
@given(st.lists(st.binary(max_size=60), max_size=4), holds)
def test_fuzz_bytes_after_a_valid_header(junk: list[bytes], hold_lines: int) -> None:
    _check([*BAZITO[:4], *junk, *BAZITO[4:8]], hold_lines)


@FUZZ
@given(hostile_logs(), holds)
def test_fuzz_perturbed_case_lines(lines: list[bytes], hold_lines: int) -> None:
    _check(lines, hold_lines)


@FUZZ
@given(st.lists(json_values, min_size=1, max_size=6))
def test_fuzz_arbitrary_json_values(values: list[Any]) -> None:
    _check([dump(v) for v in values], 100_000)


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_logs())
def test_fuzz_validate_json_parses_line_by_line(lines: list[bytes]) -> None:
    # one file per example; lines holding a newline become two lines, as a file would
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        output = _core.validate_json([str(path)])
    if not output:
        return
    records = _parse_json_lines(output)
    games = [r["game"] for r in records if r["kind"] == "game"]
    assert len(games) == len(set(games))
    for record in records:
        if record["kind"] == "game":
            assert record["status"] in STATUSES
            assert {v["code"] for v in record["violations"]} <= CODES
        else:
            assert record["kind"] == "error" and record["code"] in CODES
            assert record["file"] == str(path)
