"""Spool folders a killed ingest left in $TMPDIR are swept at the next start, only those
whose owner process is dead (issue #34: "SIGKILLed ingests leave `haftkhabis-*` spool
folders in `$TMPDIR` (2 after 31 kills)")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ingest.spools import spool_folder, sweep_stale


def dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_only_folders_of_dead_owners_are_swept(tmp_path: Path) -> None:
    dead = tmp_path / f"haftkhabis-spool-{dead_pid()}-abc"
    live = tmp_path / f"haftkhabis-shard-{os.getpid()}-def"
    unnamed = tmp_path / "haftkhabis-xyz"  # an older folder, no owner in its name
    other = tmp_path / "something-else-1-2"
    for folder in (dead, live, unnamed, other):
        folder.mkdir()
        (folder / "shard-0.spool").write_bytes(b"x" * 100)
    assert sweep_stale(str(tmp_path)) == [str(dead)]
    assert not dead.exists() and live.exists() and unnamed.exists() and other.exists()


def test_a_spool_folder_is_named_for_its_owner() -> None:
    folder = spool_folder("spool")
    try:
        assert Path(folder).name.startswith(f"haftkhabis-spool-{os.getpid()}-")
        assert sweep_stale(str(Path(folder).parent)).count(folder) == 0
    finally:
        os.rmdir(folder)


def test_a_killed_ingest_leaves_a_folder_the_next_start_removes(tmp_path: Path) -> None:
    """A process that made a spool folder and was SIGKILLed: the folder outlives it, and
    `sweep_stale` removes it."""
    script = ("import os, signal, sys; from ingest.spools import spool_folder; "
              "print(spool_folder('spool'), flush=True); os.kill(os.getpid(), signal.SIGKILL)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(tmp_path)}, check=False,
                          cwd=Path(__file__).resolve().parents[2])
    left = Path(done.stdout.strip())
    assert done.returncode == -9 and left.is_dir() and left.parent == tmp_path
    assert sweep_stale(str(tmp_path)) == [str(left)]
    assert not left.exists()
