"""Golden replay snapshots: a few tricky hands of every ruleset, replayed step by step.

Each `tests/engine/golden/NAME.jsonl` is one game; beside it, `NAME.golden.txt` is the
text of its replay through the native core (`engine._core.replay_game`), one block per
step: the line as written, the violations found on it, the engine's fact for it (hand,
phase before, draw kind, gift target, 7s laid aside, whose turn it was) and the table
after it (`state`, the core's `snapshot()`: turn and mover, phase, pile, current suit,
pending total, follow card, gift target, hands in seat order, stock size, laid-aside 7s,
the legal options of the player to move, the outcome). Any change in how the engine
replays these hands shows up as a readable diff of that text.

The golden files were checked by hand against /work/shared/rules.md, step by step; see
tests/engine/golden/README.md for what each hand covers. When the engine changes on
purpose, regenerate them and READ the diff before accepting it:

    HAFTKHABIS_UPDATE_GOLDEN=1 .venv/bin/pytest -q -p no:cacheprovider \
        tests/engine/test_golden_replay.py

The rendering is this module's own (not engine/narrate.py nor the dashboards'), so only
an engine change can move it: keys are sorted, cards are listed in the order the engine
gives them.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from engine import _core

GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE_ENV = "HAFTKHABIS_UPDATE_GOLDEN"
LOGS = sorted(GOLDEN_DIR.glob("*.jsonl"))

#: the snapshot keys rendered on their own lines, in this order; any other key the
#: snapshot has is rendered after them, sorted, so a new one shows up in the diff
_STATE_KEYS = (
    "hand", "open", "dealer", "phase", "turn", "mover", "direction", "active",
    "pile_top", "pile_size", "pile_recent", "current_suit", "pending_total",
    "follow_card", "gift_target", "call_due", "waiting_sevens", "finished",
    "hands", "stock_size", "laid_aside", "legal", "outcome",
)
#: not rendered: the whole pile (its recent end and its size are)
_STATE_SKIP = frozenset({"pile"})
_FACT_KEYS = ("hand", "phase", "draw_kind", "gift_to", "laid_aside", "expected")
_LEGAL_KEYS = ("player", "phase", "play", "draw", "pass", "obliged", "gift", "text")


def _value(value: Any) -> str:
    """A value as compact, key-sorted JSON (lists keep the engine's order)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _cards(cards: list[str] | None) -> str:
    if cards is None:
        return "null"
    return "[" + " ".join(cards) + "]"


def _render_fact(fact: dict[str, Any]) -> list[str]:
    parts = [f"{key}={_value(fact.get(key))}" for key in _FACT_KEYS]
    rest = sorted(set(fact) - set(_FACT_KEYS))
    parts += [f"{key}={_value(fact[key])}" for key in rest]
    return ["  fact: " + " ".join(parts)]


def _render_legal(legal: dict[str, Any] | None) -> list[str]:
    if legal is None:
        return ["    legal: null"]
    lines = []
    for key in _LEGAL_KEYS:
        value = legal.get(key)
        shown = _cards(value) if key == "play" else _value(value)
        lines.append(f"    legal.{key}: {shown}")
    for key in sorted(set(legal) - set(_LEGAL_KEYS)):
        lines.append(f"    legal.{key}: {_value(legal[key])}")
    return lines


def _render_state(state: dict[str, Any] | None, seats: list[str]) -> list[str]:
    if state is None:
        return ["  state: null"]
    lines = ["  state:"]
    for key in _STATE_KEYS:
        if key not in state:
            lines.append(f"    {key}: (absent)")
            continue
        value = state[key]
        if key == "hands":
            hands: dict[str, list[str]] = value or {}
            order = [p for p in seats if p in hands] + sorted(set(hands) - set(seats))
            lines.append("    hands:")
            for player in order:
                lines.append(f"      {player} ({len(hands[player])}): {_cards(hands[player])}")
        elif key == "legal":
            lines += _render_legal(value)
        elif key == "pile_recent" and isinstance(value, list):
            lines.append(f"    {key}: {_cards(value)}")
        else:
            lines.append(f"    {key}: {_value(value)}")
    for key in sorted(set(state) - set(_STATE_KEYS) - _STATE_SKIP):
        lines.append(f"    {key}: {_value(state[key])}")
    return lines


def _render_step(step: dict[str, Any], seats: list[str]) -> list[str]:
    raw = dict(step.get("raw") or step["event"])
    raw.pop("game", None)
    raw.pop("seq", None)
    lines = [f"== seq {_value(step['seq'])} (line {_value(step.get('line'))})"]
    lines.append(f"  line: {_value(raw)}")
    if step.get("event") != step.get("raw"):
        event = dict(step["event"])
        event.pop("game", None)
        event.pop("seq", None)
        lines.append(f"  read as: {_value(event)}")
    lines.append(f"  applied: {_value(step.get('applied'))}")
    violations = step.get("violations") or []
    if not violations:
        lines.append("  violations: none")
    else:
        lines.append("  violations:")
        for v in violations:
            lines.append(f"    {v['code']} player={_value(v.get('player'))}: {v.get('message')}")
    lines += _render_fact(step.get("fact") or {})
    lines += _render_state(step.get("state"), seats)
    return lines


def render(path: Path) -> str:
    """The golden text of one log's replay."""
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    game = first["game"]
    seats = list(first.get("players") or [])
    verdict, errors = _core.replay_game([str(path)], game)
    assert verdict is not None, f"{path.name}: no verdict for {game}"
    lines = [
        f"# golden replay of {path.name} (game {game}, ruleset {verdict.ruleset})",
        f"# seats (clockwise): {' '.join(seats)}",
        "",
    ]
    for step in verdict.steps():
        lines += _render_step(step, seats)
        lines.append("")
    lines.append(f"verdict: status={verdict.status} complete={_value(verdict.complete)}")
    lines.append("violations:")
    for v in verdict.violations:
        lines.append(f"  seq {_value(v['seq'])} {v['code']} player={_value(v['player'])}")
    lines.append(f"hands: {_value(verdict.hands)}")
    lines.append(f"totals: {_value(verdict.totals)}")
    lines.append(f"winners: {_value(verdict.winners)}")
    lines.append(f"line errors: {_value([[e.get('line'), e['code']] for e in errors])}")
    return "\n".join(lines) + "\n"


def test_every_log_has_a_golden_file() -> None:
    assert LOGS, f"no golden logs in {GOLDEN_DIR}"
    golden = {p.name.removesuffix(".golden.txt") for p in GOLDEN_DIR.glob("*.golden.txt")}
    logs = {p.name.removesuffix(".jsonl") for p in LOGS}
    if not os.environ.get(UPDATE_ENV):
        assert golden == logs, "every golden log needs its .golden.txt and vice versa"


@pytest.mark.parametrize("log", LOGS, ids=[p.stem for p in LOGS])
def test_golden_replay(log: Path) -> None:
    golden = log.with_name(log.name.removesuffix(".jsonl") + ".golden.txt")
    text = render(log)
    if os.environ.get(UPDATE_ENV):
        golden.write_text(text, encoding="utf-8")
        return
    assert golden.exists(), f"{golden.name} missing: run with {UPDATE_ENV}=1 and read it"
    expected = golden.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(difflib.unified_diff(
            expected.splitlines(keepends=True), text.splitlines(keepends=True),
            fromfile=f"{golden.name} (golden)", tofile=f"{log.name} (engine now)", n=4))
        pytest.fail(f"{log.name}: the replay differs from {golden.name}\n{diff}"
                    f"\n(if the change is intended, regenerate with {UPDATE_ENV}=1"
                    " and check the new text against rules.md)", pytrace=False)
