"""`compact`: merge small Parquet parts and vacuum files no retained snapshot needs, safely.

Compaction works partition by partition: in each table's partition, the parts smaller than
the target size are merged into parts of about that size (a Delta `optimize`); a
partition with a single small part, or only parts at the target already, is left as it
is. The merged parts hold the same rows, so a reader of any version sees the same table.
The new versions are recorded in a `batches` row of kind `compact`, the same commit point
an ingest uses, so readers move to the compacted files atomically. `batches` itself is
compacted too (its rows stay the same, in fewer files). A summary the warehouse has not got
(one added after it was written: `ingest.summaries`) is made whole first, in the same
batch, so its pages stop counting over the game tables.

Vacuum then deletes only files that the committed snapshot does not use AND that were
removed longer ago than the retention window (default one week); files that no commit
ever named (a killed batch's) are deleted once they are older than the window. A
snapshot committed within the window needs only files removed after it was committed,
so within the window: a reader that opened any snapshot of the last `retain_hours` still
finds every file it needs. Last, every table gets a Delta checkpoint, so opening it
replays no JSON commits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from engine import ENGINE_VERSION
from ingest import summaries
from ingest.schema import SNAPSHOT_TABLES, SUMMARY_TABLES, TABLES
from ingest.store import TARGET_FILE_SIZE, Warehouse, WarehouseError, new_attempt, new_token

DEFAULT_RETAIN_HOURS = 168

__all__ = ["DEFAULT_RETAIN_HOURS", "TARGET_FILE_SIZE", "CompactSummary", "compact"]


@dataclass(slots=True)
class CompactSummary:
    batch: int | None
    files_removed: dict[str, int] = field(default_factory=dict)
    files_added: dict[str, int] = field(default_factory=dict)
    summaries_made: list[str] = field(default_factory=list)
    partitions: dict[str, int] = field(default_factory=dict)  # partitions rewritten
    vacuumed: dict[str, int] = field(default_factory=dict)
    restored: list[str] = field(default_factory=list)


def compact(root: str, *, retain_hours: int = DEFAULT_RETAIN_HOURS, vacuum: bool = True,
            target_size: int = TARGET_FILE_SIZE,
            storage_options: Mapping[str, str] | None = None,
            wait: float = 0.0) -> CompactSummary:
    """Compact every table of the warehouse at `root` (a folder or `s3://bucket/prefix`)
    to parts of about `target_size` bytes, then vacuum (see the module doc)."""
    if retain_hours < 0:
        raise ValueError("retain_hours must be 0 or more")
    if target_size < 1:
        raise ValueError("target_size must be at least one byte")
    store = Warehouse(root, storage_options)
    if not store.exists():
        raise WarehouseError(f"no warehouse at {store.root}")
    with store.lock(wait=wait):
        restored = store.recover()
        snapshot = store.snapshot()
        summary = CompactSummary(None, restored=restored)
        versions = {n: snapshot.versions[n] for n in SNAPSHOT_TABLES}
        batch = snapshot.batch + 1
        prefix, attempt = f"b{batch:06d}-{new_token()}", new_attempt()
        # a warehouse never written to has nothing to summarise (its first batch makes them)
        absent = [n for n in SUMMARY_TABLES if not versions[n]] if snapshot.batch else []
        open_batch = store.open_batch(prefix) if absent else None
        for name, data in summaries.recompute(store, versions, absent).items():
            versions[name] = summaries.commit(store, name, data, batch, prefix, attempt)
            summary.summaries_made.append(name)
        changed = bool(absent)
        for name in TABLES:
            metrics = store.optimize(name, target_size, batch)
            removed = int(metrics.get("numFilesRemoved", 0))
            added = int(metrics.get("numFilesAdded", 0))
            summary.files_removed[name] = removed
            summary.files_added[name] = added
            summary.partitions[name] = int(metrics.get("partitionsOptimized", 0)) \
                if removed or added else 0
            if (removed or added) and name in versions:
                changed = True
                versions[name] = store.note_version(name)
        if changed:
            now = datetime.now(UTC)
            store.commit_batch({
                "id": batch, "kind": "compact", "started": now, "ended": now, "files": [],
                "lines": 0, "games_new": 0, "games_updated": 0, "games_unchanged": 0,
                "violations": 0, "errors": 0, "workers": 1, "engine_version": ENGINE_VERSION,
            }, versions, attempt, prefix=prefix)
            summary.batch = batch
        if open_batch is not None:
            store.location.delete(open_batch)
        if vacuum:
            current = store.snapshot()
            for name in TABLES:
                store.check_lock()
                with store.open_table(name) as table:
                    deleted = table.vacuum(
                        retention_hours=retain_hours, dry_run=False,
                        enforce_retention_duration=retain_hours >= DEFAULT_RETAIN_HOURS,
                        keep_versions=[current.versions[name]], full=True,
                    )
                store.note_version(name)
                summary.vacuumed[name] = len(deleted)
        for name in TABLES:
            store.checkpoint(name, store.latest_version(name), force=True)
    return summary
