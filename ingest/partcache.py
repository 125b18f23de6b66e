"""A local copy of an object-store warehouse's part files, for DuckDB's own Parquet reader.

DuckDB reads no S3 here (its `httpfs` extension is never installed), and a pyarrow dataset
registered on a connection is seen by that connection only, while every dashboard session
and API request queries on a cursor of its own. So a reader of a warehouse on S3 used to
materialise every table in memory at each opening — the service reopens after every
commit it makes: all of the warehouse read again each second, its memory growing with
the warehouse (`bench/bench_live.py --s3`: 465 MiB → 1.2 GiB in 30 s, 2.9 ms of the
server's CPU a game).

A part is written once, under a name no other part ever takes, and never rewritten (a
compaction writes new parts): a copy is good for as long as it exists. So the reader
copies the parts of the snapshot it opens that it has not copied yet — at each commit,
the batch's new parts only — and names the copies to `read_parquet` as it names a local
warehouse's parts (their hive folders kept: the partition columns come from the path).
Memory is DuckDB's scan of files again, not the warehouse's size; the disk holds the
snapshot's parts, and parts a newer snapshot dropped (a compaction's inputs) for
`KEEP_SECONDS` after a snapshot last named them (as a sweep, every `SWEEP_EVERY`
seconds, sees it), so that a reader still open on an older snapshot finds them.

Copies are made under a temporary name and renamed, so a process killed mid-copy leaves
no part that looks whole; processes sharing the folder (a dashboard and an API on one
machine) copy each part once between them, or twice at worst, never a torn one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ingest.storage import Location

#: a copy no snapshot opened since names stays this long after it was made (a reader
#: still open on an older snapshot reads it meanwhile)
KEEP_SECONDS = 3600.0
#: the folder is swept for such copies at most this often (a sweep lists every copy)
SWEEP_EVERY = 600.0
#: parts copied at once (each one GET of up to `storage.GET_CHUNK` at a time)
COPIERS = 8


def default_folder(location: Location) -> Path:
    """`$XDG_CACHE_HOME/haftkhabis/parts/<bucket>/<prefix>` (default `~/.cache/...`)."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    bucket, prefix = location.bucket_key(location.uri)
    return Path(home, "haftkhabis", "parts", bucket, *[p for p in prefix.split("/") if p])


class PartCache:
    """The copies of one warehouse's parts in `folder` (`<folder>/<table>/<path in the table>`)."""

    def __init__(self, location: Location, folder: Path | None = None) -> None:
        self.location = location
        self.root = (folder or default_folder(location)).resolve()
        self._lock = threading.Lock()
        self._swept = 0.0  # monotonic

    def local(self, table: str, uris: Sequence[str]) -> list[str]:
        """The local copies of the parts `uris` of `table` (each an object of the
        warehouse, under `<warehouse>/<table>/`), copied first where missing."""
        prefix = self.location.join(table) + "/"
        pairs = []
        for uri in uris:
            if not uri.startswith(prefix) or ".." in uri[len(prefix):].split("/"):
                raise ValueError(f"{uri}: not a part of table {table} of {self.location.uri}")
            pairs.append((uri, self.root / table / uri[len(prefix):]))
        missing = [(uri, path) for uri, path in pairs if not path.exists()]
        if missing:
            with ThreadPoolExecutor(min(COPIERS, len(missing))) as copiers:
                list(copiers.map(lambda pair: self._copy(*pair), missing))
        return [str(path) for _, path in pairs]

    def _copy(self, uri: str, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            self.location.get_file(uri, str(tmp))
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    def sweep(self, keep: set[str], *, now: float | None = None) -> int:
        """Remove the copies not in `keep` (the paths of the snapshot just opened) that no
        snapshot named for `KEEP_SECONDS` (a copy's time is that of its copy, then of the
        last sweep whose `keep` named it), and temporary files as old (a copy cut short);
        at most every `SWEEP_EVERY` seconds unless `now` is given. The count removed."""
        clock = time.monotonic()
        with self._lock:
            if now is None and clock - self._swept < SWEEP_EVERY:
                return 0
            self._swept = clock
        wall = time.time() if now is None else now
        for path in keep:  # named now: its clock starts again (a stat write a part, a sweep)
            with contextlib.suppress(FileNotFoundError):
                os.utime(path, (wall, wall))
        removed = 0
        for folder, _, names in os.walk(self.root):
            for name in names:
                path = os.path.join(folder, name)
                if path in keep:
                    continue
                try:
                    if wall - os.stat(path).st_mtime > KEEP_SECONDS:
                        os.unlink(path)
                        removed += 1
                except FileNotFoundError:
                    pass  # another process swept it
        return removed
