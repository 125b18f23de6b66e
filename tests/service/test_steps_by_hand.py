"""A step answered from its hand alone (`build_replay(hand=…)`), or from its line alone
(`build_step`, what the step endpoint builds so it need not convert every state of a long
game), is the same answer as from the whole game's replay: for every line of the sample
games, in the support view and in each player's own view. So is a step of a game recorded
without its states (`record_lines(states=False)`, what the service keeps), whose states
the core replays when asked."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from engine.replay import RecordedGame, parse_lines, record_lines
from service import views
from service.warehouse import Replayed

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def _games(*, states: bool = True) -> list[RecordedGame]:
    games: list[RecordedGame] = []
    for path in sorted(SAMPLE.glob("*.jsonl*")):
        if path.name.endswith(".json"):
            continue
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        lines = [(raw, path.name, n) for n, raw in enumerate(parse_lines(data), 1)]
        ids = sorted({game for raw, _, _ in lines if (game := _game_of(raw)) is not None})
        for game in ids[:2]:  # a few games per ruleset, violations among them
            recorded = record_lines(lines, game, states=states)
            assert recorded is not None
            games.append(recorded)
    return games


def _game_of(raw: bytes) -> str | None:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    game = value.get("game") if isinstance(value, dict) else None
    return game if isinstance(game, str) else None


@pytest.mark.slow
@pytest.mark.parametrize("recorded", _games(), ids=lambda r: r.verdict.game)
def test_a_step_from_its_hand_equals_the_step_from_the_whole_game(recorded: RecordedGame) -> None:
    whole = Replayed.of(recorded.build(digest=False))
    viewers: list[str | None] = [None, *whole.replay.players]
    hands: dict[int, Replayed] = {}
    checked = 0
    for seq, step in whole.by_seq.items():
        hand = recorded.hand_of(seq)
        assert hand == step.hand
        if hand not in hands:  # each hand built once (setdefault would build it at every step)
            hands[hand] = Replayed.of(recorded.build(hand=hand, digest=False))
        by_hand = hands[hand]
        assert by_hand.by_seq[seq].index == step.index
        for viewer in viewers:
            expected = views.step_view(whole, seq, viewer, "http://127.0.0.1:8501")
            got = views.step_view(by_hand, seq, viewer, "http://127.0.0.1:8501")
            assert got == expected, (seq, viewer)
            checked += 1
    assert checked >= len(whole.by_seq)
    assert recorded.hand_of(10**9) is None


@pytest.mark.parametrize("recorded", _games(), ids=lambda r: r.verdict.game)
def test_a_step_from_its_line_alone_equals_the_step_from_the_whole_game(recorded: RecordedGame) -> None:
    whole = Replayed.of(recorded.build(digest=False))
    viewers: list[str | None] = [None, *whole.replay.players]
    for seq, step in whole.by_seq.items():
        alone = recorded.step(seq)
        assert alone is not None and [s.seq for s in alone.steps] == [seq]
        one = Replayed.of(alone)
        built = one.by_seq[seq]
        # the step itself, field by field: its place, the states around it, its why-text
        assert (built.index, built.hand, built.number, built.before, built.after, built.fact,
                built.why, built.violations, built.set_aside, built.text) == (
            step.index, step.hand, step.number, step.before, step.after, step.fact,
            step.why, step.violations, step.set_aside, step.text), seq
        for viewer in viewers:
            expected = views.step_view(whole, seq, viewer, "http://127.0.0.1:8501")
            assert views.step_view(one, seq, viewer, "http://127.0.0.1:8501") == expected, (seq, viewer)
    assert recorded.step(10**9) is None


@pytest.mark.parametrize(("kept", "replayed"), list(zip(_games(), _games(states=False), strict=True)),
                         ids=lambda r: r.verdict.game)
def test_a_game_kept_without_states_answers_as_one_kept_with_them(
        kept: RecordedGame, replayed: RecordedGame) -> None:
    assert kept.verdict.game == replayed.verdict.game and kept.outline == replayed.outline
    whole = Replayed.of(kept.build(digest=False))
    assert Replayed.of(replayed.build(digest=False)).replay == whole.replay
    viewers: list[str | None] = [None, *whole.replay.players]
    for seq in whole.by_seq:
        alone = replayed.step(seq)
        assert alone is not None
        one = Replayed.of(alone)
        for viewer in viewers:
            expected = views.step_view(whole, seq, viewer, "http://127.0.0.1:8501")
            assert views.step_view(one, seq, viewer, "http://127.0.0.1:8501") == expected, (seq, viewer)
