"""Finding log files and reading their lines: directories, gzip, standard input.

Bad input never raises out of here: a file that cannot be opened or a gzip stream that
breaks off yields a `LineError` in place of lines, so the caller reports it and goes on.
"""

from __future__ import annotations

import gzip
import io
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from engine._core import DEFAULT_MAX_LINE_BYTES

LOG_SUFFIXES = (".jsonl", ".ndjson", ".log")
GZIP_MAGIC = b"\x1f\x8b"
STDIN = "-"


class InputPathError(Exception):
    """A path given on the command line does not exist (the validator exits with 2)."""


@dataclass(frozen=True, slots=True)
class LineError:
    """A file (or the rest of one) that could not be read."""

    file: str
    line: int | None
    message: str


def is_log_name(name: str) -> bool:
    base = name[:-3] if name.endswith(".gz") else name
    return base.endswith(LOG_SUFFIXES)


def expand_paths(paths: list[str]) -> list[str]:
    """Files to read, in input order: explicit files as given, directories recursively
    (their log files in path order). Raises InputPathError for a missing path."""
    files: list[str] = []
    for raw in paths:
        if raw == STDIN:
            files.append(STDIN)
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                str(p) for p in path.rglob("*") if p.is_file() and is_log_name(p.name)
            )
            files.extend(found)
        elif path.exists():
            files.append(raw)
        else:
            raise InputPathError(f"no such file or directory: {raw}")
    return files


def _open(file: str) -> BinaryIO:
    if file == STDIN:
        return sys.stdin.buffer
    handle: BinaryIO = open(file, "rb")  # noqa: SIM115 - closed by the caller
    head = handle.peek(2)[:2] if isinstance(handle, io.BufferedReader) else b""
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=handle, mode="rb")  # type: ignore[return-value]
    return handle


def read_lines(file: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
               ) -> Iterator[tuple[int, bytes] | LineError]:
    """(line number, raw line without its ending) for each non-blank line, 1-based
    physical numbering; a LineError where reading fails, and for a line longer than
    `max_line_bytes` (read past, never held whole; reading goes on after it)."""
    try:
        stream = _open(file)
    except OSError as exc:
        yield LineError(file, None, f"cannot open: {exc.strerror or exc}")
        return
    number = 0
    try:
        while raw := stream.readline(max_line_bytes + 3):  # the line, \r\n, and one more
            number += 1
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.endswith(b"\n") and len(raw) == max_line_bytes + 3:
                while (rest := stream.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
            line = raw.rstrip(b"\r\n")
            if len(line) > max_line_bytes:
                yield LineError(file, number, _too_long(max_line_bytes))
                continue
            if not line.strip():
                continue
            yield number, line
    except (OSError, EOFError, zlib.error) as exc:
        yield LineError(file, number + 1, f"the file breaks off after line {number}: {exc}")
    finally:
        if file != STDIN:
            stream.close()


def _too_long(max_line_bytes: int) -> str:
    """What the core's reader says of such a line (`reader::too_long_message`)."""
    return (f"the line is longer than the cap of {max_line_bytes} bytes (max_line_bytes); "
            "it was skipped unread")


def display_name(file: str) -> str:
    """How messages name a file: as it was given (a directory's files under the directory
    as given), never rewritten relative to the working directory."""
    return "<stdin>" if file == STDIN else file
