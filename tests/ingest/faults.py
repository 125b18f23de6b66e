"""Fault injection for the ingest tests, by the tests' own means: the warehouse's commits
wrapped (`Warehouse.commit`, every table's one Delta transaction), never a hook in
production code.

`python -m tests.ingest.faults [--kill-at POINT] [--handshake DIR] -- ARGS…` runs
`haftkhabis ARGS…` with the commits wrapped; `wrapped_commits(…)` does it in-process.

- `--kill-at POINT` SIGKILLs the process (the ingest's coordinator; its workers die with it)
  at `after-pass` (the pass is over, its parts written, before the first table's commit),
  `after-commit:TABLE` or `before-batches` (every table committed, not the batch's row);
- `--handshake DIR`: after each data table's commit the ingest writes `committed-TABLE`
  in DIR and waits for a `seen-TABLE` there, so a test meets every step of a commit
  whatever the machine's load (no timing involved).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingest.schema import DATA_TABLES
from ingest.store import Warehouse

#: how long a held commit waits for its `seen-TABLE` before it fails the ingest (a guard
#: against a test that never answers, not a wait)
HANDSHAKE_DEADLINE = 300.0


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _handshake(folder: Path, name: str) -> None:
    (folder / f"committed-{name}").touch()
    seen = folder / f"seen-{name}"
    deadline = time.monotonic() + HANDSHAKE_DEADLINE
    while not seen.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"test handshake: no reader saw the commit of {name}")
        time.sleep(0.005)  # polling the test's answer


@contextlib.contextmanager
def wrapped_commits(kill_at: str | None = None, handshake: Path | str | None = None) -> Iterator[None]:
    """Every `Warehouse.commit` in this process goes through the faults asked for."""
    original = Warehouse.commit
    folder = Path(handshake) if handshake is not None else None

    def commit(self: Warehouse, name: str, *args: Any, **kwargs: Any) -> int:
        if (kill_at == "after-pass" and name == DATA_TABLES[0]) or \
                (kill_at == "before-batches" and name == "batches"):
            _kill()
        version = original(self, name, *args, **kwargs)
        if kill_at == f"after-commit:{name}":
            _kill()
        if folder is not None and name in DATA_TABLES:
            _handshake(folder, name)
        return version

    Warehouse.commit = commit  # type: ignore[method-assign]
    try:
        yield
    finally:
        Warehouse.commit = original  # type: ignore[method-assign]


def command(*args: str, kill_at: str | None = None, handshake: Path | str | None = None) -> list[str]:
    """The command line that runs `haftkhabis ARGS` with these faults."""
    faults = (["--kill-at", kill_at] if kill_at else []) + (["--handshake", str(handshake)] if handshake else [])
    return [sys.executable, "-m", "tests.ingest.faults", *faults, "--", *args]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.ingest.faults")
    parser.add_argument("--kill-at")
    parser.add_argument("--handshake")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    args = options.args[1:] if options.args[:1] == ["--"] else options.args
    from cli.app import main as haftkhabis

    sys.argv = ["haftkhabis", *args]
    with wrapped_commits(options.kill_at, options.handshake):
        haftkhabis()


if __name__ == "__main__":
    main()
