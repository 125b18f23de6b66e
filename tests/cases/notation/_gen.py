"""Writes the notation (reading) scenario cases in this folder.

The games are the bazito and pis-yedili fast hands of ../bazito/_gen.py and
../pis-yedili/_gen.py (compliant, card-checked); each case damages or rearranges their
lines as a log shipper or producer might. Run: python _gen.py
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bazito"))
from _casekit import Game, bazito_value, dumps, hand_out, pis_value, write_expect  # noqa: E402


def _load(name: str, rel: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BZ = _load("bazito_gen", "../bazito/_gen.py")
PY = _load("pis_gen", "../pis-yedili/_gen.py")
P = BZ.P
CASES: dict = {}


def case(fn):
    CASES[fn.__name__.replace("_", "-")] = fn
    return fn


def stamp(lines: list[dict], minute: int = 4) -> list[dict]:
    """Adds a `ts` to every line (one second apart), as a real server would."""
    for d in lines:
        d["ts"] = f"2026-11-29T18:{minute:02d}:{d['seq'] % 60:02d}.250Z"
    return lines


def bz_game(gid: str, with_end: bool = True, **kw) -> tuple[Game, dict]:
    """The bazito fast hand, complete; returns the game and its expected entry."""
    g = BZ.new(gid, **kw.pop("header", {}))
    BZ.fast_hand(g, **kw)
    s = g.scores("sara", bazito_value, 2)
    if with_end:
        g.end(1, winners=["sara"], scores=s)
    return g, {"status": "compliant", "violations": [], "hands": [hand_out(1, "sara", s)],
               "totals": s}


def py_game(gid: str) -> tuple[Game, dict]:
    g = PY.new(gid, **PY.ONE)
    PY.fast_hand(g, 1, "deniz")
    s = g.scores("ayse", pis_value, 3)
    g.end(1, winners=["ayse"], scores=s)
    return g, {"status": "compliant", "violations": [], "hands": [hand_out(1, "ayse", s)],
               "totals": s}


def entry(base: dict, violations: list, status: str = "violations") -> dict:
    e = dict(base)
    e["status"] = status
    e["violations"] = violations
    return e


def line_text(x) -> str:
    return x if isinstance(x, str) else dumps(x)


def write_file(path: str, items: list, eol: str = "\n", bom: bool = False) -> None:
    """items: dicts, str (raw text) or bytes (raw line); each item one physical line."""
    data = b"".join((x if isinstance(x, bytes) else line_text(x).encode("utf-8")) + eol.encode()
                    for x in items)
    if bom:
        data = "\ufeff".encode("utf-8") + data
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)


def lineno(items: list, obj) -> int:
    """1-based physical line number of item `obj` (by identity)."""
    for i, x in enumerate(items, start=1):
        if x is obj:
            return i
    raise KeyError(obj)


def seq_of(g: Game, pred) -> int:
    for d in g.lines:
        if pred(d):
            return d["seq"]
    raise KeyError


# ---------------------------------------------------------------- line level errors
@case
def malformed_json_lines():
    g, e = bz_game("nt-malformed")
    stamp(g.lines)
    items: list = list(g.lines)
    junk1 = "this is not json"
    junk2 = "[1, 2, 3]"
    junk3 = dumps(g.lines[12])[:47]  # a partial write, the full line follows
    junk4 = '"just a string"'
    items.insert(5, junk1)
    items.insert(9, junk2)
    items.insert(items.index(g.lines[12]), junk3)
    items.append(junk4)
    errors = [[lineno(items, j), "malformed_json"] for j in (junk1, junk2, junk3, junk4)]
    return ("notation.md: a line that is not a JSON object (plain text, an array, a string, a "
            "truncated object) is malformed_json and belongs to no game: an error record with "
            "its physical line number; the game around it is untouched.",
            {"malformed-json-lines.jsonl": items}, {g.gid: e}, errors)


@case
def invalid_utf8_line():
    g, e = bz_game("nt-utf8")
    items: list = list(g.lines)
    bad = dict(g.lines[6])
    bad["x_note"] = "@@"
    raw = dumps(bad).encode("utf-8").replace(b"@@", b"\xff\xfe caf\xe9")
    items.insert(7, raw)  # a copy of seq 6 with bytes that are not UTF-8
    return ("notation.md: 'not a JSON object, or not UTF-8' is malformed_json; the line "
            "belongs to no game (error record), so its seq (a copy of seq 6) raises no "
            "`sequence` in the game.",
            {"invalid-utf8-line.jsonl": items}, {g.gid: e}, [[8, "malformed_json"]])


@case
def lines_without_game():
    g, e = bz_game("nt-nogame")
    items: list = list(g.lines)
    stray = [
        {"seq": 3, "type": "announce", "player": "sara", "call": "last_card"},
        {"game": 42, "seq": 3, "type": "announce", "player": "sara", "call": "last_card"},
        {"game": "", "seq": 3, "type": "announce", "player": "sara", "call": "last_card"},
        {"game": None, "seq": 3, "type": "announce", "player": "sara", "call": "last_card"},
    ]
    for i, s in enumerate(stray):
        items.insert(4 + 5 * i, s)
    return ("notation.md Fine points: a line with no usable `game` (missing, a number, empty, "
            "null = missing) belongs to no game: an error record `schema` with its line "
            "number.",
            {"lines-without-game.jsonl": items}, {g.gid: e},
            [[lineno(items, s), "schema"] for s in stray])


@case
def game_id_malformed():
    g, e = bz_game("nt-badid")
    items: list = list(g.lines)
    stray = [
        {"game": "nt badid", "seq": 3, "type": "announce", "player": "sara", "call": "last_card"},
        {"game": "nt/badid", "seq": 3, "type": "announce", "player": "sara", "call": "last_card"},
        {"game": "n" * 129, "seq": 3, "type": "announce", "player": "sara", "call": "last_card"},
    ]
    for i, s in enumerate(stray):
        items.insert(6 + 4 * i, s)
    return ("notation.md Lines: `game` is 1-128 characters of A-Z a-z 0-9 . _ : -; an id "
            "with a space, a slash or 129 characters is not usable, so the line belongs to no "
            "game: error `schema` (see DECISIONS.md).",
            {"game-id-malformed.jsonl": items}, {g.gid: e},
            [[lineno(items, s), "schema"] for s in stray])


@case
def seq_unusable():
    g, e = bz_game("nt-seq-bad")
    items: list = list(g.lines)
    copies = []
    for i, val in enumerate([..., -1, 1.0, True, "5"]):
        c = dict(g.lines[3 + 3 * i])
        if val is ...:
            del c["seq"]
        else:
            c["seq"] = val
        copies.append(c)
        items.insert(items.index(g.lines[3 + 3 * i]) + 1, c)
    return ("notation.md Fine points: a line with no usable `seq` (missing, negative, not a "
            "JSON integer: 1.0, true, \"5\") is `schema` with seq null and is set aside. Here "
            "each is a shipper's copy of a line present with its right seq, so nothing is "
            "missing from the game.",
            {"seq-unusable.jsonl": items},
            {g.gid: entry(e, [[None, "schema"]] * 5)}, None)


@case
def seq_gaps():
    a, ea = bz_game("nt-gap-float", pre={7: lambda g: g.announce("omid")})
    ann = next(d for d in a.lines if d["type"] == "announce")
    ann["seq"] = float(ann["seq"])  # 9.0: its only copy is unusable, seq 9 goes missing
    after = int(ann["seq"]) + 1

    def skip2(g):
        g.seq += 2

    b, eb = bz_game("nt-gap-two", pre={7: skip2})
    return ("notation.md: a gap in the seq numbers is one `sequence` violation reported at the "
            "next line present. Game gap-float: the announce at seq 9 is written 9.0 (schema, "
            "seq null, set aside), so seq 9 is missing: sequence at 10. Game gap-two: seqs 9 "
            "and 10 missing: one sequence at 11.",
            {"seq-gaps.jsonl": a.lines + b.lines},
            {a.gid: entry(ea, [[None, "schema"], [after, "sequence"]]),
             b.gid: entry(eb, [[11, "sequence"]])}, None)


@case
def duplicate_lines_dropped():
    g, e = bz_game("nt-dupes")
    stamp(g.lines)
    items: list = list(g.lines)
    items.insert(6, dumps(g.lines[5]))  # a retry, byte for byte
    d = g.lines[12]
    reordered = ", ".join(f"{json.dumps(k)}: {json.dumps(d[k], ensure_ascii=False)}"
                          for k in reversed(list(d)))
    items.append("{ " + reordered + " }")  # the same JSON value, other key order and spacing
    return ("notation.md: a line repeated identically (a shipper's retry) is dropped "
            "silently; identical means the same JSON value, key order and spacing ignored "
            "(Fine points). Compliant.",
            {"duplicate-lines-dropped.jsonl": items}, {g.gid: e}, None)


@case
def same_seq_different_line():
    g, e = bz_game("nt-conflict")
    stamp(g.lines)
    items: list = list(g.lines)
    c = dict(g.lines[7])
    c["ts"] = c["ts"].replace(".250Z", ".750Z")  # differs in ts only: a different line
    items.insert(9, c)
    return ("notation.md: two different lines with the same seq is a `sequence` violation; "
            "the later one in input order is set aside; a line differing only in `ts` is a "
            "different line (Fine points).",
            {"same-seq-different-line.jsonl": items},
            {g.gid: entry(e, [[7, "sequence"]])}, None)


@case
def lines_out_of_order():
    g, e = bz_game("nt-shuffled")
    items: list = list(g.lines)
    random.Random(41).shuffle(items)
    assert items[0]["seq"] != 0
    return ("notation.md: a game's lines may arrive in any order; seq alone orders them. The "
            "whole game shuffled (header not first): compliant.",
            {"lines-out-of-order.jsonl": items}, {g.gid: e}, None)


@case
def two_games_interleaved():
    a, ea = bz_game("nt-inter-bz")
    b, eb = py_game("nt-inter-py")
    items: list = []
    for i in range(max(len(a.lines), len(b.lines))):
        items += a.lines[i:i + 1] + b.lines[i:i + 1]
    return ("notation.md: a file may hold many games, interleaved line by line. A bazito and a "
            "pis-yedili game, both compliant.",
            {"two-games-interleaved.jsonl": items}, {a.gid: ea, b.gid: eb}, None)


@case
def split_over_two_files():
    g, e = bz_game("nt-split")
    return ("notation.md: one game's lines may be spread over several files (log rotation); "
            "a directory's files are read in path order (a.jsonl, then b.jsonl), and here "
            "a.jsonl holds the later part (seq 11 on), b.jsonl seq 0-10: seq alone orders.",
            {"split-over-two-files/a.jsonl": g.lines[11:],
             "split-over-two-files/b.jsonl": g.lines[:11]}, {g.gid: e}, None)


@case
def split_conflict_path_order():
    g, e = bz_game("nt-split-conflict")
    alt = dict(g.lines[7])
    assert alt["player"] == "reza" and alt["card"] == "5C"
    alt["card"] = "4S"  # also legal on 5S, but it is the later line for seq 7
    return ("notation.md: two different lines share seq 7, one in part-1.jsonl (reza 5C) and "
            "one in part-2.jsonl (reza 4S); input order is path order, so part-2's is the "
            "later one: `sequence` at 7 and it is set aside. Keeping 5C, the rest of the hand "
            "replays cleanly (keeping 4S would make reza's later 4S card_not_in_hand).",
            {"split-conflict-path-order/part-1.jsonl": g.lines[:11],
             "split-conflict-path-order/part-2.jsonl": [alt, *g.lines[11:]]},
            {g.gid: entry(e, [[7, "sequence"]])}, None)


@case
def directory_extensions():
    g, e = bz_game("nt-rotated")
    return ("notation.md Fine points: a directory contributes its files ending .jsonl, "
            ".ndjson or .log, optionally .gz, recursively, in path order; gzip is recognised "
            "by its magic bytes. The game is spread over t-1.ndjson, t-2.log.gz and "
            "more/t-3.jsonl: compliant.",
            {"directory-extensions/t-1.ndjson": g.lines[:8],
             "directory-extensions/t-2.log.gz": g.lines[8:16],
             "directory-extensions/more/t-3.jsonl": g.lines[16:]}, {g.gid: e}, None)


@case
def gzip_file():
    g, e = bz_game("nt-gzip")
    stamp(g.lines)
    return ("notation.md: a file may be gzip-compressed (.gz). Compliant.",
            {"gzip-file.jsonl.gz": g.lines}, {g.gid: e}, None)


@case
def utf8_bom():
    g, e = bz_game("nt-bom")
    items: list = list(g.lines)
    stray = {"game": "", "seq": 2, "type": "announce", "player": "sara", "call": "last_card"}
    items.insert(2, stray)  # physical line 3
    return ("notation.md Fine points: a UTF-8 byte-order mark is ignored: the header on line "
            "1 reads normally (compliant game); line numbers are unchanged by it (the line "
            "with an empty `game` is error `schema` at line 3).",
            {"utf8-bom.jsonl": ("BOM", items)}, {g.gid: e}, [[3, "schema"]])


@case
def blank_lines_and_crlf():
    g, e = bz_game("nt-crlf")
    items: list = ["", *list(g.lines)]
    items.insert(5, "")
    items.insert(6, "")
    stray = {"seq": 4, "type": "announce", "player": "lale", "call": "last_card"}  # no game
    items.insert(9, stray)
    items.insert(14, "")
    items.append("")
    return ("notation.md: `\\r\\n` ends a line, blank lines are ignored; line numbers are "
            "physical, 1-based, blank lines counted: the line without `game` is error "
            "`schema` at its physical line.",
            {"blank-lines-and-crlf.jsonl": ("CRLF", items)}, {g.gid: e},
            [[lineno(items, stray), "schema"]])


# ---------------------------------------------------------------- fields
@case
def extra_fields():
    a, ea = bz_game("nt-unknown-field", header={"table": 4})
    a.lines[5]["comment"] = "gg"  # unknown: schema, applied
    b, eb = bz_game("nt-x-fields", header={"x_server": "bz-eu-3", "meta": {"table": 4}})
    b.lines[1]["x_shuffle_seed"] = 99172
    for d in b.lines[2:]:
        d["x_latency_ms"] = 40 + d["seq"]
    return ("notation.md: unknown fields are errors (`schema`), reported and applied (game "
            "unknown-field: `table` in the header, `comment` on a play); names starting with "
            "x_ are kept and ignored (game x-fields, with a valid `meta` object: compliant).",
            {"extra-fields.jsonl": a.lines + b.lines},
            {a.gid: entry(ea, [[0, "schema", None], [5, "schema"]]), b.gid: eb}, None)


@case
def repairable_spellings():
    g, e = bz_game("nt-spellings")
    L = g.lines
    L[1]["hands"]["omid"] = ["10C" if c == "TC" else c for c in L[1]["hands"]["omid"]]
    fixes = {5: ("3S", "3s"), 8: ("9C", "9♣"), 10: ("KH", "13H"), 12: ("KS", "K♤"),
             13: ("6S", "6♠")}
    for s, (old, new) in fixes.items():
        assert L[s]["card"] == old
        L[s]["card"] = new
    assert L[20]["card"] == "JH" and L[20]["suit"] == "D"
    L[20]["suit"] = "diamonds"
    viol = [[s, "schema"] for s in [1, *fixes, 20]]
    return ("notation.md Fine points: repairable spellings are `schema` and the line is "
            "applied with the repair: a rank 10 (10C), 13 for K, lower case (3s), a suit "
            "symbol, filled or hollow (9♣, K♤, 6♠), a suit word (diamonds). The hand replays "
            "as written correctly.",
            {"repairable-spellings.jsonl": L}, {g.gid: entry(e, viol)}, None)


@case
def set_aside_lines():
    box = {}

    def xx(g):
        box["xx"] = g.add("play", player="omid", card="XX")  # unreadable: set aside

    def heart_j(g):
        box["hj"] = g.add("play", player="sara", card="♥J", suit="D")  # unreadable

    def chat(g):
        box["chat"] = g.add("chat", player="lale")  # unknown type

    def bob(g):
        box["bob"] = g.add("play", player="bob", card="9S")  # unknown player

    g, e = bz_game("nt-set-aside", pre={3: xx, 6: chat, 11: bob, 18: heart_j})
    viol = [[box[k]["seq"], "schema"] for k in ("xx", "chat", "bob", "hj")]
    return ("notation.md Fine points: set aside after `schema` (not replayed): an unreadable "
            "card (XX, ♥J), an unknown `type`, an unknown `player`. Each is followed by the "
            "real line, so the hand replays cleanly.",
            {"set-aside-lines.jsonl": g.lines}, {g.gid: entry(e, viol)}, None)


@case
def timestamps():
    g, e = bz_game("nt-ts")
    stamp(g.lines)
    L = g.lines
    L[3]["ts"] = "2026-11-29 18:04:03Z"  # a space for T: schema
    L[6]["ts"] = "2026-11-29T18:04:06"  # no offset: schema
    L[9]["ts"] = 1764439449  # a number: schema
    L[12]["ts"] = "2026-11-29t18:04:12.250z"  # either case of T/Z: fine
    L[15]["ts"] = "2026-11-29T21:34:15+03:30"  # an offset: fine
    L[18]["ts"] = "2026-11-29T18:04:18.123456Z"  # any fraction: fine
    return ("notation.md Fine points: `ts` must be YYYY-MM-DDTHH:MM:SS[.frac] with Z or "
            "±HH:MM, either case of T/Z; a bad ts is `schema` and the line applied.",
            {"timestamps.jsonl": L}, {g.gid: entry(e, [[3, "schema"], [6, "schema"], [9, "schema"]])},
            None)


# ---------------------------------------------------------------- headers
def invalid_entry(code: str) -> dict:
    return {"status": "invalid", "violations": [[0, code, None]], "hands": None, "totals": None}


@case
def header_unusable():
    games, exp = [], {}
    for gid, change, code in [
        ("nt-h-format", {"format": "haftkhabis/2"}, "schema"),
        ("nt-h-ruleset", {"ruleset": "turkish"}, "unknown_ruleset"),
        ("nt-h-one-player", {"players": ["sara"]}, "schema"),
        ("nt-h-dup-players", {"players": ["sara", "omid", "sara", "reza"]}, "schema"),
        ("nt-h-no-players", {"players": None}, "schema"),
    ]:
        g, _ = bz_game(gid, upto=6, with_end=False)
        for k, v in change.items():
            if v is None:
                del g.lines[0][k]
            else:
                g.lines[0][k] = v
        games.append(g)
        exp[gid] = invalid_entry(code)
    return ("notation.md Fine points: the header is unusable (status invalid, nothing "
            "replayed, hands/totals null) when `format` is not haftkhabis/1, a required field "
            "is missing, `players` is not 2+ unique ids (schema), or the ruleset is unknown "
            "(unknown_ruleset). Each game stops mid-hand; its other lines raise nothing.",
            {"header-unusable.jsonl": [ln for g in games for ln in g.lines]}, exp, None)


@case
def header_replayed_with_defaults():
    # a 3-player bazito hand: sara 8C 8D 8H 8S 4S, then KD, then JH (x2)
    a = Game("nt-h-three", "bazito", ["sara", "omid", "lale"])
    a.deal(1, "lale", {"sara": "8C 8D 8H 8S 4S KD JH",
                       "omid": "4H 9D 2C 5D TC QC 3S",
                       "lale": "KH 9S AC 6D 3C 5H 2S"}, starter="6C")
    for p, c in [("sara", "8C"), ("sara", "8D"), ("sara", "8H"), ("sara", "8S"), ("sara", "4S"),
                 ("omid", "4H"), ("lale", "KH"), ("sara", "KD"), ("omid", "9D"), ("lale", "9S")]:
        a.play(p, c)
    a.play("sara", "JH", suit="C")
    sa = a.scores("sara", bazito_value, 2)
    a.end(1, winners=["sara"], scores=sa)
    b, eb = bz_game("nt-h-decks", header={"decks": 2})
    c, ec = bz_game("nt-h-match", header={"match": {"hands": 0}})
    d, ed = bz_game("nt-h-meta", header={"meta": "table 4"})
    return ("notation.md Fine points: a player count outside the ruleset's range is `schema` "
            "and the game is replayed with the players as given (bazito with 3 players, dealt "
            "3 hands, seat after the dealer first); a bad `decks` (2 outside persian), "
            "`match` ({\"hands\": 0}) or `meta` (not an object) is `schema` and the default is "
            "used (one deck; bazito's one-hand match, so the game is over after its `end`).",
            {"header-replayed-with-defaults.jsonl": a.lines + b.lines + c.lines + d.lines},
            {a.gid: {"status": "violations", "violations": [[0, "schema", None]],
                     "hands": [hand_out(1, "sara", sa)], "totals": sa},
             b.gid: entry(eb, [[0, "schema", None]]),
             c.gid: entry(ec, [[0, "schema", None]]),
             d.gid: entry(ed, [[0, "schema", None]])}, None)


@case
def no_header_at_seq0():
    g, _ = bz_game("nt-no-header")
    lines = [dict(d, seq=d["seq"] - 1) for d in g.lines[1:]]  # the deal is written at seq 0
    return ("notation.md Fine points: `no_header` is reported at the first line present, at "
            "seq 0 when a seq-0 line exists but is not a `game`; nothing can be replayed: "
            "invalid, hands/totals null.",
            {"no-header-at-seq0.jsonl": lines},
            {g.gid: {"status": "invalid", "violations": [[0, "no_header", None]], "hands": None,
                     "totals": None}}, None)


# ---------------------------------------------------------------- game structure
@case
def second_header_line():
    box = {}

    def hdr(g):
        box["h"] = g.add("game", format="haftkhabis/1", ruleset="bazito", players=P)

    g, e = bz_game("nt-second-header", pre={4: hdr})
    return ("notation.md Fine points: a `game` line at seq > 0 is unexpected_event (player "
            "null); it changes nothing.",
            {"second-header-line.jsonl": g.lines},
            {g.gid: entry(e, [[box["h"]["seq"], "unexpected_event", None]])}, None)


@case
def result_before_match_over():
    g = PY.new("nt-early-result")  # pis-yedili: 4 hands by default
    PY.fast_hand(g, 1, "deniz")
    s = g.scores("ayse", pis_value, 3)
    g.end(1, winners=["ayse"], scores=s)
    r = g.result(totals=s, winners=["ayse"])
    return ("notation.md: a `result` before the match is over is unexpected_event "
            "(pis-yedili plays 4 hands unless `match` says otherwise; here only 1 was played).",
            {"result-before-match-over.jsonl": g.lines},
            {g.gid: {"status": "violations", "violations": [[r["seq"], "unexpected_event", None]],
                     "hands": [hand_out(1, "ayse", s)], "totals": s}}, None)


@case
def lines_after_result_or_abort():
    a, ea = bz_game("nt-after-result")
    a.result(totals=ea["totals"], winners=["sara"])
    x = a.play("omid", "2D")  # after the result: unexpected_event, not applied
    b = BZ.new("nt-after-abort")
    BZ.fast_hand(b, upto=8)
    b.abort("server restart")
    y = b.play("lale", "KH")  # after abort: unexpected_event
    return ("notation.md: any line after `result` or `abort` is unexpected_event, reported and "
            "not applied; status precedence: violations over aborted (Fine points).",
            {"lines-after-result-or-abort.jsonl": a.lines + b.lines},
            {a.gid: entry(ea, [[x["seq"], "unexpected_event", "omid"]]),
             b.gid: {"status": "violations", "violations": [[y["seq"], "unexpected_event", "lale"]],
                     "hands": []}}, None)


@case
def end_wrong_hand_number():
    g, e = bz_game("nt-end-number", with_end=False)
    x = g.end(2)  # the hand is over, but it is hand 1: unexpected_event; it still closes
    return ("notation.md Fine points: an `end` whose `hand` is wrong for a hand that is over "
            "is unexpected_event, and the hand still closes (it is listed with its outcome).",
            {"end-wrong-hand-number.jsonl": g.lines},
            {g.gid: entry(e, [[x["seq"], "unexpected_event", None]])}, None)


@case
def deal_while_hand_runs():
    g = BZ.new("nt-redeal", match={"hands": 2})
    BZ.fast_hand(g, upto=6)  # hand 1 dealt, five plays
    first = len(g.lines)
    h2 = BZ.new("tmp")
    BZ.fast_hand(h2)  # a fresh deal of hand 2, played out
    s = h2.scores("sara", bazito_value, 2)
    for d in h2.lines[1:]:
        d = dict(d, game=g.gid, seq=g.seq)
        if d["type"] == "deal":
            d["hand"] = 2
        g.raw(d)
    x = g.lines[first]
    g.end(2, winners=["sara"], scores=s)
    return ("notation.md Fine points: a `deal` while a hand runs is unexpected_event and is "
            "applied (the running hand is abandoned, without an outcome). Hand 2 then plays "
            "out and its `end` claims are right; only hand 2 is listed.",
            {"deal-while-hand-runs.jsonl": g.lines},
            {g.gid: {"status": "violations", "violations": [[x["seq"], "unexpected_event", None]],
                     "hands": [hand_out(2, "sara", s)], "totals": s}}, None)


@case
def deal_wrong_hand_number():
    g, e = bz_game("nt-deal-number", header={"match": {"hands": 2}})
    h2 = BZ.new("tmp")
    BZ.fast_hand(h2, upto=6)
    first = None
    for d in h2.lines[1:]:
        d = dict(d, game=g.gid, seq=g.seq)
        if d["type"] == "deal":
            d["hand"] = 3  # should be 2: bad_deal, still applied
            d["dealer"] = "reza"
        g.raw(d)
        first = first or d
    return ("notation.md Fine points: a `deal` whose `hand` is not the next number is "
            "bad_deal (still applied): play goes on in it. The log stops mid-hand; hand 1 is "
            "listed.",
            {"deal-wrong-hand-number.jsonl": g.lines},
            {g.gid: entry(e, [[first["seq"], "bad_deal", None]])}, None)


# --------------------------------------------------------------------------------------
def main() -> None:
    count = 0
    for name, fn in CASES.items():
        desc, files, games, errors = fn()
        for rel, items in files.items():
            path = os.path.join(HERE, rel)
            eol, bom = "\n", False
            if isinstance(items, tuple):
                mode, items = items
                eol = "\r\n" if mode == "CRLF" else "\n"
                bom = mode == "BOM"
            write_file(path, items, eol=eol, bom=bom)
        write_expect(os.path.join(HERE, name + ".expect.json"), desc, games, errors)
        count += 1
    print(f"{count} cases written")


if __name__ == "__main__":
    for d in os.listdir(HERE):
        p = os.path.join(HERE, d)
        if os.path.isdir(p) and not d.startswith("_"):
            shutil.rmtree(p)
    main()
