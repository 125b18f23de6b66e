"""A player view shows only what that player could see (issue 28): every step, every hand's
dispute report and what-if branches of a dozen games (every ruleset, both persian modes,
injected and planted faults), rendered in every player's view and read by the leak
checker (tests/leakcheck.py), which knows which cards each player saw at each moment."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

from engine.player_view import public_replay
from engine.report import render_hand_report
from engine.whatif import Move, WhatIf, what_if
from tests.leakcheck import Corpus, Leak, Sight, cards_in, leaks, report_leaks


@pytest.fixture(scope="module")
def sights(leak_corpus: Corpus) -> dict[str, Sight]:
    return {game: Sight.of(replay) for game, replay in leak_corpus.replays.items()}


def test_the_checker_reads_every_spelling_of_a_card() -> None:
    assert cards_in('{"cards":["TH","7C"]}') == {"TH", "7C"}
    assert cards_in("sina plays 10♥ and 7♣") == {"TH", "7C"}
    assert cards_in('<span class="r">10</span><span class="s">♥</span>') == {"TH"}
    assert cards_in('<span data-card="QS" title="Q♠ — 3 points">') == {"QS"}
    # not cards: ids, hashes, CSS, a stock count followed by a suit's name
    assert cards_in("t41-bazito-1 sha256 7c3fd2 size: A4; Stock 22 · Suit ♥ hearts") == set()


def test_the_checker_finds_what_the_support_view_shows(leak_corpus: Corpus, sights: dict[str, Sight]) -> None:
    """The checker is not blind: the support view's report and steps, read as if a player
    were shown them, leak the other hands in every game."""
    for game, replay in leak_corpus.replays.items():
        sight, player = sights[game], replay.players[0]
        hand = replay.hands[-1]
        assert report_leaks(render_hand_report(replay, hand), replay, sight, player, hand, game)
        deal = replay.hand_steps(hand)[0]
        assert leaks(deal.after, sight.at(player, deal.seq), player, game)


def _json(value: object) -> str:
    return orjson.dumps(dataclasses.asdict(value), default=str).decode()  # type: ignore[call-overload]


def test_every_step_in_every_players_view(leak_corpus: Corpus, sights: dict[str, Sight]) -> None:
    found = []
    steps = 0
    for game, replay in leak_corpus.replays.items():
        for player in replay.players:
            view = public_replay(replay, player)
            assert view.viewer == player and not view.errors and not view.game_violations
            sight = sights[game]
            for step in view.steps:
                where = f"{game} seq {step.seq}"
                text = _json(dataclasses.replace(step, before=None))
                assert "leaks.jsonl" not in text  # no server paths
                found += leaks(text, sight.at(player, step.seq), player, where)
                found += leaks(step.before, sight.before(player, step.seq), player, f"{where} (before)")
                steps += 1
            for score in view.scores:
                found += leaks(_json(score), sight.in_hand(player, score.hand), player,
                               f"{game} hand {score.hand} scores")
    assert steps > 5000
    assert not found, "\n".join(map(str, found[:20]))


def test_every_hand_report_in_every_players_view(leak_corpus: Corpus, sights: dict[str, Sight]) -> None:
    found = []
    reports = 0
    for game, replay in leak_corpus.replays.items():
        for player in replay.players:
            view = public_replay(replay, player)  # once a player, as the dashboard caches it
            for hand in replay.hands:
                document = render_hand_report(view, hand)
                assert document == render_hand_report(replay, hand, viewer=player)
                assert 'data-view="player"' in document and "leaks.jsonl" not in document
                found += report_leaks(document, replay, sights[game], player, hand, f"{game} hand {hand}")
                reports += 1
    assert reports > 100
    assert not found, "\n".join(map(str, found[:20]))


@pytest.mark.slow
def test_what_if_in_every_players_view(leak_corpus: Corpus, sights: dict[str, Sight]) -> None:
    """At every sixth move of every game, what-ifs in the mover's view (what was legal,
    every alternative played, and one more move where their view lets the branch go on)
    and in another player's view, in turn (nothing to play: it was not their move)."""
    found = []
    branches = own = others = 0
    for game, replay in leak_corpus.replays.items():
        lines = leak_corpus.lines_of(game)
        moves = [s for s in replay.steps if s.kind in ("play", "draw", "pass") and s.hand][::6]
        for turn, step in enumerate(moves):
            mover = ((step.before or {}).get("legal") or {}).get("player")
            onlookers = [p for p in replay.players if p != mover]
            for player in [p for p in (mover, onlookers[turn % len(onlookers)]) if p]:
                first = what_if(lines, game, step.seq, [], player)
                found += _whatif_leaks(first, sights[game], player, f"{game} seq {step.seq} what-if")
                if player != mover:
                    assert first.alternatives == () and first.stopped
                    others += 1
                    continue
                own += 1
                for move in first.alternatives:
                    branch = what_if(lines, game, step.seq, [move, *_onwards(move)], player)
                    assert "leaks.jsonl" not in orjson.dumps(branch.to_json()).decode()
                    found += _whatif_leaks(branch, sights[game], player, f"{game} seq {step.seq} what-if {move}")
                    assert branch.stopped or branch.refused or branch.next_moves
                    branches += 1
    assert own > 50 and others > 50 and branches > 100
    assert not found, "\n".join(map(str, found[:20]))


def _whatif_leaks(result: WhatIf, sight: Sight, player: str, where: str) -> list[Leak]:
    """A what-if against what `player` had seen once the line it replaces was played; the
    recorded outcome of the hand it compares with against what they saw by its end."""
    shown = result.to_json()
    recorded = shown.pop("recorded_outcome")
    return (leaks(shown, sight.at(player, result.seq), player, where)
            + leaks(recorded, sight.in_hand(player, result.hand or 0), player, f"{where} (recorded outcome)"))


def _onwards(move: Move) -> list[Move]:
    """A second move to try after `move`: a pass (legal when a follow-up may be declined;
    otherwise refused or stopped, and either must stay inside the view)."""
    return [] if move.kind == "draw" else [Move("pass")]
