"""The journal gives back each accepted body byte for byte, across segments, where the
service's writer reads it (`Journal.range_of`)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from service import journal as journal_module
from service.journal import Journal


def _bodies() -> list[bytes]:
    # sizes around the chunk size, an empty body, and bytes that are not text
    return [b"", b'{"seq": 1}\n', bytes(range(256)) * 4099, b"x" * (1 << 20), b"y" * ((1 << 20) + 3)]


def _append_all(journal: Journal, tmp_path: Path) -> list[journal_module.Record]:
    records = []
    for n, body in enumerate(_bodies()):
        spool = tmp_path / f"body{n}"
        spool.write_bytes(body)
        records.append(journal.append({"id": f"ing_{n}", "size": len(body), "lines": body.count(b"\n")}, spool))
    return records


def _body(journal: Journal, record: journal_module.Record) -> bytes:
    """The record's body as the writer reads it: its range of a segment."""
    source, offset, size = journal.range_of(record)
    with open(source, "rb") as handle:
        handle.seek(offset)
        return handle.read(size)


def test_bodies_come_back_as_appended(tmp_path: Path) -> None:
    # small segments: the records lie in several
    journal = Journal(tmp_path / "journal", segment_bytes=1 << 20)
    records = _append_all(journal, tmp_path)
    assert len({r.segment for r in records}) > 1
    assert [_body(journal, r) for r in records] == _bodies()
    journal.close()
    # and as the journal is read again at a restart
    again = list(Journal(tmp_path / "journal", segment_bytes=1 << 20).records(journal_module.Position(0, 0)))
    assert [(r.id, r.segment, r.body_offset, r.size) for r in again] == \
        [(r.id, r.segment, r.body_offset, r.size) for r in records]


def test_a_body_past_the_memory_bound_waits_in_a_file(tmp_path: Path) -> None:
    from service.jobs import MEMORY_BODY, Spool

    small, large = Spool(tmp_path / "incoming"), Spool(tmp_path / "incoming")
    line = b'{"game": "g", "seq": 1}\n'
    for _ in range(3):
        small.write(line)
    while large.size <= MEMORY_BODY:
        large.write(line * 1000)
    small.close()
    large.close()
    assert small.body == line * 3 and small.lines == 3
    assert isinstance(large.body, Path) and large.body.read_bytes() == line * (large.size // len(line))
    journal = Journal(tmp_path / "journal")
    records = journal.append_many([({"id": "ing_small", "size": small.size}, small.body),
                                   ({"id": "ing_large", "size": large.size}, large.body)])
    large.discard()
    assert not list((tmp_path / "incoming").iterdir())  # the file is gone once journaled
    assert _body(journal, records[0]) == line * 3
    assert _body(journal, records[1]) == line * (large.size // len(line))


def test_a_push_whose_client_leaves_is_still_journaled_whole_and_others_answered(tmp_path: Path) -> None:
    """The appender owns a body from `accept` on: a cancelled push (its client gone) takes
    nothing from it, and the pushes journaled with it are answered."""
    import asyncio

    from ingest.storage import Location
    from service.jobs import MEMORY_BODY, IngestQueue

    queue = IngestQueue(Location.of(str(tmp_path / "wh")), state=tmp_path / "state")
    queue._appender.start()  # the journal's appender alone: no committer, no writer
    line = b'{"game": "g", "seq": 1}\n'
    bodies = [line * (MEMORY_BODY // len(line) + 10), line * 2]  # one in a file, one in memory

    async def push_two() -> tuple[str, str]:
        spools = []
        for body in bodies:
            spool = queue.spool()
            spool.write(body)
            spools.append(spool)
        with queue.journal._lock:  # the appender cannot write until both are handed over
            leaving = asyncio.ensure_future(queue.accept(spools[0]))
            staying = asyncio.ensure_future(queue.accept(spools[1]))
            # both handed over, waiting for the journal: the appender may have taken the
            # first already (it then waits for the lock), so they are counted until written
            guard = time.monotonic() + 60  # a guard against a hang, not a measurement
            while len(queue._appending_by_sha) < 2:
                assert time.monotonic() < guard, "the pushes were not handed to the appender"
                await asyncio.sleep(0)
            leaving.cancel()
        receipt, new = await staying
        with pytest.raises(asyncio.CancelledError):
            await leaving
        assert new
        return receipt.id, receipt.sha256

    try:
        staying_id, _ = asyncio.run(push_two())
        with queue._lock:
            queue._stopping = True
            queue._append_wake.notify_all()
        queue._appender.join()
    finally:
        queue.journal.close()
    records = list(queue.journal.records(queue.journal.committed()))
    assert [r.size for r in records] == [len(b) for b in bodies]
    assert [_body(queue.journal, r) for r in records] == bodies
    assert records[1].id == staying_id
    assert not [p for p in (tmp_path / "state" / "incoming").iterdir()]  # the spilled body's file is gone
