"""Check-a-log's work on an upload, under a budget that grows with the upload's size.

Validating or replaying runs in a child process (spawned, so the server's threads are not
forked) that may add at most `Budget.memory` bytes to its address space (`RLIMIT_AS`) and is
killed at `Budget.seconds`: one call into the native core cannot be interrupted from
Python, so a deadline in this process could not stop it. Before anything is validated the
upload is bounded by size: inflated to at most `MAX_INFLATED_BYTES`, at most
`MAX_UPLOAD_LINES` lines, at most `MAX_LISTED_ERRORS` line errors kept (all are counted).
Beyond the budget the caller gets `OverBudget` with a sentence for people.

Nothing here imports Streamlit or DuckDB (the child imports only this and the engine).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import resource
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from dashboards.settings import (
    MAX_INFLATED_BYTES,
    MAX_LINE_BYTES,
    MAX_LISTED_ERRORS,
    MAX_UPLOAD_LINES,
    UPLOAD_MAX_MEMORY,
    UPLOAD_MAX_SECONDS,
    UPLOAD_MEMORY_BASE,
    UPLOAD_MEMORY_PER_BYTE,
    UPLOAD_SECONDS_BASE,
    UPLOAD_SECONDS_PER_MB,
    UPLOAD_WORKERS,
)
from engine import replay as game_replay
from engine.replay import GameReplay

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class UploadCheck:
    """An uploaded log's verdicts, as plain rows."""

    games: list[dict[str, Any]]
    errors: list[dict[str, Any]]  # the first MAX_LISTED_ERRORS line errors
    lines: int
    problem: str | None = None  # why the upload could not be checked at all
    error_count: int = 0  # every line error, listed or not


@dataclass(frozen=True, slots=True)
class Budget:
    """What one check of an upload may use."""

    seconds: float
    memory: int  # bytes the work may add to the child's address space

    @classmethod
    def for_upload(cls, size: int) -> Budget:
        """The budget of an upload of `size` bytes (as uploaded, before any gunzip)."""
        seconds = min(UPLOAD_MAX_SECONDS, UPLOAD_SECONDS_BASE + UPLOAD_SECONDS_PER_MB * size / 1_048_576)
        memory = min(UPLOAD_MAX_MEMORY, UPLOAD_MEMORY_BASE + UPLOAD_MEMORY_PER_BYTE * size)
        return cls(seconds, memory)

    def describe(self) -> str:
        return f"{self.seconds:.0f} s and {self.memory / 1_048_576:,.0f} MB"


class OverBudget(Exception):
    """The work did not finish within its budget (the message says which part ran out)."""


# ---------------------------------------------------------------------------- the work


def check_blob(data: bytes, name: str) -> UploadCheck:
    """Every game's verdict of an upload, and its line errors (the first few listed)."""
    try:
        text = game_replay.inflate(data, MAX_INFLATED_BYTES)
    except (game_replay.UploadTooLarge, OSError, EOFError) as exc:
        return UploadCheck([], [], 0, f"{name}: {exc}")
    count = text.count(b"\n") + (0 if text.endswith(b"\n") or not text else 1)
    if count > MAX_UPLOAD_LINES:
        return UploadCheck([], [], count, f"{name} has {count:,} lines; Check a log takes at "
                           f"most {MAX_UPLOAD_LINES:,}. Validate it with `haftkhabis validate`.")
    lines = game_replay.parse_lines(text)
    del text
    verdicts, errors, error_count = game_replay.validate_lines_bounded(
        lines, name, MAX_LISTED_ERRORS, max_line_bytes=MAX_LINE_BYTES)
    games = []
    for v in verdicts:
        header = v.header() or {}
        players = header.get("players")
        games.append({
            "game": v.game,
            "ruleset": v.ruleset,
            "status": v.status,
            "violations": len(v.violations),
            "codes": ", ".join(sorted({x["code"] for x in v.violations})),
            "hands": len(v.hands or []),
            "players": len(players) if isinstance(players, list) else None,
            "winners": ", ".join(v.winners),
            "lines": v.lines,
        })
    games.sort(key=lambda g: (g["violations"] == 0, g["game"]))
    return UploadCheck(games, [dict(e) for e in errors], len(lines), None, error_count)


def replay_upload(data: bytes, name: str, game: str) -> GameReplay | None:
    """One game of an upload replayed, every step recorded."""
    return game_replay.replay_blob(game_replay.inflate(data, MAX_INFLATED_BYTES), game, name)


# ---------------------------------------------------------------------------- the budget

_SLOTS = threading.BoundedSemaphore(UPLOAD_WORKERS)  # checks running at once, all sessions


def _address_space() -> int:
    """The bytes of address space this process uses now (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _child(conn: Any, memory: int, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: no parent-death signal
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    limit = _address_space() + memory
    with contextlib.suppress(ValueError, OSError):  # no RLIMIT_AS: the deadline still holds
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        result = work(*args)
    except MemoryError:
        conn.send(("memory", None))
        return
    except Exception as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    try:
        conn.send(("done", result))
    except MemoryError:
        conn.send(("memory", None))


def run_within(budget: Budget, work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` in a child process under `budget`; `OverBudget` when it runs out of
    time or memory. `work` must be a module-level function (the child imports it)."""
    context = mp.get_context("spawn")
    with _SLOTS:
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(sender, budget.memory, work, args),
                                daemon=True, name="haftkhabis-upload-check")
        child.start()
        sender.close()
        try:
            if not receiver.poll(budget.seconds):
                raise OverBudget(f"not done within {budget.seconds:.0f} s")
            try:
                kind, payload = receiver.recv()
            except (EOFError, OSError, MemoryError):
                child.join(5)
                raise OverBudget(f"needed more than {budget.memory / 1_048_576:,.0f} MB "
                                 f"(the process stopped, exit {child.exitcode})") from None
        finally:
            if child.is_alive():
                child.kill()
            child.join()
            receiver.close()
    if kind == "memory":
        raise OverBudget(f"needed more than {budget.memory / 1_048_576:,.0f} MB")
    if kind == "error":
        raise RuntimeError(f"checking the upload failed: {payload}")
    result: T = payload
    return result
