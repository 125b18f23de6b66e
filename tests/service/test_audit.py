"""GET /v1/audit/deals: the deal audit for the analyst and auditor roles; a player's token
(and support) is refused, and no hand's cards are in the answer."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.ingest.fairplaykit import BUILD, STUCK, rigged_warehouse
from tests.service.conftest import Keys, Server


@pytest.fixture(scope="module")
def rigged_api(serve: Callable[..., Server], tmp_path_factory: pytest.TempPathFactory) -> Server:
    return serve(rigged_warehouse(tmp_path_factory.mktemp("rigged-api")))


def test_an_auditor_sees_the_finding_by_card_and_build(rigged_api: Server, api_keys: Keys) -> None:
    with rigged_api.client(api_keys["auditor"]) as client:
        response = client.get("/v1/audit/deals", params={"build": BUILD})
        assert response.status_code == 200, response.text
        report = response.json()
        stuck = [f for f in report["findings"] if f["family"] == "stock.position"]
        assert [f["scope"]["card"] for f in stuck] == [STUCK] and stuck[0]["scope"]["build"] == BUILD
        assert report["tests_made"] > 0 and all(f["q_value"] <= 0.01 for f in report["findings"])
        # aggregates only: no line, hand or stock of any deal
        assert '"raw"' not in response.text and '"stock"' not in response.text
        later = client.get("/v1/audit/deals", params={"from": "2100-01-01"}).json()
        assert later["deals"] == 0 and later["findings"] == []
        assert client.get("/v1/audit/deals", params={"fdr": 0}).status_code == 422


def test_players_and_support_are_refused(rigged_api: Server, api_keys: Keys) -> None:
    for name in ("ali", "sara", "support", "ingest"):
        with rigged_api.client(api_keys[name]) as client:
            assert client.get("/v1/audit/deals").status_code == 403, name
    with rigged_api.client(api_keys["analyst"]) as client:
        assert client.get("/v1/audit/deals").status_code == 200


def test_the_pair_audit_names_the_pair_for_analysts_only(serve: Callable[..., Server], api_keys: Keys,
                                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.ingest.fairplaykit import PAIR, pair_warehouse

    api = serve(pair_warehouse(tmp_path_factory.mktemp("pairs-api"), 1.0))
    with api.client(api_keys["analyst"]) as client:
        response = client.get("/v1/audit/pairs", params={"level": 0.05, "permutations": 100})
        assert response.status_code == 200, response.text
        cases = response.json()["cases"]
        assert [set(c["players"]) for c in cases] == [set(PAIR)] and cases[0]["steps"]
        assert "sevens_spared" in cases[0]["drivers"] and cases[0]["detail"]["jacks_suited"]["z"] > 0
        # the audit names players and steps, never a card: no hand leaks through it
        assert not re.search(r'"[2-9TJQKA][CDHS]"', response.text)
    for name in ("ali", "ingest"):
        with api.client(api_keys[name]) as client:
            assert client.get("/v1/audit/pairs").status_code == 403, name


def test_a_stored_report_answers_until_games_land(serve: Callable[..., Server], api_keys: Keys,
                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """The report `audit deals --store` kept answers while it is current (doctored here, so
    that the answer shows where it came from); once games land, the audit is made again."""
    from engine.simulate import SimConfig, write_simulation
    from ingest import audits, read
    from ingest.pipeline import ingest

    folder = tmp_path_factory.mktemp("stored-api")
    root = rigged_warehouse(folder)
    api = serve(root)
    with api.client(api_keys["auditor"]) as client:
        made = client.get("/v1/audit/deals").json()
        reader = read.connect(root)
        try:
            audits.store(reader, audits.Params("deals"), {**made, "deals": 123_456}, 1.0)
        finally:
            reader.close()
        assert client.get("/v1/audit/deals").json()["deals"] == 123_456
        assert client.get("/v1/audit/deals", params={"fdr": 0.05}).json()["deals"] == made["deals"]
        log = folder / "more.jsonl"
        with log.open("wb") as out:
            write_simulation(SimConfig("bazito", games=2, seed=5), out)
        ingest([str(log)], str(root), workers=1)
        assert client.get("/v1/audit/deals").json()["deals"] > made["deals"]
