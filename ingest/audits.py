"""The warehouse's stored audit reports: a deal or pair audit made once, read by every page.

At a million hands the deal audit takes about a minute and the pair audit two (docs/
fairplay.md): too long for a page or an API answer to make while someone waits.
`haftkhabis audit deals|pairs --store` keeps the report it made under
`<warehouse>/audits/`, one JSON file per kind of audit and its parameters (the
filters, the level, the permutations), written atomically through the warehouse's
`Location` (a local folder or an `s3://` prefix alike), with the versions of the game
tables it was made from. `load` gives it back with whether it is *current*: made from the
tables the reader sees (a case written changes none of them; an ingest or a compact does).
A stale report is still shown, said to be stale, until someone audits again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal

import orjson
import pyarrow.fs as pafs

from ingest import read
from ingest.schema import GAME_TABLES
from ingest.storage import AtomicOutput

FOLDER = "audits"
Kind = Literal["deals", "pairs"]
#: the largest report file `load` reads (a pair audit of a million hands is a few MB)
MAX_REPORT_BYTES = 256 * 2**20


@dataclass(frozen=True, slots=True)
class Params:
    """What a report answers: its kind, filters, level (and the pair audit's relabellings)."""

    kind: Kind
    build: str | None = None
    ruleset: str | None = None
    since: date | str | None = None  # kept as ISO text (a date or a moment)
    level: float = 0.01
    permutations: int | None = None  # the pair audit's

    def __post_init__(self) -> None:
        object.__setattr__(self, "since", read.since_text(self.since))  # one key for a date and its text

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "build": self.build, "ruleset": self.ruleset, "since": self.since,
                "level": self.level,
                "permutations": self.permutations}


@dataclass(frozen=True, slots=True)
class Stored:
    """A stored report, the table versions and batch it was made from, and whether the
    reader's snapshot has the same game tables (`current`)."""

    params: Params
    report: dict[str, Any]
    made_from: dict[str, int]
    batch: int
    made_at: datetime
    seconds: float
    current: bool


def made_from(reader: read.Reader) -> dict[str, int]:
    """The versions of the game tables the reader sees (what an audit reads)."""
    return {t: reader.snapshot.versions.get(t, 0) for t in GAME_TABLES}


def _uri(reader: read.Reader, params: Params) -> str:
    key = hashlib.sha256(orjson.dumps(params.to_json(), option=orjson.OPT_SORT_KEYS)).hexdigest()[:24]
    return reader.location.join(FOLDER, f"{params.kind}-{key}.json")


def store(reader: read.Reader, params: Params, report: dict[str, Any], seconds: float) -> str:
    """Keep `report`, made by `params` from the reader's snapshot in `seconds`; its URI. The
    previous report of the same parameters is replaced whole (a reader sees one or the
    other)."""
    body = orjson.dumps({"params": params.to_json(), "made_from": made_from(reader), "batch": reader.batch,
                         "made_at": datetime.now(UTC).isoformat(), "seconds": seconds, "report": report},
                        option=orjson.OPT_SERIALIZE_NUMPY)
    uri = _uri(reader, params)
    out = AtomicOutput(reader.location, uri)
    try:
        out.stream.write(body)
        out.commit()
    except BaseException:
        out.abort()
        raise
    return uri


def stamp(reader: read.Reader, params: Params) -> tuple[int, float] | None:
    """The stored report's size and modification time (None: none stored): what a cache of
    `load` is keyed by, so that a report stored again is read again."""
    info = reader.location.filesystem.get_file_info(reader.location.fs_path(_uri(reader, params)))
    if info.type != pafs.FileType.File:
        return None
    return int(info.size or 0), float(info.mtime_ns or 0) / 1e9


def load(reader: read.Reader, params: Params) -> Stored | None:
    """The stored report of `params` (None: none was stored, or the file is not one of
    ours or larger than MAX_REPORT_BYTES)."""
    location = reader.location
    uri = _uri(reader, params)
    try:
        if location.size(uri) > MAX_REPORT_BYTES:
            return None
        with location.filesystem.open_input_stream(location.fs_path(uri)) as source:
            raw = source.read(MAX_REPORT_BYTES + 1)
        if len(raw) > MAX_REPORT_BYTES:
            return None
        body = orjson.loads(raw)
        versions = {str(k): int(v) for k, v in body["made_from"].items()}
        return Stored(params=params, report=body["report"], made_from=versions, batch=int(body["batch"]),
                      made_at=datetime.fromisoformat(body["made_at"]), seconds=float(body["seconds"]),
                      current=versions == made_from(reader))
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
