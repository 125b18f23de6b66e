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

from collections import Counter
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
        "games_committed": committed_games(warehouse, storage_options, summary.written),
        "batch": int(summary.batch),
        "files": {f["path"]: {"status": f["status"], "error": f["error"], "lines": f["lines"]}
                  for f in summary.files},
        "lines": summary.lines,
        "games": summary.games_new + summary.games_updated,
        "violations": summary.violations,
        "quarantined": summary.quarantined,
        "seconds": summary.seconds,
    }


def committed_games(warehouse: str, storage_options: Mapping[str, str] | None,
                    written: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Each game the batch added or changed, as a live feed shows it: its id, ruleset,
    server build, status, players, hands, violation codes and how many of each (its whole
    set: a game completed by a later push brings all its violations again), read back from
    the parts the batch wrote, a few kilobytes."""
    from ingest.store import Warehouse, read_part

    store = Warehouse(warehouse, storage_options)
    codes: dict[str, list[str]] = {}
    for part in written.get("violations", ()):
        data = read_part(store, "violations", part, ["game_id", "code"])
        for game, code in zip(data["game_id"].to_pylist(), data["code"].to_pylist(), strict=True):
            codes.setdefault(game, []).append(code)
    out: list[dict[str, Any]] = []
    columns = ["game_id", "status", "players", "server_build", "hands", "complete", "end_time"]
    for part in written.get("games", ()):
        ruleset = dict(part.partition).get("ruleset")
        for row in read_part(store, "games", part, columns).to_pylist():
            end = row["end_time"]
            out.append({"game": row["game_id"], "ruleset": ruleset, "server_build": row["server_build"],
                        "status": row["status"], "complete": row["complete"], "players": row["players"] or [],
                        "hands": row["hands"], "codes": sorted(set(codes.get(row["game_id"], []))),
                        "violations": dict(Counter(codes.get(row["game_id"], []))),
                        "end_time": end.isoformat() if end is not None else None})
    return out


def writer_started() -> None:
    """In the writer process, first: it dies with the process that started it (a server
    killed must not leave its writer committing behind its back), and imports what a
    commit needs, so the first group does not pay for it."""
    import ingest.summaries  # noqa: F401
    from ingest.pipeline import set_parent_death_signal

    set_parent_death_signal()
