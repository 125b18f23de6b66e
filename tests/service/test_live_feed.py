"""`GET /v1/live` (issue 30) through a real `haftkhabis serve`:

- a client subscribed before a push receives each committed game's summary, with its batch
  and position as the event's id; a player's token only the games its player played; the
  `ruleset`, `build` and `status` filters keep only what they name; heartbeats come while
  nothing commits; past `--live-subscribers` a client is refused (503);
- a client that does not read is held to `--live-queue` games: once its socket's buffers
  are full, it is told, in a `dropped` event, how many it missed (the oldest) and which, the
  connection stays up, and every push still commits while it stalls (another client,
  reading, gets every game).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from service import models
from tests.dashboards.loggen import corrupt, dump, random_game
from tests.service.conftest import Keys, Server, wait_for_batch
from tests.service.watchers import Feed, scrape

QUEUE = 5000  # --live-queue: more than a push's games, so a client that reads misses none
PER_PUSH = 4000
MOST_PUSHES = 15  # a guard: the stalled client's socket buffers hold a few MB, a push ~1.3 MB of summaries


def _body(*games: list[dict[str, Any]]) -> bytes:
    return "".join(line + "\n" for game in games for line in dump(game)).encode()


def _push(client: httpx.Client, body: bytes) -> dict[str, Any]:
    answer = client.post("/v1/ingest", content=body)
    assert answer.status_code == 202, answer.text
    outcome = wait_for_batch(client, answer.json()["id"])
    assert outcome["status"] == "committed", outcome
    return outcome


def test_each_game_reaches_those_who_may_see_it(serve: Callable[..., Server], api_keys: Keys,
                                                tmp_path: Path) -> None:
    server = serve(tmp_path / "wh", "--commit-interval", "0.05", "--live-heartbeat", "0.2",
                   "--live-subscribers", "4")
    other = random_game("t30-other", "bazito", ["sara", "omid", "kian", "mina"], seed=5,
                        meta={"server_build": "hk/a"})
    disputed = corrupt(random_game("t30-ali-bad", "persian", ["ali", "bita", "cyrus"], seed=3,
                                   meta={"server_build": "hk/b"}))
    clean = random_game("t30-ali-ok", "bazito", ["ali", "sara", "omid", "kian"], seed=8,
                        meta={"server_build": "hk/a"})
    with contextlib.ExitStack() as feeding:
        feeds: dict[str, Feed] = {}
        for name, key, params in (("support", "support", None), ("ali", "ali", None),
                                  ("violations", "analyst", {"status": "violations"}),
                                  ("build-b", "ingest", {"build": "hk/b", "ruleset": "persian"})):
            feeds[name] = feeding.enter_context(Feed(server, api_keys[key], params))
        for name, feed in feeds.items():
            assert feed.status == 200, name
            feed.wait("its ready event", lambda f: bool(f.of("ready")))
        assert feeds["ali"].of("ready")[0].data["watching"]["player"] == "ali"
        assert feeds["build-b"].of("ready")[0].data["watching"]["build"] == ["hk/b"]
        # a fifth client is one too many
        with server.client(api_keys["sara"]) as client:
            refused = client.get("/v1/live")
            assert refused.status_code == 503, refused.text
            assert client.get("/v1/live", headers={"Authorization": ""}).status_code == 401
        # heartbeats while nothing commits
        feeds["support"].wait("a heartbeat", lambda f: f.comments >= 1)

        with server.client(api_keys["ingest"]) as client:
            first = _push(client, _body(other))
            second = _push(client, _body(disputed, clean))
        assert second["batch"] > first["batch"]

        support = feeds["support"]
        support.wait("all three games", lambda f: len(f.games()) >= 3)
        seen = support.games()
        assert [g["game"] for g in seen[:1]] == ["t30-other"]
        assert {g["game"] for g in seen[1:]} == {"t30-ali-bad", "t30-ali-ok"}
        assert len(seen) == 3
        for event in support.of("game"):  # the id is the batch and the game's position in it
            assert event.id == event.data["id"] == f"{event.data['batch']}:{event.data['position']}"
        assert seen[0]["batch"] == first["batch"] and {g["batch"] for g in seen[1:]} == {second["batch"]}
        assert sorted(g["position"] for g in seen[1:]) == [0, 1]
        bad = next(g for g in seen if g["game"] == "t30-ali-bad")
        assert bad["status"] == "violations" and bad["codes"] and bad["ruleset"] == "persian"
        assert bad["server_build"] == "hk/b" and bad["players"] == ["ali", "bita", "cyrus"]
        for summary in seen:  # what the OpenAPI document says an event's data is
            assert models.LiveGame.model_validate(summary).model_dump(mode="json").keys() == summary.keys()

        # ali's token: only ali's games (the first batch, without ali, sent nothing)
        feeds["ali"].wait("ali's two games", lambda f: len(f.games()) >= 2)
        assert {g["game"] for g in feeds["ali"].games()} == {"t30-ali-bad", "t30-ali-ok"}
        assert all("ali" in g["players"] for g in feeds["ali"].games())
        # the filters
        feeds["violations"].wait("the game with violations", lambda f: len(f.games()) >= 1)
        assert [g["game"] for g in feeds["violations"].games()] == ["t30-ali-bad"]
        feeds["build-b"].wait("hk/b's game", lambda f: len(f.games()) >= 1)
        assert [g["game"] for g in feeds["build-b"].games()] == ["t30-ali-bad"]
        assert not any(f.of("dropped") for f in feeds.values())


def _headers_only(first: int, count: int) -> bytes:
    """`count` games of one header line each (incomplete games: the smallest a push can
    carry), numbered from `first`."""
    return "".join(json.dumps({
        "game": f"t30-h-{n:06d}", "seq": 0, "type": "game", "ts": "2026-12-01T10:00:00Z",
        "format": "haftkhabis/1", "ruleset": "bazito", "players": ["ali", "sara", "omid", "kian"],
        "meta": {"server_build": "hk/c"}}, separators=(",", ":")) + "\n"
        for n in range(first, first + count)).encode()


def test_a_client_that_does_not_read_is_told_what_it_missed(serve: Callable[..., Server], api_keys: Keys,
                                                            tmp_path: Path) -> None:
    server = serve(tmp_path / "wh", "--commit-interval", "0.05", "--live-queue", str(QUEUE))
    with Feed(server, api_keys["support"]) as reading, \
            Feed(server, api_keys["auditor"], read=False) as stalled:
        assert stalled.status == 200
        reading.wait("its ready event", lambda f: bool(f.of("ready")))
        pushed, batches = 0, list[int]()
        with server.client(api_keys["ingest"]) as client:
            # until the stalled client's socket buffers are full and its queue overflows
            # (the server's own count says so); each push is still committed
            while scrape(server).get("haftkhabis_live_dropped_total", 0) == 0:
                assert len(batches) < MOST_PUSHES, "no summary was ever dropped for the stalled client"
                outcome = _push(client, _headers_only(pushed, PER_PUSH))
                assert outcome["outcome"]["games_new"] == PER_PUSH
                batches.append(outcome["batch"])
                pushed += PER_PUSH
        # the committer went on: the reading client has every game, in order
        reading.wait("every game", lambda f: len(f.games()) >= pushed)
        ids = [g["id"] for g in reading.games()]
        assert len(ids) == pushed and len(set(ids)) == pushed
        assert {g["batch"] for g in reading.games()} == set(batches)
        assert not reading.of("dropped")

        stalled.start()  # it reads again: what the server still held for it, then the newest
        last = ids[-1]
        stalled.wait("the last game", lambda f: any(g["id"] == last for g in f.games()))
        received = [e for e in stalled.events if e.event in ("game", "dropped")]
        drops = [e.data for e in received if e.event == "dropped"]
        assert drops and all(d["dropped"] > 0 for d in drops)
        assert all(models.LiveDropped.model_validate(d).model_dump() == d for d in drops)
        # every game is either received or counted in a `dropped` event's range, once
        place = {game_id: n for n, game_id in enumerate(ids)}
        accounted: list[str] = []
        for event in received:
            if event.event == "game":
                accounted.append(event.id or "")
            else:
                first, final = place[event.data["first"]], place[event.data["last"]]
                assert final - first + 1 == event.data["dropped"], event.data
                accounted += ids[first:final + 1]
        assert accounted == ids
        # the queue was full at the last drop, and nothing came after it: the newest QUEUE
        # games follow the last `dropped` event
        last_drop = max(n for n, e in enumerate(received) if e.event == "dropped")
        assert [e.id for e in received[last_drop + 1:]] == ids[-QUEUE:]
        assert scrape(server)["haftkhabis_live_dropped_total"] == sum(d["dropped"] for d in drops)
