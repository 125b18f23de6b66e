"""A game, its steps and its hand reports over HTTP, against what the warehouse holds and
what the dashboard's replay (the same engine) shows for the same line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dashboards import data
from dashboards.game_replay import replay_lines
from engine import _core
from tests.service.conftest import DISPUTED, REPO, Keys, Server


@pytest.fixture(scope="module")
def verdicts(sample_log: Path) -> dict[str, _core.Verdict]:
    validator = _core.Validator()
    validator.feed_paths([str(sample_log)])
    found = validator.take_verdicts() + validator.finish()
    return {v.game: v for v in found}


def test_a_game_as_stored(api: Server, api_keys: Keys, verdicts: dict[str, _core.Verdict]) -> None:
    with api.client(api_keys["support"]) as client:
        for game, verdict in verdicts.items():
            view = client.get(f"/v1/games/{game}").json()
            assert view["game"] == game and view["ruleset"] == verdict.ruleset
            assert view["verdict"]["status"] == verdict.status
            assert view["verdict"]["totals"] == verdict.totals
            assert view["verdict"]["violations"] == len(verdict.violations)
            assert sorted((v["seq"], v["code"]) for v in view["violations"]) == \
                sorted((v["seq"], v["code"]) for v in verdict.violations)
            assert all(v["explanation"] for v in view["violations"])
            decided = [h for h in view["hands"] if h["decided"]]
            assert [h["hand"] for h in decided] == [h["hand"] for h in verdict.hands or []]
            for hand, outcome in zip(decided, verdict.hands or [], strict=True):
                assert hand["winners"] == outcome["winners"]
                if outcome["scores"] is not None:
                    assert {p["player"]: p["points"] for p in hand["players"]} == outcome["scores"]
            assert view["links"]["dashboard"].endswith(f"/replay?game={game}")


def test_unknown_game_step_and_hand_are_404(api: Server, api_keys: Keys) -> None:
    with api.client(api_keys["support"]) as client:
        for path, words in (("/v1/games/no-such-game", "no game 'no-such-game' in the warehouse"),
                            ("/v1/games/no-such-game/steps/1", "no game 'no-such-game'"),
                            (f"/v1/games/{DISPUTED}/steps/99999", "has no line with seq 99999"),
                            (f"/v1/games/{DISPUTED}/hands/9/report", "has no hand 9")):
            response = client.get(path)
            assert response.status_code == 404, path
            problem = response.json()
            assert problem["error"] == "not_found" and words in problem["message"]


def test_every_step_matches_the_dashboards_replay(api: Server, api_keys: Keys, sample_copy: Path) -> None:
    reader = data.connect(sample_copy)
    replay = replay_lines(data.game_lines(reader, DISPUTED), DISPUTED)
    assert replay is not None
    with api.client(api_keys["support"]) as client:
        for step in replay.steps:
            view = client.get(f"/v1/games/{DISPUTED}/steps/{step.seq}").json()
            assert (view["hand"], view["step"], view["kind"], view["text"]) == \
                (step.hand, step.number, step.kind, step.text)
            assert view["event"] == step.raw
            assert [(v["code"], v["message"]) for v in view["violations"]] == \
                [(v.code.value, v.message) for v in step.violations]
            after = step.after
            if after is None or after.get("hand") is None:
                assert view["table"] is None or view["table"]["hand"] is None
                continue
            table = view["table"]
            assert table["hands"] == after["hands"]
            for name in ("pile_top", "current_suit", "direction", "stock_size", "mover", "pending_total"):
                assert table[name] == after[name], name
            if after.get("legal") and not after.get("outcome"):
                legal = after["legal"]
                assert view["to_move"]["player"] == legal["player"] == table["mover"]
                assert view["to_move"]["play"] == legal["play"]
                assert view["to_move"]["obliged"] == legal["obliged"]
            link = view["links"]["dashboard"]
            assert link == f"http://127.0.0.1:8501/replay?game={DISPUTED}&hand={step.hand}&step={step.number}"


def test_a_forced_move_says_why(api: Server, api_keys: Keys, sample_copy: Path) -> None:
    """A must_play violation: the player drew while holding a card they had to play."""
    reader = data.connect(sample_copy)
    seqs = [r[0] for r in reader.rows(
        "SELECT seq FROM violations WHERE game_id = ? AND code = 'must_play'", [DISPUTED])]
    obliged = []
    with api.client(api_keys["support"]) as client:
        for seq in seqs:
            decision = client.get(f"/v1/games/{DISPUTED}/steps/{seq}").json()["decision"]
            assert decision["forced"] is True
            assert "must_play" in decision["why"]
            assert decision["options"]["obliged"] is True and decision["options"]["play"]
            obliged.append(seq)
        # and any step of an owed gift or a forced draw says so too
        replay = replay_lines(data.game_lines(reader, DISPUTED), DISPUTED)
        assert replay is not None
        gift = next((s for s in replay.steps if s.before and (s.before.get("legal") or {}).get("gift")
                     and s.kind == "draw"), None)
        if gift is not None:
            decision = client.get(f"/v1/games/{DISPUTED}/steps/{gift.seq}").json()["decision"]
            assert decision["forced"] is True and "gift" in decision["why"]
    assert obliged or not seqs


def test_the_hand_report_is_the_clis(api: Server, api_keys: Keys, sample_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "cli.app", "report", "--game", DISPUTED, "--hand", "1",
                    "--warehouse", str(sample_copy), "--out", str(out)], cwd=REPO, check=True,
                   capture_output=True, timeout=300)
    with api.client(api_keys["support"]) as client:
        response = client.get(f"/v1/games/{DISPUTED}/hands/1/report")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.text == out.read_text(encoding="utf-8")
    assert "<script" not in response.text
