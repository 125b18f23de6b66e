"""Ingest correctness: the warehouse says what the validator says, re-ingesting changes
nothing, and games that arrive in pieces (truncated, spread over batches, late lines) end
up whole, exactly as if they had arrived at once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from engine.simulate import SimulatedGame
from ingest import pipeline
from ingest.pipeline import ingest
from ingest.queries import open_warehouse, replay_game
from tests.corekit import validate_paths
from tests.ingest.conftest import batches, contents, game_lines, interleave, write_lines

#: rules.md's fouls: a player's own breaches, written out again on purpose
FOULS = frozenset({
    "not_your_turn", "card_not_in_hand", "illegal_card", "must_play", "illegal_draw",
    "illegal_pass", "bad_suit", "bad_target", "missed_call",
})


def test_warehouse_matches_the_validator(logs: Path, tmp_path: Path,
                                        games: dict[str, list[SimulatedGame]]) -> None:
    summary = ingest([str(logs)], str(tmp_path / "wh"), workers=1)
    verdicts, errors = validate_paths([str(logs)])
    assert summary.games_new == len(verdicts)
    assert summary.quarantined == len(errors)
    with open_warehouse(str(tmp_path / "wh")) as reader:
        rows = {r["game_id"]: r for r in reader.rows(
            "SELECT game_id, ruleset, status, violations, hands_decided, totals FROM games")}
        codes = Counter((r["game_id"], r["seq"], r["code"], r["player"], r["foul"]) for r in
                        reader.rows("SELECT game_id, seq, code, player, foul FROM violations"))
        fouls = Counter((r["game_id"], r["player"]) for r in reader.rows(
            "SELECT game_id, player FROM violations WHERE foul"))
        lines = reader.sql("SELECT count(*) FROM events").fetchall()[0][0]
        decided = Counter(r["game_id"] for r in reader.rows(
            "SELECT game_id FROM hands WHERE decided"))
    assert set(rows) == {v.game for v in verdicts}
    for verdict in verdicts:
        row = rows[verdict.game]
        assert row["status"] == verdict.status, verdict.game
        assert row["ruleset"] == verdict.ruleset
        assert row["violations"] == len(verdict.violations)
        assert row["hands_decided"] == len(verdict.hands or ()) == decided[verdict.game]
        assert (dict(row["totals"]) if row["totals"] is not None else None) == verdict.totals
    assert codes == Counter((v.game, s["seq"], s["code"], s["player"], s["code"] in FOULS)
                            for v in verdicts for s in v.violations)
    # a player's violations are their fouls
    assert fouls == Counter((v.game, s["player"]) for v in verdicts for s in v.violations
                            if s["code"] in FOULS)
    assert any(s["code"] in FOULS for v in verdicts for s in v.violations)
    retries = sum(len(g.lines) - len(set(g.lines)) for sims in games.values() for g in sims)
    assert lines == sum(v.lines for v in verdicts) - retries  # identical repeats are dropped
    assert {b["kind"] for b in batches(tmp_path / "wh")} == {"ingest"}


def test_every_game_replays_from_the_warehouse_alone(logs: Path, tmp_path: Path) -> None:
    ingest([str(logs)], str(tmp_path / "wh"), workers=1)
    verdicts, _ = validate_paths([str(logs)])
    with open_warehouse(str(tmp_path / "wh")) as reader:
        for verdict in verdicts[:12]:
            again = replay_game(reader, verdict.game)
            assert again is not None
            assert again.status == verdict.status
            assert [(v["seq"], v["code"]) for v in again.violations] == \
                [(v["seq"], v["code"]) for v in verdict.violations]
            replayed = reader.sql("SELECT count(*) FROM events WHERE game_id = ? "
                                  "AND NOT set_aside", params=[verdict.game]).fetchall()[0][0]
            assert len(again.steps()) == replayed


def test_reingesting_the_same_batch_changes_no_table(logs: Path, tmp_path: Path) -> None:
    root = str(tmp_path / "wh")
    first = ingest([str(logs)], root, workers=2)
    before = contents(root)
    again = ingest([str(logs)], root, workers=2)
    assert again.files_skipped == 3 and again.games_new == again.games_updated == 0
    forced = ingest([str(logs)], root, workers=1, force=True)
    assert forced.files_read == 3
    assert (forced.games_new, forced.games_updated) == (0, 0)
    assert forced.games_unchanged == first.games_new
    assert forced.quarantined == 0
    assert contents(root) == before
    log = batches(root)
    assert [b["id"] for b in log] == [1, 2, 3]
    assert [f["status"] for f in log[1]["files"]] == ["skipped"] * 3


def test_truncated_then_full_is_one_complete_game(games: dict[str, list[SimulatedGame]],
                                                  tmp_path: Path) -> None:
    game = next(g for g in games["persian"] if not g.faults and g.aborted is None)
    cut = len(game.lines) // 2
    root = str(tmp_path / "wh")
    write_lines(tmp_path / "a" / "part.jsonl", game.lines[:cut])
    ingest([str(tmp_path / "a")], root, workers=1)
    with open_warehouse(root) as reader:
        assert reader.rows("SELECT status, complete FROM games") == [
            {"status": "incomplete", "complete": False}]
    write_lines(tmp_path / "b" / "full.jsonl", game.lines)
    summary = ingest([str(tmp_path / "b")], root, workers=1)
    assert (summary.games_new, summary.games_updated) == (0, 1)
    with open_warehouse(root) as reader:
        assert reader.rows("SELECT game_id, status, complete, lines FROM games") == [
            {"game_id": game.game, "status": "compliant", "complete": True,
             "lines": len(set(game.lines))}]  # a shipper's identical retries are dropped
        assert reader.sql("SELECT count(*) FROM events").fetchall()[0][0] == len(set(game.lines))
    alone = str(tmp_path / "alone")
    ingest([str(tmp_path / "b")], alone, workers=1)
    assert contents(root, batch_columns=False) == contents(alone, batch_columns=False)
    # the truncated file again: nothing it holds is new, the game stays complete
    again = ingest([str(tmp_path / "a")], root, workers=1, force=True)
    assert (again.games_updated, again.games_unchanged) == (0, 1)


def test_a_game_spread_over_batches_is_completed(games: dict[str, list[SimulatedGame]],
                                                 tmp_path: Path) -> None:
    chosen = games["pis-yedili"][:4]
    first_half = [line for g in chosen for line in g.lines[: len(g.lines) // 2]]
    second_half = [line for g in chosen for line in g.lines[len(g.lines) // 2:]]
    root = str(tmp_path / "wh")
    write_lines(tmp_path / "rot" / "table.log.1", first_half)
    write_lines(tmp_path / "rot" / "table.log.2", second_half)
    ingest([str(tmp_path / "rot" / "table.log.1")], root, workers=1)
    summary = ingest([str(tmp_path / "rot" / "table.log.2")], root, workers=2)
    assert (summary.games_new, summary.games_updated) == (0, len(chosen))
    together = str(tmp_path / "together")
    ingest([str(tmp_path / "rot" / "table.log.1"), str(tmp_path / "rot" / "table.log.2")],
           together, workers=1)
    assert contents(root, batch_columns=False) == contents(together, batch_columns=False)
    verdicts, _ = validate_paths([str(tmp_path / "rot" / "table.log.1"),
                                  str(tmp_path / "rot" / "table.log.2")])
    with open_warehouse(root) as reader:
        status = dict(reader.sql("SELECT game_id, status FROM games").fetchall())
    assert status == {v.game: v.status for v in verdicts}


def test_lines_arriving_after_a_game_was_flushed(games: dict[str, list[SimulatedGame]],
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A game flushed once its match is over, whose `result` (or a retry, or a stray
    line) comes later in the batch, is replayed again whole within the same batch."""
    monkeypatch.setattr(pipeline, "CLOSE_WINDOW", 5)
    bazito = [g for g in games["bazito"] if g.aborted is None][:6]
    early = [line for g in bazito for line in g.lines[:-1]]
    filler = [line for g in games["pis-yedili"][:3] for line in g.lines]
    late = [g.lines[-1] for g in bazito] + [bazito[0].lines[3]]  # ends + an identical retry
    stray = bazito[1].lines[-1].replace(b'"seq":', b'"x_note":"late","seq":', 1)
    write_lines(tmp_path / "in" / "1.jsonl", early)
    write_lines(tmp_path / "in" / "2.jsonl", filler)
    write_lines(tmp_path / "in" / "3.jsonl", [*late, stray])
    root = str(tmp_path / "wh")
    summary = ingest([str(tmp_path / "in")], root, workers=1)
    verdicts, errors = validate_paths([str(tmp_path / "in")])
    assert summary.games_new == len(verdicts) and not errors
    with open_warehouse(root) as reader:
        rows = {r["game_id"]: r for r in reader.rows("SELECT game_id, status, violations FROM games")}
        seqs = Counter(r["game_id"] for r in reader.rows("SELECT game_id FROM events"))
    for verdict in verdicts:
        assert rows[verdict.game]["status"] == verdict.status, verdict.game
        assert rows[verdict.game]["violations"] == len(verdict.violations)
    assert seqs[bazito[1].game] == len(set(bazito[1].lines)) + 1  # the stray line is kept


def test_every_line_of_a_game_is_kept(tmp_path: Path, games: dict[str, list[SimulatedGame]]) -> None:
    game = games["bazito"][0]
    conflicting = game.lines[5].replace(b'"seq":5', b'"seq":5,"x_retry":1', 1)
    bad_seq = game.lines[6].replace(b'"seq":6', b'"seq":-6', 1)
    lines = [*game.lines, game.lines[2], conflicting, bad_seq]
    write_lines(tmp_path / "g.jsonl", lines)
    root = str(tmp_path / "wh")
    ingest([str(tmp_path / "g.jsonl")], root, workers=1)
    with open_warehouse(root) as reader:
        rows = reader.rows("SELECT seq, set_aside, code, raw FROM events ORDER BY ordinal")
    assert len(rows) == len(set(game.lines)) + 2  # identical repeats are dropped
    set_aside = [r for r in rows if r["set_aside"]]
    assert [(r["seq"], r["code"]) for r in set_aside] == [(5, "sequence"), (None, "schema")]
    assert {r["raw"].encode() for r in rows} == set(lines)


def test_memory_follows_the_open_games_not_the_input(games: dict[str, list[SimulatedGame]],
                                                     tmp_path: Path) -> None:
    """Games written one after another are flushed as they close: a worker never holds
    more than the games interleaved at that point of the input."""
    sequential = [line for sims in games.values() for g in sims for line in g.lines]
    write_lines(tmp_path / "seq.jsonl", sequential)
    summary = ingest([str(tmp_path / "seq.jsonl")], str(tmp_path / "a"), workers=1)
    assert summary.games_new == sum(len(s) for s in games.values())
    # a game stays open only until its result; a faulty log (a dropped line, no result)
    # may keep its game open to the end of the input
    faulty = sum(1 for sims in games.values() for g in sims if g.faults)
    assert summary.peak_open_games <= 1 + faulty < summary.games_new // 2
    interleaved = interleave(games["persian"][:4]) + interleave(games["bazito"][:3])
    write_lines(tmp_path / "mixed.jsonl", interleaved)
    summary = ingest([str(tmp_path / "mixed.jsonl")], str(tmp_path / "b"), workers=1)
    assert 4 <= summary.peak_open_games <= 4 + faulty


def test_idle_games_are_flushed_and_merged_if_more_comes(
        games: dict[str, list[SimulatedGame]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A game idle for a window of lines is written as it stands (a log with a gap never
    closes); when the rest of it comes later in the batch, it is replayed whole."""
    slow, gapped = games["persian"][2], games["bazito"][2]
    filler = [line for g in games["pis-yedili"][:6] for line in g.lines]
    lines = [*slow.lines[:30], *gapped.lines[:9], *gapped.lines[10:], *filler, *slow.lines[30:]]
    write_lines(tmp_path / "in" / "log.jsonl", lines)
    expected = str(tmp_path / "expected")
    ingest([str(tmp_path / "in")], expected, workers=1)
    monkeypatch.setattr(pipeline, "IDLE_WINDOW", 100)
    root = str(tmp_path / "wh")
    summary = ingest([str(tmp_path / "in")], root, workers=1)
    assert summary.peak_open_games <= 3
    assert contents(root) == contents(expected)
    verdicts, _ = validate_paths([str(tmp_path / "in")])
    with open_warehouse(root) as reader:
        status = dict(reader.sql("SELECT game_id, status FROM games").fetchall())
    assert status == {v.game: v.status for v in verdicts}
    assert status[gapped.game] == "violations"


@pytest.mark.parametrize("order", [("a", "b"), ("a", "b", "a-copy"), ("b", "a", "a-copy", "c")])
def test_workers_routing_in_parallel_store_what_one_pass_stores(
        games: dict[str, list[SimulatedGame]], tmp_path: Path, order: tuple[str, ...]) -> None:
    """Worker processes route runs of consecutive files themselves, all at once, then each
    replays its shard's spools in the runs' order: the warehouse is the one a single
    routing pass makes, a game split across two runs included, and a file whose content
    an earlier one has quarantines nothing more."""
    game = next(g for g in games["persian"] if not g.faults and g.aborted is None)
    cut = len(game.lines) // 2
    garbage = [b"not json at all", b'{"type":"deal","seq":1}', b"\xff\xfe"]
    first = [*game.lines[:cut], *garbage]
    content = {"a": first, "a-copy": first,
               "b": [*game.lines[cut:], *game_lines(games["bazito"][:10])],
               "c": [*game_lines(games["pis-yedili"][:4]), b"[1, 2"]}
    paths = [str(write_lines(tmp_path / "in" / f"{i}-{name}.jsonl", content[name]))
             for i, name in enumerate(order)]
    one, parallel = str(tmp_path / "one"), str(tmp_path / "parallel")
    expected = ingest(paths, one, workers=1)
    summary = ingest(paths, parallel, workers=2)
    assert contents(parallel) == contents(one)
    assert (summary.games_new, summary.quarantined, summary.lines) == \
        (expected.games_new, expected.quarantined, expected.lines)
    assert summary.files == expected.files
    with open_warehouse(parallel) as reader:
        assert reader.rows("SELECT status FROM games WHERE game_id = ?", params=[game.game]) \
            == [{"status": "compliant"}]
        quarantined = reader.sql("SELECT count(*) FROM quarantine").fetchall()[0][0]
    assert quarantined == summary.quarantined == len(garbage) + ("c" in order)


def test_a_shard_s_writes_run_in_order_bounded_and_say_their_error() -> None:
    """`_InOrder` (a shard's Parquet writes beside the replay): calls run one at a time in
    the order given, a submit past `depth` waiting calls waits for the oldest to finish,
    and an error comes back to the caller."""
    from ingest.pipeline import _InOrder

    done: list[int] = []
    seen_at_submit: list[list[int]] = []
    writes = _InOrder(depth=2)
    for n in range(4):
        writes.submit(done.append, n)
        seen_at_submit.append(list(done))
    writes.wait()
    assert done == [0, 1, 2, 3]
    # the third submit found two waiting: it returned once the first had run
    assert 0 in seen_at_submit[2] and {0, 1} <= set(seen_at_submit[3])

    def fail() -> None:
        raise OSError("disk full")

    writes.submit(fail)
    with pytest.raises(OSError, match="disk full"):
        writes.wait()

    writes.stop()
