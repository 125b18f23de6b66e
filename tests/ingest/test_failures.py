"""A batch that fails (#14 item 12, the pipeline's part): the storage refusing a write
after some tables committed, a worker dying after it wrote its parts. The user gets one
line, the batch's commits are undone and every part it wrote is deleted, so the
warehouse is exactly as before, raw latest versions included; a rerun completes it. And
after a batch that succeeded on a cluster, what a dead task of it wrote is deleted, and
nothing the batch committed."""

from __future__ import annotations

import errno
import pickle
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.app import app
from cli.warehouse_cmd import STORAGE_EXIT
from engine.simulate import SimulatedGame
from ingest import pipeline
from ingest.pipeline import IngestError, WorkerFailure, ingest
from ingest.store import Warehouse
from tests.ingest.conftest import (
    batches,
    contents,
    game_lines,
    raw_latest,
    unreferenced_parts,
    write_lines,
)


def _fail_commit_of(table: str, error: OSError, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the storage refuse `table`'s commit (every other table's goes through)."""
    committed: list[str] = []
    real = Warehouse.commit

    def commit(self: Warehouse, name: str, *args: Any, **kwargs: Any) -> int:
        if name == table:
            raise error
        version = real(self, name, *args, **kwargs)
        committed.append(name)
        return version

    monkeypatch.setattr(Warehouse, "commit", commit)
    return committed


def _worker_dies_after_its_parts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The workers run and write their parts; then one is found dead (as `_run_workers`
    reports a worker killed by the kernel)."""
    real = pipeline._run_workers
    written: list[int] = []

    def run_workers(*args: Any, **kwargs: Any) -> list[pipeline.WorkerResult]:
        results = real(*args, **kwargs)
        written.append(sum(len(p) for r in results for p in r.parts.values()))
        raise IngestError("worker haftkhabis-ingest-1 died (exit code -9); nothing was "
                          "committed")

    monkeypatch.setattr(pipeline, "_run_workers", run_workers)
    return written


def _as_before(root: Path, before: Any) -> None:
    """The failed second batch left the warehouse as it was: every table at its version,
    no part it wrote (finished or temporary) anywhere."""
    assert raw_latest(root) == before
    assert unreferenced_parts(root) == []
    assert not list(root.rglob("part-b000002-*")) and not list(root.rglob(".part-*"))


def test_a_commit_the_storage_refuses_leaves_the_warehouse_as_before(
        two_batches: tuple[Path, Path, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    first, second, reference = two_batches
    root = tmp_path / "wh"
    ingest([str(first)], str(root), workers=1)
    before = raw_latest(root)
    committed = _fail_commit_of("violations", OSError(errno.ENOSPC, "No space left on device"),
                                monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        ingest([str(second)], str(root), workers=2)
    assert committed == ["games", "hands", "hand_players", "events"]  # those were undone
    _as_before(root, before)
    assert [b["id"] for b in batches(root)] == [1]

    monkeypatch.undo()
    assert ingest([str(second)], str(root), workers=1).batch == 2
    assert contents(root) == reference


def test_a_worker_that_died_after_writing_its_parts_leaves_none(
        two_batches: tuple[Path, Path, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    first, second, reference = two_batches
    root = tmp_path / "wh"
    ingest([str(first)], str(root), workers=1)
    before = raw_latest(root)
    written = _worker_dies_after_its_parts(monkeypatch)
    with pytest.raises(IngestError, match="died"):
        ingest([str(second)], str(root), workers=2)
    assert written and written[0] > 0, "the workers wrote no part: nothing to clean up"
    _as_before(root, before)

    monkeypatch.undo()
    ingest([str(second)], str(root), workers=2)
    assert contents(root) == reference


@pytest.mark.parametrize(("failure", "status", "says"), [
    ("read-only", STORAGE_EXIT, "read-only file system; nothing was committed"),
    ("unreachable", 1, "ConnectionResetError: connection reset by peer; nothing was committed"),
    ("worker", 1, "worker haftkhabis-ingest-1 died (exit code -9); nothing was committed"),
])
def test_a_failed_batch_is_one_line(failure: str, status: int, says: str,
                                    two_batches: tuple[Path, Path, Any], tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    first, second, _ = two_batches
    root = tmp_path / "wh"
    ingest([str(first)], str(root), workers=1)
    if failure == "read-only":
        _fail_commit_of("events", OSError(errno.EROFS, "Read-only file system"), monkeypatch)
    elif failure == "unreachable":
        _fail_commit_of("games", ConnectionResetError("connection reset by peer"), monkeypatch)
    else:
        _worker_dies_after_its_parts(monkeypatch)
    result = CliRunner().invoke(app, ["ingest", str(second), "-w", str(root), "-q", "-j", "2"])
    assert result.exit_code == status, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], result.output
    assert "Traceback" not in result.output
    assert unreferenced_parts(root) == []


def test_a_worker_failure_crosses_the_process_boundary_as_one_line() -> None:
    def raised(exc: BaseException) -> WorkerFailure:
        try:
            raise exc
        except BaseException as caught:
            return pickle.loads(pickle.dumps(WorkerFailure.of(caught)))

    full = raised(OSError(errno.ENOSPC, "No space left on device"))
    error = full.error("worker 1")
    assert error.errno == errno.ENOSPC and not error.bug
    assert str(error) == ("worker 1 failed: OSError: [Errno 28] No space left on device; "
                          "nothing was committed")
    bug = raised(KeyError("p1")).error("worker 0")
    assert bug.bug and "\n" not in str(bug)
    assert "Traceback (most recent call last)" in str(bug.__cause__)  # for the crash report


def test_the_sweep_after_a_cluster_batch_deletes_only_what_it_did_not_commit(
        games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    """What a dead cluster task wrote is deleted after the batch that redid its shard
    committed; every part the batch committed stays: the workers', and the coordinator's
    own (quarantine, rewritten parts of updated games, the summary)."""
    persian = games["persian"]
    first = write_lines(tmp_path / "a.jsonl", [*persian[1].lines, *persian[0].lines[:40]])
    second = write_lines(tmp_path / "b.jsonl", [*persian[0].lines, b"not json",
                                                *game_lines(games["bazito"][:3])])
    root = tmp_path / "wh"
    ingest([str(first)], str(root), workers=1)
    ingest([str(second)], str(root), workers=1)
    names = {p.name for p in root.rglob("part-b000002-*")}
    assert any("-x-" in n for n in names) and any("-q-" in n for n in names)
    before = contents(root)
    # a dead attempt's parts, beside the committed ones
    planted = []
    for folder in (root / "events" / "ruleset=persian" / "month=2026-07", root / "quarantine",
                   root / "games" / "ruleset=bazito" / "month=2026-06"):
        committed = next(folder.glob("part-b000002-*.parquet"))
        planted.append(folder / "part-b000002-deadbeef00-w1-cafe-00001.zstd.parquet")
        planted[-1].write_bytes(committed.read_bytes())
    assert Warehouse(root).sweep_batch(2, {}) == len(planted)
    assert not [p for p in planted if p.exists()]
    assert {p.name for p in root.rglob("part-b000002-*")} == names
    assert contents(root) == before
    assert unreferenced_parts(root) == []
