"""Cluster ingest benchmark (issue 12): one ingest, four ways, timed end to end.

    .venv/bin/python bench/bench_cluster.py                  # the issue's size: 100,000 hands
    .venv/bin/python bench/bench_cluster.py --hands 2000     # a quick run
    .venv/bin/python bench/bench_cluster.py --hands 20000 --runs local-disk --sizes
    .venv/bin/python bench/bench_cluster.py --sizes-of WAREHOUSE   # sizes of a warehouse
    .venv/bin/python bench/bench_cluster.py --hands 100000 --runs none   # routing alone

What it does, in one run:

1. Logs: `bench_ingest.make_logs` (the same simulated, cached logs `bench_ingest.py` uses;
   its defaults, so a 100,000-hand set made by either benchmark serves both).
2. The driver's serial share, alone: `_core.route_files` over the logs into `--workers`
   spools, in this process (wall and CPU seconds). One driver routes every line of a
   batch before any worker starts, however many workers there are.
3. Services, each a process of its own on 127.0.0.1 (free ports), started before any clock
   and stopped by PID at the end: moto's S3 server (`tests.ingest.services.MotoServer`),
   and a Dask scheduler with `--cluster-workers` workers (`dask scheduler`, `dask worker
   --nthreads 1 --no-nanny`, as docs/warehouse.md says to start them). Each worker imports
   `ingest.pipeline` before the first run (a running cluster is warm), so no run pays the
   workers' imports; the local ingest starts its worker processes inside its own clock.
4. Runs, each `haftkhabis ingest LOGS --warehouse W --quiet` into a fresh warehouse, timed
   from process start to committed batch (`bench_ingest.measure`):
   local-disk (`--workers N`, a folder), cluster-disk (`--cluster tcp://…`, a folder),
   local-s3 (`--workers N`, `s3://bucket/local-s3`) and cluster-s3. On one machine the
   cluster has the same cores as the local ingest, so its ratio to the local run is the
   cluster's overhead (spools handed over, tasks shipped, on S3 the spools put and fetched
   through the store), not a speed-up. Peak memory is the driver's process tree; for the
   cluster runs the workers' resident memory is sampled as well. For the S3 runs the
   requests each ingest made are counted from moto's access log, by what they touched
   (Delta log, lock, staging, Parquet parts) and kind (PUT, multipart, GET, LIST, HEAD…).
5. Check: the tables of the four runs must hold the same rows. The exact check is the
   tests' own (`tests.ingest.conftest.contents` + `digest`, `ingest_batch` left out, as
   `test_a_cluster_ingest_of_the_sample_is_a_local_ingest` does); it builds every row as a
   Python tuple, so it is made only up to `--exact-digest-hands` hands (about 1 GiB of
   tuples at 20,000 hands). Every run also gets an order-free digest computed inside DuckDB
   over the same rows (per table: row count and the sum of each row's `hash()`), which
   scales to any size.
6. Sizes (`--sizes`, or `--sizes-of W` alone): the warehouse's committed Parquet bytes per
   table over the number of events (rows of `events`), the columns that dominate
   (column-chunk sizes from the Parquet footers), the Delta log's commits (bytes, add and
   remove actions) and checkpoints, and rewrites of the events table (the writer settings
   of `ingest.store`, one file per partition) without or re-encoding its heaviest columns
   (`--no-variants` skips them; they take a minute or two at 20,000 hands).

Figures go to standard output and to `bench/out/cluster-*.json` (`sizes-*.json`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_ingest import OUT, Run, _tree_memory, make_logs, measure  # noqa: E402
from ingest.lock import LOCK_NAME  # noqa: E402
from tests.ingest.services import HOST, MotoServer, free_port, poll, stop  # noqa: E402

RUNS = ("local-disk", "cluster-disk", "local-s3", "cluster-s3")
BIN = Path(sys.executable).parent


# ---------------------------------------------------------------------------- the cluster


class Cluster:
    """A Dask scheduler and workers, each a process of its own on 127.0.0.1, started the
    way docs/warehouse.md says (one thread per worker, no nanny: a worker's PID is the
    process that runs its tasks), and stopped by PID."""

    def __init__(self, folder: Path, workers: int) -> None:
        self.folder = folder
        self.port = free_port()
        self.address = f"tcp://{HOST}:{self.port}"
        self.env = dict(os.environ, PYTHONPATH=str(REPO))
        self.logs: list[Any] = []
        self.processes: list[subprocess.Popen[bytes]] = []
        started = time.monotonic()
        try:
            self.scheduler = self._start("scheduler", [
                "scheduler", "--host", HOST, "--port", str(self.port), "--no-dashboard",
                "--dashboard-address", f"{HOST}:0"])
            self.workers = [self._start(f"worker-{k}", [
                "worker", self.address, "--host", HOST, "--nthreads", "1", "--nworkers", "1",
                "--no-nanny", "--no-dashboard", "--dashboard-address", f"{HOST}:0",
                "--death-timeout", "60"]) for k in range(workers)]
            self._warm(workers)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 - closed in stop()
        self.logs.append(log)
        # a session of its own: a signal to this benchmark's process group (Ctrl-C,
        # `timeout`) reaches the benchmark, which stops the cluster in order, by PID
        process = subprocess.Popen([str(BIN / "dask"), *args], cwd=REPO, env=self.env,
                                   stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        self.processes.append(process)
        return process

    def _warm(self, workers: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=60)
            poll(lambda: len(client.scheduler_info()["workers"]) == workers,
                 f"{workers} Dask workers", process=self.scheduler)
            client.run(_import_pipeline)

    def pids(self) -> list[int]:
        return [w.pid for w in self.workers]

    def stop(self) -> None:
        for process in reversed(self.processes):  # workers first, then the scheduler
            stop(process)
        for log in self.logs:
            log.close()


def _import_pipeline() -> None:
    import ingest.pipeline  # noqa: F401 - run on each worker: its imports, before any clock


@contextlib.contextmanager
def sampled_rss(pids: list[int]) -> Iterator[list[int]]:
    """The largest sum of the resident sets of `pids` (and their children) while inside."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], sum(sum(_tree_memory(pid)[0].values()) for pid in pids))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


# ---------------------------------------------------------------------------- the driver


def routing_rate(logs: Path, shards: int, scratch: Path) -> dict[str, float]:
    """The driver's own serial share of a batch, alone, in this process: hashing every
    input file (the driver's `_hash_file`, which decides what an earlier batch already
    read), then `_core.route_files` (read every file once, parse each line, append it to
    its shard's spool) into `shards` spools. However many workers a cluster has, one
    driver does both for every line before any worker starts."""
    from engine import _core
    from ingest.pipeline import _hash_file

    files = sorted(str(p) for p in logs.glob("*.jsonl"))
    spools = [str(scratch / f"route-{k}.spool") for k in range(shards)]
    cpu, started = time.process_time(), time.perf_counter()
    for path in files:
        _hash_file(path)
    hash_seconds, hash_cpu = time.perf_counter() - started, time.process_time() - cpu
    cpu, started = time.process_time(), time.perf_counter()
    written = _core.route_files(files, spools, lambda read, found: None)
    seconds, route_cpu = time.perf_counter() - started, time.process_time() - cpu
    for spool in spools:
        Path(spool).unlink(missing_ok=True)
    lines = sum(written)
    return {"lines": lines, "hash_seconds": hash_seconds, "hash_cpu_seconds": hash_cpu,
            "seconds": seconds, "cpu_seconds": route_cpu,
            "lines_per_second": lines / seconds, "lines_per_cpu_second": lines / route_cpu,
            "driver_lines_per_cpu_second": lines / (hash_cpu + route_cpu)}


# ---------------------------------------------------------------------------- the requests

#: moto's access log colours some lines (DELETE, 4xx answers)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_REQUEST = re.compile(r'"(GET|PUT|POST|DELETE|HEAD) (\S+) HTTP/[\d.]+" (\d{3})')


def request_counts(log: Path, start: int, end: int) -> dict[str, dict[str, int]]:
    """The S3 requests moto's access log holds between byte offsets `start` and `end`, by
    what they touched (the Delta log, the lock, the staged spools, the Parquet parts) and
    by kind (PUT, multipart create/part/complete, GET, LIST, HEAD, DELETE; "(not found)"
    for a 404 answer: an existence check that found nothing)."""
    with open(log, "rb") as handle:
        handle.seek(start)
        text = _ANSI.sub("", handle.read(end - start).decode("utf-8", "replace"))
    counts: dict[str, dict[str, int]] = {}
    for method, target, status in _REQUEST.findall(text):
        path, _, query = target.partition("?")
        if path.startswith("/moto-api"):
            continue
        params = urllib.parse.parse_qs(query, keep_blank_values=True)
        where = urllib.parse.unquote(params.get("prefix", [path])[0])
        if method == "GET" and "list-type" in params:
            kind = "LIST"
        elif method == "PUT" and "partNumber" in params:
            kind = "PUT part"
        elif method == "POST" and "uploads" in params:
            kind = "POST create multipart"
        elif method == "POST" and "uploadId" in params:
            kind = "POST complete multipart"
        elif method == "POST" and "delete" in params:
            kind = "POST delete objects"
        else:
            kind = method
        if status == "404":
            kind += " (not found)"
        area = ("delta log" if "/_delta_log" in where else
                "lock" if LOCK_NAME in where else
                "staging" if "/_staging" in where else
                "parquet parts" if where.endswith(".parquet") else "other")
        counts.setdefault(area, {}).setdefault(kind, 0)
        counts[area][kind] += 1
    return counts


def _log_size(log: Path) -> int:
    return log.stat().st_size if log.exists() else 0


# ---------------------------------------------------------------------------- the check


def exact_digest(root: str, options: dict[str, str] | None) -> str:
    """The tests' digest of every table (`ingest_batch` left out)."""
    from tests.ingest.conftest import contents, digest

    return digest(contents(root, batch_columns=False, storage_options=options))


def sql_digest(root: str, options: dict[str, str] | None) -> dict[str, list[Any]]:
    """Per table: rows and the sum of every row's DuckDB `hash()` (`ingest_batch` left out,
    as the tests' `contents` leaves it out): the same multiset of rows, the same pair,
    whatever the files, their order or their number."""
    from ingest.queries import open_warehouse
    from ingest.schema import SNAPSHOT_TABLES

    out = {}
    with open_warehouse(root, storage_options=options) as reader:
        for name in SNAPSHOT_TABLES:
            exclude = "" if name == "player_stats" else " EXCLUDE (ingest_batch)"
            rows, total = reader.sql(
                f"SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0)::VARCHAR "
                f"FROM (SELECT *{exclude} FROM {name}) t").fetchall()[0]
            out[name] = [int(rows), total]
    return out


def _short(tables: dict[str, list[Any]]) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(tables, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------- the sizes


def table_sizes(root: str) -> dict[str, Any]:
    """Committed Parquet bytes per table and per column, and Delta log bytes per commit, of
    the local warehouse at `root`."""
    import pyarrow.parquet as pq

    from ingest.schema import TABLES
    from ingest.store import Warehouse

    store = Warehouse(root)
    snapshot = store.snapshot()
    filesystem = store.location.filesystem
    tables: dict[str, Any] = {}
    for name in TABLES:
        parts = store.committed_files(name, snapshot.versions[name])
        columns: dict[str, list[int]] = {}
        rows = groups = chunk_total = 0
        for part in parts:
            meta = pq.read_metadata(store.part_fs_path(name, part), filesystem=filesystem)
            rows += meta.num_rows
            groups += meta.num_row_groups
            for g in range(meta.num_row_groups):
                group = meta.row_group(g)
                for c in range(group.num_columns):
                    chunk = group.column(c)
                    top = chunk.path_in_schema.split(".", 1)[0]
                    sizes = columns.setdefault(top, [0, 0])
                    sizes[0] += chunk.total_compressed_size
                    sizes[1] += chunk.total_uncompressed_size
                    chunk_total += chunk.total_compressed_size
        log = Path(store.table_uri(name)) / "_delta_log"
        commits = sorted(log.glob("*.json"))
        # version 0 creates the table; the others are batches (and compactions)
        batch_commits = [_commit_facts(p) for p in commits if int(p.stem) > 0]
        tables[name] = {
            "files": len(parts), "bytes": sum(p.size for p in parts), "rows": rows,
            "row_groups": groups, "footers_and_headers": sum(p.size for p in parts) - chunk_total,
            "columns": dict(sorted(columns.items(), key=lambda kv: -kv[1][0])),
            "delta_log": {"commits": len(commits),
                          "json_bytes": sum(p.stat().st_size for p in commits),
                          "batch_commits": batch_commits,
                          "checkpoints": len(list(log.glob("*.checkpoint*.parquet")))},
        }
    return {"events": tables["events"]["rows"], "tables": tables}


def _commit_facts(path: Path) -> dict[str, int]:
    """One Delta commit file: its bytes and the add and remove actions it holds."""
    actions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {"version": int(path.stem), "bytes": path.stat().st_size,
            "adds": sum("add" in a for a in actions),
            "removes": sum("remove" in a for a in actions)}


#: integer columns that grow within a game: candidates for DELTA_BINARY_PACKED
_DELTA = ("ts", "line", "seq", "ordinal")
#: rewrites of the events table: (name, columns left out, writer overrides)
EVENT_VARIANTS: tuple[tuple[str, tuple[str, ...], dict[str, Any]], ...] = (
    ("as stored, one file per partition", (), {}),
    ("raw at zstd level 9", (), {"compression_level": {"raw": 9}}),
    ("ts, line, seq, ordinal delta-encoded", (), {"delta": _DELTA}),
    ("without fingerprint", ("fingerprint",), {}),
    ("all three above (nothing lost)", ("fingerprint",),
     {"compression_level": {"raw": 9}, "delta": _DELTA}),
    ("without raw", ("raw",), {}),
    ("without raw, fingerprint", ("raw", "fingerprint"), {}),
    ("without raw, fingerprint, file, line", ("raw", "fingerprint", "file", "line"), {}),
)


def event_variants(root: str) -> dict[str, int]:
    """Bytes of the events table rewritten as each `EVENT_VARIANTS` says, one file per
    partition, with the writer settings of `ingest.store` otherwise (zstd level 3,
    dictionaries, row groups of `ROWS_PER_GROUP`)."""
    import pyarrow.parquet as pq

    from ingest.store import NO_STATISTICS, ROWS_PER_GROUP, Warehouse

    store = Warehouse(root)
    parts = store.committed_files("events", store.snapshot().versions["events"])
    by_partition: dict[tuple[tuple[str, str], ...], list[Any]] = {}
    for part in parts:
        by_partition.setdefault(part.partition, []).append(part)
    sizes = dict.fromkeys((v[0] for v in EVENT_VARIANTS), 0)
    with tempfile.TemporaryDirectory(dir=OUT) as scratch:
        target = Path(scratch) / "part.parquet"
        for partition_parts in by_partition.values():
            data = store.parts_dataset("events", partition_parts).to_table()
            for name, dropped, overrides in EVENT_VARIANTS:
                table = data.drop_columns(list(dropped))
                delta = overrides.get("delta", ())
                levels = overrides.get("compression_level", {})
                compression: Any = "zstd"
                level: Any = 3
                if levels:
                    compression = dict.fromkeys(table.schema.names, "zstd")
                    level = {n: levels.get(n, 3) for n in table.schema.names}
                pq.write_table(
                    table, target, row_group_size=ROWS_PER_GROUP, compression=compression,
                    compression_level=level,
                    use_dictionary=[n for n in table.schema.names if n not in delta],
                    column_encoding=dict.fromkeys(delta, "DELTA_BINARY_PACKED") or None,
                    write_statistics=[n for n in table.schema.names if n not in NO_STATISTICS])
                sizes[name] += target.stat().st_size
    return sizes


def print_sizes(sizes: dict[str, Any], variants: dict[str, int] | None) -> None:
    events = sizes["events"]
    print(f"\nbytes per event ({events:,} events = rows of `events`), committed Parquet parts:")
    print(f"  {'table':<13}{'files':>6}{'rows':>11}{'bytes':>13}{'B/event':>9}   "
          "largest columns (share of the table's bytes)")
    total = 0
    for name, table in sizes["tables"].items():
        total += table["bytes"]
        top = ", ".join(f"{c} {s[0] / table['bytes']:.0%}"
                        for c, s in list(table["columns"].items())[:4] if table["bytes"])
        print(f"  {name:<13}{table['files']:>6}{table['rows']:>11,}{table['bytes']:>13,}"
              f"{table['bytes'] / events:>9.2f}   {top}")
    print(f"  {'all':<13}{'':>6}{'':>11}{total:>13,}{total / events:>9.2f}")
    columns = sizes["tables"]["events"]["columns"]
    print("\n  events, per column: compressed B/event (uncompressed), as stored")
    for column, (packed, plain) in columns.items():
        print(f"    {column:<14}{packed / events:>8.2f}  ({plain / events:.2f})")
    print("\n  Delta log: the commits after the table's creation (version 0)")
    for name, table in sizes["tables"].items():
        log = table["delta_log"]
        facts = log["batch_commits"]
        done = sum(c["bytes"] for c in facts)
        actions = sum(c["adds"] + c["removes"] for c in facts)
        each = ", ".join(f"{c['bytes']:,} B: {c['adds']} adds, {c['removes']} removes"
                         for c in facts)
        print(f"    {name:<13}{len(facts):>3} commits {done:>10,} B ({each}); "
              f"{done / max(1, actions):,.0f} B per action; {log['checkpoints']} checkpoints")
    if variants:
        print_variants(variants, events)


def print_variants(variants: dict[str, int], events: int) -> None:
    base = variants[EVENT_VARIANTS[0][0]]
    print("\n  events rewritten (one file per partition, zstd 3, dictionaries):")
    for name, size in variants.items():
        print(f"    {name:<40}{size:>13,} B  {size / events:>7.2f} B/event  {size / base:>6.0%}")


# ---------------------------------------------------------------------------- the runs


@dataclass
class Result:
    name: str
    warehouse: str
    seconds: float
    events_per_second: float
    driver_peak_rss: int
    workers_peak_rss: int | None
    returncode: int
    load_average_1m: tuple[float, float]
    sql_digest: str | None = None
    exact_digest: str | None = None
    s3_requests: dict[str, dict[str, int]] | None = None


def run_ingest(name: str, logs: Path, warehouse: str, lines: int, workers: int,
               cluster: Cluster | None, env: dict[str, str] | None) -> Result:
    command = [sys.executable, "-m", "cli.app", "ingest", str(logs), "--warehouse", warehouse,
               "--quiet"]
    command += ["--cluster", cluster.address] if cluster else ["--workers", str(workers)]
    load_before = os.getloadavg()[0]
    with sampled_rss(cluster.pids() if cluster else []) as workers_peak:
        run: Run = measure(command, env)
    return Result(name, warehouse, run.seconds, lines / run.seconds, run.peak_rss,
                  workers_peak[0] if cluster else None, run.returncode,
                  (load_before, os.getloadavg()[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=100_000, help="hands in the logs")
    parser.add_argument("--pool-hands", type=int, default=None,
                        help="hands actually simulated (default: min(hands, 30000))")
    parser.add_argument("--workers", type=int, default=2,
                        help="local ingest's worker processes")
    parser.add_argument("--cluster-workers", type=int, default=2,
                        help="Dask worker processes (one thread each)")
    parser.add_argument("--files", type=int, default=8, help="log files to spread games over")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--fault-rate", type=float, default=0.02)
    parser.add_argument("--runs", default=",".join(RUNS),
                        help=f"which runs, comma-separated (default: {','.join(RUNS)}); "
                             "none: only the driver's routing")
    parser.add_argument("--exact-digest-hands", type=int, default=20_000,
                        help="make the tests' exact digest up to this many hands")
    parser.add_argument("--sizes", action="store_true",
                        help="bytes per event of the local-disk warehouse (needs that run)")
    parser.add_argument("--compact", action="store_true",
                        help="with --sizes: compact the local-disk warehouse first")
    parser.add_argument("--sizes-of", metavar="WAREHOUSE",
                        help="only measure the sizes (as --sizes) of this local warehouse")
    parser.add_argument("--no-variants", action="store_true",
                        help="with --sizes or --sizes-of: skip the events rewrites")
    parser.add_argument("--keep", action="store_true", help="keep the disk warehouses")
    args = parser.parse_args()
    # a SIGTERM (`timeout`, a CI job's end) unwinds like an error, so the services this
    # process started are still stopped by PID in the `finally` below
    signal.signal(signal.SIGTERM, _terminated)
    if args.sizes_of:
        sizes_only(args.sizes_of, variants=not args.no_variants)
        return
    wanted = [r.strip() for r in args.runs.split(",") if r.strip() and r.strip() != "none"]
    unknown = sorted(set(wanted) - set(RUNS))
    if unknown or not (wanted or args.runs == "none"):
        parser.error(f"--runs takes some of {', '.join(RUNS)}, or none; got {args.runs!r}")
    if args.sizes and "local-disk" not in wanted:
        parser.error("--sizes measures the local-disk run's warehouse: add local-disk to --runs")
    pool_hands = args.pool_hands or min(args.hands, 30_000)

    OUT.mkdir(parents=True, exist_ok=True)
    logs, facts = make_logs(args.hands, pool_hands, args.files, args.seed, args.fault_rate)
    lines = facts["lines"]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    work = OUT / f"cluster-run-{stamp}"
    work.mkdir()
    print(f"logs: {logs} ({lines:,} lines, {facts['hands']:,} hands, {facts['games']:,} games, "
          f"{facts['bytes'] / 2**20:,.0f} MiB)", flush=True)

    routing = routing_rate(logs, args.workers, work)
    print(f"driver alone (one process, {args.workers} spools): routing "
          f"{routing['lines_per_second']:,.0f} lines/s wall, "
          f"{routing['lines_per_cpu_second']:,.0f} per CPU-second; with hashing the inputs "
          f"{routing['driver_lines_per_cpu_second']:,.0f} lines per CPU-second", flush=True)

    results: list[Result] = []
    sizes: dict[str, Any] | None = None
    variants: dict[str, int] | None = None
    moto: MotoServer | None = None
    moto_log = work / "moto.log"
    bucket = ""
    cluster: Cluster | None = None
    try:
        if any(r.endswith("-s3") for r in wanted):
            moto = MotoServer(moto_log)
            bucket = moto.bucket()
            print(f"moto_server {moto.endpoint} (pid {moto.process.pid}), bucket {bucket}",
                  flush=True)
        if any(r.startswith("cluster-") for r in wanted):
            cluster = Cluster(work, args.cluster_workers)
            print(f"dask scheduler {cluster.address} (pid {cluster.scheduler.pid}), "
                  f"{args.cluster_workers} workers (pids {', '.join(map(str, cluster.pids()))}),"
                  f" up and warm in {cluster.startup_seconds:.1f}s", flush=True)
        for name in wanted:
            on_s3 = name.endswith("-s3")
            warehouse = (f"s3://{bucket}/{name}" if on_s3
                         else str(work / f"warehouse-{name}"))
            env = moto.env if on_s3 and moto else None
            log_start = _log_size(moto_log)
            result = run_ingest(name, logs, warehouse, lines, args.workers,
                                cluster if name.startswith("cluster-") else None, env)
            if on_s3:
                result.s3_requests = request_counts(moto_log, log_start, _log_size(moto_log))
            results.append(result)
            print(f"{name}: {result.seconds:.1f}s, {result.events_per_second:,.0f} events/s "
                  f"(exit {result.returncode})", flush=True)
            if result.returncode != 0:
                continue
            options = moto.options if on_s3 and moto else None
            checking = time.monotonic()
            result.sql_digest = _short(sql_digest(warehouse, options))
            if facts["hands"] <= args.exact_digest_hands:
                result.exact_digest = exact_digest(warehouse, options)
            print(f"{name}: digests in {time.monotonic() - checking:.1f}s", flush=True)
        local_disk = next((r for r in results if r.name == "local-disk"), None)
        if args.sizes and local_disk and local_disk.returncode == 0:
            if args.compact:
                subprocess.run([sys.executable, "-m", "cli.app", "compact", "--warehouse",
                                local_disk.warehouse, "--retain-hours", "0"], cwd=REPO,
                               check=True)
            sizes = table_sizes(local_disk.warehouse)
            variants = None if args.no_variants else event_variants(local_disk.warehouse)
    finally:
        if cluster is not None:
            cluster.stop()
        if moto is not None:
            moto.stop()

    by_name = {r.name: r for r in results}
    ratios = {}
    for store in ("disk", "s3"):
        local, remote = by_name.get(f"local-{store}"), by_name.get(f"cluster-{store}")
        if local and remote and local.returncode == 0 and remote.returncode == 0:
            ratios[store] = remote.events_per_second / local.events_per_second
    ok = [r for r in results if r.returncode == 0]
    same_sql = len({r.sql_digest for r in ok}) == 1 if ok else None
    exact = [r.exact_digest for r in ok if r.exact_digest]
    same_exact = len(set(exact)) == 1 if exact else None

    print()
    print(f"events (log lines) {lines:>12,}   ({facts['hands']:,} hands, {facts['games']:,} games;"
          f" local --workers {args.workers}, cluster {args.cluster_workers} workers × 1 thread)")
    print(f"{'run':<14}{'events/s':>11}{'seconds':>9}{'driver peak':>13}{'workers peak':>14}"
          f"{'load 1m':>13}  digest (sql / exact)")
    for r in results:
        workers_peak = f"{r.workers_peak_rss / 2**20:,.0f} MiB" if r.workers_peak_rss else "-"
        print(f"{r.name:<14}{r.events_per_second:>11,.0f}{r.seconds:>9.1f}"
              f"{r.driver_peak_rss / 2**20:>9,.0f} MiB{workers_peak:>14}"
              f"{r.load_average_1m[0]:>6.2f}→{r.load_average_1m[1]:<5.2f}  "
              f"{(r.sql_digest or 'failed')[:12]} / {(r.exact_digest or '-')[:12]}")
    print(f"driver alone        {routing['driver_lines_per_cpu_second']:>12,.0f} lines per "
          f"CPU-second (hash + route; routing {routing['lines_per_second']:,.0f} lines/s wall):"
          " the serial share of any batch")
    for store, ratio in ratios.items():
        print(f"cluster overhead ratio, {store:<4} (cluster events/s ÷ local events/s) "
              f"{ratio:6.3f}")
    for r in results:
        if r.s3_requests:
            total = sum(sum(k.values()) for k in r.s3_requests.values())
            print(f"S3 requests of {r.name} ({total:,} in all, from moto's access log):")
            for area, kinds in sorted(r.s3_requests.items()):
                print(f"    {area:<14}" + ", ".join(f"{k} {n:,}" for k, n in sorted(kinds.items())))
    failed = [r.name for r in results if r.returncode != 0]
    runs = f"the {len(ok)} runs that finished ({', '.join(failed)} failed)" if failed \
        else "every run"
    print(f"same content, {runs}: {_verdict(same_sql)} (DuckDB order-free digest); "
          f"{_verdict(same_exact)} (tests' exact digest"
          f"{'' if exact else f', not made above {args.exact_digest_hands:,} hands'})")
    if sizes:
        print_sizes(sizes, variants)

    result_file = OUT / f"cluster-{stamp}.json"
    result_file.write_text(json.dumps({
        "command": " ".join(sys.argv),
        "cpus": os.cpu_count(),
        "logs": facts | {"folder": str(logs)},
        "local_workers": args.workers,
        "cluster_workers": args.cluster_workers,
        "cluster_startup_seconds": cluster.startup_seconds if cluster else None,
        "driver_routing": routing,
        "runs": [asdict(r) for r in results],
        "overhead_ratio": ratios,
        "same_content_sql_digest": same_sql,
        "same_content_exact_digest": same_exact,
        "sizes": sizes,
        "event_variants": variants,
        "compacted": bool(args.compact and sizes),
    }, indent=2))
    print(f"results: {result_file}")
    if not args.keep:
        for r in results:
            if not r.warehouse.startswith("s3://"):
                shutil.rmtree(r.warehouse, ignore_errors=True)
    if any(r.returncode != 0 for r in results) or same_sql is False or same_exact is False:
        sys.exit(1)


def sizes_only(warehouse: str, *, variants: bool = True) -> None:
    started = time.monotonic()
    sizes = table_sizes(warehouse)
    print_sizes(sizes, None)
    rewrites = event_variants(warehouse) if variants else None
    if rewrites:
        print_variants(rewrites, sizes["events"])
    stamp = time.strftime("%Y%m%d-%H%M%S")
    result_file = OUT / f"sizes-{stamp}.json"
    result_file.write_text(json.dumps({"command": " ".join(sys.argv), "warehouse": warehouse,
                                       "sizes": sizes, "event_variants": rewrites}, indent=2))
    print(f"results: {result_file} ({time.monotonic() - started:.0f}s)")


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _verdict(same: bool | None) -> str:
    return {True: "yes", False: "NO", None: "n/a"}[same]


if __name__ == "__main__":
    main()
