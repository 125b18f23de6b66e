"""Players, the leaderboard, compliance and violations over HTTP: filters, and cursor pages
that together are exactly the warehouse's own views (no second leaderboard or compliance
query: the pages read `leaderboard` and group `violations` as the `compliance` view does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ingest import read
from tests.service.conftest import Keys, Server


def pages(client: httpx.Client, path: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Every page of a listing, following `next_cursor`."""
    cursor = None
    while True:
        query = dict(params, **({"cursor": cursor} if cursor else {}))
        response = client.get(path, params=query)
        assert response.status_code == 200, response.text
        page = response.json()
        yield page
        cursor = page["next_cursor"]
        if cursor is None:
            return


@pytest.fixture(scope="module")
def reader(sample_copy: Path) -> read.Reader:
    return read.connect(sample_copy)


def test_leaderboard_pages_are_the_leaderboard_view(api: Server, api_keys: Keys, reader: read.Reader) -> None:
    expected = reader.frame("SELECT ruleset, rank, player, wins FROM leaderboard ORDER BY ruleset, rank").to_dicts()
    with api.client(api_keys["analyst"]) as client:
        got = [page for page in pages(client, "/v1/leaderboard", limit=3)]
        rows = [{k: r[k] for k in ("ruleset", "rank", "player", "wins")} for p in got for r in p["items"]]
        assert rows == expected
        assert all(len(p["items"]) == 3 for p in got[:-1]) and len(got) > 2
        persian = [r for p in pages(client, "/v1/leaderboard", ruleset="persian", min_hands=2) for r in p["items"]]
        assert persian and all(r["ruleset"] == "persian" and r["hands"] >= 2 for r in persian)
        # a cursor is the last row's key in the format the document declares: one not of
        # that format (another listing's) is a malformed parameter; any of it is a key
        bad = client.get("/v1/leaderboard", params={"cursor": "not a cursor"})
        assert bad.status_code == 422 and bad.json()["error"] == "invalid_parameter"
        other = got[0]["next_cursor"]
        with api.client(api_keys["auditor"]) as auditor:
            wrong_listing = auditor.get("/v1/violations", params={"cursor": other})
        assert wrong_listing.status_code == 422
        made_up = client.get("/v1/leaderboard", params={"cursor": "persian~1"}).json()["items"]
        assert made_up == [r for p in got for r in p["items"] if (r["ruleset"], r["rank"]) > ("persian", 1)][:100]


def test_compliance_pages_are_the_compliance_view(api: Server, api_keys: Keys, reader: read.Reader) -> None:
    expected = sorted(reader.rows("SELECT code, ruleset, server_build, violations, games FROM compliance"))
    with api.client(api_keys["auditor"]) as client:
        rows = [r for p in pages(client, "/v1/compliance", limit=2) for r in p["items"]]
        assert sorted((r["code"], r["ruleset"], r["server_build"], r["violations"], r["games"])
                      for r in rows) == expected
        assert all(r["period"] is None for r in rows)
        by_month = [r for p in pages(client, "/v1/compliance", period="month", limit=4) for r in p["items"]]
        assert sum(r["violations"] for r in by_month) == sum(e[3] for e in expected)
        assert {r["period"] for r in by_month} <= {"2026-10", "2026-11"}
        october = [r for p in pages(client, "/v1/compliance", **{"from": "2026-10-01", "to": "2026-10-31"})
                   for r in p["items"]]
        assert october and sum(r["violations"] for r in october) < sum(e[3] for e in expected)
        code = expected[0][0]
        only = [r for p in pages(client, "/v1/compliance", code=code) for r in p["items"]]
        assert only and {r["code"] for r in only} == {code}
        builds = client.get("/v1/compliance/builds", params={"ruleset": "persian"}).json()
        assert builds == read.builds(reader, read.GameFilter(("persian",))).to_dicts()
        assert client.get("/v1/compliance", params={"code": "no_such_code"}).status_code == 422


def test_violation_pages_list_every_violation(api: Server, api_keys: Keys, reader: read.Reader) -> None:
    expected = sorted(reader.rows("SELECT game_id, seq, code FROM violations"), key=repr)
    with api.client(api_keys["auditor"]) as client:
        rows = [r for p in pages(client, "/v1/violations", limit=2) for r in p["items"]]
        assert sorted(((r["game"], r["seq"], r["code"]) for r in rows), key=repr) == expected
        starts = [r["start_time"] for r in rows]
        assert starts == sorted(starts, reverse=True)  # newest games first
        assert all(r["explanation"] for r in rows)


def test_a_players_figures(api: Server, api_keys: Keys, reader: read.Reader) -> None:
    with api.client(api_keys["analyst"]) as client:
        view = client.get("/v1/players/ali").json()
        expected = reader.frame("SELECT ruleset, rank, wins, hands FROM leaderboard WHERE player = 'ali' "
                                "ORDER BY ruleset").to_dicts()
        assert [{k: r[k] for k in ("ruleset", "rank", "wins", "hands")} for r in view["rulesets"]] == expected
        assert view["links"]["dashboard"].endswith("/players?player=ali")
        missing = client.get("/v1/players/nobody-at-all")
        assert missing.status_code == 404 and "no player 'nobody-at-all'" in missing.json()["message"]
    with api.client(api_keys["ali"]) as ali:
        assert ali.get("/v1/players/ali").json() == view
