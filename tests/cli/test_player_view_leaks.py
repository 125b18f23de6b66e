"""`haftkhabis report --player` and `haftkhabis what-if --player` show only what that
player could see (issue 28): the leak tests' dozen games (tests/leakcheck.py), each in a
log file, reports and what-ifs in every player's view, read by the leak checker."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from cli.app import app
from tests.leakcheck import Corpus, Leak, Sight, leaks, report_leaks

runner = CliRunner()


def _log(leak_corpus: Corpus, game: str, folder: Path) -> Path:
    """`game`'s lines in a log file of their own, named as the corpus names it."""
    path = folder / game / "leaks.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"".join(raw + b"\n" for raw, _, _ in leak_corpus.lines_of(game)))
    return path


def test_report_in_every_players_view(leak_corpus: Corpus, tmp_path: Path) -> None:
    """Every game's last hand (the engine's tests render every hand), in every player's view."""
    found: list[Leak] = []
    for game, replay in leak_corpus.replays.items():
        sight = Sight.of(replay)
        log = _log(leak_corpus, game, tmp_path)
        for player in replay.players:
            for hand in replay.hands[-1:]:
                out = tmp_path / f"{game}-{hand}-{player}.html"
                result = runner.invoke(app, ["report", "--game", game, "--hand", str(hand), "--log", str(log),
                                             "--player", player, "--out", str(out)])
                assert result.exit_code == 0, result.output
                document = out.read_text(encoding="utf-8")
                assert str(log) not in document and "leaks.jsonl" not in document
                found += report_leaks(document, replay, sight, player, hand, f"{game} hand {hand}")
    assert not found, "\n".join(map(str, found[:20]))


@pytest.mark.slow
def test_what_if_in_every_players_view(leak_corpus: Corpus, tmp_path: Path) -> None:
    """At each player's first two decisions in a game of each ruleset and mode (the
    engine's tests try every game): what was legal, and each alternative played, as
    `what-if --json --player` and as its text."""
    found: list[Leak] = []
    for game, replay in list(leak_corpus.replays.items())[::3]:
        sight = Sight.of(replay)
        log = _log(leak_corpus, game, tmp_path)
        for player in replay.players:
            own = [s for s in replay.steps if s.kind in ("play", "draw", "pass")
                   and ((s.before or {}).get("legal") or {}).get("player") == player][:2]
            for step in own:
                base = ["what-if", str(log), "--game", game, "--seq", str(step.seq), "--player", player]
                listed = runner.invoke(app, [*base, "--json"])
                assert listed.exit_code == 0, listed.output
                alternatives = orjson.loads(listed.stdout)["alternatives"]
                for moves in ([], *([m] for m in alternatives)):
                    for fmt in (["--json"], []):
                        result = runner.invoke(app, [*base, *fmt, *(a for m in moves for a in ("--move", m))],
                                               terminal_width=200)
                        assert result.exit_code in (0, 1), result.output
                        assert "leaks.jsonl" not in result.output
                        shown = result.output
                        if fmt:  # the recorded outcome is the hand's end: what they saw by then
                            body = orjson.loads(result.stdout)
                            found += leaks(body.pop("recorded_outcome"), sight.in_hand(player, step.hand),
                                           player, f"{game} seq {step.seq} {moves} (recorded)")
                            shown = orjson.dumps(body).decode()
                        found += leaks(shown, sight.at(player, step.seq), player, f"{game} seq {step.seq} {moves}")
    assert not found, "\n".join(map(str, found[:20]))
