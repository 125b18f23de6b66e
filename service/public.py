"""What an answer may say of the server: no path of its file system (issue #34: "a DuckDB
error shows the server home directory's extension folder (`~/.duckdb/extensions/…`)").

Every problem the API answers passes through `public`, which replaces the server's own
folders (the warehouse, the state folder, `$TMPDIR`, the home directory, DuckDB's
extension folder) by a name for what they are. No key is an administrator's: the server's
log keeps the full message.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

#: DuckDB's extension folder and what follows it, wherever the home directory is
_EXTENSIONS = re.compile(r"(?:~|/[^\s'\"]*?)/\.duckdb/extensions(?:/[^\s'\"]*)?")


def private_roots(warehouse: str | Path, state: Path | None) -> list[tuple[str, str]]:
    """The server's folders, longest first, each with the name an answer shows instead."""
    roots: list[tuple[str, str]] = []
    if not str(warehouse).startswith("s3://"):
        roots.append((str(Path(warehouse).expanduser().resolve()), "<warehouse>"))
        roots.append((str(warehouse), "<warehouse>"))
    if state is not None:
        roots.append((str(state), "<state>"))
    roots.append((str(Path(tempfile.gettempdir()).resolve()), "<tmp>"))
    roots.append((tempfile.gettempdir(), "<tmp>"))
    roots.append((str(Path.home()), "~"))
    return sorted({r for r in roots if len(r[0]) > 1}, key=lambda r: -len(r[0]))


def public(message: str, roots: Sequence[tuple[str, str]]) -> str:
    """`message` without the server's paths."""
    message = _EXTENSIONS.sub("<duckdb extensions>", message)
    for root, name in roots:
        message = message.replace(root, name)
    return message
