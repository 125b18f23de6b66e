"""Local spool folders in `$TMPDIR`, and sweeping those a killed process left behind.

An ingest routes an S3 warehouse's lines to a local folder, and a cluster task fetches its
spool into one; a SIGKILL leaves the folder behind (issue #34: "SIGKILLed ingests leave
`haftkhabis-*` spool folders in `$TMPDIR` (2 after 31 kills)"). Each folder's name carries
its owner's process id, `haftkhabis-<kind>-<pid>-<random>`, so a later start can tell a
stale folder (its owner is dead) from one in use, and removes only the stale ones.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile

_NAME = re.compile(r"haftkhabis-[a-z]+-(\d+)-[^/]*")
_swept = False


def spool_folder(kind: str) -> str:
    """A new folder in `$TMPDIR` named for this process (the caller removes it)."""
    return tempfile.mkdtemp(prefix=f"haftkhabis-{kind}-{os.getpid()}-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def sweep_stale(folder: str | None = None) -> list[str]:
    """Remove the spool folders in `folder` (default `$TMPDIR`) whose owner process is
    dead; the paths removed. A folder whose name carries no process id is left alone."""
    root = folder or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        found = _NAME.fullmatch(name)
        if found is None or _alive(int(found.group(1))):
            continue
        path = os.path.join(root, name)
        if os.path.isdir(path) and not os.path.islink(path):
            with contextlib.suppress(OSError):
                shutil.rmtree(path)
                removed.append(path)
    return removed


def sweep_once() -> list[str]:
    """`sweep_stale` the first time this process calls it (a process's start-up)."""
    global _swept
    if _swept:
        return []
    _swept = True
    return sweep_stale()
