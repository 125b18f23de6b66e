"""Shared pytest set-up: hypothesis profiles (`--hypothesis-profile deep` for long runs)."""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests.leakcheck import Corpus, corpus

settings.register_profile("deep", max_examples=3000, deadline=None)


@pytest.fixture(scope="session")
def leak_corpus() -> Corpus:
    """The player-view leak tests' dozen games (tests/leakcheck.py)."""
    return corpus()
