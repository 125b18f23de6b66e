"""What a Delta table's parts cost every commit, with and without merging them.

A group commit adds a part to each partition it writes. This bench commits groups of
three parts (one a partition, as a group of every ruleset leaves `events`) to a Delta
table the way the warehouse's writer does (a table kept open, brought to the latest
version, a transaction of add actions on it, a checkpoint every ten versions) and reads it
the way the service's reader does (brought forward, its file list); no Parquet is
written, the add actions name files that need not exist: what is timed is Delta's own
work. With `--fanout F` it also merges as `ingest.merge` plans it (each partition's parts
of one size tier joined once there are F, one more commit removing them and adding the
joined part); without, the parts pile up as they did before merging (`--fanout 0`).

    .venv/bin/python bench/bench_delta_parts.py                  # 1,200 groups, no merging
    .venv/bin/python bench/bench_delta_parts.py --fanout 8       # merged as the service does

Printed every 200 groups: the table's parts, and the milliseconds a group spent (a mean
over the last 200) in the commit, the checkpoint, bringing the kept table forward, and the
reader's update and file list; never asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
from deltalake import CommitProperties, DeltaTable, PostCommitHookProperties, write_deltalake  # noqa: E402
from deltalake.transaction import AddAction, RemoveAction  # noqa: E402

from ingest.merge import plan  # noqa: E402
from ingest.store import CHECKPOINT_EVERY, PartFile  # noqa: E402

SCHEMA = pa.schema([("ruleset", pa.string()), ("x", pa.int64())])
STATS = '{"numRecords":10,"minValues":{"x":1},"maxValues":{"x":9},"nullCount":{"x":0}}'
RULESETS = ("bazito", "persian", "pis-yedili")
#: a group's part (bytes): what 300 games of one ruleset leave in `events`
PART_SIZE = 400_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=1200)
    parser.add_argument("--fanout", type=int, default=0, help="merge as ingest.merge plans (0: never)")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="haftkhabis-delta-parts-")
    write_deltalake(folder, pa.table({"ruleset": ["bazito"], "x": [1]}, schema=SCHEMA),
                    partition_by=["ruleset"])
    writer, reader = DeltaTable(folder), DeltaTable(folder)
    times: dict[str, list[float]] = {"commit": [], "checkpoint": [], "bring forward": [], "reader": []}
    live: list[PartFile] = []
    made = 0

    def timed(what: str, *calls: Callable[[], object]) -> None:
        clock = time.perf_counter()
        for call in calls:
            call()
        times[what][-1] += time.perf_counter() - clock

    def commit(actions: list[AddAction | RemoveAction]) -> None:
        timed("bring forward", writer.update_incremental)
        timed("commit", lambda: writer.create_write_transaction(
            actions, mode="append", schema=SCHEMA, partition_by=["ruleset"],
            commit_properties=CommitProperties(max_commit_retries=0),
            post_commithook_properties=PostCommitHookProperties(create_checkpoint=False)))
        version = writer.version() + 1  # (a transaction leaves the table object where it was)
        if version % CHECKPOINT_EVERY == 0:
            timed("checkpoint", writer.update_incremental, writer.create_checkpoint)
        timed("reader", reader.update_incremental, reader.file_uris)

    def add(part: PartFile) -> AddAction:
        return AddAction(part.path, part.size, dict(part.partition), int(time.time() * 1000), True, STATS)

    for group in range(1, args.groups + 1):
        for values in times.values():
            values.append(0.0)
        actions: list[AddAction | RemoveAction] = []
        for ruleset in RULESETS:
            made += 1
            part = PartFile(f"ruleset={ruleset}/part-{made:07d}.parquet", PART_SIZE,
                            (("ruleset", ruleset),), 10, "")
            live.append(part)
            actions.append(add(part))
        commit(actions)
        if args.fanout:
            runs = plan(live, fanout=args.fanout)
            if runs:
                actions = []
                for run in runs:
                    made += 1
                    joined = PartFile(f"{run[0].folder}/part-{made:07d}.parquet", sum(p.size for p in run),
                                      run[0].partition, sum(p.rows for p in run), "")
                    actions += [RemoveAction(p.path, True, int(time.time() * 1000), p.size,
                                             dict(p.partition)) for p in run]
                    actions.append(add(joined))
                    gone = {p.path for p in run}
                    live = [p for p in live if p.path not in gone] + [joined]
                commit(actions)
        if group % 200 == 0:
            figures = "  ".join(f"{what} {1000 * sum(values[-200:]) / 200:6.2f}"
                                for what, values in times.items())
            print(f"groups {group:5d}  parts {len(live):5d}  ms a group: {figures}", flush=True)


if __name__ == "__main__":
    main()
