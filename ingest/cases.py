"""The support desk's cases: opened on a game's step, annotated, tagged and decided, kept in
the warehouse's `cases` table (`ingest.schema.CASES`).

A write is a batch of its own, committed as every batch is (`ingest.store`): under the
warehouse's writer lock (waiting for an ingest or a compact that holds it), after
`recover`, a part written by the store's own `PartWriter`, one Delta commit on `cases`
fenced on the version this writer found, then the `batches` row (kind `case`) that records
every table's version: the others' as the snapshot had them. An ingest committing at the
same time therefore either committed before the case's lock was taken (and the case's row
carries its versions over) or waits for it (and carries the case's version over): neither
loses the other's batch.

Nothing is rewritten: each write appends the whole case as it now stands (its next
revision); a case is its latest revision, and the revisions before it are its history (who
took which decision, when). Reading cases is the read model's (`ingest.read.cases`).
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import pyarrow.compute as pc

from engine import ENGINE_VERSION
from ingest.schema import SNAPSHOT_TABLES, TABLES
from ingest.storage import Location
from ingest.store import (
    PartWriter,
    Snapshot,
    Warehouse,
    WarehouseError,
    WriterFenced,
    new_attempt,
    new_token,
)

#: seconds a case write waits for another writer's lock (an ingest's batch, a compact)
LOCK_WAIT = 60.0
#: what a case may hold: tags (each a short word), a note, a decision
MAX_TAGS = 16
TAG = re.compile(r"^[\w.:-]{1,40}$")
MAX_NOTE = 4_000
MAX_DECISION = 1_000
MAX_NAME = 120
CASE_ID = re.compile(r"^case-[0-9a-f]{12}$")


class CaseError(ValueError):
    """A case cannot be written as asked: what was expected, and what was found."""


class CaseNotFound(CaseError):
    """No case with that id in the warehouse."""


@dataclass(frozen=True, slots=True)
class Note:
    at: datetime
    by: str
    text: str


@dataclass(frozen=True, slots=True)
class Case:
    """A case as its latest revision holds it."""

    case_id: str
    revision: int
    game: str
    hand: int | None
    seq: int | None
    player: str | None
    tags: tuple[str, ...]
    notes: tuple[Note, ...]
    decision: str | None
    decided_by: str | None
    decided_at: datetime | None
    opened_by: str
    opened_at: datetime
    updated_by: str
    updated_at: datetime
    batch: int = 0  # the warehouse batch that committed this revision

    @property
    def status(self) -> str:
        return "decided" if self.decision else "open"

    def row(self) -> tuple[Any, ...]:
        """The revision as a `cases` row, in the table's column order."""
        values = {
            "case_id": self.case_id, "revision": self.revision, "game_id": self.game,
            "hand": self.hand, "seq": self.seq, "player": self.player, "tags": list(self.tags),
            "notes": [{"at": n.at, "by": n.by, "text": n.text} for n in self.notes],
            "decision": self.decision, "decided_by": self.decided_by, "decided_at": self.decided_at,
            "opened_by": self.opened_by, "opened_at": self.opened_at,
            "updated_by": self.updated_by, "updated_at": self.updated_at, "batch": self.batch,
        }
        return tuple(values[f.name] for f in TABLES["cases"].file_schema)

    @classmethod
    def of_row(cls, row: Mapping[str, Any]) -> Case:
        """A case from a `cases` row (a dict of its columns)."""
        notes = tuple(Note(_utc(n["at"]), n["by"] or "", n["text"] or "") for n in row["notes"] or [])
        return cls(row["case_id"], int(row["revision"]), row["game_id"], row["hand"], row["seq"],
                   row["player"], tuple(row["tags"] or ()), notes, row["decision"], row["decided_by"],
                   _utc(row["decided_at"]) if row["decided_at"] is not None else None,
                   row["opened_by"], _utc(row["opened_at"]), row["updated_by"], _utc(row["updated_at"]),
                   int(row["batch"]))


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _now() -> datetime:
    # microseconds: what the table's timestamps hold, so a case written and read back is equal
    return datetime.now(UTC)


def new_case_id() -> str:
    return f"case-{secrets.token_hex(6)}"


def clean_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Tags as stored: trimmed, lower case, each once, in the order given."""
    out: list[str] = []
    for raw in tags:
        tag = raw.strip().lower()
        if not tag:
            continue
        if not TAG.match(tag):
            raise CaseError(f"a tag is 1–40 letters, digits or . _ : - (no spaces); got {raw!r}")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise CaseError(f"a case holds at most {MAX_TAGS} tags; got {len(out)}")
    return tuple(out)


def _name(by: str) -> str:
    name = " ".join(by.split())
    if not name or len(name) > MAX_NAME:
        raise CaseError(f"who writes the case is named in 1–{MAX_NAME} characters; got {by!r}")
    return name


def _text(text: str | None, limit: int, what: str) -> str | None:
    if text is None:
        return None
    text = text.strip()
    if len(text) > limit:
        raise CaseError(f"a {what} is at most {limit:,} characters; got {len(text):,}")
    return text or None


@dataclass(frozen=True, slots=True)
class Draft:
    """A case to open: the game and step it is about, whose complaint it is, the first
    note and tags."""

    game: str
    hand: int | None = None
    seq: int | None = None
    player: str | None = None
    tags: Sequence[str] = ()
    note: str | None = None
    case_id: str = field(default_factory=new_case_id)


@dataclass(frozen=True, slots=True)
class Change:
    """A later write to a case: a note added, the tags replaced, a decision taken (each
    None: left as it is)."""

    note: str | None = None
    tags: Sequence[str] | None = None
    decision: str | None = None


def open_case(warehouse: str | Location, draft: Draft, by: str, *,
              storage_options: Mapping[str, str] | None = None, wait: float = LOCK_WAIT) -> Case:
    """Open a case (its revision 1) and commit it as a batch; the case as committed. The
    game, hand and seq are the caller's to check against the warehouse (the service and the
    desk do, with the replay at hand)."""
    who = _name(by)
    note = _text(draft.note, MAX_NOTE, "note")
    if not CASE_ID.match(draft.case_id):
        raise CaseError(f"a case id is case- and 12 hex digits; got {draft.case_id!r}")
    if not draft.game.strip():
        raise CaseError("a case is about a game: its id is empty")
    now = _now()
    case = Case(draft.case_id, 1, draft.game.strip(), draft.hand, draft.seq,
                (draft.player or "").strip() or None, clean_tags(draft.tags),
                (Note(now, who, note),) if note else (), None, None, None, who, now, who, now)

    def opened(current: Case | None) -> Case:
        if current is not None:
            raise CaseError(f"a case {draft.case_id} exists already")
        return case

    return _write(Warehouse(warehouse, storage_options), draft.case_id, opened, wait)


def update_case(warehouse: str | Location, case_id: str, change: Change, by: str, *,
                storage_options: Mapping[str, str] | None = None, wait: float = LOCK_WAIT) -> Case:
    """Write the case's next revision (a note, new tags, a decision and who took it) and
    commit it as a batch; the case as committed. CaseNotFound when there is none."""
    who = _name(by)
    note = _text(change.note, MAX_NOTE, "note")
    decision = _text(change.decision, MAX_DECISION, "decision")
    tags = clean_tags(change.tags) if change.tags is not None else None
    if note is None and decision is None and tags is None:
        raise CaseError("a change to a case adds a note, sets its tags or takes a decision; none was given")

    def changed(current: Case | None) -> Case:
        if current is None:
            raise CaseNotFound(f"no case {case_id!r} in the warehouse")
        now = _now()
        updated = replace(current, revision=current.revision + 1, updated_by=who, updated_at=now)
        if note is not None:
            updated = replace(updated, notes=(*current.notes, Note(now, who, note)))
        if tags is not None:
            updated = replace(updated, tags=tags)
        if decision is not None:
            updated = replace(updated, decision=decision, decided_by=who, decided_at=now)
        return updated

    return _write(Warehouse(warehouse, storage_options), case_id, changed, wait)


def current_case(store: Warehouse, snapshot: Snapshot, case_id: str) -> Case | None:
    """The case's latest revision at `snapshot` (read straight from the table's parts: the
    writer's view, under its lock)."""
    version = snapshot.versions.get("cases", 0)
    if version == 0:
        return None
    data = store.dataset("cases", version).to_table(
        filter=pc.field("case_id") == case_id)
    if data.num_rows == 0:
        return None
    latest = pc.index(data["revision"], pc.max(data["revision"])).as_py()
    return Case.of_row(data.slice(latest, 1).to_pylist()[0])


def _write(store: Warehouse, case_id: str, make: Callable[[Case | None], Case], wait: float) -> Case:
    """One case revision as one batch, by the warehouse's lock and commit protocol."""
    if not store.location.exists(store.location.join("batches", "_delta_log")):
        raise WarehouseError(f"no warehouse at {store.root} (run `haftkhabis ingest` first)")
    with store.lock(wait=wait):
        store.recover()  # also creates the `cases` table in a warehouse made before it
        snapshot = store.snapshot()
        batch = snapshot.batch + 1
        case = replace(make(current_case(store, snapshot, case_id)), batch=batch)
        prefix = f"b{batch:06d}-{new_token()}"
        attempt = new_attempt()
        # as an ingest's: a sign for `recover` that parts of this batch may be lying about
        open_batch = store.open_batch(prefix)
        try:
            writer = PartWriter(store, "cases", prefix)
            writer.add((), [case.row()])
            parts = writer.close()
            versions = {name: snapshot.versions[name] for name in SNAPSHOT_TABLES}
            versions["cases"] = store.commit("cases", parts, [], batch, "case", attempt)
            now = _now()
            store.commit_batch({
                "id": batch, "kind": "case", "started": case.updated_at, "ended": now, "files": [],
                "lines": 0, "games_new": 0, "games_updated": 0, "games_unchanged": 0,
                "violations": 0, "errors": 0, "workers": 1, "engine_version": ENGINE_VERSION,
            }, versions, attempt, prefix)
        except BaseException as exc:
            # undo what this write committed (unless another writer took over: then the
            # tables are its), and delete its parts; the next writer's `recover` does the rest
            if not isinstance(exc, WriterFenced):
                with contextlib.suppress(Exception):
                    store.check_lock()
                    store.recover()
            with contextlib.suppress(Exception):
                store.remove_parts(prefix)
            raise
        store.location.delete(open_batch)
    return case
