"""`compact`: merge small Parquet parts and vacuum files no snapshot needs, safely.

Compaction rewrites each table's small parts into bigger ones (a Delta `optimize`), then
records the new versions in a `batches` row of kind `compact`, the same commit point an
ingest uses, so readers move to the compacted files atomically. Vacuum then deletes only
files that are no longer part of the committed snapshot AND were removed longer ago than
the retention window (default one week): a reader that opened an older snapshot within
that window still finds every file it needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from engine import ENGINE_VERSION
from ingest.schema import SNAPSHOT_TABLES, TABLES
from ingest.store import Warehouse, WarehouseError, new_attempt

DEFAULT_RETAIN_HOURS = 168
TARGET_FILE_SIZE = 128 * 1024 * 1024


@dataclass(slots=True)
class CompactSummary:
    batch: int | None
    files_removed: dict[str, int] = field(default_factory=dict)
    files_added: dict[str, int] = field(default_factory=dict)
    vacuumed: dict[str, int] = field(default_factory=dict)
    restored: list[str] = field(default_factory=list)


def compact(root: str, *, retain_hours: int = DEFAULT_RETAIN_HOURS, vacuum: bool = True,
            target_size: int = TARGET_FILE_SIZE,
            storage_options: Mapping[str, str] | None = None,
            wait: float = 0.0) -> CompactSummary:
    """Compact every table of the warehouse at `root` (a folder or `s3://bucket/prefix`),
    then vacuum (see the module doc)."""
    if retain_hours < 0:
        raise ValueError("retain_hours must be 0 or more")
    store = Warehouse(root, storage_options)
    if not store.exists():
        raise WarehouseError(f"no warehouse at {store.root}")
    with store.lock(wait=wait):
        restored = store.recover()
        snapshot = store.snapshot()
        summary = CompactSummary(None, restored=restored)
        versions = {n: snapshot.versions[n] for n in SNAPSHOT_TABLES}
        changed = False
        for name in TABLES:  # `batches` too: its rows stay the same, in fewer files
            table = store.table(name)
            metrics = table.optimize.compact(target_size=target_size)
            removed = int(metrics.get("numFilesRemoved", 0))
            added = int(metrics.get("numFilesAdded", 0))
            summary.files_removed[name] = removed
            summary.files_added[name] = added
            if (removed or added) and name in versions:
                changed = True
                versions[name] = store.table(name).version()
        if changed:
            batch = snapshot.batch + 1
            now = datetime.now(UTC)
            store.commit_batch({
                "id": batch, "kind": "compact", "started": now, "ended": now, "files": [],
                "lines": 0, "games_new": 0, "games_updated": 0, "games_unchanged": 0,
                "violations": 0, "errors": 0, "workers": 1, "engine_version": ENGINE_VERSION,
            }, versions, new_attempt())
            summary.batch = batch
        if vacuum:
            current = store.snapshot()
            for name in TABLES:
                deleted = store.table(name).vacuum(
                    retention_hours=retain_hours, dry_run=False,
                    enforce_retention_duration=retain_hours >= DEFAULT_RETAIN_HOURS,
                    keep_versions=[current.versions[name]], full=True,
                )
                summary.vacuumed[name] = len(deleted)
    return summary
