"""The support desk's cases in the warehouse: a case write is a batch of its own, by the
writer's lock and commit protocol, so neither a case nor an ingest's batch is lost when
both write; a warehouse made before the `cases` table reads as having no case, and its
next writer adds the table."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from ingest import cases, read, schema, store
from ingest.pipeline import Progress, ingest
from ingest.store import Warehouse
from tests.ingest.conftest import game_lines, write_lines


@pytest.fixture
def warehouse(games: dict[str, Any], tmp_path: Path) -> Path:
    root = tmp_path / "wh"
    ingest([str(write_lines(tmp_path / "logs" / "a.jsonl", game_lines(games["bazito"][:6])))],
           str(root), workers=1)
    return root


def _game(root: Path) -> str:
    reader = read.connect(root)
    try:
        return str(reader.rows("SELECT game_id FROM games ORDER BY game_id LIMIT 1")[0][0])
    finally:
        reader.close()


def test_a_case_is_opened_changed_and_found(warehouse: Path) -> None:
    game = _game(warehouse)
    opened = cases.open_case(warehouse, cases.Draft(game, 1, 3, "p1", ["Refund", "refund", "app"],
                                                    "says the app showed no 7"), "desk ana")
    assert opened.revision == 1 and opened.tags == ("refund", "app") and opened.status == "open"
    changed = cases.update_case(warehouse, opened.case_id,
                                cases.Change(decision="upheld: the foul stands", note="log checked"), "lead bo")
    assert (changed.revision, changed.status, changed.decided_by) == (2, "decided", "lead bo")
    assert [n.text for n in changed.notes] == ["says the app showed no 7", "log checked"]
    reader = read.connect(warehouse)
    try:
        kinds = [r[0] for r in reader.rows("SELECT kind FROM batches ORDER BY id")]
        assert kinds == ["ingest", "case", "case"]
        for search in (read.CaseSearch(game=game), read.CaseSearch(tag="APP"), read.CaseSearch(text="LOG CHECKED"),
                       read.CaseSearch(text="upheld"), read.CaseSearch(status="decided"),
                       read.CaseSearch(player="p1")):
            found = read.cases(reader, search)
            assert found["case_id"].to_list() == [opened.case_id], search
            assert found["revision"].to_list() == [2]
        for search in (read.CaseSearch(game=game + "x"), read.CaseSearch(tag="refunds"),
                       read.CaseSearch(status="open"), read.CaseSearch(text="nothing like it")):
            assert read.cases(reader, search).height == 0, search
        history = read.case_revisions(reader, opened.case_id)
        assert history["revision"].to_list() == [1, 2]
        assert history["decision"].to_list() == [None, "upheld: the foul stands"]
        assert cases.Case.of_row(history.row(1, named=True)) == changed
        assert read.case_tags(reader) == ["app", "refund"]
    finally:
        reader.close()


def test_what_a_case_refuses(warehouse: Path) -> None:
    game = _game(warehouse)
    with pytest.raises(cases.CaseError, match="a tag is 1–40"):
        cases.open_case(warehouse, cases.Draft(game, tags=["two words"]), "ana")
    with pytest.raises(cases.CaseError, match="who writes the case"):
        cases.open_case(warehouse, cases.Draft(game), "  ")
    with pytest.raises(cases.CaseNotFound, match="no case 'case-000000000000'"):
        cases.update_case(warehouse, "case-000000000000", cases.Change(note="x"), "ana")
    opened = cases.open_case(warehouse, cases.Draft(game), "ana")
    with pytest.raises(cases.CaseError, match="none was given"):
        cases.update_case(warehouse, opened.case_id, cases.Change(), "ana")
    with pytest.raises(cases.CaseError, match="exists already"):
        cases.open_case(warehouse, cases.Draft(game, case_id=opened.case_id), "ana")


def test_an_ingest_after_a_case_keeps_it(games: dict[str, Any], warehouse: Path, tmp_path: Path) -> None:
    opened = cases.open_case(warehouse, cases.Draft(_game(warehouse), note="kept"), "ana")
    more = write_lines(tmp_path / "logs" / "b.jsonl", game_lines(games["bazito"][6:12]))
    ingest([str(more)], str(warehouse), workers=1)
    reader = read.connect(warehouse)
    try:
        assert read.cases(reader, read.CaseSearch())["case_id"].to_list() == [opened.case_id]
        assert reader.rows("SELECT count(*) FROM games")[0][0] == 12
    finally:
        reader.close()


def test_a_case_written_during_an_ingest_waits_and_neither_is_lost(
        games: dict[str, Any], warehouse: Path, tmp_path: Path) -> None:
    """The case is written while the ingest holds the warehouse (from its progress
    callback, so the two certainly meet): it waits for the lock, commits the batch after
    the ingest's, and both are in the snapshot."""
    game = _game(warehouse)
    more = write_lines(tmp_path / "logs" / "b.jsonl", game_lines(games["bazito"][6:12]))
    written: list[cases.Case] = []
    failures: list[BaseException] = []
    writer: list[threading.Thread] = []

    def write_case() -> None:
        try:
            written.append(cases.open_case(warehouse, cases.Draft(game, note="during"), "ana", wait=600))
        except BaseException as exc:  # the test's thread: report it, do not lose it
            failures.append(exc)

    def progress(state: Progress) -> None:
        if not writer:  # the ingest holds the lock from before its first report
            writer.append(threading.Thread(target=write_case))
            writer[0].start()

    summary = ingest([str(more)], str(warehouse), workers=1, progress=progress)
    writer[0].join()
    assert not failures, failures
    assert written[0].batch == summary.batch + 1  # it waited for the ingest's commit
    reader = read.connect(warehouse)
    try:
        assert reader.batch == summary.batch + 1
        assert reader.rows("SELECT count(*) FROM games")[0][0] == 12
        assert read.cases(reader, read.CaseSearch())["case_id"].to_list() == [written[0].case_id]
    finally:
        reader.close()


def test_an_ingest_during_a_case_write_waits_and_neither_is_lost(
        games: dict[str, Any], warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other way round: an ingest started while a case write holds the lock (from the
    case's own part writer) waits for it and carries the case over."""
    game = _game(warehouse)
    more = write_lines(tmp_path / "logs" / "b.jsonl", game_lines(games["bazito"][6:12]))
    done: list[Any] = []
    started: list[threading.Thread] = []
    close = store.PartWriter.close

    def closing(self: store.PartWriter) -> list[store.PartFile]:
        if self.spec.name == "cases" and not started:
            started.append(threading.Thread(target=lambda: done.append(
                ingest([str(more)], str(warehouse), workers=1, wait=600))))
            started[0].start()
        return close(self)

    monkeypatch.setattr(store.PartWriter, "close", closing)
    opened = cases.open_case(warehouse, cases.Draft(game, note="first"), "ana")
    started[0].join()
    assert done and done[0].batch == opened.batch + 1
    reader = read.connect(warehouse)
    try:
        assert reader.rows("SELECT count(*) FROM games")[0][0] == 12
        assert read.cases(reader, read.CaseSearch())["case_id"].to_list() == [opened.case_id]
    finally:
        reader.close()


def test_a_warehouse_made_before_cases_reads_and_takes_its_first(
        games: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema-4 warehouse (no `cases` table, batches rows without its version) is read
    as having no case; the first case write creates the table."""
    old_tables = {n: s for n, s in schema.TABLES.items() if n != "cases"}
    with monkeypatch.context() as old:  # the build before `cases`
        old.setattr(store, "TABLES", old_tables)
        old.setattr(store, "SNAPSHOT_TABLES", tuple(n for n in schema.SNAPSHOT_TABLES if n != "cases"))
        old.setattr(store, "SCHEMA_VERSION", 4)
        old.setattr("ingest.pipeline.CASE_TABLES", ())
        root = tmp_path / "old"
        ingest([str(write_lines(tmp_path / "a.jsonl", game_lines(games["bazito"][:3])))], str(root), workers=1)
    assert not (root / "cases").exists()
    reader = read.connect(root)
    try:
        assert reader.rows("SELECT DISTINCT schema_version FROM batches")[0][0] == 4
        assert read.cases(reader, read.CaseSearch()).height == 0
        game = str(reader.rows("SELECT min(game_id) FROM games")[0][0])
    finally:
        reader.close()
    opened = cases.open_case(root, cases.Draft(game, note="first of its kind"), "ana")
    reader = read.connect(root)
    try:
        assert read.cases(reader, read.CaseSearch())["case_id"].to_list() == [opened.case_id]
        assert reader.rows("SELECT count(*) FROM games")[0][0] == 3
    finally:
        reader.close()


def test_a_batch_row_may_leave_no_table_out(warehouse: Path) -> None:
    """A writer that forgot a table's version would drop it from the snapshot: refused
    before anything is written."""
    with pytest.raises(store.WarehouseError, match="records no version of cases"):
        Warehouse(warehouse).commit_batch({"id": 99}, dict.fromkeys((*schema.DATA_TABLES, *schema.SUMMARY_TABLES), 1))
