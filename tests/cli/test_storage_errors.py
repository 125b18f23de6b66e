"""Issue 14, item 12: `ingest` and `compact` on a read-only warehouse, or with the disk full,
printed an OSError traceback (exit 1, the code of "violations"). Now: one error line, exit
74 (docs/cli.md), and the warehouse as it was.

Each case runs the real command in a private mount namespace (`unshare`) over a small tmpfs,
remounted read-only or filled up: nothing outside the test's own namespace is mounted, and
the mount goes away with it. Skipped where mount namespaces are not available.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cli.warehouse_cmd import STORAGE_EXIT
from tests.dashboards.conftest import sample_lines
from tests.dashboards.loggen import dump, random_game

REPO = Path(__file__).resolve().parents[2]


def _namespaces() -> bool:
    """Whether this machine lets an unprivileged-looking process mount a tmpfs in its own
    mount namespace (`unshare -rm`)."""
    if shutil.which("unshare") is None or sys.platform != "linux":
        return False
    with tempfile.TemporaryDirectory() as target:
        probe = subprocess.run(["unshare", "-rm", "mount", "-t", "tmpfs", "tmpfs", target],
                               capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _namespaces(), reason="no mount namespaces (unshare -rm)")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A built warehouse, and a second log to ingest into it."""
    from ingest.pipeline import ingest

    root = tmp_path_factory.mktemp("storage")
    first = root / "first.jsonl"
    first.write_text("\n".join(sample_lines()) + "\n", encoding="utf-8")
    more = root / "more.jsonl"
    games = [random_game(f"t42-more-{i}", "bazito", seed=20 + i) for i in range(12)]
    more.write_text("\n".join(line for g in games for line in dump(g)) + "\n", encoding="utf-8")
    warehouse = root / "warehouse"
    ingest([str(first)], str(warehouse), workers=1)
    return warehouse, more, root


#: run in the namespace after the command: what it left in the warehouse (parts no snapshot
#: names) and a digest of every table as a raw reader of the latest version sees it
AFTERWARDS = """
import hashlib, json, sys
from tests.ingest.conftest import raw_latest, unreferenced_parts
print("left=" + json.dumps(unreferenced_parts(sys.argv[1])))
print("raw=" + hashlib.sha256(repr(raw_latest(sys.argv[1])).encode()).hexdigest())
"""


def _in_namespace(setup: str, command: list[str], mount: Path) -> subprocess.CompletedProcess[str]:
    """`setup` (shell, with $M the tmpfs) then `haftkhabis COMMAND`, in a mount namespace;
    then `AFTERWARDS` on the warehouse `$M/wh` (its lines on standard output)."""
    haftkhabis = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "cli.app", *command])
    check = " ".join(shlex.quote(a) for a in [sys.executable, "-c", AFTERWARDS])
    script = (f"set -e; M={shlex.quote(str(mount))}; mkdir -p \"$M\"; "
              f"mount -t tmpfs -o size=16m tmpfs \"$M\"; {setup}; set +e; "
              f"{haftkhabis}; echo \"exit=$?\" >&2; {check} \"$M/wh\"")
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=REPO, capture_output=True,
                          text=True, timeout=300, check=False)


def _exit(result: subprocess.CompletedProcess[str]) -> int:
    return int(result.stderr.rstrip().rsplit("exit=", 1)[1])


def _error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines()
            if line.strip() and not line.startswith("exit=")]


def _afterwards(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    found = dict(line.split("=", 1) for line in result.stdout.splitlines()
                 if line.startswith(("left=", "raw=")))
    assert set(found) == {"left", "raw"}, result.stdout + result.stderr
    return found


def _raw_digest(warehouse: Path) -> str:
    import hashlib

    from tests.ingest.conftest import raw_latest

    return hashlib.sha256(repr(raw_latest(warehouse)).encode()).hexdigest()


@pytest.mark.parametrize("command", [
    ["ingest", "MORE", "--warehouse", "WH", "--quiet", "--workers", "1"],
    ["ingest", "MORE", "--warehouse", "WH"],
    ["compact", "--warehouse", "WH", "--retain-hours", "0"],
], ids=["ingest", "ingest-progress", "compact"])
def test_read_only_warehouse(logs: tuple[Path, Path, Path], tmp_path: Path,
                             command: list[str]) -> None:
    warehouse, more, _ = logs
    mount = tmp_path / "mnt"
    args = [str(more) if a == "MORE" else str(mount / "wh") if a == "WH" else a for a in command]
    result = _in_namespace(f"cp -a {shlex.quote(str(warehouse))} \"$M/wh\"; "
                           "mount -o remount,ro \"$M\"", args, mount)
    assert _exit(result) == STORAGE_EXIT == 74, result.stderr
    errors = [line for line in _error_lines(result) if "error:" in line]
    assert len(errors) == 1, result.stderr
    assert "read-only file system" in errors[0] and "nothing was committed" in errors[0]
    assert "Traceback" not in result.stderr + result.stdout
    left = _afterwards(result)
    assert left["left"] == "[]" and left["raw"] == _raw_digest(warehouse)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_full_disk(logs: tuple[Path, Path, Path], tmp_path: Path, workers: str) -> None:
    warehouse, more, _ = logs
    mount = tmp_path / "mnt"
    fill = "dd if=/dev/zero of=\"$M/fill\" bs=4k 2>/dev/null || true"
    result = _in_namespace(f"cp -a {shlex.quote(str(warehouse))} \"$M/wh\"; {fill}",
                           ["ingest", str(more), "--warehouse", str(mount / "wh"), "--quiet",
                            "--workers", workers], mount)
    assert _exit(result) == STORAGE_EXIT, result.stderr
    lines = _error_lines(result)
    assert len(lines) == 1, result.stderr
    assert "no space left on device" in lines[0]
    assert "Traceback" not in result.stderr
    # whatever parts it wrote before the disk filled are gone, and every table, read raw
    # at its latest version, is as it was
    left = _afterwards(result)
    assert left["left"] == "[]" and left["raw"] == _raw_digest(warehouse)


def test_a_disk_that_fills_mid_batch(logs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """Room for the batch's first parts but not for all of them: the parts it wrote are
    deleted, the tables are as before."""
    warehouse, more, _ = logs
    mount = tmp_path / "mnt"
    command = ["ingest", str(more), "--warehouse", "WH", "--quiet", "--workers", "1"]
    copy = mount / "probe"
    probe = " ".join(shlex.quote(str(copy) if a == "WH" else a)
                     for a in [sys.executable, "-m", "cli.app", *command])
    # what the batch's parts add to the disk, measured on a copy in the same tmpfs (the
    # same command with nothing in its way); then only half of it is left free, so the
    # batch writes its first parts and fails on a later one, whatever its layout of the
    # moment (its parts only: the commits after them, the summaries' with them, would move
    # half of everything past the last part)
    parts = "$(find \"$M/probe\" -name '*.parquet' -print0 | du -ck --files0-from=- | tail -1 | cut -f1)"
    fill = (f"cp -a {shlex.quote(str(warehouse))} \"$M/probe\"; "
            f"before={parts}; "
            f"{probe} >/dev/null; "
            f"grown=$(( {parts} - before )); rm -rf \"$M/probe\"; "
            "test $grown -gt 32; "
            "dd if=/dev/zero of=\"$M/fill\" bs=4k "
            "count=$(( ($(df -k --output=avail \"$M\" | tail -1) - grown / 2) / 4 )) 2>/dev/null")
    result = _in_namespace(f"cp -a {shlex.quote(str(warehouse))} \"$M/wh\"; {fill}",
                           [str(mount / "wh") if a == "WH" else a for a in command], mount)
    assert _exit(result) == STORAGE_EXIT, result.stderr
    assert len(_error_lines(result)) == 1, result.stderr
    left = _afterwards(result)
    assert left["left"] == "[]" and left["raw"] == _raw_digest(warehouse)


def test_the_exit_status_is_documented() -> None:
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert str(STORAGE_EXIT) in doc


def test_a_delta_commit_refused_by_the_storage_is_told_by_its_errno() -> None:
    """deltalake raises a bare OSError when writing a commit fails (a full disk once the
    batch's parts are written), its cause only at the end of its text."""
    import errno

    from cli.warehouse_cmd import _storage_errno

    refused = OSError("Generic LocalFileSystem error\n  ↳ Unable to copy data to file\n"
                      "   ↳ No space left on device (os error 28)")
    assert _storage_errno(refused) == errno.ENOSPC
    assert _storage_errno(OSError("Generic LocalFileSystem error\n  ↳ Connection reset (os error 104)")) is None
    assert _storage_errno(OSError("Generic LocalFileSystem error")) is None
    assert _storage_errno(OSError(errno.EROFS, "Read-only file system")) == errno.EROFS
