"""The read side: locked-down DuckDB views, the named views, polars, the CLI, compaction."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from cli.app import app
from engine.simulate import SimulatedGame
from ingest.maintenance import compact
from ingest.pipeline import ingest
from ingest.queries import VIEWS, open_warehouse, scan_polars
from ingest.store import Warehouse
from tests.corekit import validate_paths
from tests.ingest.conftest import contents, game_lines, write_lines


@pytest.fixture(scope="module")
def warehouse(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = str(tmp_path_factory.mktemp("wh") / "warehouse")
    ingest([str(logs)], root, workers=1)
    return root


def test_duckdb_opens_only_the_snapshot_parts(warehouse: str, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    elsewhere = tmp_path / "elsewhere.parquet"
    pq.write_table(pa.table({"x": [1]}), elsewhere)
    with open_warehouse(warehouse) as reader:
        some_part = next(Path(warehouse, "games").rglob("*.parquet"))
        log_entry = next(Path(warehouse, "games", "_delta_log").glob("*.json"))
        for statement in (
            f"SELECT * FROM read_parquet('{elsewhere}')",
            f"SELECT * FROM read_parquet('{some_part.parent}/*.parquet')",
            f"SELECT * FROM read_json('{log_entry}')",
            f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
            f"ATTACH '{tmp_path / 'other.duckdb'}'",
            "SET enable_external_access = true",
            "INSTALL delta",
        ):
            with pytest.raises(duckdb.Error):
                reader.sql(statement).fetchall()
        assert not (tmp_path / "out.csv").exists()
        assert reader.sql("SELECT count(*) FROM games").fetchall()[0][0] > 0
        # the views read the parts with DuckDB's own reader: a part is a file it may open
        plan = reader.sql("EXPLAIN SELECT count(*) FROM events").fetchall()
        assert "READ_PARQUET" in str(plan).upper() or "PARQUET_SCAN" in str(plan).upper()


def test_a_part_that_leads_outside_the_warehouse_is_refused(logs: Path, tmp_path: Path) -> None:
    """A part file that is a link to a file elsewhere is not opened: the reader names the
    table and refuses the warehouse."""
    from ingest.store import WarehouseError

    root = tmp_path / "warehouse"
    ingest([str(logs)], str(root), workers=1)
    part = next(root.joinpath("games").rglob("*.parquet"))
    elsewhere = tmp_path / "elsewhere.parquet"
    part.rename(elsewhere)
    part.symlink_to(elsewhere)
    with pytest.raises(WarehouseError, match="table games names files outside the warehouse"):
        open_warehouse(str(root))


def test_named_views_answer(warehouse: str) -> None:
    with open_warehouse(warehouse) as reader:
        for view in VIEWS:
            reader.sql(f"SELECT * FROM {view}").fetchall()
        hands = reader.sql("SELECT count(*) FROM hands WHERE decided").fetchall()[0][0]
        wins = reader.sql("SELECT sum(wins) FROM player_stats").fetchall()[0][0]
        winners = reader.sql("SELECT sum(len(winners)) FROM hands WHERE decided").fetchall()[0][0]
        assert wins == winners and hands > 0
        seats = reader.rows("SELECT sum(hands) AS n FROM first_seat")[0]["n"]
        assert seats == reader.sql(
            "SELECT count(*) FROM hand_players WHERE won IS NOT NULL").fetchall()[0][0]
        shares = reader.rows("SELECT ruleset, player, sum(share) AS s, sum(expected_share) AS e "
                             "FROM two_targets GROUP BY ALL HAVING sum(twos) > 0")
        assert shares and all(abs(r["s"] - 1) < 1e-9 and abs(r["e"] - 1) < 1e-9 for r in shares)
        pairs = reader.rows("SELECT * FROM head_to_head WHERE player < opponent LIMIT 50")
        for pair in pairs:
            back = reader.rows("SELECT ahead, behind FROM head_to_head WHERE ruleset = ? AND "
                               "player = ? AND opponent = ?",
                               [pair["ruleset"], pair["opponent"], pair["player"]])[0]
            assert (back["ahead"], back["behind"]) == (pair["behind"], pair["ahead"])
        codes = reader.sql("SELECT sum(violations) FROM compliance").fetchall()[0][0]
        assert codes == reader.sql("SELECT count(*) FROM violations").fetchall()[0][0]


def test_hand_players_count_what_the_log_says(warehouse: str) -> None:
    with open_warehouse(warehouse) as reader:
        played = reader.rows("""
            SELECT p.game_id, p.hand, p.player, p.cards_played, p.cards_drawn,
                   p.sevens_played, p.jacks_played, e.plays, e.drawn, e.sevens, e.jacks
            FROM hand_players p JOIN (
                SELECT game_id, hand, player,
                       count(*) FILTER (WHERE type = 'play') AS plays,
                       coalesce(sum(len(cards)) FILTER (WHERE type = 'draw'), 0) AS drawn,
                       count(*) FILTER (WHERE type = 'play' AND card LIKE '7_') AS sevens,
                       count(*) FILTER (WHERE type = 'play' AND card LIKE 'J_') AS jacks
                FROM events WHERE NOT set_aside AND hand IS NOT NULL GROUP BY ALL
            ) e USING (game_id, hand, player)""")
    assert played
    for row in played:
        assert (row["cards_played"], row["cards_drawn"], row["sevens_played"],
                row["jacks_played"]) == (row["plays"], row["drawn"], row["sevens"], row["jacks"])


def test_polars_and_deltalake_read_the_same_tables(warehouse: str) -> None:
    frame = scan_polars(warehouse, "games").filter(pl.col("ruleset") == "bazito").collect()
    with open_warehouse(warehouse) as reader:
        expected = reader.sql("SELECT count(*) FROM games WHERE ruleset = 'bazito'").fetchall()[0][0]
        nulls = reader.sql("SELECT count(*) FROM events WHERE target IS NULL").fetchall()[0][0]
    assert frame.height == expected > 0
    events = pl.scan_delta(str(Path(warehouse, "events"))).filter(pl.col("target").is_null())
    assert events.select(pl.len()).collect().item() == nulls


def test_compact_keeps_every_row(games: dict[str, list[SimulatedGame]], tmp_path: Path) -> None:
    root = str(tmp_path / "wh")
    for index, game in enumerate(games["bazito"][:6]):
        write_lines(tmp_path / f"in{index}" / "log.jsonl", game.lines)
        ingest([str(tmp_path / f"in{index}")], root, workers=1)
    before = contents(root)
    parts_before = len(list(Path(root, "events").rglob("*.parquet")))
    summary = compact(root, retain_hours=0)
    assert summary.batch == 7 and summary.files_removed["events"] >= 6
    assert contents(root) == before
    assert len(list(Path(root, "events").rglob("*.parquet"))) < parts_before
    assert compact(root, retain_hours=0).batch is None  # nothing left to merge
    more = write_lines(tmp_path / "more" / "log.jsonl", games["bazito"][6].lines)
    assert ingest([str(more)], root, workers=1).batch == 8
    with open_warehouse(root) as reader:
        assert reader.rows("SELECT kind, count(*) AS n FROM batches GROUP BY ALL ORDER BY 1") == [
            {"kind": "compact", "n": 1}, {"kind": "ingest", "n": 7}]


def test_cli_ingest_query_and_stats(logs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    root = str(tmp_path / "wh")
    result = runner.invoke(app, ["ingest", str(logs), "-w", root, "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "batch 1 committed" in result.output and "new" in result.output

    result = runner.invoke(app, ["query", "SELECT status, count(*) AS n FROM games GROUP BY 1 "
                                 "ORDER BY 1", "-w", root, "-f", "json"])
    assert result.exit_code == 0, result.output
    verdicts, _ = validate_paths([str(logs)])
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    assert {r["status"]: r["n"] for r in json.loads(result.output)} == counts

    result = runner.invoke(app, ["query", "SELECT game_id FROM games ORDER BY 1 LIMIT 2", "-w",
                                 root, "-f", "csv"])
    assert result.output.splitlines()[0] == "game_id" and len(result.output.splitlines()) == 3

    result = runner.invoke(app, ["stats", "players", "-w", root, "-n", "3"])
    assert result.exit_code == 0 and "leaderboard" in result.output, result.output
    result = runner.invoke(app, ["stats", "players", "-w", root, "-r", "persian", "-f", "json"])
    rows = json.loads(result.output)
    assert rows and {r["ruleset"] for r in rows} == {"persian"}
    result = runner.invoke(app, ["stats", "compliance", "-w", root])
    assert result.exit_code == 0 and "server build" in result.output, result.output

    game = next(v for v in verdicts if v.violations)
    result = runner.invoke(app, ["stats", "game", game.game, "-w", root, "-f", "json"])
    record = json.loads(result.output)
    assert record["status"] == game.status
    assert [v["code"] for v in record["violations"]] == [v["code"] for v in game.violations]
    result = runner.invoke(app, ["stats", "game", "no-such-game", "-w", root])
    assert result.exit_code == 1

    assert runner.invoke(app, ["query", "SELECT * FROM nowhere", "-w", root]).exit_code == 1
    assert runner.invoke(app, ["stats", "players", "-w", str(tmp_path / "none")]).exit_code == 1
    assert runner.invoke(app, ["ingest", str(tmp_path / "missing"), "-w", root]).exit_code == 2


def test_a_second_writer_is_turned_away(games: dict[str, list[SimulatedGame]],
                                        tmp_path: Path) -> None:
    root = tmp_path / "wh"
    log = write_lines(tmp_path / "log.jsonl", game_lines(games["bazito"][:2]))
    ingest([str(log)], str(root), workers=1)
    from ingest.store import WarehouseError

    with Warehouse(root).lock(), pytest.raises(WarehouseError, match="busy"):
        ingest([str(log)], str(root), workers=1, force=True)


def test_summaries_stay_equal_to_their_query(games: dict[str, list[SimulatedGame]],
                                             tmp_path: Path) -> None:
    """The summary tables (the leaderboard's, the 2-card matrix's, the first seat's, the
    special cards'), kept with each batch, say what aggregating the game tables says,
    after new games and after an update alike; a batch that changes nothing leaves them."""
    from ingest.summaries import SUMMARIES

    root = str(tmp_path / "wh")
    game = games["persian"][1]
    write_lines(tmp_path / "one" / "log.jsonl",
                [*game_lines(games["bazito"][:8]), *game.lines[: len(game.lines) // 3]])
    write_lines(tmp_path / "two" / "log.jsonl", [*game_lines(games["bazito"][8:12]), *game.lines])
    stored: dict[str, list[tuple[object, ...]]] = {}
    for folder in ("one", "two"):
        last = ingest([str(tmp_path / folder)], root, workers=1)
        with open_warehouse(root) as reader:
            for name, summary in SUMMARIES.items():
                stored[name] = sorted(reader.sql(f"SELECT * FROM {name}").fetchall(), key=repr)
                computed = sorted(reader.sql(f"WITH counters AS ({summary.partial}) {summary.finished()}")
                                  .fetchall(), key=repr)
                assert stored[name] == computed and stored[name], name
    again = ingest([str(tmp_path / "two")], root, workers=1, force=True)
    for name in SUMMARIES:
        assert again.versions[name] == last.versions[name], name  # not rewritten
    with open_warehouse(root) as reader:
        for name in SUMMARIES:
            assert sorted(reader.sql(f"SELECT * FROM {name}").fetchall(), key=repr) == stored[name]


def test_polars_scans_share_one_snapshot(tmp_path: Path) -> None:
    """Issue #14 item 16: several tables scanned at one snapshot are read at the same
    batch, even after a later batch committed."""
    root = str(tmp_path / "wh")
    sample = Path(__file__).resolve().parents[2] / "data" / "sample"
    ingest([str(sample / "bazito.jsonl")], root, workers=1)
    first = Warehouse(root).snapshot()
    ingest([str(sample / "pis-yedili.jsonl")], root, workers=1)

    games = scan_polars(root, "games", snapshot=first).collect()
    events = scan_polars(root, "events", snapshot=first).collect()
    assert set(games["ruleset"]) == {"bazito"}
    assert set(events["game_id"]) == set(games["game_id"])
    latest = scan_polars(root, "games").collect()
    assert set(latest["ruleset"]) == {"bazito", "pis-yedili"}


def test_the_part_memos_forget_parts_the_snapshot_no_longer_has(warehouse: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader reopened after every commit resolves each part's path and reads its later
    columns once; the memos forget parts merged away once they hold many more than the
    snapshot has, instead of growing with every part ever written."""
    from ingest import queries

    merged_away = {f"/gone/part-{n}.parquet": f"/gone/part-{n}.parquet" for n in range(1000)}
    monkeypatch.setattr(queries, "_REAL_PATHS", dict(merged_away))
    monkeypatch.setattr(queries, "_PART_COLUMNS", {(p, 1, 1): frozenset() for p in merged_away})
    with open_warehouse(warehouse):  # under the bound: nothing forgotten
        pass
    assert merged_away.keys() <= queries._REAL_PATHS.keys()
    live = set(queries._REAL_PATHS) - set(merged_away)
    assert live and all(Path(p).name.endswith(".parquet") for p in live)
    monkeypatch.setattr(queries, "PARTS_REMEMBERED", 0)
    with open_warehouse(warehouse):  # 4 × its parts exceeded: the parts merged away forgotten
        pass
    assert set(queries._REAL_PATHS) == live
    assert queries._PART_COLUMNS and all(path.startswith(warehouse.rstrip("/")) or Path(path).exists()
                                         for path, _, _ in queries._PART_COLUMNS)
    assert not any(path in merged_away for path, _, _ in queries._PART_COLUMNS)
    # on S3 the log's names are not paths (no part resolved): the later columns of the
    # parts' local copies are forgotten all the same
    copies = {p for p, _, _ in queries._PART_COLUMNS}
    queries._PART_COLUMNS.update({(p, 1, 1): frozenset() for p in merged_away})
    queries._forget_parts_but(set(), copies)
    assert {p for p, _, _ in queries._PART_COLUMNS} == copies
