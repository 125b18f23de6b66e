"""One game replayed by the native core with every step recorded: what `replay`, the
dispute report and the dashboard's replay show (the same engine `validate` judges with).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import _core
from engine.events import Event, from_encoded
from engine.violations import Code, Violation


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One replayed line: the event, what it broke, and the state after it."""

    seq: int
    file: str | None
    line: int | None
    event: Event | None  # None when the line was set aside
    raw: dict[str, Any]  # the line's JSON object as read
    violations: tuple[Violation, ...]
    state: dict[str, Any] | None  # None before the first deal

    @property
    def hand(self) -> int | None:
        return self.state.get("hand") if self.state else None


@dataclass(frozen=True, slots=True)
class ReplayedGame:
    verdict: _core.Verdict
    steps: tuple[ReplayStep, ...]
    errors: tuple[_core.ErrorInfo, ...]


def _violation(info: _core.ViolationInfo) -> Violation:
    return Violation(info["seq"], Code(info["code"]), info["player"], info["message"],
                     info["file"], info["line"])


def replay_game(paths: list[str], game: str) -> ReplayedGame | None:
    """Replay `game` from `paths` (files, directories, `-`); None when no line names it.
    FileNotFoundError for a path that does not exist."""
    verdict, errors = _core.replay_game(paths, game)
    if verdict is None:
        return None
    steps = []
    for step in verdict.steps():
        encoded = step["event"]
        event = from_encoded(encoded) if encoded is not None else None
        steps.append(ReplayStep(
            step["seq"], step["file"], step["line"], event, step["raw"],
            tuple(_violation(v) for v in step["violations"]), step["state"]))
    return ReplayedGame(verdict, tuple(steps), tuple(errors))
