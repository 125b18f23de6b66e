"""The native core's validator as the tests drive it: every verdict (those streamed out as
games finish and the rest at the end) and every line error."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from engine import _core


def drain(validator: _core.Validator) -> tuple[list[_core.Verdict], list[_core.ErrorInfo]]:
    """Finish `validator`: the verdicts already due, then the rest, and the line errors."""
    verdicts = validator.take_verdicts()
    verdicts.extend(validator.finish())
    return verdicts, validator.take_errors()


def validate_paths(paths: list[str]) -> tuple[list[_core.Verdict], list[_core.ErrorInfo]]:
    """Validate every game in `paths` (files, directories) as `haftkhabis validate` does."""
    validator = _core.Validator()
    validator.feed_paths(paths)
    return drain(validator)


def validate_lines(
    lines: Iterable[bytes], file: str = "t.jsonl", *, record: Collection[str] | None = None
) -> tuple[list[_core.Verdict], list[_core.ErrorInfo]]:
    """Validate raw lines (without line endings) as if read from `file`, numbered from 1."""
    validator = _core.Validator(record=record)
    for number, raw in enumerate(lines, 1):
        validator.feed_line(raw, file, number)
    return drain(validator)
