"""`player_stats`, kept incrementally with each batch (ingest/summaries.py), equals its
full recomputation from the game tables after random sequences of batches: games split
across batches (completed when their rest arrives), a shipper's retries, late lines of
earlier games, files ingested again (`--force`), a file ingested whole twice."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest

from engine.simulate import SimulatedGame
from ingest import summaries
from ingest.pipeline import ingest
from ingest.store import Warehouse
from tests.ingest.conftest import write_lines


def _table(data: pa.Table) -> list[tuple[object, ...]]:
    return sorted(tuple(row.values()) for row in data.to_pylist())


def _as_kept(root: Path) -> list[tuple[object, ...]]:
    store = Warehouse(root)
    return _table(store.dataset("player_stats", store.snapshot().versions["player_stats"]).to_table())


def _recomputed(root: Path) -> list[tuple[object, ...]]:
    store = Warehouse(root)
    return _table(summaries.recompute(store, store.snapshot().versions))


@pytest.mark.parametrize("seed", [1, 2])
def test_kept_player_stats_equal_their_recomputation(seed: int, games: dict[str, list[SimulatedGame]],
                                                     tmp_path: Path) -> None:
    rng = random.Random(seed)
    pool = [g for found in games.values() for g in found]
    rng.shuffle(pool)
    # every game's lines, cut in up to three pieces that arrive in different batches
    pieces: list[list[bytes]] = []
    for game in pool:
        lines = list(game.lines)
        cuts = sorted(rng.sample(range(1, len(lines)), k=min(len(lines) - 1, rng.choice([0, 0, 1, 2]))))
        pieces += [lines[a:b] for a, b in zip([0, *cuts], [*cuts, len(lines)], strict=True)]
    rng.shuffle(pieces)
    root = tmp_path / "wh"
    files: list[Path] = []
    step = 0
    while pieces:
        size = rng.randint(4, 14)
        taken, pieces = pieces[:size], pieces[size:]
        lines = [line for piece in taken for line in piece]
        if files and rng.random() < 0.3:  # a shipper's retry: lines already sent, again
            lines += rng.sample(files[-1].read_bytes().splitlines(), k=3)
        files.append(write_lines(tmp_path / f"in-{step:03d}.jsonl", lines))
        ingest([str(files[-1])], str(root), workers=1)
        if rng.random() < 0.2:  # an earlier file again: whole (skipped), or forced
            ingest([str(rng.choice(files))], str(root), workers=1, force=rng.random() < 0.5)
        assert _as_kept(root) == _recomputed(root), f"seed {seed}, batch {step}"
        step += 1
    assert step > 5
    # and at the end, every game is there
    kept = _as_kept(root)
    assert sum(row[2] for row in kept) > 0  # games
