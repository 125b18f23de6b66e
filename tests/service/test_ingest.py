"""POST /v1/ingest over HTTP: the warehouse's ingest guarantees hold for pushed batches —
the same batch twice is the warehouse after one, a truncated game then its rest is the
game ingested whole, unusable lines are quarantined byte for byte."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingest.queries import open_warehouse
from ingest.schema import SNAPSHOT_TABLES
from tests.ingest.conftest import contents
from tests.service.conftest import DISPUTED, Keys, Server, sample_lines, wait_for_batch

#: columns that say where a line was read (file, line number): a game pushed in two bodies
#: is read from two files, so these differ from the game pushed in one
PROVENANCE = {"file", "line", "source_files", "file_sha256"}


def push(server: Server, key: str, body: bytes, **headers: str) -> dict[str, Any]:
    with server.client(key) as client:
        response = client.post("/v1/ingest", content=body, headers=headers)
        assert response.status_code == 202, response.text
        receipt = response.json()
        assert response.headers["location"] == f"/v1/batches/{receipt['id']}"
        assert receipt["status"] in ("queued", "running", "committed")
        return wait_for_batch(client, receipt["id"])


def without_provenance(root: Path | str, storage_options: dict[str, str] | None = None, *,
                       arrival: bool = True) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, less where each line was read (and, unless `arrival`, a line's
    place in the order its game's lines came in: a game's halves pushed to two servers
    arrive in either order)."""
    left_out = PROVENANCE | {"ingest_batch"} | (set() if arrival else {"ordinal"})
    out = {}
    with open_warehouse(str(root), storage_options=storage_options) as reader:
        for name in SNAPSHOT_TABLES:
            columns = [c for c in reader.sql(f"SELECT * FROM {name} LIMIT 0").columns
                       if c not in left_out]
            rows = reader.sql(f"SELECT {', '.join(columns)} FROM {name}").fetchall()
            out[name] = sorted(rows, key=repr)
    return out


def test_the_same_batch_twice_is_one(fresh: Server, api_keys: Keys, sample_log: Path) -> None:
    body = sample_log.read_bytes()
    first = push(fresh, api_keys["ingest"], body)
    assert first["status"] == "committed", first
    outcome = first["outcome"]
    assert outcome["games_new"] == 5 and outcome["games_updated"] == 0
    assert first["sha256"] and first["size"] == len(body)
    after_one = contents(fresh.warehouse)
    again = push(fresh, api_keys["ingest"], gzip.compress(body), **{"Content-Encoding": "gzip"})
    assert again["status"] == "committed" and again["batch"] == first["batch"] + 1
    assert again["outcome"]["games_new"] == again["outcome"]["games_updated"] == 0
    assert again["outcome"]["games_unchanged"] == 5  # read again, and found the same
    assert [(f["path"], f["status"]) for f in again["outcome"]["files"]] == [(f"{again['id']}.jsonl", "ok")]
    assert contents(fresh.warehouse) == after_one
    with fresh.client(api_keys["support"]) as support:
        game = support.get(f"/v1/games/{DISPUTED}")  # the reader moved to the new batch
        assert game.status_code == 200 and game.json()["ingest_batch"] == first["batch"]
        assert support.get(f"/v1/batches/{first['batch']}").json()["outcome"] == outcome


def test_a_truncated_game_then_its_rest(serve: Callable[..., Server], api_keys: Keys,
                                        tmp_path: Path) -> None:
    lines = [line.encode() for line in sample_lines()]
    game = [line for line in lines if f'"game":"{DISPUTED}"'.encode() in line.replace(b" ", b"")]
    others = [line for line in lines if line not in game]
    cut = len(game) // 2
    pieces = serve(tmp_path / "pieces")
    first = push(pieces, api_keys["ingest"], b"\n".join(others + game[:cut]) + b"\n")
    assert first["status"] == "committed"
    with pieces.client(api_keys["support"]) as client:
        verdict = client.get(f"/v1/games/{DISPUTED}").json()["verdict"]
        assert verdict["complete"] is False and verdict["winners"] is None
    rest = push(pieces, api_keys["ingest"], b"\n".join(game[cut:]) + b"\n")
    assert rest["status"] == "committed"
    assert (rest["outcome"]["games_new"], rest["outcome"]["games_updated"]) == (0, 1)
    whole = serve(tmp_path / "whole")
    clean = push(whole, api_keys["ingest"], b"\n".join(others + game) + b"\n")
    assert clean["status"] == "committed"
    assert without_provenance(pieces.warehouse) == without_provenance(whole.warehouse)
    with pieces.client(api_keys["support"]) as a, whole.client(api_keys["support"]) as b:
        assert a.get(f"/v1/games/{DISPUTED}").json()["verdict"] == b.get(f"/v1/games/{DISPUTED}").json()["verdict"]


def test_unusable_lines_are_quarantined_verbatim(fresh: Server, api_keys: Keys) -> None:
    junk = [b"not json", b'{"seq": 1, "type": "play"}', b"\xff\xfe broken utf-8", b"[1, 2, 3]"]
    good = [line.encode() for line in sample_lines()[:40]]
    outcome = push(fresh, api_keys["ingest"], b"\n".join(good[:20] + junk + good[20:]) + b"\n")
    assert outcome["status"] == "committed"
    assert outcome["outcome"]["errors"] == len(junk)
    with open_warehouse(str(fresh.warehouse)) as reader:
        raw = sorted(r[0] for r in reader.sql("SELECT raw FROM quarantine").fetchall())
    assert raw == sorted(junk)


def test_refused_bodies_commit_nothing(tight: Server, api_keys: Keys) -> None:
    line = b'{"game":"g","seq":0,"type":"game","format":"haftkhabis/1","ruleset":"bazito","players":["a","b"]}\n'
    with tight.client(api_keys["ingest"]) as client:
        big = client.post("/v1/ingest", content=line * (2 * 1024 * 1024 // len(line)))
        assert big.status_code == 413 and big.json()["error"] == "too_large"
        broken = client.post("/v1/ingest", content=gzip.compress(line)[:20],
                             headers={"Content-Encoding": "gzip"})
        assert broken.status_code == 400 and broken.json()["error"] == "bad_body"
        unknown = client.get("/v1/batches/ing_0000000000000000")
        assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
    assert not list((tight.warehouse / "_api" / "receipts").glob("*.json"))
    assert not [p for p in (tight.warehouse / "_api" / "incoming").iterdir()]
