"""Events round-trip: a line the simulator writes (`encode`), read by the native core and
rebuilt as a Python value (`from_encoded`), encodes back to the very same JSON object."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from engine import _core
from engine.events import Deal, Play, encode, from_encoded
from engine.replay import GameReplay, build_replay
from engine.simulate import SimConfig, simulate


def replay_game(paths: list[str], game: str) -> GameReplay | None:
    verdict, errors = _core.replay_game(paths, game)
    return None if verdict is None else build_replay(verdict, errors)


@pytest.mark.parametrize("ruleset", ["bazito", "persian", "pis-yedili"])
def test_simulated_lines_round_trip_through_the_core(ruleset: str, tmp_path: Path) -> None:
    kinds: set[str] = set()
    for game in simulate(SimConfig(ruleset, games=4, seed=11)):
        log = tmp_path / f"{game.game}.jsonl"
        log.write_bytes(b"\n".join(game.lines) + b"\n")
        replayed = replay_game([str(log)], game.game)
        assert replayed is not None
        # the simulator writes a shipper's retries (identical repeats): one step each
        distinct = list(dict.fromkeys(game.lines))
        assert len(replayed.steps) == len(distinct)
        for step, line in zip(replayed.steps, distinct, strict=True):
            assert step.event is not None, line
            # producer extensions (`x_…`) are not part of the event
            written = {k: v for k, v in orjson.loads(line).items() if not k.startswith("x_")}
            assert encode(step.event) == written
            assert from_encoded(encode(step.event)) == step.event
            kinds.add(step.event.type)
    assert {"game", "deal", "play", "draw", "end"} <= kinds


def test_a_repaired_card_comes_back_in_notation(tmp_path: Path) -> None:
    """The core repairs what notation.md allows (`10H` → `TH`); the Python value holds
    the repaired spelling, never the raw one."""
    lines = [
        {"game": "g", "seq": 0, "type": "game", "format": "haftkhabis/1", "ruleset": "bazito",
         "players": ["ali", "sara"]},
        {"game": "g", "seq": 1, "type": "deal", "hand": 1, "dealer": "ali", "starter": "3C",
         "hands": {"ali": ["10H", "4C", "5C", "6C", "8D", "9D", "KD"],
                   "sara": ["2H", "3H", "4H", "5H", "6H", "9H", "QH"]}},
        {"game": "g", "seq": 2, "type": "play", "player": "sara", "card": "3h"},
    ]
    log = tmp_path / "g.jsonl"
    log.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    replayed = replay_game([str(log)], "g")
    assert replayed is not None
    deal, play = replayed.steps[1].event, replayed.steps[2].event
    assert isinstance(deal, Deal) and deal.hands["ali"][0] == "TH"
    assert isinstance(play, Play) and play.card == "3H"


def test_anything_but_the_cores_encoding_is_refused() -> None:
    with pytest.raises(ValueError, match="not an event"):
        from_encoded({"type": "play", "game": "g", "seq": 3})
    with pytest.raises(ValueError, match="not an event"):
        from_encoded({"type": "shuffle", "game": "g", "seq": 3})
