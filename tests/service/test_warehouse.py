"""The service's game index (service.warehouse): a game's lines read from the row groups it
names (through the part's footer map, service.footers) are exactly the partition scan's, at
every snapshot — after a batch that replaces a stored game (its old part removed from the
table) as after the first."""

from __future__ import annotations

from pathlib import Path

from ingest import read
from ingest.pipeline import ingest
from ingest.storage import Location
from service.warehouse import Gateway
from tests.service.conftest import DISPUTED, sample_lines

INDEX_TIMEOUT = 120.0  # seconds; a guard against a build that never ends, not a measurement


def _every_game_agrees(gateway: Gateway) -> int:
    reader = gateway.reader()
    version = reader.snapshot.versions["events"]
    assert gateway.index is not None and gateway.index.wait(version, INDEX_TIMEOUT)
    assert gateway.indexed
    mapped, parts = gateway.index.mapped  # every part read through its footer's map
    assert parts and mapped == parts
    games = [g for (g,) in reader.rows("SELECT game_id FROM games ORDER BY game_id")]
    for game in games:
        indexed = gateway.index.lines(game, version)
        assert indexed, game
        assert indexed == read.game_lines(reader, game), game
        # the index names the game's partition, which prunes every read of its rows
        partition = gateway.partition_of(reader, game)
        assert partition is not None and partition == read.game_partition(reader, game)
        assert read.game_row(reader, game, partition) == read.game_row(reader, game)
        for rows in (read.game_hands, read.game_hand_players, read.game_violations):
            assert rows(reader, game, partition).equals(rows(reader, game)), (rows.__name__, game)
    assert gateway.index.lines("no-such-game", version) == []
    assert gateway.partition_of(reader, "no-such-game") is None
    assert gateway.index.lines(games[0], version + 1) is None  # another version: not known
    return version


def test_the_index_reads_what_the_scan_reads(tmp_path: Path) -> None:
    lines = [line.encode() for line in sample_lines()]
    game = [line for line in lines if f'"game":"{DISPUTED}"'.encode() in line.replace(b" ", b"")]
    others = [line for line in lines if line not in game]
    cut = len(game) // 2
    first, rest = tmp_path / "first.jsonl", tmp_path / "rest.jsonl"
    first.write_bytes(b"\n".join(others + game[:cut]) + b"\n")
    rest.write_bytes(b"\n".join(game[cut:]) + b"\n")
    root = tmp_path / "wh"
    ingest([str(first)], str(root), workers=1)
    gateway = Gateway(Location.of(root))
    before = _every_game_agrees(gateway)
    assert len(gateway.game_lines(gateway.reader(), DISPUTED)) == cut

    ingest([str(rest)], str(root), workers=1)  # the game completed: its old part replaced
    gateway.refresh()
    after = _every_game_agrees(gateway)
    assert after > before
    assert len(gateway.game_lines(gateway.reader(), DISPUTED)) == len(game)
    replayed = gateway.replayed(DISPUTED)
    assert replayed is not None and replayed.replay.status != "incomplete"
