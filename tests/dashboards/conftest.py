"""Fixtures for the dashboard's tests: a small sample log (compliant games and games with
planted violations, three rulesets) and, built from it once per session, a warehouse."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dashboards.loggen import corrupt, dump, random_game

DISPUTED = "t41-disputed"  # a persian match of 2 hands with violations planted in hand 1


def sample_lines() -> list[str]:
    games = [
        corrupt(random_game(DISPUTED, "persian", ["ali", "bita", "cyrus"], seed=3, match={"hands": 2},
                            ts="2026-10-02T19:00:00Z", meta={"server_build": "hk-server/2.4.1-rc"})),
        random_game("t41-bazito-1", "bazito", seed=5, ts="2026-10-03T10:00:00Z",
                    meta={"server_build": "hk-server/2.4.0"}),
        random_game("t41-bazito-2", "bazito", ["sara", "omid", "ali", "bita"], seed=8,
                    ts="2026-11-04T10:00:00Z", meta={"server_build": "hk-server/2.4.0"}),
        random_game("t41-pis-1", "pis-yedili", ["sara", "kian", "mina"], seed=11, hands=2,
                    ts="2026-11-05T21:30:00Z", meta={"server_build": "hk-server/2.3.1"}),
        corrupt(random_game("t41-elim-1", "persian", ["ali", "sara", "mina", "kian"], seed=4,
                            mode="elimination", ts="2026-11-06T08:15:00Z",
                            meta={"server_build": "hk-server/2.3.1"}), seed=7, count=1),
    ]
    return [text for game in games for text in dump(game)]


@pytest.fixture(scope="session")
def sample_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("logs") / "sample.jsonl"
    path.write_text("\n".join(sample_lines()) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def sample_warehouse(tmp_path_factory: pytest.TempPathFactory, sample_log: Path) -> Path:
    """The sample log ingested into a fresh warehouse (ingest's own pipeline)."""
    from ingest.pipeline import ingest

    root = tmp_path_factory.mktemp("warehouse") / "wh"
    ingest([str(sample_log)], str(root), workers=1)
    return root
