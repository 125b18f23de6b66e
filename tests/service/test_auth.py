"""Who may see what, over HTTP: 401 without a configured key, 403 for a role that may not,
every endpoint for every role; a player's token sees its own view only (never an
opponent's cards); rate limits per key; keys hashed at rest."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.auth import digest
from tests.service.conftest import DISPUTED, KEYS, REPO, SLOW, Keys, Server, free_port

#: (method, path) → the keys that may call it (`ali` played the disputed game, `sara` not)
ENDPOINTS: dict[tuple[str, str], set[str]] = {
    ("POST", "/v1/validate"): {"ingest", "support", "analyst", "auditor", "everyone"},
    ("POST", "/v1/ingest"): {"ingest", "everyone"},
    ("GET", "/v1/batches/1"): {"ingest", "support", "auditor", "everyone"},
    ("GET", f"/v1/games/{DISPUTED}"): {"support", "auditor", "everyone", "ali"},
    ("GET", f"/v1/games/{DISPUTED}/steps/3"): {"support", "everyone", "ali"},
    ("GET", f"/v1/games/{DISPUTED}/hands/1/report"): {"support", "everyone", "ali"},
    ("GET", f"/v1/games/{DISPUTED}/hands/2/analysis?rollouts=10"): {"analyst", "support", "everyone", "ali"},
    ("GET", "/v1/players/ali"): {"analyst", "support", "everyone", "ali"},
    ("GET", "/v1/leaderboard"): {"analyst", "everyone"},
    ("GET", "/v1/compliance"): {"analyst", "auditor", "everyone"},
    ("GET", "/v1/compliance/builds"): {"analyst", "auditor", "everyone"},
    ("GET", "/v1/violations"): {"auditor", "everyone"},
    ("GET", "/v1/audit/deals"): {"analyst", "auditor", "everyone"},
    ("GET", "/v1/audit/pairs"): {"analyst", "auditor", "support", "everyone"},
}


def call(client: httpx.Client, method: str, path: str) -> httpx.Response:
    if method == "POST":
        # an empty body: validate answers it, ingest must not commit anything for it here
        return client.post(path, content=b"\n")
    return client.get(path)


@pytest.mark.parametrize(("method", "path"), list(ENDPOINTS))
def test_no_key_or_a_wrong_key_is_401(api: Server, method: str, path: str) -> None:
    for key in (None, "hk_not-a-configured-key"):
        with api.client(key) as client:
            response = call(client, method, path)
        assert response.status_code == 401, response.text
        assert response.json()["error"] == "unauthorized"
        assert "WWW-Authenticate" in response.headers


@pytest.mark.parametrize(("method", "path"), list(ENDPOINTS))
def test_each_role_gets_what_it_may(api: Server, api_keys: Keys, method: str, path: str) -> None:
    allowed = ENDPOINTS[(method, path)]
    for name in KEYS:
        with api.client(api_keys[name]) as client:
            response = call(client, method, path)
        if name in allowed:
            assert response.status_code in (200, 202), (name, response.text)
        else:
            assert response.status_code == 403, (name, response.text)
            problem = response.json()
            assert problem["error"] == "forbidden" and problem["status"] == 403
            assert "may not" in problem["message"] or "did not play" in problem["message"]


def test_the_x_api_key_header_works_too(api: Server, api_keys: Keys) -> None:
    with httpx.Client(base_url=api.url, headers={"X-API-Key": api_keys["analyst"]}) as client:
        assert client.get("/v1/leaderboard").status_code == 200


def test_a_player_sees_only_their_own_cards(api: Server, api_keys: Keys) -> None:
    with api.client(api_keys["support"]) as support, api.client(api_keys["ali"]) as ali:
        game = support.get(f"/v1/games/{DISPUTED}").json()
        players = game["players"]
        assert "ali" in players
        deal_seq = next(seq for seq in range(10)
                        if support.get(f"/v1/games/{DISPUTED}/steps/{seq}").json()["kind"] == "deal")
        for seq in range(deal_seq, deal_seq + 25):
            full = support.get(f"/v1/games/{DISPUTED}/steps/{seq}").json()
            mine = ali.get(f"/v1/games/{DISPUTED}/steps/{seq}").json()
            assert mine["viewer"] == "ali"
            hands = mine["table"]["hands"]
            assert hands["ali"] == full["table"]["hands"]["ali"]
            assert all(hands[p] is None for p in players if p != "ali")
            assert mine["table"]["hand_sizes"] == full["table"]["hand_sizes"]
            event = mine["event"]
            if event["type"] == "deal":
                assert event["hands"]["ali"] == full["event"]["hands"]["ali"]
                assert all(event["hands"][p] is None for p in players if p != "ali")
                assert event.get("stock") is None
            if event["type"] in ("draw", "penalty") and event["player"] != "ali":
                assert event["cards"] is None
            if full["to_move"] and full["to_move"]["player"] != "ali":
                assert mine["to_move"] is None  # another's legal moves are cards in their hand
            for theirs in mine["violations"]:
                if theirs["player"] != "ali":
                    assert theirs["message"] is None
            assert mine["file"] is None
            if mine["hand"]:  # the report about this line, in ali's own view
                assert mine["links"]["report"] == \
                    f"/v1/games/{DISPUTED}/hands/{mine['hand']}/report?seq={seq}&player=ali"
            assert mine["links"]["dashboard"].endswith("&view=player&player=ali")
        view = ali.get(f"/v1/games/{DISPUTED}").json()
        assert view["viewer"] == "ali" and view["source_files"] is None
        for hand in view["hands"]:
            for seat in hand["players"]:
                if seat["player"] != "ali":
                    assert seat["left_cards"] is None
        cards = {c for s in support.get(f"/v1/games/{DISPUTED}").json()["hands"] for p in s["players"]
                 if p["player"] != "ali" for c in (p["left_cards"] or [])}
        text = ali.get(f"/v1/games/{DISPUTED}").text
        assert not any(f'"{card}"' in text for card in cards - _ali_cards(support))


def _ali_cards(support: httpx.Client) -> set[str]:
    """Every card ali held at some step (those may appear in his own view)."""
    out: set[str] = set()
    seq = 0
    while True:
        step = support.get(f"/v1/games/{DISPUTED}/steps/{seq}")
        if step.status_code == 404:
            return out
        table = step.json()["table"]
        if table and table["hands"].get("ali"):
            out.update(table["hands"]["ali"])
        seq += 1


def test_a_player_is_refused_an_opponents_view(api: Server, api_keys: Keys) -> None:
    with api.client(api_keys["ali"]) as ali, api.client(api_keys["sara"]) as sara:
        for path in (f"/v1/games/{DISPUTED}/steps/3?player=bita", f"/v1/games/{DISPUTED}?player=bita",
                     f"/v1/games/{DISPUTED}/hands/1/report?player=bita"):
            refused = ali.get(path)
            assert refused.status_code == 403
            assert refused.json()["message"] == "a token of ali may not see bita's view"
        assert ali.get(f"/v1/games/{DISPUTED}/steps/3?player=ali").status_code == 200
        assert ali.get("/v1/players/bita").status_code == 403
        not_hers = sara.get(f"/v1/games/{DISPUTED}")
        assert not_hers.status_code == 403
        assert "did not play this game" in not_hers.json()["message"]
        assert sara.get(f"/v1/games/{DISPUTED}/steps/3").status_code == 403
        assert sara.get(f"/v1/games/{DISPUTED}/hands/1/report").status_code == 403


def test_support_may_open_any_players_view(api: Server, api_keys: Keys) -> None:
    with api.client(api_keys["support"]) as support:
        bita = support.get(f"/v1/games/{DISPUTED}/steps/3?player=bita").json()
        assert bita["viewer"] == "bita"
        assert bita["table"]["hands"]["ali"] is None and bita["table"]["hands"]["bita"]
        stranger = support.get(f"/v1/games/{DISPUTED}/steps/3?player=nobody")
        assert stranger.status_code == 404


def test_rate_limit_per_key(api: Server, api_keys: Keys) -> None:
    with api.client(api_keys[SLOW]) as slow, api.client(api_keys["support"]) as other:
        statuses = [slow.get("/v1/batches/1").status_code for _ in range(6)]
        assert statuses[:2] == [200, 200]
        assert 429 in statuses
        limited = slow.get("/v1/batches/1")
        assert limited.status_code == 429
        assert int(limited.headers["Retry-After"]) >= 1
        assert limited.json()["error"] == "rate_limited"
        assert other.get("/v1/batches/1").status_code == 200  # another key's allowance is its own
        deadline = time.monotonic() + 30
        while slow.get("/v1/batches/1").status_code == 429:  # the bucket refills (1 a second)
            assert time.monotonic() < deadline
            time.sleep(0.2)  # polling interval


def test_keys_are_stored_hashed(api_keys: Keys) -> None:
    text = api_keys.file.read_text(encoding="utf-8")
    entries = tomllib.loads(text)["key"]
    for key in api_keys.keys.values():
        assert key not in text
        assert any(entry["sha256"] == digest(key) for entry in entries)


def test_keys_from_the_environment(api_keys: Keys, tmp_path: Path) -> None:
    """`$HAFTKHABIS_API_KEYS` holds the same document as the file."""
    port = free_port()
    env = dict(os.environ, HAFTKHABIS_API_KEYS=api_keys.file.read_text(encoding="utf-8"))
    env.pop("HAFTKHABIS_API_KEYS_FILE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "cli.app", "serve", "--warehouse", str(tmp_path / "wh"),
         "--port", str(port), "--log-level", "warning"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, "the server exited"
            try:
                httpx.get(f"{url}/v1/health", timeout=5).raise_for_status()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.05)  # polling interval
        headers = {"Authorization": f"Bearer {api_keys['ingest']}"}
        assert httpx.post(f"{url}/v1/validate", content=b"\n", headers=headers).status_code == 200
        assert httpx.post(f"{url}/v1/validate", content=b"").status_code == 401
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_keys_expire_and_are_revoked_without_a_restart(tmp_path: Path, serve: Any) -> None:
    """A key past its `expires` is refused; a key removed from the keys file is refused at
    the next request, a key added works at once; a broken edit keeps the keys in force."""
    from datetime import UTC, datetime, timedelta

    from service.auth import key_entry, new_key

    live, old, added = new_key(), new_key(), new_key()
    path = tmp_path / "keys.toml"
    past = datetime.now(UTC) - timedelta(days=1)
    path.write_text(key_entry("live", live, ["support"]) + key_entry("old", old, ["support"], expires=past))
    server = serve(tmp_path / "wh", "--keys", str(path))

    def status(key: str) -> int:
        with server.client(key) as client:
            return client.get("/v1/batches/1").status_code

    assert status(live) == 404  # let in: no such batch
    with server.client(old) as client:
        refused = client.get("/v1/batches/1")
    assert refused.status_code == 401 and "expired" in refused.json()["message"]
    path.write_text(key_entry("added", added, ["support"]))  # `live` revoked, `added` given
    assert status(live) == 401
    assert status(added) == 404
    path.write_text("[[key]]\nname = 'half saved")  # not TOML: the keys stay as they were
    assert status(added) == 404
    with server.client() as client:
        assert client.get("/v1/health").json()["keys_unread_change"] is True
