"""The live writer's index of committed games (`ingest.live.GamesIndex`): what it answers
is what it read last for each game, whether the game is still among those read lately or
already folded into its sorted columns."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ingest.live as live
from ingest.live import GamesIndex


def _weak_digest(game: str) -> tuple[int, int]:
    """A digest whose high half takes four values: many games share one (what the real
    digest makes about never); the low half is the real one, so no two share both."""
    digest = hashlib.blake2b(game.encode(), digest_size=16).digest()
    return digest[0] % 4, int.from_bytes(digest[8:], "big")

GAMES = st.sampled_from([f"t-{n:02d}-fa202-{n * 7:05d}" for n in range(40)] + ["", "é-game", "x" * 300])
HASHES = st.one_of(
    st.text("0123456789abcdef", min_size=32, max_size=32),
    st.sampled_from(["", "0x" + "1" * 30, "A" * 32, " " + "1" * 31, "1" * 33]))  # kept as read
PLACES = st.sampled_from([("bazito", "2026-11"), ("persian", "2026-12"), ("", "")])
READ = st.tuples(GAMES, HASHES, PLACES)


@pytest.mark.parametrize("digest", ["blake2b", "colliding"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reads=st.lists(st.lists(READ, max_size=12), max_size=8), fold_at=st.integers(1, 6))
def test_the_index_answers_what_it_read_last(reads: list[list[tuple[str, str, tuple[str, str]]]],
                                             fold_at: int, digest: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With the real digest, and with one whose high halves collide (a game whose high
    half is another's stays in the dictionary)."""
    if digest == "colliding":
        monkeypatch.setattr(live, "id_digest", _weak_digest)
    index = GamesIndex()
    index.FOLD_AT = fold_at
    model: dict[str, tuple[str, str, str]] = {}
    asked = [f"t-{n:02d}-fa202-{n * 7:05d}" for n in range(45)] + ["", "é-game", "x" * 300]
    for part in reads:  # a part read as `at` reads one, then folded when due
        for game, content, (ruleset, month) in part:
            index._recent[game] = model[game] = (content, ruleset, month)
        if len(index._recent) >= index.FOLD_AT:
            index._fold()
        assert index._lookup(asked) == {g: model[g] for g in asked if g in model}
        assert len(index) == len(model)
    index._fold()
    assert index._lookup(list(model)) == model
    if digest == "blake2b":  # only what is not of the engine's form is left as read
        assert len(index._recent) == sum(1 for content, _, _ in model.values()
                                         if not (len(content) == 32 and content == content.lower()
                                                 and all(c in "0123456789abcdef" for c in content)))
