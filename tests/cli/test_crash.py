"""Issue 14, item 13: an internal error must never look like a verdict. `haftkhabis` exits
with a status of its own (70, docs/cli.md), says in one line that a bug was hit and where
the traceback is (a file under the system temp dir), and writes it there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli.crash import CRASH_EXIT

REPO = Path(__file__).resolve().parents[2]
BAZITO = REPO / "tests" / "engine" / "fixtures" / "fx-bazito-points.jsonl"

# a bug planted from outside (no test hook in the command): printing a verdict raises, with
# a message that carries a terminal escape
CRASHING_RUN = """
import sys
import cli.app, cli.engine_cmd

def broken(*args, **kwargs):
    raise RuntimeError("verdict printer broke\\x1b]0;title\\x07\\nsecond line")

cli.engine_cmd._verdict_lines = broken
sys.argv = ["haftkhabis", *sys.argv[1:]]
cli.app.main()
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TMPDIR=str(tmp_path))
    return subprocess.run([sys.executable, "-c", CRASHING_RUN, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_crash_has_its_own_exit_status_and_one_line(tmp_path: Path) -> None:
    result = _run(tmp_path, "validate", str(BAZITO))
    assert result.returncode == CRASH_EXIT == 70
    assert CRASH_EXIT not in (0, 1, 2)  # compliant, violations, could not run
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert "internal error" in line and "a bug" in line and "not a verdict" in line
    assert "RuntimeError: verdict printer broke" in line and "\x1b" not in line
    assert "Traceback" not in result.stderr
    reports = list(tmp_path.glob("haftkhabis-crash-*.txt"))
    assert len(reports) == 1 and str(reports[0]) in line
    text = reports[0].read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "verdict printer broke" in text
    assert "validate" in text  # the command line


def test_verdicts_keep_their_exit_statuses(tmp_path: Path) -> None:
    ok = subprocess.run([sys.executable, "-m", "cli.app", "validate", str(BAZITO)], cwd=REPO,
                        capture_output=True, text=True, timeout=120, check=False)
    missing = subprocess.run([sys.executable, "-m", "cli.app", "validate", str(tmp_path / "no")],
                             cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert ok.returncode in (0, 1) and missing.returncode == 2
    assert "internal error" not in ok.stderr + missing.stderr


def test_the_exit_status_is_documented() -> None:
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"{CRASH_EXIT}" in doc and "internal error" in doc
