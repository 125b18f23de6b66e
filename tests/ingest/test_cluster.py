"""Ingest on a Dask cluster (a scheduler and two workers, each a process of its own on
127.0.0.1) into a warehouse on S3 (moto's server): the tables are identical, row for row,
to a local ingest of the same files; a worker killed mid-batch has its shard run again
elsewhere, and what it wrote is deleted; a batch that fails after a worker died leaves
nothing on S3 and a rerun completes it; a driver killed mid-batch leaves the warehouse as
it was, the next run removes the parts its tasks wrote, and completes the batch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.simulate import SimulatedGame
from ingest.lock import LOCK_NAME
from ingest.pipeline import STAGED_SPOOL, ingest
from ingest.queries import scan_polars
from tests.ingest.conftest import (
    REPO,
    batches,
    contents,
    digest,
    game_lines,
    raw_latest,
    run_cli,
    unreferenced_parts,
    write_lines,
)
from tests.ingest.services import DaskCluster, poll

pytestmark = pytest.mark.slow  # the whole module: its services start once per worker

SAMPLE = REPO / "data" / "sample"


@pytest.fixture(scope="module")
def cluster(moto: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    running = DaskCluster(tmp_path_factory.mktemp("dask"), workers=2, env=moto.env)
    try:
        yield running
    finally:
        running.stop()


def _ingest(uri: str, cluster: DaskCluster, moto: Any, *paths: Path,
            check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_cli("ingest", *map(str, paths), "-w", uri, "-q", "--cluster", cluster.address,
                   env=moto.env, check=check)


def test_a_cluster_ingest_of_the_sample_is_a_local_ingest(
        moto: Any, cluster: DaskCluster, tmp_path: Path) -> None:
    local = tmp_path / "wh"
    ingest([str(SAMPLE)], str(local), workers=2)
    uri = f"s3://{moto.bucket()}/sample"
    done = _ingest(uri, cluster, moto, SAMPLE)
    assert "with 2 workers" in done.stdout
    assert digest(contents(uri, batch_columns=False, storage_options=moto.options)) == \
        digest(contents(local, batch_columns=False))

    games = run_cli("query", "SELECT status, count(*) AS n FROM games GROUP BY ALL ORDER BY 1",
                    "-w", uri, "-f", "json", env=moto.env)
    expected = run_cli("query", "SELECT status, count(*) AS n FROM games GROUP BY ALL "
                       "ORDER BY 1", "-w", str(local), "-f", "json")
    assert json.loads(games.stdout) == json.loads(expected.stdout)
    leaders = run_cli("stats", "players", "-w", uri, "-f", "csv", env=moto.env)
    assert leaders.stdout == run_cli("stats", "players", "-w", str(local), "-f", "csv").stdout
    frame = scan_polars(uri, "hands", moto.options).collect()
    assert frame.height == len(contents(local)["hands"])


@pytest.fixture(scope="module")
def halves(games: dict[str, list[SimulatedGame]],
           tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    """Two batches (the second completes a game the first had only the start of), and the
    tables after ingesting them locally."""
    root = tmp_path_factory.mktemp("halves")
    persian = games["persian"]
    first = write_lines(root / "one" / "a.jsonl",
                        [*game_lines(games["bazito"][:12]), *persian[0].lines[:40]])
    second = write_lines(root / "two" / "b.jsonl",
                         [*game_lines(games["bazito"][12:]), *game_lines(persian),
                          *game_lines(games["pis-yedili"])])
    local = root / "reference"
    ingest([str(first)], str(local), workers=1)
    ingest([str(second)], str(local), workers=1)
    return first, second, contents(local, batch_columns=False)


def _background(uri: str, cluster: DaskCluster, moto: Any, path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "cli.app", "ingest", str(path), "-w", uri, "-q", "--cluster",
         cluster.address], cwd=REPO, env=dict(os.environ, **moto.env),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _keys_of(moto: Any, bucket: str, prefix: str) -> list[str]:
    """The warehouse's part keys whose name starts with `part-PREFIX`."""
    return [k for k in moto.keys(bucket) if k.rsplit("/", 1)[-1].startswith(f"part-{prefix}")]


def test_a_worker_killed_mid_batch_has_its_shard_run_again(
        moto: Any, cluster: DaskCluster, halves: tuple[Path, Path, Any]) -> None:
    first, second, reference = halves
    bucket = moto.bucket()
    uri = f"s3://{bucket}/wh"
    _ingest(uri, cluster, moto, first)
    cluster.clear()
    cluster.hold()
    driver = _background(uri, cluster, moto, second)
    try:
        poll(lambda: bool(cluster.held()), "a held shard task", timeout=120, process=None)
        victim = cluster.held()[0]
        dead_prefix = cluster.held_prefix(victim)
        # the victim wrote its parts to S3 (its pass is over) before it dies
        assert _keys_of(moto, bucket, dead_prefix)
        os.kill(victim, signal.SIGKILL)
        cluster.release()
        out, err = driver.communicate(timeout=180)
    finally:
        cluster.release()
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 0, err
    assert "batch 2 committed" in out
    assert victim not in [w.pid for w in cluster.alive()]
    assert digest(contents(uri, batch_columns=False, storage_options=moto.options)) == \
        digest(reference)
    # what the dead attempt wrote is gone with the batch that completed its shard
    assert _keys_of(moto, bucket, dead_prefix) == []
    assert unreferenced_parts(uri, moto.options) == []
    cluster.ensure_workers(2)


def test_a_batch_whose_killed_worker_fails_again_leaves_nothing_and_reruns(
        moto: Any, cluster: DaskCluster, halves: tuple[Path, Path, Any]) -> None:
    """A worker SIGKILLed mid-batch (its parts on S3), and the shard failing wherever it
    runs again: the batch fails with one line and nothing committed, every part it wrote
    (the dead worker's too) is deleted, and a rerun completes it."""
    first, second, reference = halves
    bucket = moto.bucket()
    uri = f"s3://{bucket}/wh"
    _ingest(uri, cluster, moto, first)
    before = raw_latest(uri, moto.options)
    cluster.clear()
    cluster.hold()
    driver = _background(uri, cluster, moto, second)
    try:
        poll(lambda: bool(cluster.held()), "a held shard task", timeout=120, process=None)
        victim = cluster.held()[0]
        dead_prefix = cluster.held_prefix(victim)
        assert _keys_of(moto, bucket, dead_prefix)
        os.kill(victim, signal.SIGKILL)
        cluster.fail()
        cluster.release()
        _out, err = driver.communicate(timeout=300)
    finally:
        cluster.fail(False)
        cluster.release()
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "a cluster task failed" in lines[0], err
    assert "injected" in lines[0] and "nothing was committed" in lines[0]
    assert raw_latest(uri, moto.options) == before  # no half batch, read raw at the latest
    assert [b["id"] for b in batches(uri, moto.options)] == [1]
    assert _keys_of(moto, bucket, dead_prefix) == []
    assert not [k for k in moto.keys(bucket) if "/part-b000002-" in k]

    cluster.ensure_workers(2)
    _ingest(uri, cluster, moto, second)
    assert digest(contents(uri, batch_columns=False, storage_options=moto.options)) == \
        digest(reference)
    assert unreferenced_parts(uri, moto.options) == []


def test_a_driver_killed_mid_batch_leaves_the_warehouse_as_before(
        moto: Any, cluster: DaskCluster, halves: tuple[Path, Path, Any]) -> None:
    first, second, reference = halves
    bucket = moto.bucket()
    uri = f"s3://{bucket}/wh"
    _ingest(uri, cluster, moto, first)
    before = contents(uri, storage_options=moto.options)
    cluster.clear()
    cluster.hold()
    driver = _background(uri, cluster, moto, second)
    try:
        poll(lambda: len(cluster.held()) == 2, "both shard tasks held", timeout=120,
             process=None)
        held = cluster.held()
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
    finally:
        cluster.release()
    # the dead driver's tasks run on to their end, writing more parts nobody commits
    poll(lambda: set(held) <= set(cluster.done()), "the dead driver's tasks", timeout=120,
         process=None)
    orphans = [k for k in moto.keys(bucket) if "/part-b000002-" in k]
    assert orphans
    assert any(k.endswith(".spool" + STAGED_SPOOL) for k in moto.keys(bucket))  # the shards' spools
    assert f"wh/{LOCK_NAME}" in moto.keys(bucket)
    assert contents(uri, storage_options=moto.options) == before
    assert [b["id"] for b in batches(uri, moto.options)] == [1]

    _ingest(uri, cluster, moto, second)
    assert digest(contents(uri, batch_columns=False, storage_options=moto.options)) == \
        digest(reference)
    assert [b["id"] for b in batches(uri, moto.options)] == [1, 2]
    # (pyarrow leaves a folder marker, `wh/_staging/`, where it deleted the last object)
    assert not [k for k in moto.keys(bucket) if "/_staging/" in k and not k.endswith("/")]
    # the next run's recovery removed the dead batch's parts from S3
    assert not set(orphans) & set(moto.keys(bucket))
    assert unreferenced_parts(uri, moto.options) == []


def test_a_local_cluster_is_started_for_the_batch(
        moto: Any, halves: tuple[Path, Path, Any]) -> None:
    first, second, _ = halves
    uri = f"s3://{moto.bucket()}/wh"
    ingest([str(first), str(second)], uri, cluster="local:2", storage_options=moto.options)
    local = ingest([str(first), str(second)], uri + "-local", workers=2,
                   storage_options=moto.options)
    assert local.games_new > 0
    assert digest(contents(uri, batch_columns=False, storage_options=moto.options)) == \
        digest(contents(uri + "-local", batch_columns=False, storage_options=moto.options))
