"""Live ingest (issue 30): pushes accepted durably and group-committed.

- Group commit: pushes that arrive within one commit interval become one batch, and each
  receipt names it.
- SIGKILL at random moments of a push storm, 20 times over (after a random number of
  `202`s, or while a group is being committed): after the last restart every push that got
  a `202` is committed exactly once (its receipt names one batch, and the warehouse's
  batches hold its body once), and the warehouse equals a clean ingest of the same games.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.simulate import SimConfig, simulate
from ingest.pipeline import ingest
from ingest.queries import open_warehouse
from ingest.store import Warehouse
from tests.service.conftest import Keys, Server, start_server, wait_for_batch
from tests.service.test_ingest import without_provenance


def _games(count: int, seed: int) -> list[tuple[str, bytes]]:
    """Small finished games, each a body of its own: (game id, body)."""
    out = []
    for game in simulate(SimConfig("pis-yedili", games=count, seed=seed, players=(2, 3))):
        out.append((game.game, b"".join(line + b"\n" for line in game.lines)))
    return out


def _push(client: httpx.Client, body: bytes) -> str | None:
    """The receipt id of an accepted push (None: not accepted, or the server died)."""
    try:
        answer = client.post("/v1/ingest", content=body)
    except httpx.TransportError:
        return None
    return str(answer.json()["id"]) if answer.status_code == 202 else None


def test_pushes_within_one_interval_are_one_batch(serve: Callable[..., Server], api_keys: Keys,
                                                  tmp_path: Path) -> None:
    """Pushes that arrive while the committer waits are one group: the interval (10
    minutes) does not end during the test; the group is committed by the other trigger,
    once every one of its lines waits (`--commit-lines`), so nothing waits on a clock."""
    games = _games(40, seed=5)
    lines = sum(body.count(b"\n") for _game, body in games[1:])
    server = serve(tmp_path / "wh", "--commit-interval", "600", "--commit-lines", str(lines))
    with server.client(api_keys["ingest"]) as client:
        first = _push(client, games[0][1])  # starts the interval (the first group waits none)
        assert first is not None
        wait_for_batch(client, first)
        receipts: list[str | None] = [None] * (len(games) - 1)

        def push(k: int) -> None:
            with server.client(api_keys["ingest"]) as own:
                receipts[k] = _push(own, games[k + 1][1])

        threads = [threading.Thread(target=push, args=(k,)) for k in range(len(receipts))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert all(receipts)
        outcomes = [wait_for_batch(client, r) for r in receipts if r]
    batches = {o["batch"] for o in outcomes}
    assert all(o["status"] == "committed" for o in outcomes)
    assert len(batches) == 1, batches  # all in the one group after the first push's
    for outcome in outcomes:
        files = outcome["outcome"]["files"]
        assert [f["path"] for f in files] == [f"{outcome['id']}.jsonl"]  # its own, by name only


def test_groups_start_an_interval_apart(serve: Callable[..., Server], api_keys: Keys,
                                        tmp_path: Path) -> None:
    """The interval's own trigger, the lines' out of reach: a group is taken at most once an
    interval, counted from the last one's start (each receipt's `started_at`, the server's
    clock), and takes every push waiting: pushes coming one after the other, faster than
    commits end, are grouped, not committed one by one (which would start a group as soon
    as the last commit ended)."""
    interval = 1.0
    games = ((game.game, b"".join(line + b"\n" for line in game.lines))
             for game in simulate(SimConfig("pis-yedili", games=5_000, seed=6, players=(2, 3))))
    server = serve(tmp_path / "wh", "--commit-interval", str(interval), "--commit-lines", "100000000")
    with server.client(api_keys["ingest"]) as client:
        first = _push(client, next(games)[1])  # the warehouse made: later commits are short
        assert first is not None
        wait_for_batch(client, first)
        # pushes one after the other until they span three committed groups, whatever the
        # machine's speed: after each push, the earlier pushes' receipts are read, oldest
        # first, up to the first whose group is not committed yet
        receipts: list[str] = []
        groups: set[int] = set()
        read = 0
        for _game, body in games:
            receipt = _push(client, body)
            assert receipt is not None
            receipts.append(receipt)
            while read < len(receipts):
                batch = client.get(f"/v1/batches/{receipts[read]}").json()["batch"]
                if batch is None:
                    break
                groups.add(batch)
                read += 1
            if len(groups) >= 3:
                break
        assert len(groups) >= 3, "5,000 pushes went into fewer than three groups"
        outcomes = [wait_for_batch(client, r) for r in receipts]
    assert all(o["status"] == "committed" for o in outcomes)
    starts = sorted({(o["batch"], datetime.fromisoformat(o["started_at"])) for o in outcomes})
    assert len(starts) == len({b for b, _ in starts}) < len(outcomes)  # one start a group
    gaps = [(later - earlier).total_seconds() for (_, earlier), (_, later) in itertools.pairwise(starts)]
    assert gaps and all(gap >= interval * 0.999 for gap in gaps), gaps


async def _accept(queue: Any, body: bytes) -> Any:
    """Hand `body` to an `IngestQueue` as a push would; its receipt once journaled."""
    spool = queue.spool()
    spool.write(body)
    return (await queue.accept(spool))[0]


def test_a_group_commits_while_the_one_before_is_published(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The committer takes the next group while the last one's readers are told and its
    receipts finished (by the publisher thread, in order): a slow listener does not hold
    the next commit back, and a receipt says committed only after its listener ran."""
    import asyncio

    from ingest.storage import Location
    from service.jobs import CommitEvent, CommitPolicy, IngestQueue

    games = _games(2, seed=7)
    listening, second_committed = threading.Event(), threading.Event()
    told: list[int] = []
    status_while_told: list[str] = []
    released: list[bool] = []

    def on_commit(event: CommitEvent) -> None:
        told.append(event.batch)
        if len(told) == 1:
            status_while_told.append(queue.get(first.id).status)  # type: ignore[union-attr]
            listening.set()
            released.append(second_committed.wait(timeout=120))  # old: never, on this thread

    queue = IngestQueue(Location.of(str(tmp_path / "wh")), state=tmp_path / "state",
                        on_commit=on_commit, policy=CommitPolicy(interval=0.0))
    commit = queue._commit

    def counted(group: Any) -> dict[str, Any]:
        outcome = commit(group)
        if outcome.get("batch") is not None and told:
            second_committed.set()
        return outcome

    monkeypatch.setattr(queue, "_commit", counted)

    queue.start()
    try:
        first = asyncio.run(_accept(queue, games[0][1]))
        assert listening.wait(timeout=300)
        second = asyncio.run(_accept(queue, games[1][1]))
        assert second_committed.wait(timeout=300)
    finally:
        queue.stop()  # the publisher finishes what was committed before it ends
    assert released == [True] and status_while_told == ["running"]
    receipts = [queue.get(first.id), queue.get(second.id)]
    assert [r.status for r in receipts if r] == ["committed", "committed"]
    assert [r.batch for r in receipts if r] == told and told[0] < told[1]


def test_a_group_is_read_from_the_journal_with_no_file_a_body(tmp_path: Path) -> None:
    """The writer reads a group's bodies where the journal holds them: no file is made
    for a body (the server's CPU a push was a third such files), and the batch names each
    by its receipt, as the API shows a receipt its file; the games are those pushed."""
    import asyncio

    from ingest.storage import Location
    from service.jobs import CommitPolicy, IngestQueue

    games = _games(3, seed=11)
    lines = sum(body.count(b"\n") for _, body in games)
    # no interval: the group is due when the third body's lines are waiting
    queue = IngestQueue(Location.of(str(tmp_path / "wh")), state=tmp_path / "state",
                        policy=CommitPolicy(interval=1e12, lines=lines))
    queue.start()
    try:
        receipts = [asyncio.run(_accept(queue, body)) for _, body in games]
        deadline = time.monotonic() + 300
        while {queue.get(r.id).status for r in receipts} != {"committed"}:  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the group was never committed"
            time.sleep(0.01)
    finally:
        queue.stop()
    assert not queue.groups.exists()  # the folder the names are in: no file was made there
    batches = {queue.get(r.id).batch for r in receipts}  # type: ignore[union-attr]
    assert len(batches) == 1
    files = _rows(tmp_path / "wh", f"SELECT unnest(files).path FROM batches WHERE id = {batches.pop()}")
    assert sorted(Path(f).stem for (f,) in files) == sorted(r.id for r in receipts)
    stored = {g for (g,) in _rows(tmp_path / "wh", "SELECT game_id FROM games")}
    assert stored == {game for game, _ in games}


def test_bodies_read_as_ranges_of_a_journal_are_the_files_read(tmp_path: Path) -> None:
    """`ingest` given ranges (the bodies where a journal holds them) stores what it stores
    reading each body as a file: the same rows, a bad line quarantined under the body's
    name; a range its source ends inside is that body's file cut short, located."""
    import hashlib

    bodies = [body for _, body in _games(4, seed=5)]
    bodies[1] += b'{"this is": "no event"\n'  # quarantined
    segment = tmp_path / "segment.log"
    files, names, ranges, digests = [], [], {}, {}
    with open(segment, "wb") as out:
        for n, body in enumerate(bodies):
            out.write(b'{"header": %d}\n' % n)
            name = str(tmp_path / "bodies" / f"ing_{n}.jsonl")
            ranges[name] = (str(segment), out.tell(), len(body))
            digests[name] = (len(body), hashlib.sha256(body).hexdigest())
            out.write(body + b"\n")
            names.append(name)
            path = tmp_path / "files" / f"ing_{n}.jsonl"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(body)
            files.append(str(path))
    as_files = ingest(files, str(tmp_path / "a"), workers=1, force=True)
    as_ranges = ingest(names, str(tmp_path / "b"), workers=1, force=True, digests=digests, ranges=ranges)
    assert without_provenance(tmp_path / "a") == without_provenance(tmp_path / "b")
    assert (as_ranges.lines, as_ranges.games_new, as_ranges.quarantined) == \
        (as_files.lines, as_files.games_new, as_files.quarantined) and as_ranges.quarantined == 1
    assert _rows(tmp_path / "b", "SELECT file FROM quarantine") == [(names[1],)]

    # the last body's range runs past the segment's end (a journal cut short)
    cut = {**ranges, names[3]: (str(segment), ranges[names[3]][1], len(bodies[3]) + 100)}
    short = ingest(names, str(tmp_path / "c"), workers=1, force=True, digests=digests, ranges=cut)
    report = next(f for f in short.files if f["path"] == names[3])
    assert report["status"] == "truncated" and "ends 99 bytes early" in report["error"], report
    with pytest.raises(ValueError, match="one worker"):
        ingest(names, str(tmp_path / "d"), workers=2, digests=digests, ranges=ranges)


@pytest.mark.slow
def test_a_server_killed_during_a_push_storm_loses_nothing(api_keys: Keys, tmp_path: Path) -> None:
    rng = random.Random(30)
    games = _games(200, seed=8)
    warehouse = tmp_path / "wh"
    logs = tmp_path / "logs"
    logs.mkdir()
    accepted: dict[str, str] = {}  # receipt → game
    sent: set[str] = set()
    queue = list(games)
    for trial in range(20):
        server = start_server(warehouse, api_keys, logs, "--commit-interval", "0.2")
        children = _children(server.process.pid)
        try:
            _storm(server, api_keys["ingest"], queue, accepted, sent, rng, trial)
        finally:
            server.stop()
        assert server.process.returncode in (-signal.SIGKILL, 0, -signal.SIGTERM)
        _gone(children)  # its writer died with it: nothing commits behind the next server's back
    server = start_server(warehouse, api_keys, logs)
    try:
        with server.client(api_keys["support"]) as client:
            outcomes = {r: wait_for_batch(client, r) for r in accepted}
    finally:
        server.stop()
    assert accepted and all(o["status"] == "committed" for o in outcomes.values()), \
        [o for o in outcomes.values() if o["status"] != "committed"][:3]
    # exactly once: each accepted body is in one batch's files
    store = Warehouse(warehouse)
    rows = store.dataset("batches", store.snapshot().versions["batches"]).to_table(
        columns=["id", "files"]).to_pylist()
    holding: dict[str, list[int]] = {}
    for row in rows:
        for item in row["files"] or ():
            holding.setdefault(Path(item["path"]).stem, []).append(row["id"])
    for receipt, outcome in outcomes.items():
        assert holding.get(receipt) == [outcome["batch"]], (receipt, holding.get(receipt))
    # the warehouse: a clean ingest of the games it holds, which are every accepted one
    # (and perhaps some whose push was cut by a kill after it was journaled)
    held = {g for (g,) in _rows(warehouse, "SELECT game_id FROM games")}
    assert set(accepted.values()) <= held <= sent
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(b"".join(body for game, body in games if game in held))
    ingest([str(clean)], str(tmp_path / "clean"), workers=1)
    assert without_provenance(warehouse) == without_provenance(tmp_path / "clean")


def _children(pid: int) -> list[int]:
    """The processes `pid` started (its writer among them)."""
    tasks = Path(f"/proc/{pid}/task")
    found: list[int] = []
    for task in tasks.iterdir() if tasks.exists() else ():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # a thread that ended since the listing: it started nobody now
            continue
    return found


def _gone(pids: list[int]) -> None:
    """Wait until none of `pids` runs any more (a zombie waiting for init counts as gone)."""
    deadline = time.monotonic() + 60  # a guard: the kernel delivers the death signal at once
    for pid in pids:
        while True:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                break
            if state in ("Z", "X"):
                break
            assert time.monotonic() < deadline, f"process {pid} outlived the server that started it"
            time.sleep(0.05)


def _rows(root: Path, query: str) -> list[tuple[Any, ...]]:
    from ingest.queries import open_warehouse

    with open_warehouse(str(root)) as reader:
        return reader.sql(query).fetchall()


def _storm(server: Server, key: str, queue: list[tuple[str, bytes]], accepted: dict[str, str],
           sent: set[str], rng: random.Random, trial: int) -> None:
    """Push from four connections until the kill: after a random number of `202`s, or
    (every other trial) once the server says a group is being committed."""
    kill_after = rng.randint(1, 12)
    mid_commit = trial % 2 == 1
    lock = threading.Lock()
    count = [0]
    dead = threading.Event()

    def kill() -> None:
        if not dead.is_set():
            dead.set()
            os.kill(server.process.pid, signal.SIGKILL)

    def pusher() -> None:
        with server.client(key) as client:
            while not dead.is_set():
                with lock:
                    if not queue:
                        return
                    game, body = queue.pop(0)
                    sent.add(game)
                receipt = _push(client, body)
                if receipt is None:
                    with lock:
                        if not dead.is_set():
                            queue.append((game, body))  # refused, not killed: push it again later
                    continue
                with lock:
                    accepted[receipt] = game
                    count[0] += 1
                    if not mid_commit and count[0] >= kill_after:
                        kill()

    threads = [threading.Thread(target=pusher) for _ in range(4)]
    for thread in threads:
        thread.start()
    if mid_commit:
        with server.client(key) as probe:
            while not dead.is_set() and any(t.is_alive() for t in threads):
                try:
                    health = probe.get("/v1/health").json()["ingest"]
                except httpx.TransportError:
                    break
                if health["committing"] > 0 and count[0] > 0:
                    kill()
    for thread in threads:
        thread.join()
    kill()
    server.process.wait()


def test_compaction_keeps_file_counts_bounded(serve: Callable[..., Server], api_keys: Keys,
                                              tmp_path: Path) -> None:
    """Small groups, one after another, a merge pass every fifth: a partition's parts are
    joined once a size tier holds eight (`ingest.merge.FANOUT`), so the count stays below
    eight and the groups since the last pass, instead of growing with every batch."""
    from ingest.merge import FANOUT

    server = serve(tmp_path / "wh", "--commit-interval", "0", "--compact-every", "5")
    counts = []
    with server.client(api_keys["ingest"]) as client:
        for _, body in _games(25, seed=12):
            receipt = _push(client, body)
            assert receipt is not None
            assert wait_for_batch(client, receipt)["status"] == "committed"
            store = Warehouse(tmp_path / "wh")
            parts = store.committed_files("games", store.snapshot().versions["games"])
            counts.append(max(Counter(p.partition for p in parts).values()))
        health = client.get("/v1/health").json()["ingest"]
    # one partition (pis-yedili, 2026-07): merged after the 10th and the 20th group
    assert health["compactions"] == 2
    assert max(counts) < FANOUT + 5 and counts[10] == counts[20] == 2, counts
    with open_warehouse(str(tmp_path / "wh")) as reader:
        kinds = dict(reader.sql("SELECT kind, count(*) FROM batches GROUP BY kind").fetchall())
    assert kinds == {"ingest": 25, "compact": 2}


