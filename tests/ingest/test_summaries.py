"""The summaries, kept incrementally with each batch (ingest/summaries.py), equal their
full recomputation from the game tables after random sequences of batches: games split
across batches (completed when their rest arrives), a shipper's retries, late lines of
earlier games, files ingested again (`--force`), a file ingested whole twice. And the
reads that answer from them (`ingest.read`) return the very frames the queries over the
game tables return, which a warehouse without them still runs."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

from engine.simulate import SimulatedGame
from ingest import read, summaries
from ingest.pipeline import ingest
from ingest.schema import SUMMARY_TABLES
from ingest.store import Warehouse
from tests.ingest.conftest import write_lines


def _table(data: pa.Table) -> list[tuple[object, ...]]:
    return sorted(tuple(row.values()) for row in data.to_pylist())


def _as_kept(root: Path) -> dict[str, list[tuple[object, ...]]]:
    store = Warehouse(root)
    versions = store.snapshot().versions
    assert all(versions[n] > 0 for n in SUMMARY_TABLES), versions
    return {n: _table(store.dataset(n, versions[n]).to_table()) for n in SUMMARY_TABLES}


def _recomputed(root: Path) -> dict[str, list[tuple[object, ...]]]:
    store = Warehouse(root)
    return {n: _table(t) for n, t in summaries.recompute(store, store.snapshot().versions).items()}


def _reads(reader: read.Reader, sample: random.Random | None = None) -> dict[str, pl.DataFrame]:
    """Every read a summary answers, for everyone and for each player (with `sample`, for
    four players it picks)."""
    players = read.player_names(reader)
    frames = {
        "first_seat": read.first_seat(reader, ()),
        "first_seat bazito": read.first_seat(reader, ("bazito",)),
        "two_players": read.two_players(reader, ()),
        "two_players persian": read.two_players(reader, ("persian",)),
        "two_targets": read.two_targets(reader, (), players=len(players)),
        "two_targets top 3": read.two_targets(reader, ("bazito",), players=3),
        "two_targets chosen": read.two_targets(reader, (), chosen=players[:4]),
        "special_cards": read.special_cards(reader, None),
    }
    for player in sample.sample(players, k=min(4, len(players))) if sample else players:
        frames[f"player_by_seat {player}"] = read.player_by_seat(reader, player)
        frames[f"special_cards {player}"] = read.special_cards(reader, player)
    return frames


def assert_reads_as_the_game_tables(root: Path, sample: random.Random | None = None) -> None:
    """The reads over the summaries equal the same reads over the game tables (a reader
    told the warehouse has no summary), frame for frame: columns, types, rows, order.
    With `sample`, the per-player reads are those of four players it picks (the same four
    both ways): a check between batches; the last check reads every player."""
    reader = read.connect(root)
    try:
        assert reader.summaries == frozenset(SUMMARY_TABLES)
        seed = sample.random() if sample else None
        summarised = _reads(reader, random.Random(seed) if sample else None)
        counted = _reads(dataclasses.replace(reader, summaries=frozenset()),
                         random.Random(seed) if sample else None)
    finally:
        reader.close()
    assert summarised.keys() == counted.keys()
    assert summarised["two_players"].height > 0 and summarised["first_seat"].height > 0
    for name, frame in summarised.items():
        try:
            assert_frame_equal(frame, counted[name], check_exact=True)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


@pytest.mark.slow
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
        if step % 4 == 0:
            assert_reads_as_the_game_tables(root, rng)
        step += 1
    assert step > 5
    # and at the end, every game is there
    kept = _as_kept(root)
    assert sum(row[2] for row in kept["player_stats"]) > 0  # games
    assert all(kept[n] for n in SUMMARY_TABLES)
    assert_reads_as_the_game_tables(root)


def test_group_commits_with_the_writers_games_index(games: dict[str, list[SimulatedGame]],
                                                     tmp_path: Path) -> None:
    """Live group commits (`ingest.live.commit_files`, whose writer keeps an index of the
    committed games instead of scanning them): games cut in pieces across groups, a piece
    sent twice, and a `haftkhabis ingest` of other games in between (a writer the index
    must follow) end as one ingest of every game, and player_stats as its recomputation.
    The index folds the games it read into its sorted columns every few games here, so
    its answers come from both its parts."""
    import ingest.live as live
    from ingest.live import GamesIndex, commit_files
    from tests.service.test_ingest import without_provenance

    index = GamesIndex()
    index.FOLD_AT = 5
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
    assert index.version is not None and len(index) == len(pool)


def test_a_warehouse_written_before_the_summaries(games: dict[str, list[SimulatedGame]], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A warehouse written by a build that kept `player_stats` alone (no folder for the
    later summaries): its reads count over the game tables; its next batch, or a
    `compact`, makes the summaries whole, and the reads then answer from them."""
    import shutil

    from ingest.maintenance import compact

    pool = [g for found in games.values() for g in found]
    kept = summaries.refresh
    monkeypatch.setattr(summaries, "refresh", lambda *args: {
        n: t for n, t in kept(*args).items() if n == "player_stats"})
    root = tmp_path / "wh"
    ingest([str(write_lines(tmp_path / "old.jsonl", [line for g in pool[:-4] for line in g.lines]))],
           str(root), workers=1)
    monkeypatch.undo()
    later = [n for n in SUMMARY_TABLES if n != "player_stats"]
    for name in later:
        shutil.rmtree(root / name)
    reader = read.connect(root)
    try:
        assert reader.summaries == frozenset({"player_stats"})
        assert read.two_players(reader, ()).height > 0 and read.first_seat(reader, ()).height > 0
    finally:
        reader.close()
    compacted = tmp_path / "compacted"
    shutil.copytree(root, compacted)

    # the next batch (new games) makes them whole
    ingest([str(write_lines(tmp_path / "new.jsonl", [line for g in pool[-4:] for line in g.lines]))],
           str(root), workers=1)
    assert _as_kept(root) == _recomputed(root)
    assert_reads_as_the_game_tables(root)

    # `compact` makes them whole, in a batch of its own
    made = compact(str(compacted), vacuum=False)
    assert made.batch is not None and made.summaries_made == later
    assert _as_kept(compacted) == _recomputed(compacted)
    assert_reads_as_the_game_tables(compacted)
    assert compact(str(compacted), vacuum=False).summaries_made == []  # once
