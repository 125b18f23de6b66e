"""The evidence bundle in the engine alone: the same case gives the same bytes, the
verifier re-judges the lines, and every kind of tampering it is meant to see is named."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from engine.bundle import BundleCase, BundleError, make_bundle, verify_bundle
from engine.replay import GameReplay
from tests.dashboards.conftest import DISPUTED, sample_log, sample_replays

__all__ = ["sample_log", "sample_replays"]  # the dashboard tests' sample, used here too

WHEN = datetime(2026, 12, 1, 10, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def lines(sample_log: Path) -> list[bytes]:
    return sample_log.read_bytes().splitlines()


def _case(replay: GameReplay, **changes: object) -> BundleCase:
    flagged = replay.next_violation(None)
    assert flagged is not None
    fields: dict[str, object] = {"case_id": "case-0123456789ab", "game": DISPUTED, "hand": flagged.hand,
                                 "seq": flagged.seq, "player": "bita", "updated_at": WHEN}
    return BundleCase(**(fields | changes))  # type: ignore[arg-type]


def _rezip(data: bytes, change: dict[str, bytes | None]) -> bytes:
    archive = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as copy:
        for name in archive.namelist():
            body = change.get(name, archive.read(name))
            if body is not None:
                copy.writestr(name, body)
        for name, body in change.items():
            if name not in archive.namelist() and body is not None:
                copy.writestr(name, body)
    return out.getvalue()


def test_the_same_case_the_same_bytes_and_it_verifies(lines: list[bytes],
                                                      sample_replays: dict[str, GameReplay]) -> None:
    case = _case(sample_replays[DISPUTED])
    first = make_bundle(lines, case)
    assert make_bundle(lines, case) == first
    found = verify_bundle(first)
    assert found.ok, found.problems
    manifest = orjson.loads(zipfile.ZipFile(io.BytesIO(first)).read("manifest.json"))
    assert manifest["game_sha256"] == sample_replays[DISPUTED].digest
    assert manifest["case"]["player"] == "bita" and "notes" not in manifest["case"]


def test_tampering_is_named(lines: list[bytes], sample_replays: dict[str, GameReplay]) -> None:
    good = make_bundle(lines, _case(sample_replays[DISPUTED]))
    manifest = orjson.loads(zipfile.ZipFile(io.BytesIO(good)).read("manifest.json"))
    claimed = dict(manifest, verdict=dict(manifest["verdict"], status="compliant"))
    for change, words in (
        ({"report.html": b"<p>another report</p>"}, "report.html: SHA-256"),
        ({"lines.jsonl": None}, "listed in the manifest but missing"),
        ({"extra.txt": b"x"}, "extra.txt is in bundle but not in its manifest"),
        ({"manifest.json": orjson.dumps(claimed)}, "re-judged, the game's status is \"violations\""),
        ({"manifest.json": b"{"}, "manifest.json is not JSON"),
    ):
        found = verify_bundle(_rezip(good, change))
        assert not found.ok and any(words in p for p in found.problems), (change.keys(), found.problems)


def test_another_engine_version_is_said_not_hidden(lines: list[bytes],
                                                   sample_replays: dict[str, GameReplay]) -> None:
    good = make_bundle(lines, _case(sample_replays[DISPUTED]))
    manifest = orjson.loads(zipfile.ZipFile(io.BytesIO(good)).read("manifest.json"))
    found = verify_bundle(_rezip(good, {"manifest.json": orjson.dumps(dict(manifest, engine_version="0.0.9"))}))
    assert found.ok and any("made by engine 0.0.9" in n for n in found.notes)


def test_a_bundle_of_what_is_not_there_is_refused(lines: list[bytes],
                                                  sample_replays: dict[str, GameReplay]) -> None:
    with pytest.raises(BundleError, match="did not play"):
        make_bundle(lines, _case(sample_replays[DISPUTED], player="sara"))
    with pytest.raises(BundleError, match="no line of game"):
        make_bundle(lines, _case(sample_replays[DISPUTED], game="no-such-game"))
