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


def test_group_commits_with_the_writers_games_index(games: dict[str, list[SimulatedGame]],
                                                     tmp_path: Path) -> None:
    """Live group commits (`ingest.live.commit_files`, whose writer keeps an index of the
    committed games instead of scanning them): games cut in pieces across groups, a piece
    sent twice, and a `haftkhabis ingest` of other games in between (a writer the index
    must follow) end as one ingest of every game, and player_stats as its recomputation."""
    import ingest.live as live
    from ingest.live import GamesIndex, commit_files
    from tests.service.test_ingest import without_provenance

    index = GamesIndex()
    rng = random.Random(9)
    pool = [g for found in games.values() for g in found]
    pieces = []
    for game in pool[:-5]:
        cut = rng.randint(1, len(game.lines) - 1)
        pieces += [game.lines[:cut], game.lines[cut:]]
    rng.shuffle(pieces)
    root = tmp_path / "wh"
    for k in range(0, len(pieces), 7):
        group = [write_lines(tmp_path / f"g{k}" / f"p{j}.jsonl", piece) for j, piece in enumerate(pieces[k:k + 7])]
        if k == 14:  # another writer commits meanwhile
            other = write_lines(tmp_path / "other.jsonl", [line for g in pool[-5:] for line in g.lines])
            ingest([str(other)], str(root), workers=1)
        if k == 21:  # a retried push: a piece already committed
            group.append(group[0].with_name("again.jsonl"))
            group[-1].write_bytes(group[0].read_bytes())
        live._INDEX = index  # the writer's own, fresh for this test
        commit_files([str(p) for p in group], str(root))
        assert _as_kept(root) == _recomputed(root)
    whole = write_lines(tmp_path / "whole.jsonl", [line for g in pool for line in g.lines])
    ingest([str(whole)], str(tmp_path / "one"), workers=1)
    # the same rows, but for where each line was read and its place in the order it came in
    # (a game's rest may arrive before its start)
    assert without_provenance(root, arrival=False) == without_provenance(tmp_path / "one", arrival=False)
    assert index.version is not None and len(index.games) == len(pool)
