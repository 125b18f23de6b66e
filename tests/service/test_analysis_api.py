"""Issue 32: a hand's move quality over HTTP — analyst and support see every decision, a
player's token only its own decisions and deal, never another's."""

from __future__ import annotations

from tests.service.conftest import DISPUTED, Keys, Server

URL = f"/v1/games/{DISPUTED}/hands/2/analysis"


def test_an_analyst_sees_every_decision_and_the_same_seed_gives_the_same_figures(
        api: Server, api_keys: Keys) -> None:
    with api.client(api_keys["analyst"]) as client:
        first = client.get(URL, params={"rollouts": 20, "seed": 3})
        assert first.status_code == 200, first.text
        body = first.json()
        assert body["hand"] == 2 and body["viewer"] is None and body["rollouts"] == 20
        players = {d["player"] for d in body["decisions"]}
        assert len(players) >= 2
        assert {d["player"] for d in body["deals"]} == set(body["players"])
        for d in body["decisions"]:
            assert d["moves"][d["best"]]["loss"] == 0.0
        again = client.get(URL, params={"rollouts": 20, "seed": 3}).json()
        assert again["decisions"] == body["decisions"]
        assert client.get(URL, params={"rollouts": 5000}).status_code == 422


def test_a_players_token_sees_only_its_own_decisions(api: Server, api_keys: Keys) -> None:
    with api.client(api_keys["ali"]) as client:
        mine = client.get(URL, params={"rollouts": 20})
        assert mine.status_code == 200, mine.text
        body = mine.json()
        assert body["viewer"] == "ali" and body["luck"] == []
        assert body["decisions"] and {d["player"] for d in body["decisions"]} == {"ali"}
        assert [d["player"] for d in body["deals"]] == ["ali"]
        other = next(p for p in body["players"] if p != "ali")
        assert client.get(URL, params={"rollouts": 20, "player": other}).status_code == 403
    with api.client(api_keys["support"]) as client:
        support = client.get(URL, params={"rollouts": 20, "player": "ali"}).json()
        assert support["decisions"] == body["decisions"]  # the same figures: no hidden input
    with api.client(api_keys["sara"]) as client:
        assert client.get(URL, params={"rollouts": 20}).status_code == 403
    with api.client(api_keys["auditor"]) as client:
        assert client.get(URL, params={"rollouts": 20}).status_code == 403


def test_the_ismcts_search_gives_a_player_the_figures_support_sees_for_them(
        api: Server, api_keys: Keys) -> None:
    params = {"rollouts": 10, "seed": 4, "search": "ismcts"}
    with api.client(api_keys["ali"]) as client:
        mine = client.get(URL, params=params)
        assert mine.status_code == 200, mine.text
        body = mine.json()
        assert body["search"] == "ismcts" and body["decisions"]
        assert {d["player"] for d in body["decisions"]} == {"ali"}
        for d in body["decisions"]:
            assert d["search"] == "ismcts"
            visits = [m["visits"] for m in d["moves"]]
            assert visits[d["best"]] == max(visits) and sum(visits) == d["rollouts"]
    with api.client(api_keys["support"]) as client:
        support = client.get(URL, params={**params, "player": "ali"}).json()
        assert support["decisions"] == body["decisions"]  # no hidden input in the search either
        flat = client.get(URL, params={**params, "search": "flat", "player": "ali"}).json()
        assert flat["search"] == "flat" and flat["decisions"] != body["decisions"]
        assert client.get(URL, params={**params, "search": "mcts"}).status_code == 422
