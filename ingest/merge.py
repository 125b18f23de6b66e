"""Merging the small parts that group commits leave, as they accumulate: size-tiered, by
copying column chunks.

Every group commit adds a part to each partition it writes, and Delta's costs follow the
parts a table holds: with deltalake 1.6 a commit, and a kept table brought to the next
version, each cost 0.03-0.04 ms a part, a reader's file list less
(`bench/bench_delta_parts.py`), for every table, on every group. Left alone, a live
warehouse's commits slow down with every group until a full `compact`
(docs/operations.md).

So the parts of each partition are kept few, the way log-structured stores keep theirs:
sorted into tiers by size (tier 0 below `BASE`, tier k below `BASE`·`FANOUT`^k), and as
soon as a tier holds `FANOUT` parts they are joined into one part of the next tier. A
partition then holds fewer than `FANOUT` parts a tier (once a pass has run), a handful of
tiers in all, and each row is copied once a tier it climbs. The parts a merge removes stay
in the Delta log as tombstones for the table's retention, at about a quarter of a live
part's cost a commit (docs/decisions.md). Parts of `LIMIT` bytes or more are left for
`compact`, which also re-packs row groups and vacuums.

A join copies the parts' column chunks as they are (`engine._core.concat_parquet`: no
decoding, 0.02 s for 6 MB of `events` where a decode and re-encode took 0.94 s) and gives
the part the Delta statistics of the parts it replaces (`ingest.store.merged_stats`).
The rows are the same, so a reader of any version sees the same table; the new versions
are committed as one batch of kind `compact`, the commit point every writer uses, and a
merge killed before it leaves parts nothing names, which the next writer removes.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow.parquet as pq

from engine import ENGINE_VERSION
from ingest.schema import SNAPSHOT_TABLES, SUMMARY_TABLES
from ingest.store import (
    TARGET_FILE_SIZE,
    PartFile,
    Warehouse,
    WarehouseError,
    merged_stats,
    new_attempt,
    new_token,
)

#: parts of a tier that are joined into one
FANOUT = 8
#: the upper bound of tier 0 (a group of a few hundred games writes parts below it)
BASE = 1 << 20
#: parts this size or larger are not merged (`compact` re-packs them), and no merge
#: makes a part larger
LIMIT = TARGET_FILE_SIZE
#: the most parts one run joins (the core holds each one's footer and an open file while it
#: copies): a tier that piled up while merging was off is joined in several runs
MAX_RUN = 64
#: the tables merged: every table of the snapshot but the summaries (a batch rewrites
#: each whole, one part) and `batches` (merged every `BATCHES_COMPACT_EVERY` batches)
MERGED_TABLES: tuple[str, ...] = tuple(n for n in SNAPSHOT_TABLES if n not in SUMMARY_TABLES)

__all__ = ["BASE", "FANOUT", "LIMIT", "MAX_RUN", "MERGED_TABLES", "MergeSummary", "merge_parts", "plan", "tier"]


@dataclass(slots=True)
class MergeSummary:
    """What a merge pass did: its batch (None when nothing was merged), and by table the
    parts it replaced, the parts it made, the bytes it copied, and the runs it could not
    join, each with why. (Parts of two schemas, a warehouse's written before some columns
    were declared and after, are joined schema by schema; `compact` rewrites them to one.)"""

    batch: int | None
    removed: dict[str, int] = field(default_factory=dict)
    added: dict[str, int] = field(default_factory=dict)
    bytes_copied: int = 0
    skipped: list[str] = field(default_factory=list)


def tier(size: int, *, base: int = BASE, fanout: int = FANOUT) -> int:
    """A part's tier: 0 below `base`, k below `base`·`fanout`^k."""
    level, bound = 0, base
    while size >= bound:
        level, bound = level + 1, bound * fanout
    return level


def plan(parts: Sequence[PartFile], *, fanout: int = FANOUT, base: int = BASE,
         limit: int = LIMIT, most: int = MAX_RUN) -> list[list[PartFile]]:
    """The merges due among a table's parts: in each partition, each tier holding
    `fanout` parts or more, its parts oldest first (by name: a part is named by its
    batch) in runs of at least two parts, at most `most` and at most `limit` bytes.
    Parts of `limit` bytes or more are never merged."""
    if fanout < 2 or most < 2:
        raise ValueError("fanout and most must be 2 or more")
    tiers: dict[tuple[tuple[tuple[str, str], ...], int], list[PartFile]] = defaultdict(list)
    for part in parts:
        if part.size < limit:
            tiers[(part.partition, tier(part.size, base=base, fanout=fanout))].append(part)
    merges: list[list[PartFile]] = []
    for key in sorted(tiers):
        members = tiers[key]
        if len(members) < fanout:
            continue
        run: list[PartFile] = []
        for part in sorted(members, key=lambda p: p.path):
            if run and (len(run) == most or sum(p.size for p in run) + part.size > limit):
                if len(run) > 1:
                    merges.append(run)
                run = []
            run.append(part)
        if len(run) > 1:
            merges.append(run)
    return merges


def merge_parts(root: str, storage_options: Mapping[str, str] | None = None, *,
                fanout: int = FANOUT, base: int = BASE, limit: int = LIMIT,
                wait: float = 0.0) -> MergeSummary:
    """One merge pass over the warehouse at `root` (see the module doc): every merge due
    (`plan`) made and committed as one batch of kind `compact`, under the writer lock
    (waiting up to `wait` seconds for it). Nothing due: no batch, nothing written."""
    store = Warehouse(root, storage_options)
    if not store.exists():
        raise WarehouseError(f"no warehouse at {store.root}")
    with store.lock(wait=wait):
        store.recover()
        snapshot = store.snapshot()
        versions = {n: snapshot.versions[n] for n in SNAPSHOT_TABLES}
        due: dict[str, tuple[list[list[PartFile]], dict[str, dict[str, Any]]]] = {}
        for name in MERGED_TABLES:
            if not versions.get(name):
                continue
            found = store.committed_actions(name, versions[name])
            merges = plan([part for part, _ in found], fanout=fanout, base=base, limit=limit)
            if merges:
                due[name] = (merges, {part.path: action for part, action in found})
        summary = MergeSummary(None)
        if not due:
            return summary
        batch = snapshot.batch + 1
        prefix, attempt = f"b{batch:06d}-{new_token()}", new_attempt()
        marker = store.open_batch(prefix)  # a merge killed leaves parts: `recover` removes them
        started = datetime.now(UTC)
        try:
            with _local_copies(store) as local:
                for name, (merges, actions) in due.items():
                    made: list[PartFile] = []
                    replaced: list[PartFile] = []
                    for index, run in enumerate(merges):
                        try:
                            joined = _joined(store, name, run, actions, f"{prefix}-m{index:04d}", local)
                        except ValueError as exc:  # a part the core cannot read as Parquet
                            summary.skipped.append(f"{name}: {exc}")
                            continue
                        for part, parts in joined:
                            made.append(part)
                            replaced.extend(parts)
                    if not made:
                        continue
                    versions[name] = store.commit(name, made, replaced, batch, "merge", attempt,
                                                  data_change=False)
                    summary.removed[name] = len(replaced)
                    summary.added[name] = len(made)
                    summary.bytes_copied += sum(part.size for part in made)
                if not summary.added:  # every run was skipped: nothing to commit
                    store.location.delete(marker)
                    return summary
            store.commit_batch({
                "id": batch, "kind": "compact", "started": started, "ended": datetime.now(UTC),
                "files": [], "lines": 0, "games_new": 0, "games_updated": 0, "games_unchanged": 0,
                "violations": 0, "errors": 0, "workers": 1, "engine_version": ENGINE_VERSION,
            }, versions, attempt, prefix=prefix)
        except BaseException:
            # the tables this pass moved are restored by the next writer's `recover`
            # (their versions are past the committed snapshot's), with the parts it made
            with contextlib.suppress(Exception):
                store.remove_parts(prefix)
            raise
        store.location.delete(marker)
        summary.batch = batch
    return summary


@contextlib.contextmanager
def _local_copies(store: Warehouse) -> Iterator[str | None]:
    """A scratch folder for an object store's parts (copied in, joined, copied out), or
    None for a local warehouse (its parts are joined where they are)."""
    if store.location.local:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="haftkhabis-merge-") as folder:
        yield folder


def _joined(store: Warehouse, name: str, run: Sequence[PartFile],
            actions: Mapping[str, Mapping[str, Any]], prefix: str,
            local: str | None) -> list[tuple[PartFile, list[PartFile]]]:
    """`run` joined: a new part of its partition (named `part-PREFIX…`) and the parts it
    replaces; when its parts are of more than one schema (some written before columns were
    added), a part for each schema that two or more of them share. A `ValueError` says why
    a run could not be joined at all."""
    if local is None:
        sources = [store.part_uri(name, p) for p in run]
    else:  # an object store's parts are copied in once, whatever is joined of them
        sources = []
        for index, part in enumerate(run):
            sources.append(os.path.join(local, f"{prefix}-{index:04d}.parquet"))
            store.location.get_file(store.part_uri(name, part), sources[-1])
    try:
        try:
            return [(_join(store, name, run, actions, sources, prefix, local), list(run))]
        except ValueError as exc:
            refused = exc
        by_schema: dict[bytes, list[int]] = {}
        for index, source in enumerate(sources):
            key = pq.read_schema(source).serialize().to_pybytes()
            by_schema.setdefault(key, []).append(index)
        if len(by_schema) == 1:
            raise refused  # one schema, and still refused: not a matter of schemas
        joined = []
        for number, members in enumerate(by_schema.values()):
            if len(members) > 1:
                parts = [run[i] for i in members]
                joined.append((_join(store, name, parts, actions, [sources[i] for i in members],
                                     f"{prefix}-s{number}", local), parts))
        return joined
    finally:
        if local is not None:
            for source in sources:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(source)


def _join(store: Warehouse, name: str, run: Sequence[PartFile], actions: Mapping[str, Mapping[str, Any]],
          sources: Sequence[str], prefix: str, local: str | None) -> PartFile:
    """The parts of `run`, read from `sources` (their files, or local copies), joined into
    one new part of their partition, named `part-PREFIX`."""
    from engine._core import concat_parquet

    first = run[0]
    relative = posixpath.join(first.folder, f"part-{prefix}.zstd.parquet")
    stats = merged_stats(name, [actions[p.path] for p in run])
    uri = store.part_uri(name, PartFile(relative, 0, first.partition, 0, ""))
    if local is None:
        hidden = os.path.join(os.path.dirname(uri), f".{os.path.basename(uri)}.tmp")
        try:
            size = concat_parquet(list(sources), hidden)
            os.replace(hidden, uri)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(hidden)
            raise
        store.location.sync_later(uri)  # on disk before the commit names it
    else:
        joined = os.path.join(local, f"{prefix}.parquet")
        try:
            size = concat_parquet(list(sources), joined)
            store.location.put_file(joined, uri)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(joined)
    return PartFile(relative, size, first.partition, sum(p.rows for p in run), stats)
