"""A player's token gets only what its player could see (issue 28), tried as an attacker
holding that token would: `haftkhabis serve` over a warehouse of the leak tests' dozen
games (tests/leakcheck.py: every ruleset, both persian modes, injected and planted
faults), a token for every player, and every answer read by the leak checker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from engine.replay import GameReplay
from ingest.pipeline import ingest
from service.auth import key_entry, new_key
from tests.leakcheck import Corpus, Leak, Sight, as_text, cards_in, leaks, report_leaks
from tests.service.conftest import Server, start_server


@pytest.fixture(scope="module")
def tokens(leak_corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    players = sorted({p for replay in leak_corpus.replays.values() for p in replay.players})
    keys = {player: new_key() for player in players}
    path = tmp_path_factory.mktemp("leak-keys") / "keys.toml"
    path.write_text("\n".join(key_entry(f"player-{p}", keys[p], player=p) for p in players), encoding="utf-8")
    return path, keys


@pytest.fixture(scope="module")
def server(leak_corpus: Corpus, tokens: tuple[Path, dict[str, str]],
           tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Server]:
    folder = tmp_path_factory.mktemp("leak-warehouse")
    log = folder / "leaks.jsonl"
    log.write_bytes(b"".join(raw + b"\n" for raw in leak_corpus.lines))
    ingest([str(log)], str(folder / "wh"), workers=1)

    class _Keys:  # what start_server reads of the keys
        file = tokens[0]

    running = start_server(folder / "wh", _Keys(), folder)  # type: ignore[arg-type]
    yield lambda: running  # type: ignore[misc]
    running.stop()


def _client(server: Server, key: str) -> httpx.Client:
    return server.client(key)


@pytest.mark.slow
def test_every_players_token_on_its_games(leak_corpus: Corpus, server: Callable[[], Server],
                                          tokens: tuple[Path, dict[str, str]]) -> None:
    """For every player of every game, with their own token: the game and every hand's
    dispute report; the first hand's steps shared out among the players (each step asked
    by one of them: the engine's tests ask every step in every view), and a what-if at
    every fourth move of it (with up to two of its alternatives played, when it was theirs)."""
    found: list[Leak] = []
    asked = 0
    for replay in leak_corpus.replays.values():
        sight = Sight.of(replay)
        steps = [s for s in replay.steps if s.hand == replay.hands[0]]
        for turn, player in enumerate(replay.players):
            with _client(server(), tokens[1][player]) as client:
                found += _game(client, replay, sight, player)
                asked += 1 + len(replay.hands)
                for step in steps[turn::len(replay.players)]:
                    found += _step(client, replay, sight, player, step.seq)
                for step in [s for s in steps if s.kind in ("play", "draw", "pass")][::4]:
                    found += _whatif(client, replay, sight, player, step.seq)
                asked += len(steps[turn::len(replay.players)])
    assert asked > 500
    assert not found, "\n".join(map(str, found[:20]))


def _get(client: httpx.Client, path: str, **params: object) -> httpx.Response:
    answer = client.get(path, params=params)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    assert "leaks.jsonl" not in answer.text  # no server paths
    return answer


def _game(client: httpx.Client, replay: GameReplay, sight: Sight, player: str) -> list[Leak]:
    game = replay.game
    view = _get(client, f"/v1/games/{game}").json()
    assert view["viewer"] == player and view["source_files"] is None
    found = leaks(view, sight.in_game(player), player, f"{game} game view")
    for hand in replay.hands:
        report = _get(client, f"/v1/games/{game}/hands/{hand}/report").text
        assert 'data-view="player"' in report
        found += report_leaks(report, replay, sight, player, hand, f"{game} hand {hand} report")
    return found


def _step(client: httpx.Client, replay: GameReplay, sight: Sight, player: str, seq: int) -> list[Leak]:
    where = f"{replay.game} seq {seq} step"
    view = _get(client, f"/v1/games/{replay.game}/steps/{seq}").json()
    assert view["viewer"] == player and view["file"] is None
    return leaks(view, sight.at(player, seq), player, where)


def _whatif(client: httpx.Client, replay: GameReplay, sight: Sight, player: str, seq: int) -> list[Leak]:
    where = f"{replay.game} seq {seq} what-if"
    view = _get(client, f"/v1/games/{replay.game}/steps/{seq}/whatif").json()
    found: list[Leak] = []
    for move in view["alternatives"][:2]:  # their own move: the branches it opens
        branch = _get(client, f"/v1/games/{replay.game}/steps/{seq}/whatif", move=[move, "pass"]).json()
        recorded = branch.pop("recorded_outcome")
        found += leaks(branch, sight.at(player, seq), player, f"{where} {move}")
        found += leaks(recorded, sight.in_hand(player, branch["hand"] or 0), player, f"{where} {move} (recorded)")
    recorded = view.pop("recorded_outcome")
    return (found + leaks(view, sight.at(player, seq), player, where)
            + leaks(recorded, sight.in_hand(player, view["hand"] or 0), player, f"{where} (recorded)"))


def test_another_players_view_is_refused(leak_corpus: Corpus, server: Callable[[], Server],
                                         tokens: tuple[Path, dict[str, str]]) -> None:
    replay = next(iter(leak_corpus.replays.values()))
    player, other = replay.players[0], replay.players[1]
    stranger = next(p for p in tokens[1] if p not in replay.players)
    with _client(server(), tokens[1][player]) as client:
        for path in (f"/v1/games/{replay.game}", f"/v1/games/{replay.game}/steps/3",
                     f"/v1/games/{replay.game}/steps/3/whatif", f"/v1/games/{replay.game}/hands/1/report"):
            assert client.get(path, params={"player": other}).status_code == 403
    with _client(server(), tokens[1][stranger]) as client:
        assert client.get(f"/v1/games/{replay.game}/steps/3/whatif").status_code == 403


@pytest.mark.parametrize("search", ["flat", "ismcts"])
def test_a_players_analysis_holds_only_what_they_saw(leak_corpus: Corpus, server: Callable[[], Server],
                                                     tokens: tuple[Path, dict[str, str]], search: str) -> None:
    """Issue 32's analysis through a player's token, for every player of every game's first
    hand and both searches: each decision against what its player had seen at its seq, the
    rest of the answer (their deal) against what they saw in the hand."""
    found: list[Leak] = []
    decisions = cards = 0
    for replay in leak_corpus.replays.values():
        sight = Sight.of(replay)
        hand = replay.hands[0]
        for player in replay.players:
            with _client(server(), tokens[1][player]) as client:
                where = f"{replay.game} hand {hand} analysis"
                view = _get(client, f"/v1/games/{replay.game}/hands/{hand}/analysis", rollouts=10,
                            search=search).json()
                assert view["viewer"] == player and view["search"] == search
                for decision in view.pop("decisions"):
                    assert decision["player"] == player
                    decisions += 1
                    cards += len(cards_in(as_text(decision)))  # what the checker has to judge
                    found += leaks(decision, sight.at(player, decision["seq"]), player,
                                   f"{where} seq {decision['seq']}")
                found += leaks(view, sight.in_hand(player, hand), player, where)
    assert decisions > 50 and cards > decisions  # the moves name cards: the check has teeth
    assert not found, "\n".join(map(str, found[:20]))
