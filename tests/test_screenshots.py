"""The docs' screenshots show the sample as it is: every shot of
`docs/screenshots/make_screenshots.py` (`make screenshots`) that is about a game names a game,
a line (`seq`), its violation code and the player it names, which the bundled sample logs
still hold; each picture exists, and the docs that show it name the same game and step. No
pixel is compared: the pictures are made again from the sample by the script."""

from __future__ import annotations

import gzip
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from engine.replay import GameReplay, replay_lines

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "screenshots" / "make_screenshots.py"
SAMPLE = ROOT / "data" / "sample"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_screenshots", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SHOTS = _script().SHOTS
ABOUT_A_GAME = [s for s in SHOTS if s.game is not None]


def _sample_game(game: str) -> GameReplay | None:
    """The game replayed from the bundled sample logs (every file, gzip too)."""
    lines = []
    for path in sorted(SAMPLE.iterdir()):
        if not path.name.endswith((".jsonl", ".jsonl.gz")):
            continue
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        for number, raw in enumerate(data.splitlines(), 1):
            if game.encode() not in raw:
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(record, dict) and record.get("game") == game:
                lines.append((raw, str(path.relative_to(ROOT)), number))
    return replay_lines(lines, game) if lines else None


def test_every_shot_has_its_picture_and_a_doc_that_shows_it() -> None:
    shown = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    for shot in SHOTS:
        assert (SCRIPT.parent / f"{shot.name}.png").stat().st_size > 10_000, shot.name
        assert f"screenshots/{shot.name}.png" in shown, f"no doc shows {shot.name}.png"
    pictures = {p.stem for p in SCRIPT.parent.glob("*.png")}
    assert pictures == {s.name for s in SHOTS}, "a picture the script does not make"


@pytest.mark.parametrize("shot", ABOUT_A_GAME, ids=lambda s: s.name)
def test_the_game_and_line_a_shot_shows_are_in_the_sample(shot: Any) -> None:
    replay = _sample_game(shot.game)
    assert replay is not None, f"{shot.name}: the sample has no game {shot.game}"
    if shot.seq is None:
        return
    step = replay.by_seq(shot.seq)
    assert step is not None, f"{shot.name}: {shot.game} has no seq {shot.seq}"
    if shot.code is not None:
        found = [(v.code.value, v.player) for v in step.violations]
        assert (shot.code, shot.player) in found, (shot.name, found)


@pytest.mark.parametrize("shot", ABOUT_A_GAME, ids=lambda s: s.name)
def test_the_docs_name_the_game_and_step_each_shot_shows(shot: Any) -> None:
    """Where a doc shows the picture, the paragraph under it names the game (and the seq)."""
    name, game, seq = shot.name, shot.game, shot.seq
    places = 0
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for found in re.finditer(rf"screenshots/{re.escape(name)}\.png\)", text):
            places += 1
            after = text[found.end():found.end() + 700]
            assert game in after, f"{doc.name}: the text under {name}.png does not name {game}"
            if seq is not None:
                assert re.search(rf"\bseq {seq}\b", after), f"{doc.name}: {name}.png's text names no seq {seq}"
    assert places, f"no doc shows {name}.png"
