"""Fixtures for the warehouse tests: small simulated logs, and ways to look at a warehouse."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from engine.simulate import SimConfig, SimulatedGame, simulate
from ingest.queries import open_warehouse
from ingest.schema import SNAPSHOT_TABLES, TABLES
from tests.ingest import faults

REPO = Path(__file__).resolve().parents[2]

#: (ruleset, games, seed): about 10,000 lines, some games with an injected fault
SAMPLE = (("bazito", 24, 11), ("persian", 8, 12), ("pis-yedili", 14, 13))


@pytest.fixture(scope="session")
def games() -> dict[str, list[SimulatedGame]]:
    """Simulated games per ruleset (a fault in about a third of them)."""
    return {
        ruleset: list(simulate(SimConfig(ruleset, games=count, seed=seed, fault_rate=0.35)))
        for ruleset, count, seed in SAMPLE
    }


def write_lines(path: Path, lines: Iterable[bytes], *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(line + b"\n" for line in lines)
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def game_lines(games: Iterable[SimulatedGame]) -> list[bytes]:
    return [line for game in games for line in game.lines]


def two_batches_of(games: dict[str, list[SimulatedGame]], root: Path) -> tuple[Path, Path]:
    """A first batch, and a second one with new games and the rest of a truncated one."""
    persian = games["persian"]
    first = write_lines(root / "one" / "a.jsonl",
                        [*game_lines(games["bazito"][:12]), *persian[0].lines[:40]])
    second = write_lines(root / "two" / "b.jsonl",
                         [*game_lines(games["bazito"][12:]), *game_lines(persian)])
    return first, second


@pytest.fixture(scope="session")
def two_batches(games: dict[str, list[SimulatedGame]],
                tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    """The two batches' files (`two_batches_of`), and the tables after ingesting them
    undisturbed: what a failed, killed or retried batch must end up as."""
    from ingest.pipeline import ingest

    root = tmp_path_factory.mktemp("batches")
    first, second = two_batches_of(games, root)
    reference = root / "reference"
    ingest([str(first)], str(reference), workers=1)
    ingest([str(second)], str(reference), workers=1)
    return first, second, contents(reference)


def interleave(games: Sequence[SimulatedGame]) -> list[bytes]:
    """The games' lines written as concurrent tables would: round robin, line by line."""
    out: list[bytes] = []
    queues = [list(g.lines) for g in games]
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory, games: dict[str, list[SimulatedGame]]) -> Path:
    """A folder of logs: one file per ruleset (pis-yedili gzip'd, persian interleaved)."""
    root = tmp_path_factory.mktemp("logs")
    write_lines(root / "bazito.jsonl", game_lines(games["bazito"]))
    write_lines(root / "persian.ndjson", interleave(games["persian"]))
    write_lines(root / "pis-yedili.log.gz", game_lines(games["pis-yedili"]), gz=True)
    return root


def contents(root: str | Path, *, batch_columns: bool = True,
             storage_options: dict[str, str] | None = None) -> dict[str, list[tuple[Any, ...]]]:
    """Every data table's rows, sorted, at the committed snapshot (`ingest_batch` left out
    when `batch_columns` is false)."""
    out = {}
    with open_warehouse(str(root), storage_options=storage_options) as reader:
        for name in SNAPSHOT_TABLES:
            exclude = "" if batch_columns or "ingest_batch" not in TABLES[name].schema.names \
                else " EXCLUDE (ingest_batch)"
            rows = reader.sql(f"SELECT *{exclude} FROM {name}").fetchall()
            out[name] = sorted(rows, key=repr)
    return out


def digest(tables: dict[str, list[tuple[Any, ...]]]) -> str:
    """A content digest of `contents()`: equal digests, equal tables row for row."""
    import hashlib

    return hashlib.sha256(repr(sorted(tables.items())).encode()).hexdigest()


def batches(root: str | Path, storage_options: dict[str, str] | None = None) -> list[dict[str, Any]]:
    with open_warehouse(str(root), storage_options=storage_options) as reader:
        return reader.rows("SELECT * FROM batches ORDER BY id")


@pytest.fixture(scope="session")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """moto's S3 server on a free port of 127.0.0.1, for the whole session."""
    from tests.ingest.services import MotoServer

    server = MotoServer(tmp_path_factory.mktemp("moto") / "moto.log")
    try:
        yield server
    finally:
        server.stop()


def run_cli(*args: str, env: dict[str, str] | None = None, check: bool = True,
            kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    """`haftkhabis ARGS` in a fresh interpreter (for tests that kill the process: `kill_at`,
    a point of `tests.ingest.faults`)."""
    full_env = dict(os.environ, **(env or {}))
    line = faults.command(*args, kill_at=kill_at) if kill_at else [sys.executable, "-m", "cli.app", *args]
    result = subprocess.run(line, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"haftkhabis {' '.join(args)} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


def unreferenced_parts(root: str | Path,
                       storage_options: dict[str, str] | None = None) -> list[str]:
    """Parquet parts (and temporary parts) in the warehouse's table folders that neither
    a committed snapshot (a `batches` row's versions) nor a table's latest version names:
    what a failed or killed batch would leave behind."""
    from ingest.schema import TABLES
    from ingest.store import Warehouse

    store = Warehouse(str(root), storage_options)
    recorded: dict[str, set[int]] = {name: set() for name in TABLES}
    for row in store.table("batches").to_pyarrow_table(columns=["table_versions"]).to_pylist():
        for name, version in row["table_versions"] or ():
            recorded.setdefault(name, set()).add(version)
    latest_batches = store.table("batches").version()
    recorded["batches"] = set(range(latest_batches + 1))
    left = []
    for name in TABLES:
        named = set()
        for version in recorded[name] | {store.table(name).version()}:
            named |= {store.part_uri(name, p) for p in store.committed_files(name, version)}
        for uri in store.location.list(store.table_uri(name)):
            base = uri.rsplit("/", 1)[-1]
            if "/_delta_log/" in uri or not base.startswith(("part-", ".part-")):
                continue
            if uri not in named:
                left.append(uri)
    return sorted(left)


def raw_latest(root: str | Path,
               storage_options: dict[str, str] | None = None) -> dict[str, Any]:
    """What a raw Delta reader sees at the latest version of every table (`polars.scan_delta`
    with no version): each table's rows, sorted, and the cross-table facts a torn read
    breaks (every game's `lines` are its `events` rows; every event's game is in `games`)."""
    import polars as pl

    from ingest.schema import SNAPSHOT_TABLES
    from ingest.storage import Location

    location = Location.of(str(root), storage_options)
    frames = {name: pl.scan_delta(location.join(name), storage_options=location.delta_options())
              .collect() for name in SNAPSHOT_TABLES}
    games = frames["games"]
    events = frames["events"]
    return {
        "rows": {name: sorted(map(repr, frame.rows())) for name, frame in frames.items()},
        "lines_are_events": int(games["lines"].sum() or 0) == events.height,
        "events_of_known_games": set(events["game_id"]) <= set(games["game_id"]),
    }
