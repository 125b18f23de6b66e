"""A game, its steps and its hand reports over HTTP, against what the warehouse holds and
what the dashboard's replay (the same engine) shows for the same line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine import _core
from engine import render as ui
from engine.replay import GameReplay, replay_lines
from engine.report import render_hand_report
from ingest import read
from service.app import REPRODUCE_SOURCE
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
    reader = read.connect(sample_copy)
    replay = replay_lines(read.game_lines(reader, DISPUTED), DISPUTED)
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


def _replay(warehouse: Path, game: str) -> GameReplay:
    replay = replay_lines(read.game_lines(read.connect(warehouse), game), game)
    assert replay is not None
    return replay


def test_a_forced_move_says_why_in_the_engines_words(api: Server, api_keys: Keys,
                                                     sample_copy: Path) -> None:
    """The step's `why` is the replay's (`engine.narrate.MoveReasons`): the very text the
    dashboard shows and the dispute report prints, for a forced draw above all."""
    forced_draws = 0
    with api.client(api_keys["support"]) as client:
        for game in (DISPUTED, "t41-bazito-1", "t41-pis-1"):
            replay = _replay(sample_copy, game)
            for step in replay.steps:
                if step.kind not in ("play", "draw", "pass") or not step.before \
                        or step.before.get("hand") is None:
                    continue
                decision = client.get(f"/v1/games/{game}/steps/{step.seq}").json()["decision"]
                assert decision["why"] == step.why, (game, step.seq)
                draw_kind = (step.fact or {}).get("draw_kind")
                assert decision["draw_kind"] == (draw_kind if step.kind == "draw" else None)
                if step.kind == "draw" and draw_kind in ("seven_total", "gift", "failed_follow"):
                    forced_draws += 1
                    assert step.why and step.why.startswith(f"draws {len(step.raw['cards'])}")
                    assert ui.why_html(step.why) in render_hand_report(replay, step.hand, seq=step.seq)
                if any(v.code.value == "must_play" for v in step.violations):
                    assert decision["forced"] is True
                    assert decision["options"]["obliged"] is True and decision["options"]["play"]
    assert forced_draws


def test_a_players_view_withholds_the_why_of_anothers_draw(api: Server, api_keys: Keys,
                                                            sample_copy: Path) -> None:
    replay = _replay(sample_copy, DISPUTED)
    theirs = next(s for s in replay.steps if s.kind == "draw" and s.actor != "ali" and s.why)
    mine = next(s for s in replay.steps if s.kind == "draw" and s.actor == "ali" and s.why)
    with api.client(api_keys["ali"]) as ali:
        assert ali.get(f"/v1/games/{DISPUTED}/steps/{theirs.seq}").json()["decision"]["why"] is None
        assert ali.get(f"/v1/games/{DISPUTED}/steps/{mine.seq}").json()["decision"]["why"] == mine.why


def test_the_hand_report_is_the_clis(api: Server, api_keys: Keys, sample_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "cli.app", "report", "--game", DISPUTED, "--hand", "1",
                    "--warehouse", str(sample_copy), "--out", str(out)], cwd=REPO, check=True,
                   capture_output=True, timeout=300)
    with api.client(api_keys["support"]) as client:
        response = client.get(f"/v1/games/{DISPUTED}/hands/1/report")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    # the same report, but for the warehouse it reproduces from: named, not its path here
    cli = out.read_text(encoding="utf-8").replace(f"--warehouse {sample_copy}", REPRODUCE_SOURCE)
    assert response.text == cli
    assert REPRODUCE_SOURCE in response.text and str(sample_copy) not in response.text
    assert "<script" not in response.text


def test_a_report_about_one_line_in_one_players_view(api: Server, api_keys: Keys, sample_copy: Path,
                                                     tmp_path: Path) -> None:
    """`seq` and `player` ask for what `haftkhabis report --seq S --player P` writes."""
    replay = _replay(sample_copy, DISPUTED)
    step = next(s for s in replay.hand_steps(1) if s.kind == "play" and not s.flagged)
    out = tmp_path / "report.html"
    subprocess.run([sys.executable, "-m", "cli.app", "report", "--game", DISPUTED, "--hand", "1",
                    "--seq", str(step.seq), "--player", "bita", "--warehouse", str(sample_copy),
                    "--out", str(out)], cwd=REPO, check=True, capture_output=True, timeout=300)
    with api.client(api_keys["support"]) as client:
        response = client.get(f"/v1/games/{DISPUTED}/hands/1/report",
                              params={"seq": step.seq, "player": "bita"})
        assert response.status_code == 200
        assert response.text == out.read_text(encoding="utf-8")
        assert 'data-view="player"' in response.text and "what bita could see" in response.text
        assert f"seq {step.seq} · the disputed step" in response.text
        assert str(sample_copy) not in response.text and ".jsonl" not in response.text
        support_view = client.get(f"/v1/games/{DISPUTED}/hands/1/report", params={"seq": step.seq})
        assert support_view.text == render_hand_report(replay, 1, seq=step.seq, source=REPRODUCE_SOURCE)
        for params, words in (({"seq": 99999}, "has no line with seq 99999"),
                              ({"seq": replay.hand_steps(2)[0].seq}, "hand 1 of game"),
                              ({"player": "nobody"}, "'nobody' did not play this game")):
            refused = client.get(f"/v1/games/{DISPUTED}/hands/1/report", params=params)
            assert refused.status_code == 404, params
            assert words in refused.json()["message"]
        assert client.get(f"/v1/games/{DISPUTED}/hands/1/report",
                          params={"seq": -1}).status_code == 422


def test_a_players_token_gets_its_own_report_only(api: Server, api_keys: Keys, sample_copy: Path) -> None:
    replay = _replay(sample_copy, DISPUTED)
    flagged = next(s for s in replay.hand_steps(1) if s.flagged)
    with api.client(api_keys["ali"]) as ali:
        own = ali.get(f"/v1/games/{DISPUTED}/hands/1/report")
        assert own.status_code == 200
        assert own.text == render_hand_report(replay, 1, viewer="ali")
        assert ali.get(f"/v1/games/{DISPUTED}/hands/1/report", params={"player": "ali"}).text == own.text
        about = ali.get(f"/v1/games/{DISPUTED}/hands/1/report", params={"seq": flagged.seq})
        assert about.text == render_hand_report(replay, 1, seq=flagged.seq, viewer="ali")
        other = ali.get(f"/v1/games/{DISPUTED}/hands/1/report", params={"player": "bita"})
        assert other.status_code == 403
        assert other.json()["message"] == "a token of ali may not see bita's view"
        game = ali.get(f"/v1/games/{DISPUTED}").json()
        assert game["links"]["report"] == f"/v1/games/{DISPUTED}/hands/{{hand}}/report?player=ali"
