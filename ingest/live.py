"""Group commits: many small inputs — pushed bodies, lines appended to followed files —
committed together as one warehouse batch by a long-lived writer.

`commit_files` runs in the writer's process (the service keeps one alive, so its imports
and caches are paid once): the warehouse's own ingest over the group's files, in that
process (no worker processes for a batch this size), without looking up which files the
warehouse has read before (a pushed body is named by its receipt; a body sent twice is
two receipts, and its games, the same, are left unchanged). Every guarantee of
`ingest.pipeline.ingest` holds: all or nothing, a game completed when its rest arrives,
unusable lines quarantined verbatim, readers never see half a batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def commit_files(paths: Sequence[str], warehouse: str,
                 storage_options: Mapping[str, str] | None = None,
                 digests: Mapping[str, tuple[int, str]] | None = None) -> dict[str, Any]:
    """One group's files as one batch: its number, each file's status and error, and the
    batch's figures. `digests`: each file's size and sha256, when known (not read again)."""
    from ingest.pipeline import ingest

    summary = ingest(list(paths), warehouse, workers=1, force=True, storage_options=storage_options,
                     digests=digests)
    return {
        "batch": int(summary.batch),
        "files": {f["path"]: {"status": f["status"], "error": f["error"], "lines": f["lines"]}
                  for f in summary.files},
        "lines": summary.lines,
        "games": summary.games_new + summary.games_updated,
        "violations": summary.violations,
        "quarantined": summary.quarantined,
        "seconds": summary.seconds,
    }


def writer_started() -> None:
    """In the writer process, first: it dies with the process that started it (a server
    killed must not leave its writer committing behind its back), and imports what a
    commit needs, so the first group does not pay for it."""
    import ingest.summaries  # noqa: F401
    from ingest.pipeline import set_parent_death_signal

    set_parent_death_signal()
