"""Issue #34, "Bounded by design": an input cannot take the machine's memory.

Each reproduction of the issue, scaled so it runs in seconds: the memory of a command is
its child process's peak RSS (`resource.getrusage(RUSAGE_CHILDREN)` read in a fresh
interpreter that ran only that command), never a timing.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from engine import _core

MiB = 1 << 20
#: what `haftkhabis validate` costs before it reads a line (the interpreter, the engine,
#: typer and rich), with room: a limit holds when the peak stays under this plus its share
BASE_RSS = 100 * MiB

PEAK_OF = """
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    code = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""


def peak_of(command: list[str], output: Path) -> tuple[int, int]:
    """(exit status, peak RSS in bytes) of `command`, its standard output to `output`."""
    done = subprocess.run([sys.executable, "-c", PEAK_OF, str(output), *command],
                          capture_output=True, text=True, check=True, timeout=600)
    code, peak = done.stdout.split()
    return int(code), int(peak)


def haftkhabis(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.app", *args]


def one_line_bomb(path: Path, spaces: int) -> None:
    """A gzip file inflating to one line of `spaces` spaces, then a line `{}`."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = b" " * (16 * MiB)
    with path.open("wb") as out:
        for _ in range(spaces // len(piece)):
            out.write(deflate.compress(piece))
        out.write(deflate.compress(b"\n{}\n"))
        out.write(deflate.flush())


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def test_a_one_line_gzip_bomb_is_a_located_error_in_flat_memory(tmp_path: Path) -> None:
    """Issue #34, 1: "4.2 MB of gzip inflating to one 4 GiB line of spaces drives
    `validate` to 8.2 GiB peak RSS"; here 512 MiB of spaces (main reached past 1 GiB)."""
    bomb = tmp_path / "bomb.jsonl.gz"
    one_line_bomb(bomb, 512 * MiB)
    out = tmp_path / "out.jsonl"
    code, peak = peak_of(haftkhabis("validate", "--json", str(bomb)), out)
    assert code == 1
    assert peak < BASE_RSS + 64 * MiB, f"peak RSS {peak / MiB:.0f} MiB"
    print(f"gzip bomb: peak RSS {peak / MiB:.0f} MiB")
    errors = [r for r in records(out) if r["kind"] == "error"]
    assert [(e["file"], e["line"], e["code"]) for e in errors] == [
        (str(bomb), 1, "line_too_long"), (str(bomb), 2, "schema")]
    assert errors[0]["message"] == (f"the line is longer than the cap of {1 << 20} bytes "
                                    "(max_line_bytes); it was skipped unread")


def test_the_line_cap_is_a_setting_on_every_reading_path(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    header = json.dumps({"game": "g", "seq": 0, "type": "game", "format": "haftkhabis/1",
                         "ruleset": "bazito", "players": ["a", "b", "c", "d"]})
    log.write_text(header + "\n" + "x" * 300 + "\n")
    out = tmp_path / "out.jsonl"
    code, _ = peak_of(haftkhabis("validate", "--json", "--max-line-bytes", "200", str(log)), out)
    assert code == 1
    assert [(r["line"], r["code"]) for r in records(out) if r["kind"] == "error"] == [
        (2, "line_too_long")]
    # lines handed over one by one (the dashboard's upload) meet the same cap
    validator = _core.Validator(max_line_bytes=200)
    validator.feed_line(b"y" * 201, "upload", 7)
    [error] = validator.take_errors()
    assert (error["file"], error["line"], error["code"]) == ("upload", 7, "line_too_long")
    # and the ingest's router quarantines it, reading on
    seen: list[tuple[int | None, str]] = []
    spooled = _core.route_files([str(log)], [str(tmp_path / "s0")],
                                lambda read, found: seen.extend((f["line"], f["code"]) for f in found),
                                max_line_bytes=200)
    assert spooled == [1] and seen == [(2, "line_too_long")]
    # and so does one shard reading the files itself (no routing pass)
    read: list[tuple[int | None, str]] = []
    reports: list[int] = []

    def on_file(report: _core.FileRead, found: list[_core.QuarantineInfo]) -> None:
        reports.append(report["lines"])
        read.extend((f["line"], f["code"]) for f in found)

    ingestor = _core.Ingestor(batch=1)
    ingestor.feed_files([str(log)], on_file, lambda ruleset, month, tables: None, max_line_bytes=200)
    assert read == [(2, "line_too_long")] and reports == [2] and ingestor.lines_read == 1


def open_games(path: Path, games: int) -> None:
    """`games` games of one line each, a header never followed by a deal."""
    with path.open("w") as out:
        for n in range(games):
            out.write(json.dumps({"game": f"open-{n:07d}", "seq": 0, "type": "game",
                                  "format": "haftkhabis/1", "ruleset": "bazito",
                                  "players": ["a", "b", "c", "d"]}) + "\n")


def test_open_games_are_bounded_oldest_judged_as_they_stand(tmp_path: Path) -> None:
    """Issue #34, 2: "a 48 MB file of 1.2 M one-line games (a header, never closed) takes
    `validate` to 2.9 GiB"; here 200,000 games with a cap of 2,000 held (main held them
    all: some 500 MiB)."""
    log = tmp_path / "open.jsonl"
    open_games(log, 200_000)
    out = tmp_path / "out.jsonl"
    code, peak = peak_of(haftkhabis("validate", "--json", "--max-open-games", "2000", str(log)),
                         out)
    assert code == 1
    assert peak < BASE_RSS + 96 * MiB, f"peak RSS {peak / MiB:.0f} MiB"
    print(f"open games: peak RSS {peak / MiB:.0f} MiB")
    kinds: dict[str, int] = {}
    statuses: dict[str, int] = {}
    first_cut = None
    with out.open("rb") as lines:
        for line in lines:
            record = json.loads(line)
            kinds[record["kind"]] = kinds.get(record["kind"], 0) + 1
            if record["kind"] == "game":
                statuses[record["status"]] = statuses.get(record["status"], 0) + 1
            elif first_cut is None:
                first_cut = record
    assert kinds == {"game": 200_000, "error": 198_000}
    assert statuses == {"incomplete": 200_000}
    assert first_cut is not None
    assert (first_cut["line"], first_cut["code"]) == (2001, "too_many_open_games")
    assert str(first_cut["message"]).startswith("game open-0000000 was judged as it stood: 2001 games")


def test_lines_waiting_for_a_gap_are_bounded(tmp_path: Path) -> None:
    """A game whose seq 1 never comes holds every later line waiting: past the cap it is
    judged as it stands (the gap a `sequence` violation) and its memory freed."""
    log = tmp_path / "gap.jsonl"
    lines = [{"game": "g", "seq": 0, "type": "game", "format": "haftkhabis/1",
              "ruleset": "bazito", "players": ["a", "b", "c", "d"]}]
    lines += [{"game": "g", "seq": s, "type": "pass", "player": "a"} for s in range(2, 60)]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    validator = _core.Validator(max_waiting_lines=50)
    validator.feed_file(str(log))
    [verdict] = validator.take_verdicts()
    assert verdict.status == "violations"
    assert [v["code"] for v in verdict.violations][:1] == ["sequence"]
    assert validator.open_games == 0
    codes = [e["code"] for e in validator.take_errors()]
    assert codes[0] == "too_many_open_games" and set(codes[1:]) == {"unexpected_event"}


@pytest.mark.parametrize("name", ["DEFAULT_MAX_LINE_BYTES", "DEFAULT_MAX_OPEN_GAMES",
                                  "DEFAULT_MAX_WAITING_LINES"])
def test_the_limits_are_the_cores(name: str) -> None:
    assert isinstance(getattr(_core, name), int) and getattr(_core, name) > 0


def test_gzip_module_agrees_the_bomb_is_one_line(tmp_path: Path) -> None:
    """The bomb the first test reads is what it says (a guard on the helper)."""
    bomb = tmp_path / "small.gz"
    one_line_bomb(bomb, 16 * MiB)
    with gzip.open(bomb, "rb") as text:
        assert sum(1 for _ in text) == 2


def test_the_python_reader_caps_lines_too(tmp_path: Path) -> None:
    """`replay` and `report` read a log's lines in Python (`engine.reader.read_lines`):
    the same cap, the same located error, reading on after it."""
    from engine.reader import LineError, read_lines

    log = tmp_path / "r.jsonl.gz"
    with gzip.open(log, "wb") as out:
        out.write(b'{"a":1}\r\n' + b" " * (3 * MiB) + b"\n\n" + b"x" * 100 + b"\nlast")
    got = [(item.line, "error") if isinstance(item, LineError) else (item[0], len(item[1]))
           for item in read_lines(str(log), 64)]
    assert got == [(1, 7), (2, "error"), (4, "error"), (5, 4)]


def bad_lines(path: Path, count: int) -> None:
    """`count` lines that belong to no game: not JSON, or JSON cut short."""
    with path.open("w") as out:
        for n in range(count):
            out.write(f"not json {n}\n" if n % 2 == 0 else '{"game":"g","seq":\n')


@pytest.mark.parametrize(("options", "count"), [([], 60_000), (["--code", "must_play"], 500_000)])
def test_human_validate_streams_line_errors_in_flat_memory(tmp_path: Path, options: list[str],
                                                           count: int) -> None:
    """Issue #34: "human-readable validate keeps one file's line errors in memory until the
    file ends" — each held as a record in the core and a dict in Python, about 1 KiB: main
    peaked at 89 MiB for these 60,000 and 545 MiB for the 500,000 (25 MiB for one line).
    Printed as they come, the peak is that of a one-line file, give or take the batch being
    printed (31 and 29 MiB). With `--code` the line errors are counted, not printed (they
    are no game's), so that run can read many more of them in the same time."""
    one = tmp_path / "one.jsonl"
    bad_lines(one, 1)
    base_code, base = peak_of(haftkhabis("validate", *options, str(one)), tmp_path / "one.txt")
    log = tmp_path / "bad.jsonl"
    bad_lines(log, count)
    out = tmp_path / "out.txt"
    code, peak = peak_of(haftkhabis("validate", *options, str(log)), out)
    print(f"{count:,} bad lines {options}: peak RSS {peak / MiB:.0f} MiB, one bad line "
          f"{base / MiB:.0f} MiB")
    assert peak < base + 16 * MiB, f"peak RSS {peak / MiB:.0f} MiB, one line {base / MiB:.0f} MiB"
    printed = out.read_text().splitlines()
    if options:
        assert (base_code, code) == (0, 0)
        assert printed == [f"0 of 0 games with a violation of must_play; 0 such violations; "
                           f"{count} lines read"]
        return
    assert (base_code, code) == (1, 1)
    assert len(printed) == count + 1
    assert printed[0] == f"{log}:1: malformed_json: the line is not valid JSON: expected ident at line 1 column 2"
    assert printed[count - 1] == (f"{log}:{count}: malformed_json: the line is not valid JSON: "
                                  "EOF while parsing a value at line 1 column 18")
    assert [line.split(":", 2)[1] for line in printed[:-1]] == [str(n) for n in range(1, count + 1)]
    assert printed[-1] == f"0 games (no games); 0 violations in all; {count} line errors; {count} lines read"
