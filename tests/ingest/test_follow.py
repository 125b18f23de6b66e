"""`haftkhabis ingest --follow`: a directory's logs tailed into the warehouse in group
commits — appends, rotations (rename, copytruncate, gzip), restarts and a crash between a
commit and its checkpoint — each line committed once, none lost.

The tests drive `Follower.step()` (one scan and commit) or wait on the warehouse's own
state (a batch committed); a deadline is only a guard against a hang."""

from __future__ import annotations

import gzip
import itertools
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.simulate import SimulatedGame
from ingest import follow as follow_module
from ingest.follow import (
    FollowBatch,
    Follower,
    FollowError,
    FollowPolicy,
    is_followed_name,
    segment_source,
    state_folder,
)
from ingest.pipeline import ingest
from ingest.queries import open_warehouse
from ingest.storage import Location
from ingest.store import Warehouse
from tests.ingest.conftest import REPO, interleave

#: a guard against a hang, never a wait: the tests wait on the warehouse's state
DEADLINE = 180.0
#: where each table keeps where its rows came from (a follower's segments, not the log)
PROVENANCE = {"games": ("source_files", "ingest_batch"), "events": ("file", "line", "ingest_batch"),
              "violations": ("file", "line", "ingest_batch"),
              "quarantine": ("file", "file_sha256", "line", "ingest_batch"),
              "hands": ("ingest_batch",), "hand_players": ("ingest_batch",), "player_stats": (),
              "two_gifts": (), "seat_results": (), "special_card_totals": ()}
GARBAGE = b'{"not a game line": tru'


@pytest.fixture(scope="module")
def corpus(games: dict[str, list[SimulatedGame]]) -> list[bytes]:
    """About 1,600 lines of 14 games written at once (so a game spans many batches), with
    a line that belongs to no game (it is quarantined)."""
    lines = interleave([*games["bazito"][:12], *games["persian"][:2]])
    return [*lines[:300], GARBAGE, *lines[300:]]


def blob(lines: Sequence[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as out:
        out.write(data)


def follower(logs: Path, warehouse: Path, notes: list[str] | None = None, **policy: Any) -> Follower:
    return Follower(logs, str(warehouse), policy=FollowPolicy(**policy),
                    on_note=(notes.append if notes is not None else None))


def batch_rows(warehouse: Path | str, options: dict[str, str] | None = None) -> list[dict[str, Any]]:
    with open_warehouse(str(warehouse), storage_options=options) as reader:
        return reader.rows("SELECT id, lines, files FROM batches ORDER BY id")


def stored_lines(warehouse: Path | str, options: dict[str, str] | None = None) -> Counter[bytes]:
    """Every line the warehouse holds: the games' lines and the quarantined ones."""
    with open_warehouse(str(warehouse), storage_options=options) as reader:
        events = [r[0].encode() for r in reader.sql("SELECT raw FROM events").fetchall()]
        quarantined = [bytes(r[0]) for r in reader.sql(
            "SELECT raw FROM quarantine WHERE raw IS NOT NULL").fetchall()]
    return Counter(events + quarantined)


def assert_each_line_once(warehouse: Path | str, written: Sequence[bytes],
                          options: dict[str, str] | None = None) -> None:
    """Every line written is in the warehouse, and the batches read each one once (their
    `lines` add up to what was written: a line read twice would be counted twice, though
    the warehouse keeps one copy)."""
    assert sum(r["lines"] for r in batch_rows(warehouse, options)) == len(written)
    assert set(stored_lines(warehouse, options)) == set(written)


def without_provenance(warehouse: Path) -> dict[str, list[tuple[Any, ...]]]:
    out = {}
    with open_warehouse(str(warehouse)) as reader:
        for name, columns in PROVENANCE.items():
            exclude = f" EXCLUDE ({', '.join(columns)})" if columns else ""
            out[name] = sorted(reader.sql(f"SELECT *{exclude} FROM {name}").fetchall(), key=repr)
    return out


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.05)  # polling the warehouse's state, not waiting for time to pass


def committed_batch(warehouse: Path | str, options: dict[str, str] | None = None) -> int:
    store = Warehouse(str(warehouse), options)
    return store.snapshot(heal=False).batch if store.exists() else 0


# ---------------------------------------------------------------------------- names


def test_followed_names_are_log_names_and_their_rotations() -> None:
    for name in ("server.log", "a.jsonl", "b.ndjson.gz", "server.log.1", "server.log.12.gz",
                 "server.log-20261203", "server.log-20261203.gz", "server.log.2026-12-03"):
        assert is_followed_name(name), name
    for name in ("server.txt", "server.log.old", "server.gz", "notes.1", "server.log@0-10#L1"):
        assert not is_followed_name(name), name


def test_a_segment_name_gives_back_the_source_file_and_line() -> None:
    segment = "/wh/_follow/logs-0123/segments/20261203T101500.000000Z-a1b2c3/t/7.log@1024-2048#L101"
    assert segment_source(segment, 1) == ("t/7.log", 101)
    assert segment_source(segment, 12) == ("t/7.log", 112)
    assert segment_source("/var/log/games/7.log", 3) is None


# ---------------------------------------------------------------------------- appends


def test_appended_lines_are_committed_once_and_the_warehouse_is_a_one_shot_ingest(
        tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    cuts = [0, 250, 301, 700, 1100, len(corpus)]
    with follower(logs, warehouse) as tail:
        assert tail.step() is None  # an empty directory: nothing to commit
        for start, end in itertools.pairwise(cuts):
            chunk = blob(corpus[start:end])
            if start == 700:
                # the last line written in two pieces: it waits for its second half
                half = len(chunk) - 20
                append(log, chunk[:half])
                batch = tail.step()
                assert batch is not None and batch.lines == end - start - 1
                append(log, chunk[half:])
                batch = tail.step()
                assert batch is not None and batch.lines == 1
            else:
                append(log, chunk)
                batch = tail.step()
                assert batch is not None and batch.lines == end - start
            assert tail.step() is None  # nothing new: no batch
    assert_each_line_once(warehouse, corpus)
    once = tmp_path / "once"
    ingest([str(log)], str(once), workers=1)
    assert without_provenance(warehouse) == without_provenance(once)
    # what a user sees of a line: the segment names the log and the line's number in it
    with open_warehouse(str(warehouse)) as reader:
        rows = reader.sql("SELECT file, line, raw FROM events").fetchall()
        quarantined = reader.sql("SELECT file, line, raw FROM quarantine").fetchall()
    assert len(rows) > 1000
    for file, line, raw in rows:
        source = segment_source(file, line)
        assert source is not None and source[0] == "server.log"
        assert corpus[source[1] - 1] == raw.encode(), (file, line)
    assert [(segment_source(f, n), bytes(r)) for f, n, r in quarantined] == \
        [(("server.log", 301), GARBAGE)]


def test_a_backlog_is_committed_in_groups_of_at_most_commit_lines(
        tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes(blob(corpus[:700]))
    (logs / "b.jsonl").write_bytes(blob(corpus[700:900]))
    sizes = []
    with follower(logs, warehouse, lines=400) as tail:
        while (batch := tail.step()) is not None:
            sizes.append(batch.lines)
    assert sizes == [400, 400, 100]  # a.jsonl's first 400; its last 300 and 100 of b; the rest
    assert_each_line_once(warehouse, corpus[:900])


def test_a_follower_merges_the_parts_its_groups_leave(
        tmp_path: Path, games: dict[str, list[SimulatedGame]]) -> None:
    """A game a group, a merge pass every third group: a partition's parts are joined once
    eight of a tier are there, so none keeps one a group, and every line is there once."""
    from ingest.merge import FANOUT

    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    written: list[bytes] = []
    with follower(logs, warehouse, compact_every=3) as tail:
        for game in games["bazito"]:
            append(log, blob(game.lines))
            written.extend(game.lines)
            assert tail.step() is not None
    kinds = Counter(r["kind"] for r in batch_kinds(warehouse))
    assert kinds["ingest"] == len(games["bazito"]) and kinds["compact"] >= 1
    store = Warehouse(warehouse)
    parts = Counter(p.partition for p in store.committed_files("events", store.snapshot().versions["events"]))
    assert max(parts.values()) < FANOUT + 3, parts
    assert_each_line_once(warehouse, written)


def batch_kinds(warehouse: Path) -> list[dict[str, Any]]:
    with open_warehouse(str(warehouse)) as reader:
        return reader.rows("SELECT id, kind FROM batches ORDER BY id")


# ---------------------------------------------------------------------------- rotation


def test_rename_rotation_reads_the_old_file_to_its_end_and_the_new_one_from_its_start(
        tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log, rotated = logs / "server.log", logs / "server.log.1"
    with follower(logs, warehouse) as tail:
        append(log, blob(corpus[:400]))
        assert tail.step() is not None
        append(log, blob(corpus[400:500]))  # not read before the rotation
        log.rename(rotated)
        append(log, blob(corpus[500:800]))
        batch = tail.step()
        assert batch is not None and batch.lines == 400
        # the old file's lines come first, the new file's from its start
        assert [segment_source(s, 1) for s in batch.segments] == \
            [("server.log.1", 401), ("server.log", 1)]
        append(rotated, blob(corpus[800:850]))  # a server still holding the old file
        append(log, blob(corpus[850:1000]))
        assert tail.step() is not None
        assert tail.step() is None
    assert_each_line_once(warehouse, corpus[:1000])


@pytest.mark.parametrize("seen_between", [False, True], ids=["copy-then-truncate", "copy-seen-before-truncate"])
def test_copytruncate_goes_on_in_the_copy_and_starts_again_in_the_truncated_file(
        tmp_path: Path, corpus: list[bytes], seen_between: bool) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log, copy = logs / "server.log", logs / "server.log.1"
    with follower(logs, warehouse) as tail:
        append(log, blob(corpus[:300]))
        assert tail.step() is not None
        append(log, blob(corpus[300:400]))  # not read before the copy
        shutil.copyfile(log, copy)
        if seen_between:
            # the copy is a copy of a file still there: its lines are that file's
            batch = tail.step()
            assert batch is not None and batch.lines == 100
            assert [segment_source(s, 1) for s in batch.segments] == [("server.log", 301)]
        with open(log, "r+b") as truncated:
            truncated.truncate(0)
        # more written after the truncation than before it: found by the content, not the size
        append(log, blob(corpus[400:1000]))
        batch = tail.step()
        assert batch is not None
        assert batch.lines == (600 if seen_between else 700)
        names = [segment_source(s, 1) for s in batch.segments]
        assert names == ([("server.log", 1)] if seen_between else
                         [("server.log.1", 301), ("server.log", 1)])
        assert tail.step() is None
    assert_each_line_once(warehouse, corpus[:1000])


@pytest.mark.parametrize(("unread", "restart"), [(0, False), (150, False), (150, True)],
                         ids=["read-whole", "last-lines-unread", "last-lines-unread-while-stopped"])
def test_gzip_rollover_reads_no_line_twice(tmp_path: Path, corpus: list[bytes], unread: int,
                                           restart: bool) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    tail = follower(logs, warehouse)
    append(log, blob(corpus[:500]))
    assert tail.step() is not None
    append(log, blob(corpus[500:500 + unread]))
    if restart:
        tail.close()  # rotated while no follower runs
    # logrotate with `compress`: renamed, a new file made, the old one compressed
    log.rename(logs / "server.log.1")
    append(log, blob(corpus[700:900]))
    with open(logs / "server.log.1", "rb") as plain, \
            gzip.open(logs / "server.log.1.gz", "wb") as packed:
        shutil.copyfileobj(plain, packed)
    (logs / "server.log.1").unlink()
    if restart:
        tail = follower(logs, warehouse)
    with tail:
        batch = tail.step()
        assert batch is not None and batch.lines == 200 + unread
        # the old content's last lines first: read from the compressed copy, or, when the
        # follower had the file open when it went, from the file itself (by its last name)
        old = [("server.log.1.gz" if restart else "server.log", 501)] if unread else []
        assert [segment_source(s, 1) for s in batch.segments] == [*old, ("server.log", 1)]
        assert tail.step() is None
    written = [*corpus[:500 + unread], *corpus[700:900]]
    assert_each_line_once(warehouse, written)
    # and a new follower on the same state reads nothing again
    with follower(logs, warehouse) as again:
        assert again.step() is None


def test_a_file_deleted_before_its_last_lines_were_read_is_read_to_its_end(
        tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    with follower(logs, warehouse) as tail:
        append(logs / "a.log", blob(corpus[:200]))
        append(logs / "b.log", blob(corpus[200:300]))
        assert tail.step() is not None
        append(logs / "a.log", blob(corpus[300:400]))
        (logs / "a.log").unlink()  # the follower still has it open
        (logs / "b.log").unlink()
        batch = tail.step()
        assert batch is not None and batch.lines == 100
        assert tail.step() is None
    assert_each_line_once(warehouse, corpus[:400])


# ---------------------------------------------------------------------------- restarts


def test_a_restart_resumes_at_the_committed_offset(tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    first = blob(corpus[:600])
    append(log, first)
    with follower(logs, warehouse) as tail:
        assert tail.step() is not None
    rest = blob(corpus[600:1000])
    append(log, rest[:-10])  # and a last line still being written
    with follower(logs, warehouse) as tail:
        batch = tail.step()
        assert batch is not None and batch.lines == 399
        assert len(batch.segments) == 1
        assert batch.segments[0].endswith(f"/server.log@{len(first)}-{len(first) + len(rest) - len(rest.splitlines()[-1]) - 1}#L601")
        append(log, rest[-10:])
        batch = tail.step()
        assert batch is not None and batch.lines == 1
    assert_each_line_once(warehouse, corpus[:1000])


class Crash(BaseException):
    """The process dying, as far as the follower can tell (nothing catches it)."""


def test_a_crash_between_the_commit_and_the_checkpoint_commits_nothing_twice(
        tmp_path: Path, corpus: list[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    append(log, blob(corpus[:300]))
    with follower(logs, warehouse) as tail:
        assert tail.step() is not None
    append(log, blob(corpus[300:700]))
    original = Follower._save_checkpoint

    def crash(self: Follower, state: Any) -> None:
        raise Crash("killed after the warehouse commit, before the checkpoint")

    monkeypatch.setattr(Follower, "_save_checkpoint", crash)
    tail = follower(logs, warehouse)
    with pytest.raises(Crash):
        tail.step()
    tail.close()
    assert committed_batch(warehouse) == 2  # the warehouse has the group
    monkeypatch.setattr(Follower, "_save_checkpoint", original)
    append(log, blob(corpus[700:800]))
    with follower(logs, warehouse) as again:
        batch = again.step()
        # the checkpoint moved to the committed group: only the lines written since
        assert batch is not None and batch.lines == 100 and batch.batch == 3
        assert again.step() is None
    assert_each_line_once(warehouse, corpus[:800])


def test_a_crash_before_the_commit_reads_the_group_again(
        tmp_path: Path, corpus: list[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    append(log, blob(corpus[:300]))
    with follower(logs, warehouse) as tail:
        assert tail.step() is not None
    append(log, blob(corpus[300:700]))
    import ingest.live

    def crash(*args: Any, **kwargs: Any) -> None:
        raise Crash("killed with the group's checkpoint pending, before the commit")

    monkeypatch.setattr(ingest.live, "commit_files", crash)
    tail = follower(logs, warehouse)
    with pytest.raises(Crash):
        tail.step()
    tail.close()
    monkeypatch.undo()
    assert committed_batch(warehouse) == 1
    with follower(logs, warehouse) as again:
        batch = again.step()
        assert batch is not None and batch.lines == 400
    assert_each_line_once(warehouse, corpus[:700])


@pytest.mark.slow
def test_a_follower_into_an_s3_warehouse_keeps_its_state_locally_and_commits_nothing_twice(
        tmp_path: Path, corpus: list[bytes], moto: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    uri = f"s3://{moto.bucket()}/warehouse"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "server.log"
    append(log, blob(corpus[:300]))
    with Follower(logs, uri, storage_options=moto.options) as tail:
        assert tail.state.is_relative_to(tmp_path / "state" / "haftkhabis" / "follow")
        assert tail.step() is not None
    append(log, blob(corpus[300:500]))

    def crash(self: Follower, state: Any) -> None:
        raise Crash("killed after the warehouse commit, before the checkpoint")

    with monkeypatch.context() as patched:
        patched.setattr(Follower, "_save_checkpoint", crash)
        tail = Follower(logs, uri, storage_options=moto.options)
        with pytest.raises(Crash):
            tail.step()
        tail.close()
    assert committed_batch(uri, moto.options) == 2
    append(log, blob(corpus[500:550]))
    with Follower(logs, uri, storage_options=moto.options) as again:
        batch = again.step()
        assert batch is not None and batch.lines == 50
    assert_each_line_once(uri, corpus[:550], moto.options)


KILLED_AFTER_COMMIT = """
import os, signal, sys
from ingest.follow import Follower
def killed(self, state):
    os.kill(os.getpid(), signal.SIGKILL)
Follower._save_checkpoint = killed
with Follower(sys.argv[1], sys.argv[2]) as tail:
    tail.step()
"""


def test_a_follower_killed_after_its_commit_commits_nothing_twice(
        tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    append(log, blob(corpus[:500]))
    killed = subprocess.run([sys.executable, "-c", KILLED_AFTER_COMMIT, str(logs), str(warehouse)],
                            cwd=REPO, capture_output=True, text=True, timeout=DEADLINE)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert committed_batch(warehouse) == 1
    with follower(logs, warehouse) as again:
        assert again.step() is None
        append(log, blob(corpus[500:600]))
        batch = again.step()
        assert batch is not None and batch.lines == 100
    assert_each_line_once(warehouse, corpus[:600])


def test_a_follower_closed_and_opened_again_goes_on_from_its_checkpoint(
        tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    append(logs / "server.log", blob(corpus[:200]))
    tail = follower(logs, warehouse)
    assert tail.step() is not None
    tail.close()
    append(logs / "server.log", blob(corpus[200:300]))
    batch = tail.step()  # opened again by the step
    assert batch is not None and batch.lines == 100
    assert tail.step() is None
    tail.close()
    assert_each_line_once(warehouse, corpus[:300])
    # the checkpoint knows the file once, at its end
    checkpoint = json.loads((tail.state / "checkpoint.json").read_text())
    assert [(f["path"], f["offset"], f["lines"]) for f in checkpoint["files"]] == \
        [("server.log", len(blob(corpus[:300])), 300)]


def test_one_follower_at_a_time_and_a_state_for_one_directory(tmp_path: Path) -> None:
    logs, other, warehouse = tmp_path / "logs", tmp_path / "other", tmp_path / "wh"
    logs.mkdir()
    other.mkdir()
    with follower(logs, warehouse) as tail:
        tail.step()
        with pytest.raises(FollowError, match="in use by another follower"):
            follower(logs, warehouse).open()
    append(logs / "a.log", b'{"game": "g"}\n')
    with follower(logs, warehouse) as tail:
        tail.step()
    state = state_folder(Location.of(str(warehouse)), str(logs))
    with pytest.raises(FollowError, match=r"a follower of the directory .*logs"):
        Follower(other, str(warehouse), state=state).open()
    with pytest.raises(FollowError, match="expected a directory"):
        Follower(tmp_path / "missing", str(warehouse)).open()


# ---------------------------------------------------------------------------- running


def test_run_without_inotify_commits_on_its_rescans_and_stops(
        tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    batches: list[FollowBatch] = []
    tail = follower(logs, warehouse, interval=0.1, rescan=0.1, watch=False)
    tail._on_batch = batches.append
    runner = threading.Thread(target=tail.run)
    runner.start()
    try:
        append(logs / "server.log", blob(corpus[:500]))
        wait_for(lambda: sum(b.lines for b in batches) == 500, "the first lines committed")
        append(logs / "server.log", blob(corpus[500:600]))
        wait_for(lambda: sum(b.lines for b in batches) == 600, "the appended lines committed")
    finally:
        tail.stop()
        runner.join(DEADLINE)
    assert not runner.is_alive()
    assert_each_line_once(warehouse, corpus[:600])


def test_run_wakes_on_a_change_before_its_rescan_is_due(tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    append(logs / "server.log", blob(corpus[:100]))
    batches: list[FollowBatch] = []
    notes: list[str] = []
    # a rescan an hour away: only the watcher (watchfiles) can bring the appended lines in
    tail = follower(logs, warehouse, notes, interval=0.1, rescan=3600)
    tail._on_batch = batches.append
    runner = threading.Thread(target=tail.run)
    runner.start()
    try:
        wait_for(lambda: sum(b.lines for b in batches) == 100, "the lines there at the start")
        append(logs / "server.log", blob(corpus[100:200]))
        wait_for(lambda: sum(b.lines for b in batches) == 200 or bool(notes), "a change reported")
    finally:
        tail.stop()
        runner.join(DEADLINE)
    assert not notes and not runner.is_alive()
    assert_each_line_once(warehouse, corpus[:200])


def test_the_follow_command_commits_what_is_written_and_stops_on_sigterm(
        tmp_path: Path, corpus: list[bytes]) -> None:
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    append(log, blob(corpus[:300]))
    command = [sys.executable, "-m", "cli.app", "ingest", "--follow", str(logs), "-w", str(warehouse),
               "--commit-interval", "0.2", "--rescan", "1"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        wait_for(lambda: committed_batch(warehouse) >= 1 or process.poll() is not None,
                 "the follower's first batch")
        assert process.poll() is None
        # written after the follower started (it has committed its first batch)
        append(log, blob(corpus[300:700]))
        (logs / "tables").mkdir()
        append(logs / "tables" / "t7.jsonl", blob(corpus[700:800]))
        wait_for(lambda: sum(r["lines"] for r in batch_rows(warehouse)) >= 800 or
                 process.poll() is not None, "the lines written after it started")
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert_each_line_once(warehouse, corpus[:800])
    # a line per batch: its files, lines, games and seconds
    printed = [re.fullmatch(r"batch ([0-9]+): ([0-9,]+) files?, ([0-9,]+) lines?, ([0-9,]+) "
                            r"games?, [0-9.]+ s(, [0-9,]+ quarantined)?", line)
               for line in out.splitlines()]
    assert printed and all(printed), out
    assert sum(int(m[3].replace(",", "")) for m in printed if m) == 800
    assert "stopped: " in err


def test_the_follow_command_refuses_paths_and_batch_options(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cli.app import app

    (tmp_path / "logs").mkdir()
    runner = CliRunner()
    for args in (["ingest"], ["ingest", "x.log", "--follow", str(tmp_path / "logs")],
                 ["ingest", "--follow", str(tmp_path / "logs"), "--workers", "2"],
                 ["ingest", "--follow", str(tmp_path / "missing")]):
        result = runner.invoke(app, [*args, "-w", str(tmp_path / "wh")])
        assert result.exit_code == 2, (args, result.output)


def test_the_follower_reads_in_chunks(tmp_path: Path, corpus: list[bytes],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A line longer than a chunk, and many chunks in a group: the same lines."""
    monkeypatch.setattr(follow_module, "CHUNK", 97)
    logs, warehouse = tmp_path / "logs", tmp_path / "wh"
    logs.mkdir()
    log = logs / "server.log"
    with follower(logs, warehouse) as tail:
        data = blob(corpus[:200])
        append(log, data[:1000])
        append(log, b"")
        assert tail.step() is not None
        append(log, data[1000:])
        with gzip.open(logs / "more.log.gz", "wb") as packed:
            packed.write(blob(corpus[200:300]).rstrip(b"\n"))  # its last line without a newline
        assert tail.step() is not None
    assert_each_line_once(warehouse, corpus[:300])
