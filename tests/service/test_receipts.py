"""The finished receipts a server keeps (`service.receipts.FinishedReceipts`): each reads
back as it was added, the most recent `capacity` of them, in memory that does not grow
with the pushes."""

from __future__ import annotations

import tracemalloc
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from service.receipts import FinishedReceipts, Receipt, now

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
    """Counted by tracemalloc, not timed: a book of 10,000 takes under 250 bytes a
    receipt, columns included (an object a receipt, as before, took about 500), and
    as much after 100,000 receipts as after 20,000 (its dictionary's table has settled
    by then: deletions leave room it reuses)."""
    started = finished = now()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        kept = FinishedReceipts(10_000)
        held = []
        for n in range(100_000):
            kept.add(_receipt(n, n // 100, started, finished))
            if n + 1 in (20_000, 100_000):
                held.append(tracemalloc.get_traced_memory()[0] - base)
    finally:
        tracemalloc.stop()
    assert held[0] < 250 * 10_000
    assert held[1] <= held[0] * 1.02
