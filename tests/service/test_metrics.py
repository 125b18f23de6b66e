"""`GET /metrics` (issue 30): Prometheus' own parser reads it, and through a real
`haftkhabis serve` its counters move by exactly what was pushed — pushes, lines, games,
batches, quarantined lines, violations by code (as the validator finds them in the same
bodies), one commit time and one lag per push — and a push refused by back-pressure is
counted. Each application has a registry of its own: two in one process do not collide.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import orjson

from service.app import Settings, create_app
from service.auth import KeyStore, key_entry
from tests.dashboards.loggen import corrupt, dump, random_game
from tests.service.conftest import Keys, Server, wait_for_batch
from tests.service.watchers import scrape


def _body(*games: list[dict[str, object]], junk: int = 0) -> bytes:
    lines = [line for game in games for line in dump(game)] + ["not json"] * junk
    return "".join(line + "\n" for line in lines).encode()


def test_counters_move_by_what_was_pushed(serve: Callable[..., Server], api_keys: Keys, tmp_path: Path) -> None:
    server = serve(tmp_path / "wh", "--commit-interval", "0.05")
    bodies = [
        _body(random_game("t30-m-1", "bazito", seed=1),
              corrupt(random_game("t30-m-2", "bazito", seed=2), count=2)),
        _body(corrupt(random_game("t30-m-3", "persian", ["ali", "bita", "cyrus"], seed=3)), junk=2),
        _body(random_game("t30-m-4", "pis-yedili", ["sara", "kian", "mina"], seed=4)),
    ]
    codes: Counter[str] = Counter()
    with server.client(api_keys["everyone"]) as client:
        for body in bodies:  # what the validator finds in the same bytes
            for line in client.post("/v1/validate", content=body).text.splitlines():
                record = orjson.loads(line)
                if record["kind"] == "game":
                    codes.update(v["code"] for v in record["violations"])
        before = scrape(server)
        outcomes = []
        for body in bodies:
            answer = client.post("/v1/ingest", content=body)
            assert answer.status_code == 202, answer.text
            outcomes.append(wait_for_batch(client, answer.json()["id"]))
    after = scrape(server)
    assert all(o["status"] == "committed" for o in outcomes), outcomes

    def moved(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    assert sum(codes.values()) >= 3, codes  # the corrupted games have violations
    assert moved("haftkhabis_pushes_accepted_total") == 3
    assert moved("haftkhabis_pushes_refused_total") == 0
    assert moved("haftkhabis_lines_committed_total") == sum(body.count(b"\n") for body in bodies)
    assert moved("haftkhabis_lines_committed_total") == sum(o["outcome"]["lines"] for o in outcomes)
    assert moved("haftkhabis_games_committed_total") == 4
    batches = {o["batch"] for o in outcomes}
    assert moved("haftkhabis_batches_committed_total") == len(batches)
    assert moved("haftkhabis_commit_seconds_count") == len(batches)
    assert moved("haftkhabis_ingest_lag_seconds_count") == 3  # one per push
    assert moved("haftkhabis_lines_quarantined_total") == 2
    by_code = {name.split('"')[1]: value for name, value in after.items()
               if name.startswith("haftkhabis_violations_committed_total{")}
    assert "must_play" in by_code  # every code is there from the start
    for code in by_code:
        assert moved(f'haftkhabis_violations_committed_total{{code="{code}"}}') == codes[code], code
    assert sum(o["outcome"]["violations"] for o in outcomes) == sum(codes.values())
    assert after["haftkhabis_queue_pushes"] == 0 and after["haftkhabis_queue_oldest_age_seconds"] == 0
    assert after["haftkhabis_live_subscribers"] == 0


def test_a_refused_push_is_counted(serve: Callable[..., Server], api_keys: Keys, tmp_path: Path) -> None:
    # the first push commits at once; the second waits out the 30 s interval, and with it
    # waiting any longer than 0 s (--max-lag 0) the third is told to wait
    server = serve(tmp_path / "wh", "--commit-interval", "30", "--max-lag", "0")
    with server.client(api_keys["ingest"]) as client:
        first = client.post("/v1/ingest", content=_body(random_game("t30-r-1", "bazito", seed=1)))
        assert wait_for_batch(client, first.json()["id"])["status"] == "committed"
        assert client.post("/v1/ingest", content=_body(random_game("t30-r-2", "bazito", seed=2))).status_code == 202
        refused = client.post("/v1/ingest", content=_body(random_game("t30-r-3", "bazito", seed=3)))
        assert refused.status_code == 429, refused.text
    metrics = scrape(server)
    assert metrics["haftkhabis_pushes_accepted_total"] == 2
    assert metrics["haftkhabis_pushes_refused_total"] == 1
    assert metrics["haftkhabis_queue_pushes"] == 1 and metrics["haftkhabis_queue_oldest_age_seconds"] > 0


def test_each_app_has_a_registry_of_its_own(tmp_path: Path) -> None:
    """Apps made in one process (no lifespan run: nothing started) each answer /metrics,
    with their own figures; the process-wide registry would refuse the second's."""
    keys = KeyStore.from_text(key_entry("auditor", "k-auditor", ["auditor"]), "test")
    apps = [create_app(Settings(warehouse=tmp_path / f"wh{n}", keys=keys)) for n in range(2)]

    async def ask(app: object) -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return (await client.get("/metrics"),
                    await client.get("/v1/alerts", headers={"Authorization": "Bearer k-auditor"}))

    for app in apps:
        metrics, alerts = asyncio.run(ask(app))
        assert metrics.status_code == 200
        assert "haftkhabis_pushes_accepted_total 0.0" in metrics.text
        assert alerts.json() == {"configured": False, "source": None, "evaluated_batch": None,
                                 "alerts": [], "deliveries": None}
