"""The service's map of where each game's lines lie (`service.places.GamePlaces`): after
any sequence of parts added and removed, a game's places are those of the parts still
present that hold it, whether still kept as read or folded into the columns; and a map,
once made, answers the same after the next is made from it (steps read it meanwhile)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ingest.live as live
from service.places import GamePlaces, Place


def _weak_digest(game: str) -> tuple[int, int]:
    """High halves of four values (many games share one), the real low half."""
    digest = hashlib.blake2b(game.encode(), digest_size=16).digest()
    return digest[0] % 4, int.from_bytes(digest[8:], "big")


NAMES = [f"t-{n:02d}-fa202-{n * 7:05d}" for n in range(30)] + ["", "é-game", "x" * 300]
ASKED = [*NAMES, "never-placed", "t-99-fa202-00693"]
GAMES = st.sampled_from(NAMES)
GROUPS = st.tuples(st.integers(0, 70_000), st.integers(0, 3)).map(lambda fg: (fg[0], fg[0] + fg[1]))
PART = st.dictionaries(GAMES, GROUPS, max_size=10)  # a part: each game's first and last row group
STEP = st.tuples(st.lists(st.integers(0, 40), max_size=3), st.lists(PART, max_size=3))


@pytest.mark.parametrize("digest", ["blake2b", "colliding"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, max_size=10), fold_at=st.integers(1, 12))
def test_a_game_is_placed_in_the_parts_present_that_hold_it(
        steps: list[tuple[list[int], list[dict[str, tuple[int, int]]]]], fold_at: int, digest: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if digest == "colliding":
        monkeypatch.setattr(live, "id_digest", _weak_digest)
    monkeypatch.setattr(GamePlaces, "FOLD_AT", fold_at)
    places, model = GamePlaces(), dict[str, list[Place]]()
    present: list[int] = []
    next_number = 2**32 - 60  # part numbers use the columns' whole width
    for picks, parts in steps:
        removed = sorted({present[k % len(present)] for k in picks}) if present else []
        added: list[tuple[str, Place]] = []
        for part in parts:
            added += [(game, (next_number, first, last)) for game, (first, last) in part.items()]
            present.append(next_number)
            next_number += 1
        before = {game: sorted(places.get(game)) for game in ASKED}
        nxt = places.changed(removed, added)
        assert {game: sorted(places.get(game)) for game in ASKED} == before  # unchanged
        present = [n for n in present if n not in removed]
        model = {game: kept for game, held in model.items()
                 if (kept := [p for p in held if p[0] not in removed])}
        for game, place in added:
            model.setdefault(game, []).append(place)
        places = nxt
        assert {game: sorted(places.get(game)) for game in ASKED} == \
            {game: sorted(model.get(game, [])) for game in ASKED}
        assert len(places) == sum(map(len, model.values()))


def test_the_columns_are_shared_until_a_fold_or_a_removal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change that neither folds nor removes a folded game's part copies only the games
    kept as read (what makes a commit's cost follow the commit, not the warehouse)."""
    monkeypatch.setattr(GamePlaces, "FOLD_AT", 4)
    folded = GamePlaces().changed([], [(f"g{n}", (0, n, n)) for n in range(4)])
    assert folded._columns.high.size == 4 and not folded._recent
    grown = folded.changed([], [("late", (1, 0, 0))])
    assert grown._columns is folded._columns and grown.get("late") == ((1, 0, 0),)
    assert grown.changed([1], [])._columns is folded._columns  # part 1 is not in the columns
    emptied = grown.changed([0], [])
    assert emptied._columns.high.size == 0 and emptied.get("g2") == () and emptied.get("late")
    with pytest.raises(ValueError):
        folded._columns.number[0] = 9  # never changed in place
