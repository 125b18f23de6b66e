"""Alerts (issue 30).

- Through a real `haftkhabis serve --alerts FILE`: a violation-rate alert fires when a
  build's last games pass the threshold, is delivered to a webhook receiver once (not once
  per batch while it fires), clears when clean games bring the rate down, and fires again;
  `GET /v1/alerts` lists it for auditors and support, the state file holds it.
- The alert engine on its own, fed commits (`CommitEvent`) and a clock: time windows that
  empty as time passes, a code of its own, builds apart, the queue's lag, the quarantine
  rate, a build's ruleset profile changing (games inferred by the engine: tarkesh turned
  off), and the state kept across a restart.
- The webhook: retried with exponential backoff on a 503, given up at once on a 400.
- The rules file: every mistake named with its rule and what was expected.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from engine.simulate import SimConfig, simulate
from service.alert_rules import AlertConfig, AlertFileError, Webhook
from service.alerts import AlertEngine
from service.jobs import CommitEvent, QueueStats
from service.webhook import WebhookSender
from tests.dashboards.loggen import corrupt, dump, random_game
from tests.service.conftest import Keys, Server, wait_for_batch
from tests.service.watchers import DEADLINE, Receiver


@pytest.fixture
def hook() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.close()


def _settled(client: httpx.Client, batch: int) -> dict[str, Any]:
    """`GET /v1/alerts` once the alerts have taken in `batch` and no delivery is pending
    (polled: the service's own state)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        answer = client.get("/v1/alerts")
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        if (body["evaluated_batch"] or 0) >= batch and body["deliveries"]["pending"] == 0:
            return body
        assert time.monotonic() < deadline, f"the alerts never took in batch {batch}: {body}"
        time.sleep(0.05)  # polling interval


def test_an_alert_fires_once_clears_and_fires_again(serve: Callable[..., Server], api_keys: Keys,
                                                    tmp_path: Path, hook: Receiver) -> None:
    rules = tmp_path / "alerts.toml"
    rules.write_text(f"""
[webhook]
url = "{hook.url}"
backoff = "50ms"

[[rule]]
name = "violations"
kind = "violation_rate"
games = 4          # the build's last 4 games
min_games = 4
threshold = 50     # percent: fires above it
""", encoding="utf-8")
    server = serve(tmp_path / "wh", "--alerts", str(rules), "--commit-interval", "0.05")
    pushed = [0]

    def push(client: httpx.Client, bad: bool) -> int:
        """One game of build hk/alert as a batch of its own: the batch."""
        pushed[0] += 1
        game = random_game(f"t30-alert-{pushed[0]}", "bazito", seed=pushed[0], meta={"server_build": "hk/alert"})
        body = "".join(line + "\n" for line in dump(corrupt(game) if bad else game)).encode()
        answer = client.post("/v1/ingest", content=body)
        assert answer.status_code == 202, answer.text
        outcome = wait_for_batch(client, answer.json()["id"])
        assert outcome["status"] == "committed", outcome
        assert (outcome["outcome"]["violations"] > 0) == bad, outcome
        return int(outcome["batch"])

    with server.client(api_keys["ingest"]) as pusher, server.client(api_keys["auditor"]) as auditor:
        for _ in range(3):
            batch = push(pusher, bad=True)
        assert _settled(auditor, batch)["alerts"][0]["state"] == "clear"  # 3 games: fewer than 4
        assert hook.bodies == []

        push(pusher, bad=True)  # 4 of 4 games with a violation
        [fired] = hook.wait_for(1)
        assert (fired["rule"], fired["build"], fired["state"]) == ("violations", "hk/alert", "firing")
        assert (fired["value"], fired["threshold"], fired["unit"], fired["observed"]) == (100.0, 50.0, "percent", 4)
        for _ in range(3):  # three more batches while it fires: no delivery
            batch = push(pusher, bad=True)
        _settled(auditor, batch)
        assert len(hook.bodies) == 1

        batch = push(pusher, bad=False)  # 3 of 4: 75 %
        _settled(auditor, batch)
        assert len(hook.bodies) == 1
        push(pusher, bad=False)  # 2 of 4: 50 %, not above the threshold
        cleared = hook.wait_for(2)[1]
        assert (cleared["state"], cleared["value"]) == ("clear", 50.0)
        for bad in (False, False, True, True):  # 0 %, 0 %, 25 %, 50 %
            batch = push(pusher, bad=bad)
        _settled(auditor, batch)
        assert len(hook.bodies) == 2
        push(pusher, bad=True)  # 3 of 4: 75 %
        again = hook.wait_for(3)[2]
        assert (again["state"], again["value"]) == ("firing", 75.0)
        assert [b["id"] for b in hook.bodies] == ["violations/hk/alert#1", "violations/hk/alert#2",
                                                  "violations/hk/alert#3"]

        listed = _settled(auditor, 0)
        [alert] = listed["alerts"]
        assert (alert["rule"], alert["kind"], alert["build"], alert["state"]) == (
            "violations", "violation_rate", "hk/alert", "firing")
        assert (alert["value"], alert["threshold"], alert["window"]) == (75.0, 50.0, "the last 4 games")
        assert datetime.fromisoformat(alert["since"]) == datetime.fromisoformat(again["since"])
        assert listed["deliveries"] == {"pending": 0, "delivered": 3, "failed": 0, "retries": 0}
        assert auditor.get("/v1/alerts", params={"state": "clear"}).json()["alerts"] == []
    with server.client(api_keys["support"]) as client:
        assert client.get("/v1/alerts").status_code == 200
    with server.client(api_keys["analyst"]) as client:
        assert client.get("/v1/alerts").status_code == 403
    state = orjson.loads((tmp_path / "wh" / "_api" / "alerts.json").read_bytes())
    assert [(a["rule"], a["state"]) for a in state["alerts"]] == [("violations", "firing")]


# ------------------------------------------------------------------------ the engine alone


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _game(game: str, build: str, codes: tuple[str, ...] = (), complete: bool = True) -> dict[str, Any]:
    return {"game": game, "ruleset": "bazito", "server_build": build, "status": "violations" if codes else "compliant",
            "complete": complete, "players": ["a", "b"], "hands": 1, "codes": list(codes),
            "violations": dict.fromkeys(codes, 1), "end_time": None}


def _commit(batch: int, games: list[dict[str, Any]], lines: int = 100, quarantined: int = 0) -> CommitEvent:
    return CommitEvent(batch, 1, lines, 0.1, quarantined, tuple(games), (0.2,))


def _engine(text: str, tmp_path: Path, **kwargs: Any) -> AlertEngine:
    return AlertEngine(AlertConfig.from_text(text, "test.toml"), state=tmp_path, **kwargs)


def _states(engine: AlertEngine) -> dict[tuple[str, str | None], str]:
    return {(a["rule"], a["build"]): a["state"] for a in engine.alerts()}


def test_time_windows_codes_and_builds(tmp_path: Path) -> None:
    clock = Clock()
    engine = _engine("""
[[rule]]
name = "any"
kind = "violation_rate"
window = "60s"
min_games = 2
threshold = 40
[[rule]]
name = "must-play"
kind = "violation_rate"
code = "must_play"
window = "60s"
min_games = 2
threshold = 40
""", tmp_path, clock=clock)
    engine.observe(_commit(1, [_game("g1", "hk/x", ("bad_suit",)), _game("g2", "hk/x", ("bad_suit",)),
                               _game("g3", "hk/y"), _game("g4", "hk/y")]))
    engine.evaluate()
    assert _states(engine) == {("any", "hk/x"): "firing", ("any", "hk/y"): "clear",
                               ("must-play", "hk/x"): "clear", ("must-play", "hk/y"): "clear"}
    clock.now += 30
    engine.observe(_commit(2, [_game("g5", "hk/x", ("must_play",)), _game("g6", "hk/x")]))
    engine.evaluate()
    assert _states(engine)[("must-play", "hk/x")] == "clear"  # 1 of 4: 25 %
    engine.observe(_commit(3, [_game("g7", "hk/x", ("must_play", "bad_suit"))]))
    engine.evaluate()
    assert _states(engine)[("must-play", "hk/x")] == "clear"  # 2 of 5: 40 %, not above
    clock.now += 31  # the first commit's games leave the window: 2 of the 3 left have must_play
    engine.evaluate()
    found = {(a["rule"], a["build"]): a for a in engine.alerts()}
    assert (found[("must-play", "hk/x")]["state"], found[("must-play", "hk/x")]["observed"]) == ("firing", 3)
    assert found[("any", "hk/y")]["observed"] == 0
    clock.now += 61  # the window is empty: too few games to say the rate is high
    engine.evaluate()
    assert set(_states(engine).values()) == {"clear"}
    found = {(a["rule"], a["build"]): a for a in engine.alerts()}
    assert found[("must-play", "hk/x")]["message"].endswith("fewer than 2 to judge by")


def test_lag_and_quarantine(tmp_path: Path) -> None:
    stats = QueueStats()
    engine = _engine("""
[[rule]]
name = "lag"
kind = "ingest_lag"
threshold = 30
[[rule]]
name = "quarantine"
kind = "quarantine_rate"
batches = 2
min_lines = 150
threshold = 10
""", tmp_path, stats=lambda: stats)
    engine.evaluate()
    assert _states(engine) == {("lag", None): "clear", ("quarantine", None): "clear"}
    stats.oldest_age, stats.waiting = 40.0, 3
    engine.observe(_commit(1, [], lines=100, quarantined=20))
    engine.evaluate()
    assert _states(engine) == {("lag", None): "firing", ("quarantine", None): "clear"}  # 100 lines < 150
    engine.observe(_commit(2, [], lines=100, quarantined=5))
    engine.evaluate()
    alerts = {a["rule"]: a for a in engine.alerts()}
    assert alerts["quarantine"]["state"] == "firing" and alerts["quarantine"]["value"] == 12.5
    assert alerts["lag"]["value"] == 40.0 and alerts["lag"]["unit"] == "seconds"
    stats.oldest_age, stats.waiting = 0.0, 0
    engine.observe(_commit(3, [], lines=100, quarantined=0))  # the last 2 batches: 5 of 200
    engine.evaluate()
    assert _states(engine) == {("lag", None): "clear", ("quarantine", None): "clear"}
    engine.stop()


def _simulated(seed: int, tarkesh: bool) -> dict[str, list[bytes]]:
    config = SimConfig("persian", games=4, seed=seed, mode="points", options={"tarkesh": tarkesh})
    return {game.game: list(game.lines) for game in simulate(config)}


def test_a_build_that_changes_its_rules(tmp_path: Path) -> None:
    stored: dict[str, list[bytes]] = {}

    def lines(games: Any) -> list[tuple[bytes, str | None, int | None]]:
        return [(line, None, None) for game in games for line in stored[game]]

    rules = """
[[rule]]
name = "rules"
kind = "rules_changed"
every = 0
sample = 4
min_games = 3
threshold = 50
accept_after = "never"
"""
    engine = _engine(rules, tmp_path, lines=lines)

    def commit(batch: int, tarkesh: bool) -> None:
        games = _simulated(batch, tarkesh)
        stored.update(games)
        engine.observe(_commit(batch, [_game(g, "hk/p") for g in games]))
        engine.evaluate()

    commit(1, tarkesh=True)  # the build's first sample: its profile
    assert engine.alerts() == []
    baselines = orjson.loads((tmp_path / "alerts.json").read_bytes())["baselines"]
    assert baselines == {"rules": {"hk/p": "persian"}}
    commit(2, tarkesh=False)
    [alert] = engine.alerts()
    assert alert["state"] == "firing" and alert["value"] == 100.0
    assert "persian:tarkesh=false" in alert["message"] and "not persian as before" in alert["message"]
    commit(3, tarkesh=True)
    assert [a["state"] for a in engine.alerts()] == ["clear"]
    commit(4, tarkesh=False)
    assert [a["state"] for a in engine.alerts()] == ["firing"]
    engine.stop()

    # a restart: the baseline and the firing alert are where they were
    again = _engine(rules.replace('"never"', "0"), tmp_path, lines=lines)
    assert [a["state"] for a in again.alerts()] == ["firing"]
    engine = again
    commit(5, tarkesh=False)  # held past accept_after (0): the new profile is the build's now
    [alert] = engine.alerts()
    assert alert["state"] == "clear" and "taken as its profile" in alert["message"]
    engine.stop()
    assert orjson.loads((tmp_path / "alerts.json").read_bytes())["baselines"] == {
        "rules": {"hk/p": "persian:tarkesh=false"}}


def test_the_commits_waiting_are_bounded_by_their_games(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import service.alerts

    monkeypatch.setattr(service.alerts, "WAITING_GAMES", 3)
    engine = _engine('[[rule]]\nname = "lag"\nkind = "ingest_lag"\nthreshold = 1\n', tmp_path, tick=0.01)
    two = [_game("g1", "hk/x"), _game("g2", "hk/x")]
    engine.submit(_commit(1, two))
    engine.submit(_commit(2, two))  # 4 games would wait: dropped, not waited for
    engine.submit(_commit(3, two[:1]))
    assert engine.events_dropped == 1
    assert [e.batch for e in iter(engine._next, None)] == [1, 3]


# ------------------------------------------------------------------------ the webhook


def _wait_stats(sender: WebhookSender, predicate: Callable[[Any], bool]) -> Any:
    deadline = time.monotonic() + DEADLINE
    while not predicate(stats := sender.stats()):
        assert time.monotonic() < deadline, stats
        time.sleep(0.01)  # polling interval
    return stats


def test_a_delivery_is_retried_with_backoff() -> None:
    hook = Receiver(answers=[503, 503])
    sender = WebhookSender(Webhook(hook.url, backoff=0.2, attempts=5))
    sender.start()
    try:
        sender.send({"id": "r/-#1", "state": "firing"})
        bodies = hook.wait_for(3)
        assert [b["id"] for b in bodies] == ["r/-#1"] * 3
        stats = _wait_stats(sender, lambda s: s.pending == 0)
        assert (stats.delivered, stats.failed, stats.retries) == (1, 0, 2)
        gaps = [b - a for a, b in zip(hook.times, hook.times[1:], strict=False)]
        assert gaps[0] >= 0.2 and gaps[1] >= 0.4  # doubled
    finally:
        sender.stop()
        hook.close()


def test_a_refused_delivery_is_not_retried() -> None:
    hook = Receiver(answers=[400])
    sender = WebhookSender(Webhook(hook.url, backoff=0.01, attempts=5))
    sender.start()
    try:
        sender.send({"id": "r/-#1", "state": "firing"})
        stats = _wait_stats(sender, lambda s: s.failed == 1)
        assert (stats.delivered, stats.retries, len(hook.bodies)) == (0, 0, 1)
    finally:
        sender.stop()
        hook.close()


# ------------------------------------------------------------------------ the rules file


@pytest.mark.parametrize(("text", "says"), [
    ('[[rule]]\nname = "x"\nkind = "violation_rate"\ngames = 5\n', "rule 1 ('x'): `threshold` is missing"),
    ('[[rule]]\nname = "x"\nkind = "violation_rate"\nthreshold = 5\n', "give either `window`"),
    ('[[rule]]\nname = "x"\nkind = "violation_rate"\nthreshold = 5\ngames = 5\nwindow = "1m"\n', "give either"),
    ('[[rule]]\nname = "x"\nkind = "violation_rate"\nthreshold = 5\ngames = 5\ncode = "must_pay"\n',
     "unknown violation code 'must_pay'"),
    ('[[rule]]\nname = "x"\nkind = "ingest_lag"\nthreshold = 5\nwindow = "1m"\n',
     "a ingest_lag rule does not take window"),
    ('[[rule]]\nname = "x"\nkind = "lag"\nthreshold = 5\n', "`kind` must be one of"),
    ('[[rule]]\nname = "x"\nkind = "quarantine_rate"\nthreshold = 500\nbatches = 2\n', "from 0 to 100"),
    ('[[rule]]\nname = "x"\nkind = "quarantine_rate"\nthreshold = 5\nwindow = "soon"\n', "expected a duration"),
    ('[[rule]]\nname = "x"\nkind = "ingest_lag"\nthreshold = 5\n[[rule]]\nname = "x"\nkind = "ingest_lag"\nthreshold = 6\n',
     "the name 'x' is used twice"),
    ('[webhook]\nurl = "ftp://host/x"\n', "`url` must be an http:// or https:// URL"),
    ('[alerts]\n', "unknown table(s) alerts"),
])
def test_the_rules_file_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(AlertFileError) as caught:
        AlertConfig.from_text(text, "alerts.toml")
    assert says in str(caught.value) and str(caught.value).startswith("alerts.toml")


def test_the_documented_example_reads(tmp_path: Path) -> None:
    """The example of docs/operations.md is a file the service takes."""
    document = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    example = document.split("```toml\n# alerts.toml")[1].split("```")[0]
    config = AlertConfig.from_text(example, "docs/operations.md")
    assert {r.kind.value for r in config.rules} == {"violation_rate", "rules_changed", "ingest_lag",
                                                    "quarantine_rate"}
    assert config.webhook is not None
