"""The Delta Lake side of the warehouse: table folders, Parquet parts, commits, snapshots.

A warehouse is a folder (local, or an S3 prefix: `ingest.storage.Location`) of Delta
tables, one per entry of `schema.TABLES`. Writers put Parquet parts straight into a
table's folder (locally a temporary name, then an atomic rename; on S3 one PUT) and
nothing is visible until a commit names them. Each batch commits every data table once
(adds and removes in one Delta transaction per table), then appends its row to `batches`
last: that row records the version of every table the batch produced, and readers open
each table at the versions of the latest `batches` row. A batch killed before that last
commit is therefore invisible to them, and `recover()` (run by every writer before it
starts, and by any reader that finds a table past the recorded version while no writer
holds the lock: `snapshot()`) restores such a table, so the latest version of every table
is whole again for readers that read it raw.

Commits are fenced. A writer commits each table on the version it found when it took the
lock (or the one its own last commit made) and nowhere else (no rebase onto a newer
version): a commit that finds the table moved by anyone else fails with `WriterFenced`
and the writer stops, so two writers that both believe they hold the lock (a lock file
deleted under one, an S3 lock that expired under a stalled one) never both commit, and a
batch number, decided from the `batches` version a writer read and committed on that
version, is never given twice. Every commit also carries Delta's application transaction
id (`APP_ID`, with the writer's attempt number as its version), so a commit retried
after an unknown outcome (a timeout, a lost reply) is recognised as landed and never
appends twice.

Opening stays cheap however many batches there are: each table gets a Delta checkpoint
every `CHECKPOINT_EVERY` of our commits (and `compact` writes one for every table), the
`batches` table is compacted every `BATCHES_COMPACT_EVERY` batches, and `snapshot()` reads
only the one part that holds the latest batch row (found by the parts' statistics).
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

if TYPE_CHECKING:
    import pyarrow.dataset as pads
    from deltalake import DeltaTable
    from deltalake.transaction import AddAction

# deltalake, and pyarrow.dataset (which brings pandas), are imported where they are used:
# an ingest worker only writes parts and needs neither, and each costs a process tens of
# MiB of memory

from ingest import lock as writer_lock
from ingest.schema import (
    LATER_COLUMNS,
    LATER_TABLES,
    READABLE_SCHEMAS,
    SCHEMA_VERSION,
    SNAPSHOT_TABLES,
    TABLES,
    TableSpec,
)
from ingest.storage import AtomicOutput, Location

#: what tells a table from another made again at its path: locally its first log entry's
#: inode and time (`_OpenTables.identity`), on S3 that entry's ETag
Identity = tuple[int, int] | str

DEFAULT_WAREHOUSE = "data/warehouse"
LOCK_NAME = writer_lock.LOCK_NAME
STAGING = "_staging"
#: the batch a part was written by (`PartWriter` names: `part-b000042-…`)
_BATCH_PART = re.compile(r"part-b(\d{6,})-")
#: Delta application transaction id of this project's writers (`txn` actions)
APP_ID = "haftkhabis"
#: tries of one commit whose outcome is unknown (the store timed out, a reply was lost)
COMMIT_TRIES = 4
#: a table gets a Delta checkpoint at every version that is a multiple of this (so
#: opening it replays at most this many JSON commits: one GET each on S3)
CHECKPOINT_EVERY = 10
#: `batches` is compacted (its small parts merged) after every this many batches, so
#: reading its rows (the files already ingested, the dashboard's batch list) stays cheap
BATCHES_COMPACT_EVERY = 100
#: the target size of compacted parts (`compact --target-size`)
TARGET_FILE_SIZE = 128 * 1024 * 1024
ROWS_PER_GROUP = 131_072
#: rows a writer holds in memory (over all its partitions) before it writes a row group:
#: sized by how wide each table's rows are, so a worker's buffers stay near 100 MiB
#: whatever the input's size
ROW_BUFFER = {"events": 65_536, "hand_players": 65_536, "hands": 32_768, "games": 16_384,
              "violations": 16_384, "decisions": 32_768, "quarantine": 4_096, "batches": 1_024, "cases": 1_024}
ROWS_PER_FILE = 4_000_000
#: batches a writer keeps apart in one partition before it gathers them into one: every
#: batch's arrays and buffers carry their own bookkeeping (a few KiB), so the batches of a
#: table whose rows are rare (`violations`: a few per game handed over) must not pile up
#: until the end of the input (measured: 25 MiB a worker at a million hands)
COMBINE_BATCHES = 64
#: a part is closed after this many row groups: an open Parquet writer keeps every row
#: group's metadata in memory, and many partitions make small row groups
GROUPS_PER_FILE = 256
#: column chunks (row groups × columns) the open parts of a set of writers (a worker's:
#: every table, every partition) may hold: an open Parquet writer keeps the metadata of
#: every row group it wrote (about 0.9 KiB a column chunk, measured with pyarrow 26), so
#: with a part open per partition that memory grew with the input until each part had
#: `GROUPS_PER_FILE` groups (33 partitions × 256 groups × 22 columns of `events` alone:
#: 170 MiB a worker). Past this budget the open part with the most column chunks is
#: closed: about 15 MiB in all, whatever the partitions and the input
OPEN_CHUNKS = 16_384
#: zstd's level for the parts ingest writes: level 1 writes `events` about 18% faster than
#: level 3 for 2% more bytes (`compact` rewrites parts with delta-rs' own settings)
COMPRESSION_LEVEL = 1
#: columns whose values are (nearly) all distinct get no dictionary: Parquet would build
#: one per column chunk, find it too large and fall back to plain encoding, and the
#: attempt costs time (`events` is written 24% faster without, and 14% smaller)
NO_DICTIONARY = frozenset({"raw", "fingerprint", "line", "ts", "content_hash"})
#: long free-text columns get no Parquet statistics (nobody filters on them, and their
#: min/max would fill every row group's metadata)
NO_STATISTICS = frozenset({"raw", "message", "meta", "options"})


class WarehouseError(Exception):
    """The warehouse cannot be used as asked (missing, busy, from another schema)."""


class WriterFenced(WarehouseError):
    """Another writer took over (this writer's lock was lost, or a table it commits to
    moved under it): this writer commits nothing more and must not clean up after
    itself beyond its own uncommitted parts."""


@dataclass(frozen=True, slots=True)
class PartFile:
    """A Parquet part of one table, written but perhaps not yet committed."""

    path: str  # relative to the table's folder
    size: int
    partition: tuple[tuple[str, str], ...]
    rows: int
    stats: str

    def add_action(self, data_change: bool = True) -> AddAction:
        """The Delta action adding this part (`data_change` false: rows that were there
        already, in another file, as a merge writes them)."""
        from deltalake.transaction import AddAction

        return AddAction(self.path, self.size, dict(self.partition), int(time.time() * 1000),
                         data_change, self.stats)

    @property
    def folder(self) -> str:
        """The part's folder, relative to its table's (`''` for an unpartitioned one)."""
        return posixpath.dirname(self.path)

    def remove_action(self, data_change: bool = True) -> Any:
        from deltalake.transaction import RemoveAction

        return RemoveAction(self.path, data_change, int(time.time() * 1000), self.size,
                            dict(self.partition))


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The committed state: the latest batch and the table versions it recorded."""

    batch: int
    versions: dict[str, int]


class _OpenTables:
    """Delta tables kept open between uses in this process.

    Opening a table replays its log from the last checkpoint (3–8 ms locally, and a live
    batch opens a dozen; a live reader, eight); a table kept open is brought to the version
    asked by reading only the commits since (0.2–3 ms). On S3 an opening is a request for
    the checkpoint's pointer, a listing and a GET of every commit since the checkpoint (up
    to `CHECKPOINT_EVERY`); kept, it is a HEAD (the identity) and a listing. A table is
    taken out while it is used and put back after, so no two users ever share one
    (`Warehouse.open_table`). Kept only for a table whose first log entry is the one it was
    opened on (a folder removed and made again at the same path is another table:
    `identity` locally, the entry's ETag on S3), never ahead of the version asked (a kept
    table does not travel back), at most `KEEP` tables, the least recently used dropped.
    Keys are the table's URI, and on S3 the endpoint too."""

    KEEP = 64

    def __init__(self) -> None:
        self._free: dict[str, tuple[Identity, DeltaTable]] = {}
        self._guard = threading.Lock()

    @staticmethod
    def identity(uri: str) -> Identity | None:
        """A local table's first log entry (its inode and time); once Delta has cleaned it
        away (past the log's retention), the log folder's inode; None without a log."""
        log_folder = posixpath.join(uri, "_delta_log")
        try:
            found = os.stat(posixpath.join(log_folder, f"{0:020d}.json"))
        except OSError:
            try:
                return os.stat(log_folder).st_ino, 0
            except OSError:
                return None
        return found.st_ino, found.st_mtime_ns

    def take(self, uri: str, identity: Identity, version: int | None) -> DeltaTable | None:
        """The table kept for `uri`, brought to `version` (None: the latest), or None."""
        from deltalake.exceptions import DeltaError

        with self._guard:
            kept = self._free.pop(uri, None)
        if kept is None or kept[0] != identity:
            return None
        table = kept[1]
        try:
            if version is None:
                table.update_incremental()
            elif table.version() > version:
                return None
            elif table.version() < version:
                table.load_as_version(version)
        except (OSError, DeltaError):
            return None
        return table

    def put(self, uri: str, identity: Identity, table: DeltaTable) -> None:
        with self._guard:
            self._free.pop(uri, None)
            self._free[uri] = (identity, table)
            while len(self._free) > self.KEEP:
                del self._free[next(iter(self._free))]


_OPEN = _OpenTables()


class Warehouse:
    """A warehouse (a local folder or an S3 prefix): its tables, its lock, its committed
    snapshot."""

    def __init__(self, root: str | os.PathLike[str] | Location,
                 storage_options: Mapping[str, str] | None = None) -> None:
        self.location = Location.of(root, storage_options)
        self.root = self.location.uri
        self._lock: writer_lock.FileLock | writer_lock.ObjectLock | None = None
        #: while this writer holds the lock: the version each table is at as far as this
        #: writer knows (set by `recover`, moved by its own commits); a commit lands on
        #: that version or fails (`WriterFenced`)
        self._expected: dict[str, int] = {}
        #: every table was seen there once (`exists`): tables are never removed by us
        self._whole = False

    def table_uri(self, name: str) -> str:
        return self.location.join(name)

    def part_uri(self, name: str, part: PartFile) -> str:
        return self.location.join(name, part.path)

    def part_fs_path(self, name: str, part: PartFile) -> str:
        """A part as a path of `self.location.filesystem` (what pyarrow opens)."""
        return self.location.fs_path(self.part_uri(name, part))

    def exists(self) -> bool:
        """Whether every table is there (one stat of its log folder each, a listing on
        S3; every reader asks before each snapshot, so once all were there this object
        does not ask again: a warehouse removed since is found missing when its `batches`
        table cannot be opened); a table added later (`LATER_TABLES`) may be missing
        until the warehouse's next writer creates it."""
        if not self._whole:
            self._whole = all(self.location.exists(self.location.join(n, "_delta_log"))
                              for n in TABLES if n not in LATER_TABLES)
        return self._whole

    def ensure(self) -> None:
        """Create the folder and every table (empty, version 0) that is missing."""
        from deltalake import DeltaTable

        self.location.makedirs(self.root)
        options = self.location.delta_options()
        for name, spec in TABLES.items():
            uri = self.table_uri(name)
            if not DeltaTable.is_deltatable(uri, storage_options=options):
                DeltaTable.create(
                    uri, spec.schema, partition_by=list(spec.partition_by) or None,
                    name=name, storage_options=options,
                    description=f"haftkhabis warehouse table {name}, schema {SCHEMA_VERSION}",
                )

    @contextlib.contextmanager
    def lock(self, *, wait: float = 0.0, ttl: float = writer_lock.LOCK_TTL) -> Iterator[None]:
        """Exclusive writer lock (ingest, compact), waiting up to `wait` seconds for it.
        Locally `flock` (the OS drops it if the process dies); on S3 a lock object with
        an expiry (`ingest.lock`)."""
        held = writer_lock.writer_lock(self.location, ttl)
        try:
            held.acquire(wait)
        except writer_lock.LockBusy as exc:
            raise WarehouseError(f"{self.root} is busy: {exc}") from None
        self._lock = held
        self._expected = {}
        try:
            yield
        finally:
            self._lock = None
            self._expected = {}
            held.release()

    def check_lock(self) -> None:
        """Raise `WriterFenced` if this writer's lock was taken over (an S3 lock that
        expired, a lock file deleted or replaced)."""
        if self._lock is not None:
            try:
                self._lock.check()
            except writer_lock.LockLost as exc:
                raise WriterFenced(f"{self.root}: {exc}; this writer commits nothing more "
                                   "(run it again)") from None

    # ------------------------------------------------------------------ reading

    def snapshot(self, *, heal: bool = True) -> Snapshot:
        """The table versions recorded by the latest committed batch (0s before any).

        With `heal` (every reader's way in), a table whose latest version is not what that
        batch recorded (a writer killed mid-commit) is restored first, when no writer holds
        the lock (`heal`): the snapshot read is the same either way, but raw readers of the
        latest versions then see it too. A writer holding the lock never heals here (it
        recovers)."""
        snapshot = self._committed()
        if heal and self._lock is None:
            self.heal(snapshot)
        return snapshot

    def _committed(self) -> Snapshot:
        from deltalake.exceptions import TableNotFoundError

        missing = WarehouseError(f"no warehouse at {self.root} (run `haftkhabis ingest` first)")
        if not self.exists():
            raise missing
        try:
            with self.open_table("batches") as table:
                row = self._latest_batch(table)
                latest = table.version()
        except TableNotFoundError:  # a log folder with no commit in it
            raise missing from None
        if row is None:
            return Snapshot(0, dict.fromkeys(TABLES, 0) | {"batches": latest})
        if row["schema_version"] not in READABLE_SCHEMAS:
            raise WarehouseError(
                f"{self.root} was written with schema version {row['schema_version']}; "
                f"this build reads versions {', '.join(map(str, sorted(READABLE_SCHEMAS)))}")
        # a table the batch's schema did not have yet (`LATER_TABLES`) is empty: version 0
        versions = dict.fromkeys(SNAPSHOT_TABLES, 0) | dict(row["table_versions"])
        versions["batches"] = latest
        return Snapshot(int(row["id"]), versions)

    def _latest_batch(self, table: DeltaTable) -> dict[str, Any] | None:
        """The `batches` row with the highest id, read from the one part that holds it
        (the parts' `id` statistics say which); every part only when a part has none."""
        columns = ["id", "table_versions", "schema_version"]
        actions = _add_actions(table)
        if actions.num_rows == 0:
            return None
        if "max.id" in actions.column_names and actions["max.id"].null_count == 0:
            top = pc.max(actions["max.id"])
            path = actions["path"][pc.index(actions["max.id"], top).as_py()].as_py()
            data = _read_file(self.location, self.location.join("batches", path), columns)
            data = data.filter(pc.equal(data["id"], top))
        else:
            data = table.to_pyarrow_table(columns=columns)
        if data.num_rows == 0:
            return None
        last = pc.index(data["id"], pc.max(data["id"])).as_py()
        row: dict[str, Any] = data.slice(last, 1).to_pylist()[0]
        return row

    def heal(self, snapshot: Snapshot | None = None) -> list[str]:
        """What a reader does on open: if a table's latest version is not what the
        committed batch recorded (one stat per table finds out) and no writer holds the
        lock, take it and `recover`. Never raises: a reader that cannot write (a read-only
        copy, read-only credentials) or finds a writer at work reads at the snapshot
        regardless. Returns the tables restored."""
        try:
            snapshot = snapshot or self._committed()
            # after a compact's vacuum a table is a version or two past the snapshot with
            # the same files: only a table whose files differ is worth the lock
            if all(self._tail(name, snapshot.versions.get(name, 0))[0]
                   for name in SNAPSHOT_TABLES):
                return []
            held = writer_lock.writer_lock(self.location)
            held.acquire(0.0)
        except Exception:  # busy, read-only, unreachable: read at the snapshot
            return []
        self._lock = held
        try:
            return self.recover()
        except Exception:
            return []
        finally:
            self._lock = None
            self._expected = {}
            held.release()

    def table(self, name: str, version: int | None = None) -> DeltaTable:
        """The table at `version` (None: the latest), opened for the caller to keep."""
        from deltalake import DeltaTable

        return DeltaTable(self.table_uri(name), version=version,
                          storage_options=self.location.delta_options())

    @contextlib.contextmanager
    def open_table(self, name: str, version: int | None = None) -> Iterator[DeltaTable]:
        """The table at `version` (None: the latest) for the `with` block only: one kept
        open since an earlier use in this process when there is one (`_OpenTables`), put
        back after."""
        uri = self.table_uri(name)
        if self.location.local:
            key, identity = uri, _OpenTables.identity(uri)
        else:
            key = f"{uri} at {self.location.options.get('AWS_ENDPOINT_URL', '')}"
            identity = self.location.etag(posixpath.join(uri, "_delta_log", f"{0:020d}.json"))
        table = _OPEN.take(key, identity, version) if identity is not None else None
        if table is None:
            table = self.table(name, version)
        yield table
        if identity is not None:
            _OPEN.put(key, identity, table)

    def dataset(self, name: str, version: int | None = None) -> pads.Dataset:
        """The table at `version` as a pyarrow dataset: the parts its log lists, each with
        its partition values as the fragment's guarantee.

        (`DeltaTable.to_pyarrow_dataset` also turns file statistics into guarantees, and
        reads a column that is null throughout a file as unsatisfiable, so a filtered
        scan can drop rows; listing the parts ourselves keeps scans exact.)
        """
        import pyarrow.dataset as pads

        spec = TABLES[name]
        with self.open_table(name, version) as table:
            parts = self._parts(name, table)
        paths = [self.part_fs_path(name, p) for p in parts]
        guarantees = [_partition_expression(p.partition) for p in parts]
        return pads.FileSystemDataset.from_paths(
            paths, schema=spec.schema, format=pads.ParquetFileFormat(),
            filesystem=self.location.filesystem, partitions=guarantees)

    def parts_dataset(self, name: str, parts: Sequence[PartFile]) -> pads.Dataset:
        """Some parts of `name` (written, perhaps not committed) as a dataset of its file
        columns."""
        import pyarrow.dataset as pads

        return pads.dataset([self.part_fs_path(name, p) for p in parts],
                            schema=TABLES[name].file_schema, format="parquet",
                            filesystem=self.location.filesystem)

    def latest_version(self, name: str) -> int:
        """`name`'s latest version."""
        with self.open_table(name) as table:
            return table.version()

    def committed_files(self, name: str, version: int | None = None) -> list[PartFile]:
        """The parts of `name` at `version` (None: the latest), with their partition values."""
        with self.open_table(name, version) as table:
            return self._parts(name, table)

    def committed_actions(self, name: str, version: int) -> list[tuple[PartFile, dict[str, Any]]]:
        """The parts of `name` at `version`, each with its add action (flattened: the
        statistics as `min.COLUMN`, `max.COLUMN`, `null_count.COLUMN`, `merged_stats`)."""
        with self.open_table(name, version) as table:
            rows = _add_actions(table).to_pylist()
        return [(_part_of(name, row), row) for row in rows]

    @staticmethod
    def _parts(name: str, table: DeltaTable) -> list[PartFile]:
        return [_part_of(name, row) for row in _add_actions(table).to_pylist()]

    # ------------------------------------------------------------------ writing

    def recover(self) -> list[str]:
        """Undo whatever a killed writer left: tables whose latest version is not what the
        committed snapshot recorded are restored to it (a Delta RESTORE), staging folders
        and temporary parts are removed. Call with the lock held: it also records the
        version of every table this writer's commits will land on. Returns the tables
        restored."""
        from deltalake import CommitProperties

        self.ensure()
        snapshot = self._committed()
        restored = []
        expected = {"batches": snapshot.versions["batches"]}
        for name in SNAPSHOT_TABLES:
            pinned = snapshot.versions.get(name, 0)
            whole, latest = self._tail(name, pinned)
            if not whole:
                table = self.table(name)
                table.restore(pinned, commit_properties=CommitProperties(custom_metadata={
                    "haftkhabis.operation": "recover", "haftkhabis.restored_to": pinned}))
                latest = self.table(name).version()
                restored.append(name)
            expected[name] = latest
        staging = self.location.join(STAGING)
        if restored or next(self.location.list(staging), None) is not None:
            self._remove_orphans(snapshot.batch)
        self.location.delete_tree(staging)
        if self.location.local:  # an S3 part is one PUT: there is no half-written object
            for name in TABLES:
                for tmp in self.location.list(self.table_uri(name), suffix=".tmp", hidden=True):
                    self.location.delete(tmp)
        self._expected = expected
        return restored

    def _log_entry(self, name: str, version: int) -> str:
        return self.location.join(name, "_delta_log", f"{version:020d}.json")

    def _tail(self, name: str, pinned: int) -> tuple[bool, int]:
        """Whether the latest version of `name` names the very files version `pinned`
        names, and that latest version. Read from the commits after `pinned` (none, one
        stat, in the usual case): a commit that adds or removes a file makes it differ (an
        OPTIMIZE left by a compact that died before its row too: the same rows, but the
        next batch's removes name the recorded version's files), a RESTORE to `pinned`
        makes it equal again, and commits that name no file (VACUUM START and END) leave
        it as it was."""
        whole, version = True, pinned
        while self.location.exists(self._log_entry(name, version + 1)):
            version += 1
            info, files = self._read_log_entry(name, version)
            target = (info.get("operationParameters") or {}).get("version")
            if info.get("operation") == "RESTORE" and str(target) == str(pinned):
                whole = True
            elif files:
                whole = False
        return whole, version

    def _read_log_entry(self, name: str, version: int) -> tuple[dict[str, Any], bool]:
        """A commit's `commitInfo`, and whether it adds or removes a file."""
        path = self.location.fs_path(self._log_entry(name, version))
        with self.location.filesystem.open_input_stream(path) as stream:
            text = stream.read().decode("utf-8")
        info: dict[str, Any] = {}
        files = False
        for line in text.splitlines():
            if not line.strip():
                continue
            action = json.loads(line)
            if "commitInfo" in action:
                info = action["commitInfo"] or {}
            files = files or "add" in action or "remove" in action
        return info, files

    def _remove_orphans(self, committed: int) -> None:
        """Delete the parts of batches that never committed (numbered past `committed`):
        a killed ingest's workers may have written them, even after their coordinator
        died, and no committed snapshot can reference them. Parts of committed batches,
        and the files compaction writes, are never touched."""
        for name in TABLES:
            for uri in self.location.list(self.table_uri(name), suffix=".parquet"):
                found = _BATCH_PART.match(posixpath.basename(uri))
                if found is not None and int(found.group(1)) > committed:
                    self.location.delete(uri)

    def commit(self, name: str, adds: Sequence[PartFile], removes: Sequence[PartFile],
               batch: int, operation: str, attempt: int | None = None, *,
               data_change: bool = True) -> int:
        """One Delta transaction on `name` adding and removing parts; the new version.
        `data_change` false: the rows are the same, moved between files (a merge: Delta
        readers of changes skip such a commit).

        With the lock held, the transaction is made on the version this writer knows the
        table at (`recover` found it, or this writer's last commit made it) and lands as
        the next version or not at all: when anyone else committed to the table meanwhile,
        it raises `WriterFenced` (Delta's own put-if-absent of the version decides, and
        the commit is not rebased).

        `attempt` (unique to this try of the batch, increasing) goes in the commit as the
        version of the application transaction `APP_ID`. A commit whose outcome is
        unknown (an error after the request left) is retried only if the table's
        transaction version is not `attempt` yet, so it lands exactly once."""
        from deltalake import CommitProperties, PostCommitHookProperties, Transaction
        from deltalake.exceptions import DeltaError

        spec = TABLES[name]
        self.location.synced()  # the parts it names are on disk first
        expected = self._expected.get(name) if self._lock is not None else None
        if not adds and not removes and expected is not None:
            return expected  # nothing to commit, on the version this writer holds
        with self.open_table(name, expected) as kept:  # read, and put back, once only
            table = kept
            if not adds and not removes:
                return table.version()
            if attempt is not None and table.transaction_version(APP_ID) == attempt:
                return table.version()  # this very commit landed before (a retried call)
            self.check_lock()
            actions = [a.add_action(data_change) for a in adds] + \
                [r.remove_action(data_change) for r in removes]
            metadata: dict[str, Any] = {"haftkhabis.batch": batch, "haftkhabis.operation": operation}
            if self._lock is not None and self._lock.token is not None:
                metadata["haftkhabis.writer"] = self._lock.token  # the fencing token
            if adds and self._add_later_columns(name, table, metadata):
                if expected is not None:
                    expected += 1
                    self._expected[name] = expected
                table = self.table(name, expected)
            properties = CommitProperties(
                custom_metadata=metadata,
                app_transactions=[Transaction(APP_ID, attempt)] if attempt is not None else None,
                max_commit_retries=0 if expected is not None else None)
            for tries in range(1, COMMIT_TRIES + 1):
                try:
                    table.create_write_transaction(
                        actions, mode="append", schema=spec.schema,
                        partition_by=list(spec.partition_by) or None,
                        commit_properties=properties,
                        post_commithook_properties=PostCommitHookProperties(create_checkpoint=False))
                    version = expected + 1 if expected is not None else self.table(name).version()
                    break
                except (OSError, DeltaError):
                    latest = self.table(name)
                    if attempt is not None and latest.transaction_version(APP_ID) == attempt:
                        version = latest.version()
                        break  # it landed; the reply was what failed
                    if expected is not None and latest.version() > expected:
                        raise WriterFenced(
                            f"{self.root}: table {name} is at version {latest.version()}, not "
                            f"{expected} as this writer left it: another writer committed to it; "
                            "this writer commits nothing more (run it again)") from None
                    if tries == COMMIT_TRIES:
                        raise
                    time.sleep(0.2 * 2**tries)
                    table = self.table(name, expected)
        if expected is not None:
            self._expected[name] = version
        self.checkpoint(name, version)
        return version

    def _add_later_columns(self, name: str, table: DeltaTable, metadata: dict[str, Any]) -> bool:
        """Give a table created before some of its columns were declared (`LATER_COLUMNS`:
        a warehouse of an older schema) those columns, before parts holding them are
        committed; whether it had to. Without them in the table's own schema, a compact
        (delta-rs's optimize, which reads that schema) would drop them from every part it
        merges. They are added nullable: Delta adds no required column to rows that exist,
        and the older parts read them as null."""
        from deltalake import CommitProperties, Field

        later = LATER_COLUMNS.get(name)
        if later is None:
            return False
        have = {f.name for f in table.schema().fields}
        missing = [n for n in later[1] if n not in have]
        if not missing:
            return False
        spec = TABLES[name]
        table.alter.add_columns(
            [Field.from_arrow(pa.field(n, spec.schema.field(n).type, nullable=True)) for n in missing],
            commit_properties=CommitProperties(custom_metadata={
                **metadata, "haftkhabis.operation": f"add columns of schema {later[0]}"}))
        return True

    def checkpoint(self, name: str, version: int, *, force: bool = False) -> None:
        """A Delta checkpoint of `name` at `version` when it is a multiple of
        `CHECKPOINT_EVERY` (or `force`). Best effort: a checkpoint only saves readers time,
        and the commit it follows has landed whatever happens here."""
        from deltalake.exceptions import DeltaError

        if force or version % CHECKPOINT_EVERY == 0:
            with contextlib.suppress(OSError, DeltaError), self.open_table(name, version) as table:
                table.create_checkpoint()

    def commit_batch(self, row: dict[str, Any], versions: dict[str, int],
                     attempt: int | None = None, prefix: str | None = None) -> int:
        """Append the batch's row to `batches`: the commit point of the whole batch. It
        lands on the `batches` version this writer read when it took the lock, so no two
        writers ever commit the same batch number (`WriterFenced`). The row's part is
        named by `prefix` (the batch's own, `bNNNNNN-TOKEN`; a fresh one by default), so
        two writers' rows never share a file name."""
        from deltalake.exceptions import DeltaError

        missing = [n for n in SNAPSHOT_TABLES if n not in versions]
        if missing:  # a writer that forgot a table would drop it from the snapshot
            raise WarehouseError(f"batch {row['id']} records no version of {', '.join(missing)}; "
                                 "every table's version must be carried over")
        row = dict(row, table_versions=list(versions.items()), schema_version=SCHEMA_VERSION)
        writer = PartWriter(self, "batches", prefix=f"{prefix}-row" if prefix
                            else f"b{row['id']:06d}-{new_token()}")
        writer.add((), [tuple(row[f.name] for f in TABLES["batches"].file_schema)])
        parts = writer.close()
        try:
            version = self.commit("batches", parts, [], row["id"], "batch", attempt)
        except WriterFenced:
            for part in parts:
                self.location.delete(self.part_uri("batches", part))
            raise
        if row["id"] % BATCHES_COMPACT_EVERY == 0:
            with contextlib.suppress(OSError, DeltaError, WriterFenced):
                self.optimize("batches", TARGET_FILE_SIZE, row["id"])
        return version

    def optimize(self, name: str, target_size: int, batch: int) -> dict[str, Any]:
        """Merge the small parts of `name` (Delta `optimize`: per partition, parts under
        `target_size` binned up to it; a partition with a single small part is left as
        it is). The rows are the same, so readers of any version are unaffected. Fenced
        like a commit: this writer's lock is checked, and the table must be where this
        writer left it before and one version further after."""
        from deltalake import CommitProperties

        self.check_lock()
        expected = self._expected.get(name) if self._lock is not None else None
        with self.open_table(name) as table:
            if expected is not None and table.version() != expected:
                raise WriterFenced(f"{self.root}: table {name} is at version {table.version()}, "
                                   f"not {expected}: another writer committed to it")
            metrics: dict[str, Any] = table.optimize.compact(
                target_size=target_size, commit_properties=CommitProperties(custom_metadata={
                    "haftkhabis.batch": batch, "haftkhabis.operation": "compact"}))
            version = table.version()  # brought up to date by the compaction itself
        if expected is not None:
            if version > expected + 1:
                raise WriterFenced(f"{self.root}: table {name} moved under this compaction")
            self._expected[name] = version
        return metrics

    def note_version(self, name: str) -> int:
        """Record `name`'s latest version as where this writer left it (after a Delta
        operation of its own that is not a `commit`: a vacuum); that version."""
        version = self.latest_version(name)
        if self._lock is not None:
            self._expected[name] = version
        return version

    def remove_parts(self, prefix: str) -> int:
        """Delete this writer's parts (named `part-PREFIX…`, temporary ones too) that the
        latest version of their table does not name: what a failed batch wrote. Parts a
        table's latest version names stay (a commit that could not be undone keeps its
        files). The number deleted."""
        deleted = 0
        for name in TABLES:
            uri = self.table_uri(name)
            found = [u for u in self.location.list(uri)
                     if posixpath.basename(u).startswith((f"part-{prefix}", f".part-{prefix}"))]
            if not found:
                continue
            named = {self.part_uri(name, p) for p in self.committed_files(name)}
            for part in found:
                if part not in named:
                    self.location.delete(part)
                    deleted += 1
        return deleted

    def sweep_batch(self, batch: int, folders: Mapping[str, Iterable[str]]) -> int:
        """After batch `batch` committed: delete the parts named for it (`part-bNNNNNN-…`)
        that no table's latest version names (what a cluster task left whose worker died,
        or that ran twice): the batch committed last, so every part of it that counts is
        named there. Cheap: one listing of each folder the batch's committed parts are in,
        and of `folders` (table → folders its tasks wrote to), on S3 of just the keys with
        that name prefix. The number deleted."""
        name_prefix = f"part-b{batch:06d}-"
        named: set[tuple[str, str]] = set()  # (table, part path)
        listings: list[tuple[str, str]] = []  # (table, folder)
        for name in SNAPSHOT_TABLES:
            paths = {p.path for p in self.committed_files(name)}
            named.update((name, p) for p in paths)
            where = {posixpath.dirname(p) for p in paths if posixpath.basename(p).startswith(name_prefix)}
            listings.extend((name, folder) for folder in sorted(where | set(folders.get(name, ()))))

        def strays(listing: tuple[str, str]) -> list[str]:
            name, folder = listing
            return [uri for uri in self.location.list_names(self.location.join(name, folder), name_prefix)
                    if (name, posixpath.join(folder, posixpath.basename(uri)) if folder
                        else posixpath.basename(uri)) not in named]

        # a listing waits on the store (one request each on S3, a folder per partition):
        # made side by side
        with ThreadPoolExecutor(max_workers=1 if self.location.local else 8,
                                thread_name_prefix="sweep") as pool:
            found = [uri for uris in pool.map(strays, listings) for uri in uris]
        for uri in found:
            self.location.delete(uri)
        return len(found)

    def open_batch(self, prefix: str) -> str:
        """Mark the batch `prefix` as under way (a small object in the staging prefix, which
        `recover` takes as the sign that a killed writer may have left parts): its URI, for
        the writer to delete once the batch's row is committed."""
        uri = self.location.join(STAGING, f"{prefix}.open")
        self.location.makedirs(self.location.join(STAGING))
        self.location.write_bytes(uri, b"")
        return uri

    def staging(self, token: str) -> str:
        """The URI of a staging folder for this batch (removed by `recover`)."""
        uri = self.location.join(STAGING, token)
        self.location.makedirs(uri)
        return uri


def new_attempt() -> int:
    """An attempt number for `Warehouse.commit`: unique and increasing (microseconds)."""
    return time.time_ns() // 1000


def new_token() -> str:
    return uuid.uuid4().hex[:10]


class OpenBudget:
    """The bound on the Parquet metadata that writers' open parts hold (`OPEN_CHUNKS`
    column chunks), shared by the writers given it."""

    def __init__(self, chunks: int = OPEN_CHUNKS) -> None:
        self.chunks = chunks
        self.used = 0
        self.writers: list[PartWriter] = []

    def spend(self, chunks: int) -> None:
        self.used += chunks
        while self.used > self.chunks:
            # close the open part holding the most metadata, whichever writer's it is
            best: tuple[int, PartWriter, tuple[str, ...]] | None = None
            for writer in self.writers:
                for partition, part in writer.open.items():
                    size = part.groups * len(writer.schema)
                    if best is None or size > best[0]:
                        best = (size, writer, partition)
            if best is None:
                self.used = 0
                return
            best[1]._close_part(best[2])


class PartWriter:
    """Buffered Parquet parts of one table, one open file per partition.

    Rows are tuples in `file_schema` order. Parts are written under a temporary hidden
    name and renamed when complete, so a reader or a crash never meets half a file.
    """

    def __init__(self, warehouse: Warehouse, name: str, prefix: str,
                 rows_per_group: int | None = None, rows_per_file: int = ROWS_PER_FILE,
                 budget: OpenBudget | None = None) -> None:
        self.spec: TableSpec = TABLES[name]
        self.location = warehouse.location
        self.root = warehouse.table_uri(name)
        self.schema = self.spec.file_schema
        self.prefix = prefix
        self.rows_per_group = rows_per_group or ROW_BUFFER.get(name, ROWS_PER_GROUP)
        self.rows_per_file = rows_per_file
        self.buffers: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
        self.tables: dict[tuple[str, ...], list[pa.Table]] = {}
        #: rows in `tables`, by partition
        self.pending: dict[tuple[str, ...], int] = {}
        self.open: dict[tuple[str, ...], _OpenPart] = {}
        self.done: list[PartFile] = []
        self.counter = 0
        self.buffered = 0
        #: the bound on the metadata of the open parts (this writer's own, unless shared)
        self.budget = budget if budget is not None else OpenBudget()
        self.budget.writers.append(self)

    def add(self, partition: tuple[str, ...], rows: Sequence[tuple[Any, ...]]) -> None:
        buffer = self.buffers.get(partition)
        if buffer is None:
            buffer = self.buffers[partition] = []
        buffer.extend(rows)
        self.buffered += len(rows)
        if len(buffer) >= self.rows_per_group:
            self._flush(partition)
        elif self.buffered > self.rows_per_group:
            # many partitions (a year of months × rulesets) must not each hold a row
            # group's worth of rows: memory stays bounded by one buffer per table
            largest = max(self.buffers, key=lambda p: len(self.buffers[p]))
            self._flush(largest)

    def add_table(self, partition: tuple[str, ...], data: pa.Table) -> None:
        """Append already-columnar rows (the engine's column batches, rewritten parts),
        gathered into row groups of `rows_per_group` rows."""
        if data.num_rows == 0:
            return
        if data.num_rows >= self.rows_per_group and partition not in self.tables:
            self._write(partition, data)
            return
        tables = self.tables.setdefault(partition, [])
        tables.append(data)
        if len(tables) >= COMBINE_BATCHES:
            tables[:] = [pa.concat_tables(tables).combine_chunks()]
        pending = self.pending[partition] = self.pending.get(partition, 0) + data.num_rows
        self.buffered += data.num_rows
        if pending >= self.rows_per_group:
            self._write_tables(partition)
        elif self.buffered > self.rows_per_group:
            # as in `add`: one buffer's worth across every partition, not one each
            self._write_tables(max(self.pending, key=self.pending.__getitem__))

    def add_group(self, partition: tuple[str, ...], data: pa.Table) -> None:
        """Write already-columnar rows as row groups now, not buffered: for batches that
        are gathered upstream (the engine's, `Ingestor`), where a buffer here would
        hold every row twice."""
        if data.num_rows:
            self._write(partition, data)

    def add_empty(self, partition: tuple[str, ...]) -> None:
        """A part with no rows in `partition`, once: a table made whole and empty (a
        summary with nothing to count yet) commits a version all the same, so its readers
        tell it from a table never made (version 0)."""
        if partition not in self.open:
            self._write(partition, self.schema.empty_table())

    def _write_tables(self, partition: tuple[str, ...]) -> None:
        tables = self.tables.pop(partition)
        self.buffered -= self.pending.pop(partition)
        self._write(partition, pa.concat_tables(tables))

    def _flush(self, partition: tuple[str, ...]) -> None:
        rows = self.buffers.pop(partition, None)
        if not rows:
            return
        self.buffered -= len(rows)
        columns = list(zip(*rows, strict=True))
        arrays = [pa.array(col, type=f.type) for col, f in zip(columns, self.schema, strict=True)]
        self._write(partition, pa.Table.from_arrays(arrays, schema=self.schema))

    def _write(self, partition: tuple[str, ...], data: pa.Table) -> None:
        part = self.open.get(partition)
        if part is None:
            self.counter += 1
            folder = "/".join(f"{c}={v}" for c, v in zip(self.spec.partition_by, partition,
                                                          strict=True))
            name = f"part-{self.prefix}-{self.counter:05d}.zstd.parquet"
            relative = f"{folder}/{name}" if folder else name
            part = self.open[partition] = _OpenPart(self.location, self.root, relative,
                                                    self.schema, partition, self.spec)
        groups = part.write(data)
        if part.rows >= self.rows_per_file or part.groups >= GROUPS_PER_FILE:
            self._close_part(partition)
        # bounded metadata whatever the partitions and the input
        self.budget.spend(groups * len(self.schema))

    def _close_part(self, partition: tuple[str, ...]) -> None:
        part = self.open.pop(partition)
        self.budget.used -= part.groups * len(self.schema)
        self.done.append(part.close())

    def close(self) -> list[PartFile]:
        for partition in list(self.buffers):
            self._flush(partition)
        for partition in list(self.tables):
            self._write_tables(partition)
        for partition in list(self.open):
            self._close_part(partition)
        return self.done

    def abort(self) -> None:
        for part in self.open.values():
            self.budget.used -= part.groups * len(self.schema)
            part.abort()
        self.open.clear()


@dataclass(slots=True)
class _OpenPart:
    location: Location
    root: str
    relative: str
    schema: pa.Schema
    partition: tuple[str, ...]
    spec: TableSpec
    rows: int = 0
    groups: int = 0
    writer: pq.ParquetWriter | None = None
    out: AtomicOutput | None = None
    stats: _ColumnStats = field(init=False)

    def __post_init__(self) -> None:
        self.stats = _ColumnStats(self.schema)

    def _open(self) -> pq.ParquetWriter:
        self.out = AtomicOutput(self.location, f"{self.root}/{self.relative}")
        return pq.ParquetWriter(
                self.out.stream, self.schema, compression="zstd",
                compression_level=COMPRESSION_LEVEL,
                write_statistics=[n for n in self.schema.names if n not in NO_STATISTICS],
                use_dictionary=[n for n in self.schema.names if n not in NO_DICTIONARY],
            )

    def write(self, data: pa.Table) -> int:
        """Write `data` as row groups of this part; how many."""
        if self.writer is None:
            self.writer = self._open()
        self.writer.write_table(data, row_group_size=ROWS_PER_GROUP)
        groups = -(-data.num_rows // ROWS_PER_GROUP)
        self.rows += data.num_rows
        self.groups += groups
        self.stats.update(data)
        return groups

    def close(self) -> PartFile:
        if self.writer is None:
            self.writer = self._open()
        self.writer.close()
        assert self.out is not None
        size = self.out.commit()
        partition = tuple(zip(self.spec.partition_by, self.partition, strict=True))
        return PartFile(self.relative, size, partition, self.rows,
                        self.stats.to_json(self.rows))

    def abort(self) -> None:
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
        if self.out is not None:
            self.out.abort()


def read_part(warehouse: Warehouse, name: str, part: PartFile,
              columns: list[str] | None = None) -> pa.Table:
    """A part's rows (file columns only)."""
    return _read_file(warehouse.location, warehouse.part_uri(name, part), columns)


def _part_of(name: str, action: Mapping[str, Any]) -> PartFile:
    """A committed part of `name` from its add action (`_add_actions`' row)."""
    partition = tuple((c, action[f"partition.{c}"]) for c in TABLES[name].partition_by)
    return PartFile(action["path"], action["size_bytes"], partition, action["num_records"] or 0, "")


def _add_actions(table: DeltaTable) -> pa.Table:
    """The table's add actions (its parts, with their statistics) as a pyarrow table, read
    through the Arrow stream interface (`pa.table` of them would import pandas)."""
    return pa.RecordBatchReader.from_stream(table.get_add_actions(flatten=True)).read_all()


def _read_file(location: Location, uri: str, columns: list[str] | None = None) -> pa.Table:
    """One Parquet file's columns, read as one file (`pq.read_table` would make it a
    dataset, and import pyarrow.dataset and pandas into an ingest worker)."""
    with location.filesystem.open_input_file(location.fs_path(uri)) as source:
        return pq.ParquetFile(source).read(columns=columns)


def rewrite_without(warehouse: Warehouse, name: str, parts: Iterable[PartFile],
                    drop: set[str], prefix: str) -> tuple[list[PartFile], list[PartFile]]:
    """Parts of `name` holding rows of games in `drop`: rewritten without them.

    Returns (new parts, replaced parts). A part left empty is replaced by nothing.
    """
    if not drop:
        return [], []
    value_set = pa.array(sorted(drop), type=pa.string())
    writer = PartWriter(warehouse, name, prefix)
    replaced: list[PartFile] = []
    for part in parts:
        ids = read_part(warehouse, name, part, ["game_id"])["game_id"]
        hit = pc.is_in(ids, value_set=value_set)
        if not pc.any(hit).as_py():
            continue
        replaced.append(part)
        kept = read_part(warehouse, name, part).filter(pc.invert(hit))
        if kept.num_rows:
            writer.add_table(tuple(v for _, v in part.partition), kept)
    return writer.close(), replaced


def _partition_expression(partition: Sequence[tuple[str, str | None]]) -> pads.Expression:
    import pyarrow.dataset as pads

    expression = pads.scalar(True)
    for column, value in partition:
        field_ = pads.field(column)
        expression = expression & (field_.is_null() if value is None else field_ == value)
    return expression


#: string statistics are cut to this many characters (the max then bumped past the cut)
STATS_PREFIX = 32


def merged_stats(name: str, actions: Sequence[Mapping[str, Any]]) -> str:
    """The Delta statistics of one part holding every row of the parts whose add actions
    (`Warehouse.committed_actions`) are `actions`: their records and nulls summed, the
    least minimum and the greatest maximum of each column, bounded as a part's own are
    (`_ColumnStats`); a column whose nulls a part does not record gets no count."""
    stats = _ColumnStats(TABLES[name].file_schema)
    rows = sum(int(action.get("num_records") or 0) for action in actions)
    for column in stats.columns:
        nulls: list[int | None] = [action.get(f"null_count.{column}") for action in actions]
        known = [n for n in nulls if n is not None]
        if len(known) == len(nulls):
            stats.nulls[column] = sum(known)
        else:
            del stats.nulls[column]
        if column not in stats.ranged:
            continue
        for key, keep in ((f"min.{column}", stats.low), (f"max.{column}", stats.high)):
            found = [_stat_value(a[key]) for a in actions if a.get(key) is not None]
            if found:
                keep[column] = min(found) if keep is stats.low else max(found)
    return stats.to_json(rows)


def _stat_value(value: Any) -> Any:
    """A statistic as `_ColumnStats` holds it (a timestamp as microseconds since the epoch)."""
    if isinstance(value, datetime):
        return (value - _EPOCH) // timedelta(microseconds=1)
    return value


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class _ColumnStats:
    """Delta file statistics (numRecords, minValues, maxValues, nullCount) for every
    flat column, as Spark and delta-rs read them: strings cut to a prefix (the max made an
    upper bound), timestamps to milliseconds (the min floored, the max ceiled)."""

    def __init__(self, schema: pa.Schema) -> None:
        self.columns = [f.name for f in schema if not pa.types.is_nested(f.type)]
        self.ranged = {f.name for f in schema
                       if not pa.types.is_nested(f.type) and not pa.types.is_binary(f.type)}
        self.types = {f.name: f.type for f in schema}
        self.low: dict[str, Any] = {}
        self.high: dict[str, Any] = {}
        self.nulls: dict[str, int] = dict.fromkeys(self.columns, 0)

    def update(self, data: pa.Table) -> None:
        for name in self.columns:
            column = data[name]
            self.nulls[name] += column.null_count
            if column.null_count == len(column) or name not in self.ranged:
                continue
            if pa.types.is_timestamp(column.type):
                column = column.cast(pa.int64())
            bounds = pc.min_max(column).as_py()
            low, high = bounds["min"], bounds["max"]
            if name not in self.low or low < self.low[name]:
                self.low[name] = low
            if name not in self.high or high > self.high[name]:
                self.high[name] = high

    def to_json(self, rows: int) -> str:
        low = {n: self._bound(n, v, upper=False) for n, v in self.low.items()}
        high = {n: self._bound(n, v, upper=True) for n, v in self.high.items()}
        return json.dumps({"numRecords": rows, "minValues": low, "maxValues": high,
                           "nullCount": self.nulls}, ensure_ascii=False)

    def _bound(self, name: str, value: Any, *, upper: bool) -> Any:
        kind = self.types[name]
        if pa.types.is_timestamp(kind):
            millis = -(-value // 1000) if upper else value // 1000
            moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
            return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"
        if isinstance(value, str) and len(value) > STATS_PREFIX:
            cut = value[:STATS_PREFIX]
            return cut + "\U0010ffff" if upper else cut
        return value
