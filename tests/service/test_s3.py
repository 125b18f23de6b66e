"""The API over a warehouse on S3: moto's server (a process of its own on a free loopback
port) holds the bundled sample (`data/sample`), ingested by the warehouse's own pipeline;
`haftkhabis serve --warehouse s3://… --storage-option …` is driven over real HTTP for
games, steps, reports, players, the leaderboard, compliance and batches, against what the
same warehouse answers to `ingest.queries`; then a pushed batch is committed to the bucket
and read back."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engine.replay import GameReplay, replay_lines
from engine.report import render_hand_report
from ingest.pipeline import ingest
from ingest.queries import game_lines, open_warehouse
from tests.ingest.services import MotoServer
from tests.service.conftest import REPO, Keys, Server, wait_for_batch

pytestmark = pytest.mark.slow  # the whole module: its services start once per worker

SAMPLE = REPO / "data" / "sample"
PUSHED = SAMPLE / "pis-yedili.jsonl"  # held back from the first ingest, pushed over HTTP
INDEX_TIMEOUT = 120.0  # seconds; a guard against an index that never comes, not a measurement


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoServer]:
    server = MotoServer(tmp_path_factory.mktemp("moto") / "moto.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def s3_warehouse(moto: MotoServer) -> str:
    uri = f"s3://{moto.bucket()}/warehouse"
    files = sorted(str(p) for p in SAMPLE.iterdir()
                   if p.name.endswith((".jsonl", ".jsonl.gz")) and p != PUSHED)
    ingest(files, uri, workers=1, storage_options=moto.options)
    return uri


@pytest.fixture(scope="module")
def s3_api(serve: Callable[..., Server], moto: MotoServer, s3_warehouse: str,
           tmp_path_factory: pytest.TempPathFactory) -> Server:
    options = [arg for key, value in moto.options.items()
               for arg in ("--storage-option", f"{key}={value}")]
    state = tmp_path_factory.mktemp("s3-state")
    return serve(s3_warehouse, *options, "--state", str(state))


def _rows(moto: MotoServer, uri: str, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    with open_warehouse(uri, storage_options=moto.options) as reader:
        return reader.rows(query, params)


def _replay(moto: MotoServer, uri: str, game: str) -> GameReplay:
    with open_warehouse(uri, storage_options=moto.options) as reader:
        replay = replay_lines(list(game_lines(reader, game)), game)
    assert replay is not None
    return replay


def _indexed(server: Server) -> None:
    """Wait until the server's game index covers the batch it reads (steps read by it)."""
    deadline = time.monotonic() + INDEX_TIMEOUT
    with server.client() as client:
        while not client.get("/v1/health").json()["games_indexed"]:
            assert time.monotonic() < deadline, "the game index did not follow the warehouse"
            time.sleep(0.05)  # polling interval


def test_games_steps_and_reports_from_s3(s3_api: Server, api_keys: Keys, moto: MotoServer,
                                         s3_warehouse: str) -> None:
    stored = _rows(moto, s3_warehouse, "SELECT game_id, status, violations, players FROM games "
                                       "ORDER BY violations DESC, game_id")
    assert stored
    _indexed(s3_api)
    game = stored[0]["game_id"]
    replay = _replay(moto, s3_warehouse, game)
    with s3_api.client(api_keys["support"]) as client:
        view = client.get(f"/v1/games/{game}")
        assert view.status_code == 200, view.text
        body = view.json()
        assert body["verdict"]["status"] == stored[0]["status"]
        assert body["verdict"]["violations"] == stored[0]["violations"] == len(body["violations"]) > 0
        for step in replay.steps:
            found = client.get(f"/v1/games/{game}/steps/{step.seq}").json()
            assert (found["hand"], found["step"], found["kind"], found["text"]) == \
                (step.hand, step.number, step.kind, step.text)
            assert found["event"] == step.raw
            if found["decision"] is not None:
                assert found["decision"]["why"] == step.why
        disputed = body["violations"][0]
        hand = disputed["hand"] or 1
        player = stored[0]["players"][0]
        report = client.get(f"/v1/games/{game}/hands/{hand}/report",
                            params={"seq": disputed["seq"], "player": player})
        assert report.status_code == 200 and report.headers["content-type"].startswith("text/html")
        assert report.text == render_hand_report(replay, hand, seq=disputed["seq"], viewer=player)
        assert client.get(f"/v1/games/{game}/steps/999999").status_code == 404
        assert client.get("/v1/games/no-such-game").status_code == 404


def test_aggregates_from_s3(s3_api: Server, api_keys: Keys, moto: MotoServer, s3_warehouse: str) -> None:
    board = _rows(moto, s3_warehouse, "SELECT ruleset, rank, player, wins FROM leaderboard "
                                      "ORDER BY ruleset, rank")
    compliance = _rows(moto, s3_warehouse, "SELECT sum(violations)::BIGINT AS n FROM compliance")[0]["n"]
    with s3_api.client(api_keys["analyst"]) as client:
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = client.get("/v1/leaderboard", params={"limit": 7, **({"cursor": cursor} if cursor else {})})
            assert page.status_code == 200, page.text
            items += page.json()["items"]
            cursor = page.json()["next_cursor"]
            if cursor is None:
                break
        assert [(r["ruleset"], r["rank"], r["player"], r["wins"]) for r in items] == \
            [(r["ruleset"], r["rank"], r["player"], r["wins"]) for r in board]
        rows = client.get("/v1/compliance", params={"limit": 1000}).json()["items"]
        assert sum(r["violations"] for r in rows) == compliance > 0
        assert client.get("/v1/compliance/builds").status_code == 200
        player = client.get(f"/v1/players/{board[0]['player']}")
        assert player.status_code == 200 and player.json()["rulesets"]
    stored = _rows(moto, s3_warehouse, "SELECT count(*) AS n FROM violations")[0]["n"]
    with s3_api.client(api_keys["auditor"]) as client:
        listed = client.get("/v1/violations", params={"limit": 1000})
        assert listed.status_code == 200 and len(listed.json()["items"]) == stored


def test_a_batch_pushed_to_an_s3_warehouse(s3_api: Server, api_keys: Keys, moto: MotoServer,
                                           s3_warehouse: str) -> None:
    with s3_api.client(api_keys["ingest"]) as client:
        first = client.get("/v1/batches/1").json()
        assert first["status"] == "committed" and first["outcome"]["games_new"] > 0
        response = client.post("/v1/ingest", content=PUSHED.read_bytes())
        assert response.status_code == 202, response.text
        done = wait_for_batch(client, response.json()["id"])
    assert done["status"] == "committed", done
    assert done["batch"] == 2 and done["outcome"]["games_new"] > 0
    assert done["outcome"]["files"][0]["status"] == "ok"
    pushed = _rows(moto, s3_warehouse, "SELECT game_id FROM games WHERE ingest_batch = 2 ORDER BY game_id")
    assert len(pushed) == done["outcome"]["games_new"]
    keys = moto.keys(s3_warehouse.split("/")[2])
    assert all(k.startswith("warehouse/") for k in keys)
    assert not [k for k in keys if "/_api/" in k]  # bodies and receipts stay in --state
    with s3_api.client(api_keys["support"]) as client:
        assert client.get("/v1/health").json()["batch"] == 2  # the reader moved to the new batch
        game = client.get(f"/v1/games/{pushed[0]['game_id']}")
        assert game.status_code == 200 and game.json()["ruleset"] == "pis-yedili"
        _indexed(s3_api)
        step = client.get(f"/v1/games/{pushed[0]['game_id']}/steps/0")
        assert step.status_code == 200 and step.json()["kind"] == "game"


def test_a_bad_warehouse_uri_is_refused() -> None:
    for args, words in ((["--warehouse", "gs://bucket/wh"], "a local folder or s3://BUCKET/PREFIX"),
                        (["--warehouse", "s3://"], "s3://BUCKET/PREFIX"),
                        (["--warehouse", "s3://b/wh", "--storage-option", "AWS_REGION"],
                         "--storage-option takes KEY=VALUE")):
        result = subprocess.run([sys.executable, "-m", "cli.app", "serve", *args], cwd=REPO,
                                capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 2, result.stderr
        assert words in " ".join(result.stderr.split()), result.stderr


def test_two_replicas_share_one_warehouse(serve: Callable[..., Server], moto: MotoServer, api_keys: Keys,
                                          tmp_path_factory: pytest.TempPathFactory) -> None:
    """Two `serve` processes (as two machines behind one load balancer) push into one S3
    warehouse, each group-committing what it received; a game's first half pushed to one
    and its rest to the other is completed. Every push committed exactly once, and the
    warehouse is a clean ingest of the games."""
    from engine.simulate import SimConfig, simulate
    from tests.service.test_ingest import without_provenance

    uri = f"s3://{moto.bucket()}/replicas"
    options = [arg for key, value in moto.options.items() for arg in ("--storage-option", f"{key}={value}")]
    replicas = [serve(uri, *options, "--state", str(tmp_path_factory.mktemp(f"replica-{k}")),
                      "--commit-interval", "0.3") for k in range(2)]
    games = list(simulate(SimConfig("bazito", games=12, seed=21)))
    split = games[0].lines
    bodies = [(0, b"\n".join(split[:len(split) // 2]) + b"\n"), (1, b"\n".join(split[len(split) // 2:]) + b"\n")]
    bodies += [(k % 2, b"\n".join(g.lines) + b"\n") for k, g in enumerate(games[1:])]
    receipts: list[tuple[int, str]] = []
    for replica, body in bodies:
        with replicas[replica].client(api_keys["ingest"]) as client:
            answer = client.post("/v1/ingest", content=body)
            assert answer.status_code == 202, answer.text
            receipts.append((replica, answer.json()["id"]))
    batches: dict[str, int] = {}
    for replica, receipt in receipts:
        with replicas[replica].client(api_keys["support"]) as client:
            outcome = wait_for_batch(client, receipt)
            assert outcome["status"] == "committed", outcome
            batches[receipt] = int(outcome["batch"])
    rows = _rows(moto, uri, "SELECT id, files FROM batches")
    holding: dict[str, list[int]] = {}
    for row in rows:
        for item in row["files"] or ():
            holding.setdefault(item["path"].rsplit("/", 1)[-1].removesuffix(".jsonl"), []).append(row["id"])
    assert {r: holding.get(r) for r in batches} == {r: [b] for r, b in batches.items()}
    assert len(set(batches.values())) >= 2  # both replicas committed groups of their own
    (split_game,) = _rows(moto, uri, "SELECT complete, lines FROM games WHERE game_id = ?", [games[0].game])
    assert split_game == {"complete": True, "lines": len(split)}  # completed across replicas
    clean = tmp_path_factory.mktemp("replicas-clean")
    (clean / "all.jsonl").write_bytes(b"".join(b"\n".join(g.lines) + b"\n" for g in games))
    ingest([str(clean / "all.jsonl")], str(clean / "wh"), workers=1)
    assert without_provenance(uri, moto.options, arrival=False) == \
        without_provenance(clean / "wh", arrival=False)
