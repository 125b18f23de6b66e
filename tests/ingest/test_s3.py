"""The warehouse on S3 (moto's server as the emulator, a process of its own): the same
tables as on a local disk, read back by `query`, `stats` and polars; the writer lock as an
object with an expiry and a fencing token (a writer whose lock was taken over commits
nothing); two ingests racing; a driver killed mid-batch (raw readers see no half batch once
a reader has opened it); a retried commit that never appends twice."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engine.simulate import SimulatedGame
from ingest.lock import LOCK_NAME, LockBusy, ObjectLock
from ingest.maintenance import compact
from ingest.pipeline import STAGED_SPOOL, ingest
from ingest.queries import open_warehouse, scan_polars
from ingest.schema import DATA_TABLES, SNAPSHOT_TABLES, TABLES
from ingest.store import APP_ID, PartWriter, Warehouse, WriterFenced, new_attempt
from tests.ingest import faults
from tests.ingest.conftest import (
    REPO,
    batches,
    contents,
    digest,
    raw_latest,
    run_cli,
    two_batches_of,
    unreferenced_parts,
)
from tests.ingest.services import poll

pytestmark = pytest.mark.slow  # the whole module: its services start once per worker


def _options(moto: Any) -> list[str]:
    return [arg for key, value in moto.options.items()
            for arg in ("--storage-option", f"{key}={value}")]


@pytest.fixture(scope="module")
def reference(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("local") / "wh"
    ingest([str(logs)], str(root), workers=2)
    return contents(root, batch_columns=False)


def test_an_s3_warehouse_holds_what_a_local_one_does(
        moto: Any, logs: Path, reference: dict[str, Any]) -> None:
    uri = f"s3://{moto.bucket()}/warehouse"
    summary = ingest([str(logs)], uri, workers=2, storage_options=moto.options)
    assert summary.games_new == len(reference["games"])
    stored = contents(uri, batch_columns=False, storage_options=moto.options)
    assert digest(stored) == digest(reference)
    bucket = uri.removeprefix("s3://").split("/")[0]
    keys = moto.keys(bucket)
    assert any(k.startswith("warehouse/events/ruleset=") and k.endswith(".parquet") for k in keys)
    assert not [k for k in keys if k.endswith((".spool", ".spool" + STAGED_SPOOL, ".tmp", LOCK_NAME))]

    # the CLI reads it, with the options given on the command line
    games = run_cli("query", "SELECT count(*) AS n FROM games", "-w", uri, "-f", "json",
                    *_options(moto))
    assert json.loads(games.stdout) == [{"n": len(reference["games"])}]
    players = run_cli("stats", "players", "-w", uri, "-f", "csv", *_options(moto))
    assert players.stdout.splitlines()[0].startswith("ruleset,rank,player")
    # and from the AWS_* environment
    run_cli("stats", "compliance", "-w", uri, "-f", "json", env=moto.env)
    frame = scan_polars(uri, "games", moto.options).collect()
    assert frame.height == len(reference["games"])

    again = ingest([str(logs)], uri, workers=1, storage_options=moto.options, force=True)
    assert again.games_new == 0 and again.games_updated == 0
    result = compact(uri, storage_options=moto.options, retain_hours=0)
    assert result.batch == 3
    assert digest(contents(uri, batch_columns=False, storage_options=moto.options)) == \
        digest(reference)


@pytest.fixture(scope="module")
def halves(games: dict[str, list[SimulatedGame]],
           tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    root = tmp_path_factory.mktemp("halves")
    first, second = two_batches_of(games, root)
    local = root / "reference"
    ingest([str(first)], str(local), workers=1)
    ingest([str(second)], str(local), workers=1)
    return first, second, contents(local, batch_columns=False)


def _cli(*args: str, env: dict[str, str], handshake: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(faults.command(*args, handshake=handshake), cwd=REPO,
                            env=dict(os.environ, **env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_two_ingests_racing_one_waits_or_refuses(
        moto: Any, halves: tuple[Path, Path, Any], tmp_path: Path) -> None:
    """The first ingest holds the lock, stopped after its first commit (the commit
    handshake); a second refuses, a third waits for the lock and commits once the first
    is let go."""
    first, second, reference = halves
    bucket = moto.bucket()
    uri = f"s3://{bucket}/wh"
    handshake = tmp_path / "handshake"
    handshake.mkdir()
    slow = _cli("ingest", str(first), "-w", uri, "-q", "-j", "1", env=moto.env, handshake=handshake)
    waiting: subprocess.Popen[str] | None = None
    try:
        poll((handshake / "committed-games").exists, "the first ingest's first commit", process=None)
        assert f"wh/{LOCK_NAME}" in moto.keys(bucket)
        refused = run_cli("ingest", str(second), "-w", uri, "-q", "-j", "1", env=moto.env,
                          check=False)
        assert refused.returncode == 1
        assert "busy" in refused.stderr
        waiting = subprocess.Popen(
            [sys.executable, "-m", "cli.app", "ingest", str(second), "-w", uri, "-q", "-j", "1",
             "--wait", "120"], cwd=REPO, env=dict(os.environ, **moto.env), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
    finally:
        for name in DATA_TABLES:  # let the first one go on
            (handshake / f"seen-{name}").touch()
        _out, err = slow.communicate(timeout=300)
    assert slow.returncode == 0, err
    assert waiting is not None
    waited, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    assert "batch 2 committed" in waited
    assert [b["id"] for b in batches(uri, moto.options)] == [1, 2]
    stored = contents(uri, batch_columns=False, storage_options=moto.options)
    assert digest(stored) == digest(reference)
    with open_warehouse(uri, storage_options=moto.options) as reader:
        for table, key in (("games", "game_id"), ("hands", "game_id, hand")):
            total, distinct = reader.sql(
                f"SELECT count(*), count(DISTINCT ({key})) FROM {table}").fetchall()[0]
            assert total == distinct


def test_a_driver_killed_mid_batch_on_s3_leaves_no_trace(
        moto: Any, halves: tuple[Path, Path, Any]) -> None:
    point = "after-commit:events"  # some tables past the snapshot (locally: every point)
    first, second, reference = halves
    bucket = moto.bucket()
    uri = f"s3://{bucket}/wh"
    ingest([str(first)], uri, workers=1, storage_options=moto.options)
    before = contents(uri, storage_options=moto.options)
    before_raw = raw_latest(uri, moto.options)
    killed = run_cli("ingest", str(second), "-w", uri, "-q", "-j", "2", env=moto.env,
                     kill_at=point, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert f"wh/{LOCK_NAME}" in moto.keys(bucket)  # the dead writer's lock is left behind
    assert raw_latest(uri, moto.options) != before_raw  # half a batch, read raw
    # the first reader restores the tables: the lock's owner is a dead process of this
    # host, so it takes the lock over at once
    assert contents(uri, storage_options=moto.options) == before
    assert raw_latest(uri, moto.options) == before_raw
    assert not [k for k in moto.keys(bucket) if "/part-b000002-" in k]
    summary = ingest([str(second)], uri, workers=2, storage_options=moto.options)
    assert summary.restored == []
    assert digest(contents(uri, batch_columns=False, storage_options=moto.options)) == \
        digest(reference)
    assert [b["id"] for b in batches(uri, moto.options)] == [1, 2]
    assert unreferenced_parts(uri, moto.options) == []


def test_a_writer_whose_lock_expired_and_was_taken_commits_nothing(moto: Any) -> None:
    """A writer stalled past its lock's expiry (here: its record made stale, as if it had
    not renewed for a minute) loses the lock to the next writer, and its next commit
    fails cleanly instead of landing."""
    uri = f"s3://{moto.bucket()}/wh"
    stalled, fresh = Warehouse(uri, moto.options), Warehouse(uri, moto.options)
    stalled.ensure()
    location = stalled.location
    client = location.s3_client()
    bucket, key = location.bucket_key(location.join(LOCK_NAME))

    def part(store: Warehouse, prefix: str) -> Any:
        writer = PartWriter(store, "quarantine", prefix)
        writer.add((), [("f", "sha", 1, "schema", "a line", b"x", 7)])
        return writer.close()

    with stalled.lock():
        stalled.recover()
        mine = json.loads(client.get_object(Bucket=bucket, Key=key)["Body"].read())
        client.put_object(Bucket=bucket, Key=key, Body=json.dumps(
            dict(mine, expires=time.time() - 1, host="another-host")).encode())
        with fresh.lock():  # the expired lock is taken over, with a later fencing token
            taken = json.loads(client.get_object(Bucket=bucket, Key=key)["Body"].read())
            assert taken["token"] > mine["token"]
            fresh.recover()
            version = fresh.table("quarantine").version()
            with pytest.raises(WriterFenced, match="taken over"):
                stalled.commit("quarantine", part(stalled, "b000001-stalled"), [], 1,
                               "ingest", new_attempt())
            assert fresh.table("quarantine").version() == version
            assert fresh.commit("quarantine", part(fresh, "b000001-fresh"), [], 1, "ingest",
                                new_attempt()) == version + 1


def test_the_lock_object_expires_and_is_renewed(moto: Any) -> None:
    location = Warehouse(f"s3://{moto.bucket()}/wh", moto.options).location
    client = location.s3_client()
    bucket, key = location.bucket_key(location.join(LOCK_NAME))

    def foreign(expires: float) -> None:
        client.put_object(Bucket=bucket, Key=key, Body=json.dumps(
            {"owner": "x", "host": "another-host", "pid": 1, "expires": expires}).encode())

    foreign(time.time() + 60)
    with pytest.raises(LockBusy, match="another-host"):
        ObjectLock(location).acquire()
    foreign(time.time() - 1)  # a crashed writer's, expired: taken over
    lock = ObjectLock(location, ttl=0.9)
    lock.acquire()
    try:
        mine = json.loads(client.get_object(Bucket=bucket, Key=key)["Body"].read())
        assert mine["host"] == socket.gethostname() and mine["pid"] == os.getpid()
        time.sleep(1.5)  # past the first expiry: renewed meanwhile, so still held
        with pytest.raises(LockBusy):
            ObjectLock(location).acquire()
        lock.check()
    finally:
        lock.release()
    assert client.list_objects_v2(Bucket=bucket, Prefix=key)["KeyCount"] == 0


def test_a_dead_holder_is_judged_by_its_pid_only_in_our_pid_namespace(moto: Any) -> None:
    """A holder on this host name whose PID is gone is taken over at once, but only when it
    lived in this PID namespace: containers sharing a host name (host networking) but not
    PIDs cannot see each other's processes, so there the lock holds until it expires."""
    location = Warehouse(f"s3://{moto.bucket()}/wh", moto.options).location
    client = location.s3_client()
    bucket, key = location.bucket_key(location.join(LOCK_NAME))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(gone.stdout)
    namespace = os.stat("/proc/self/ns/pid").st_ino

    def holder(pid_namespace: int | None) -> None:
        client.put_object(Bucket=bucket, Key=key, Body=json.dumps(
            {"owner": "x", "token": 1, "host": socket.gethostname(), "pid": dead_pid,
             "pid_namespace": pid_namespace, "expires": time.time() + 60}).encode())

    holder(namespace + 1)  # another namespace's PID: it cannot be checked from here
    with pytest.raises(LockBusy):
        ObjectLock(location).acquire()
    holder(None)  # a record that does not say
    with pytest.raises(LockBusy):
        ObjectLock(location).acquire()
    holder(namespace)  # ours, and the process is gone: taken over before it expires
    lock = ObjectLock(location)
    lock.acquire()
    lock.release()


def test_a_retried_commit_never_appends_twice(moto: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Warehouse(f"s3://{moto.bucket()}/wh", moto.options)
    store.ensure()
    row = ("f", "sha", 1, "schema", "a line", b"x", 7)

    def part(prefix: str) -> Any:
        writer = PartWriter(store, "quarantine", prefix)
        writer.add((), [row])
        return writer.close()

    version = store.commit("quarantine", part("p1"), [], 7, "ingest", attempt=1000)
    assert store.table("quarantine").transaction_version(APP_ID) == 1000
    # the same call again (a driver retrying its commit step): nothing appended
    assert store.commit("quarantine", part("p2"), [], 7, "ingest", attempt=1000) == version
    # a commit that lands but whose reply is lost is not sent twice
    from deltalake import DeltaTable
    landed = DeltaTable.create_write_transaction

    def lost_reply(self: Any, *args: Any, **kwargs: Any) -> None:
        landed(self, *args, **kwargs)
        raise OSError("connection reset by peer")

    monkeypatch.setattr(DeltaTable, "create_write_transaction", lost_reply)
    after = store.commit("quarantine", part("p3"), [], 8, "ingest", attempt=2000)
    assert after == version + 1
    assert store.table("quarantine").to_pyarrow_table().num_rows == 2


def test_a_reader_of_an_s3_warehouse_reads_local_copies_of_its_parts(
        moto: Any, logs: Path, reference: dict[str, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`read.connect` over S3 (the dashboard's and the API's reader) answers from copies of
    the snapshot's parts, each copied once (a second opening copies nothing), instead of
    every table materialised in memory at each opening; after a compaction the new parts
    are copied, and the parts it dropped are swept once no snapshot named them for
    `KEEP_SECONDS`, never those the snapshot names."""
    from ingest import partcache, read
    from ingest.storage import Location

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    uri = f"s3://{moto.bucket()}/cached"
    ingest([str(logs)], uri, workers=2, storage_options=moto.options)
    reader = read.connect(uri, moto.options)
    cache = read.part_cache(Location.of(uri, moto.options))
    assert cache.root.is_relative_to(tmp_path / "cache")
    assert digest(_tables(reader)) == digest(reference)
    copies = {p: p.stat().st_ino for p in cache.root.rglob("*.parquet")}
    assert {str(p) for p in copies} == set(reader.readable)  # the snapshot's parts, all of them
    parts = sum(len(Warehouse(uri, moto.options).table(name, version).file_uris())
                for name, version in reader.snapshot.versions.items() if version)
    assert len(copies) == parts
    reader.close()

    again = read.connect(uri, moto.options)
    assert {p: p.stat().st_ino for p in cache.root.rglob("*.parquet")} == copies  # none copied again
    again.close()

    compact(uri, storage_options=moto.options, retain_hours=0)
    after = read.connect(uri, moto.options)
    assert digest(_tables(after)) == digest(reference)
    kept = {str(p) for p in cache.root.rglob("*.parquet")}
    assert kept > {str(p) for p in copies}  # the old copies still there: a reader may be on them
    assert set(after.readable) < kept
    removed = cache.sweep(set(after.readable), now=time.time() + partcache.KEEP_SECONDS + 60)
    left = {str(p) for p in cache.root.rglob("*.parquet")}
    assert removed > 0 and left == set(after.readable)
    assert digest(_tables(after)) == digest(reference)  # it reads the copies it names
    after.close()


def _tables(reader: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every data table's rows through a `read.Reader`, as `contents()` gives them."""
    return {name: sorted(reader.con.sql(
                f"SELECT *{' EXCLUDE (ingest_batch)' if 'ingest_batch' in TABLES[name].schema.names else ''} "
                f"FROM {name}").fetchall(), key=repr)
            for name in SNAPSHOT_TABLES}
