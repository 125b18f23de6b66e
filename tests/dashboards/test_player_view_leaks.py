"""The Replay page in player view shows only what that player could see (issue 28): every
game of the dashboard's sample, every player, steps across each hand, with the scores
panel, the log line and the what-if panel (what was legal, and a branch played) — every element the
page renders read by the leak checker (tests/leakcheck.py). The real browser's DOM is
read the same way in test_browser.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from engine.replay import GameReplay
from tests.dashboards.conftest import open_page
from tests.leakcheck import Leak, Sight, leaks

APP = Path(__file__).resolve().parents[2] / "dashboards" / "app.py"

#: an element showing the table at a moment: the step's own, or the what-if's
MOMENT_MARKERS = ("hk-facts", "hk-event", "held:")


def elements(node: Any, inside_whatif: bool = False) -> Iterator[tuple[bool, str]]:
    """Every element of the page as (inside the what-if panel, its content as JSON)."""
    proto = getattr(node, "proto", None)
    label = getattr(proto, "label", "") if proto is not None else ""
    inside_whatif = inside_whatif or (isinstance(label, str) and label.startswith("What if?"))
    children = getattr(node, "children", None)
    if proto is not None and not children:
        yield inside_whatif, orjson.dumps(MessageToDict(proto)).decode()
    for child in (children or {}).values():
        yield from elements(child, inside_whatif)


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, sample_warehouse: Path) -> AppTest:
    monkeypatch.setenv("HAFTKHABIS_WAREHOUSE", str(sample_warehouse))
    return AppTest.from_file(str(APP), default_timeout=60)


def page_leaks(at: AppTest, sight: Sight, player: str, hand: int, seq: int, where: str) -> list[Leak]:
    """The page against what `player` saw in the hand (its move list is the hand's
    history, its scores the hand's end); the step's table and the what-if panel against
    what they had seen once the line `seq` was played."""
    found: list[Leak] = []
    shown = 0
    for whatif, text in elements(at._tree):
        assert "sample.jsonl" not in text, f"{where}: a server path"
        moment = whatif or any(marker in text for marker in MOMENT_MARKERS)
        allowed = sight.at(player, seq) if moment else sight.in_hand(player, hand)
        found += leaks(text, allowed, player, where + (" (what-if)" if whatif else ""))
        shown += 1
    assert shown > 20, f"{where}: the page rendered almost nothing"
    return found


def test_replay_page_in_every_players_view(app: AppTest, sample_replays: dict[str, GameReplay]) -> None:
    found: list[Leak] = []
    pages = branches = 0
    for game, replay in sample_replays.items():
        sight = Sight.of(replay)
        for hand in replay.hands:
            steps = replay.hand_steps(hand)
            picked = sorted({0, len(steps) // 2, len(steps) - 1, *(i for i, s in enumerate(steps) if s.flagged)})
            for player_index, player in enumerate(replay.players):
                # each player at some of the picked steps: every player, every kind of step
                for step in [steps[i] for i in picked][player_index % 2::2]:
                    where = f"{game} seq {step.seq} as {player}"
                    app.session_state["replay_whatif_open"] = True  # the what-if panel open, computed
                    app.session_state["replay_scores_open"] = True  # and the hand's scores, the log line
                    app.session_state["replay_line_open"] = True  # (each drawn only while open)
                    open_page(app, "replay", game=game, seq=str(step.seq), view="player", player=player)
                    found += page_leaks(app, sight, player, hand, step.seq, where)
                    pages += 1
                    mine = [b for b in app.button if (b.key or "").startswith("replay_whatif_")]
                    if mine:  # their own move: play the first alternative in the what-if
                        mine[0].click().run()
                        found += page_leaks(app, sight, player, hand, step.seq, f"{where} branch")
                        branches += 1
    assert pages > 40 and branches > 5
    assert not found, "\n".join(map(str, found[:20]))
