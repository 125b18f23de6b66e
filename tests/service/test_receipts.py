"""The finished receipts a server keeps (`service.receipts.FinishedReceipts`): each reads
back as it was added, the most recent `capacity` of them, in memory that does not grow
with the pushes."""

from __future__ import annotations

import tracemalloc
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.receipts import FinishedReceipts, Receipt, new_id, now

TIMES = st.one_of(
    st.datetimes(timezones=st.just(__import__("datetime").UTC)).map(lambda t: t.isoformat()),
    st.sampled_from(["", "yesterday", "2026-12-07T02:35:55", "2026-12-07T02:35:55.000000+00:00",
                     "2026-12-07T05:35:55.1+03:00"]))
RECEIPTS = st.builds(
    Receipt,
    id=st.one_of(st.text("0123456789abcdef", min_size=16, max_size=16).map(lambda h: "ing_" + h),
                 st.sampled_from(["ing_", "ing_XYZ", "batch-1", "ing_" + "f" * 17])),
    status=st.sampled_from(["committed", "failed"]),
    sha256=st.one_of(st.text("0123456789abcdef", min_size=64, max_size=64), st.just("")),
    size=st.integers(0, 2**40), received_at=TIMES, lines=st.integers(0, 2**31),
    started_at=st.one_of(st.none(), TIMES), finished_at=st.one_of(st.none(), TIMES),
    batch=st.one_of(st.none(), st.integers(-1, 2**40)),
    error=st.one_of(st.none(), st.text(max_size=20)))


@settings(max_examples=300, deadline=None)
@given(st.lists(RECEIPTS, max_size=30), st.integers(1, 40))
def test_a_receipt_reads_back_as_it_was_added(receipts: list[Receipt], capacity: int) -> None:
    kept = FinishedReceipts(capacity)
    for receipt in receipts:
        kept.add(receipt)
        assert kept.get(receipt.id) == receipt
    last = {r.id: r for r in receipts}
    for receipt_id, receipt in last.items():
        got = kept.get(receipt_id)
        assert got is None or got == receipt  # forgotten, or as added last
    assert len(kept) <= capacity + max(1, capacity // 16)


def _receipt(n: int, batch: int, started: str, finished: str) -> Receipt:
    return Receipt(id=f"ing_{n:016x}", status="committed", sha256=f"{n:064x}", size=20_000 + n,
                   received_at=now(), lines=60, started_at=started, finished_at=finished, batch=batch)


def test_the_oldest_are_forgotten_past_the_capacity() -> None:
    kept = FinishedReceipts(1_000)
    started = finished = now()
    receipts = [_receipt(n, n // 100, started, finished) for n in range(2_500)]
    for receipt in receipts:
        kept.add(receipt)
    assert len(kept) == 1_000
    assert all(kept.get(r.id) is None for r in receipts[:1_500])
    assert all(kept.get(r.id) == r for r in receipts[1_500:])
    failed = replace(receipts[-1], status="failed", batch=None, error="the writer process died")
    kept.add(failed)  # the same id added again: read as added last
    assert kept.get(failed.id) == failed
    kept.add(receipts[-1])
    assert kept.get(failed.id) == receipts[-1]


def test_memory_is_bounded_once_the_capacity_is_reached() -> None:
    """Counted by tracemalloc, not timed: a book of 2,000 takes under 250 bytes a
    receipt, columns included (an object a receipt, as before, took about 500), and as
    much after 20,000 receipts as after 4,000 (its dictionary's table has settled by
    then: deletions leave room it reuses). The bound is per receipt: a book of 10,000
    measured 215 bytes a receipt, 2,000 measure 227; a small book because tracemalloc
    makes every allocation slow (100,000 receipts took 7-13 s)."""
    started = finished = now()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        kept = FinishedReceipts(2_000)
        held = []
        for n in range(20_000):
            kept.add(_receipt(n, n // 100, started, finished))
            if n + 1 in (4_000, 20_000):
                held.append(tracemalloc.get_traced_memory()[0] - base)
    finally:
        tracemalloc.stop()
    assert held[0] < 250 * 2_000
    assert held[1] <= held[0] * 1.02


def test_an_older_receipt_is_found_in_commits_log_as_last_written(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the receipts kept in memory, a receipt is read from commits.log as its last
    whole line has it: the current file before the one it replaced, the later line of a
    file before the earlier; one in neither file is gone. A batch number, or an id of another
    form, is not searched for."""
    from ingest.storage import Location
    from service import jobs
    from service.jobs import IngestQueue

    monkeypatch.setattr(jobs, "RECENT_RECEIPTS", 2)  # made[12] and the line cut short below
    monkeypatch.setattr(jobs, "COMMITS_LOG_BYTES", 1_000)  # a line is about 320 bytes
    made = [Receipt(id=new_id(), status="committed", sha256=f"{n:064x}", size=n, received_at=now(),
                    lines=n, started_at=now(), finished_at=now(), batch=n) for n in range(13)]
    again = replace(made[6], status="failed", batch=None, error="written again")
    later = replace(made[8], batch=99)
    writer = IngestQueue(Location.of(str(tmp_path / "wh")), state=tmp_path / "state")
    for group in (made[0:3], made[3:6], made[6:8], [again], made[8:10], made[10:12], [later], made[12:]):
        writer._log_group(group)
    writer.journal.close()
    state = tmp_path / "state"
    files = [[Receipt(**orjson.loads(line)) for line in (state / name).read_bytes().splitlines()]
             for name in ("commits.log.1", "commits.log")]
    assert files == [[made[6], made[7], again, made[8], made[9]], [made[10], made[11], later, made[12]]]
    with open(state / "commits.log", "ab") as log:  # a crash in the middle of a line
        log.write(replace(made[10], status="failed").to_json()[:120])

    queue = IngestQueue(Location.of(str(tmp_path / "wh")), state=tmp_path / "state")
    queue._load_commits_log()  # as a restart does: the last RECENT_RECEIPTS kept in memory
    try:
        assert queue._finished.get(made[12].id) == made[12]
        assert queue._finished.get(made[6].id) is None  # the others are read from the files
        assert queue.get(made[6].id) == again  # twice in commits.log.1
        assert queue.get(made[8].id) == later  # in both files
        for receipt in (made[7], made[9], made[10], made[11]):  # made[10]: the line before the cut one
            assert queue.get(receipt.id) == receipt
        for receipt in made[:6]:
            assert queue.get(receipt.id) is None  # gone with the file it was in
        assert queue.get(new_id()) is None

        def searched(*_: object) -> None:
            raise AssertionError("searched commits.log")
        monkeypatch.setattr(jobs, "_lines_with", searched)
        for other in ("12", "ing_", "ing_XYZ", "batch-1", made[6].id.upper()):
            assert queue.get(other) is None
    finally:
        queue.journal.close()
