"""Receipts of pushes (`POST /v1/ingest`): the record a pusher asks after, and the most
recent finished ones kept in bounded memory.

A receipt in flight (queued, running) is a `Receipt` the committer changes as it goes.
Once its group is finished (committed or failed) it never changes again: it is written
to `commits.log` and kept in a `FinishedReceipts`, which holds the last `capacity` of
them in columns of fixed width and a dictionary from id to slot (208 bytes a receipt)
instead of an object each (514 bytes with its strings and its dictionary entry; both
measured by `bench/bench_live_memory.py`). Older receipts are found in `commits.log`
(`service.jobs`).
"""

from __future__ import annotations

import re
import secrets
from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache

import numpy as np
import orjson

#: a receipt id as the queue makes them: `ing_` and 64 random bits in hex
_ID = re.compile(r"ing_[0-9a-f]{16}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NONE = np.iinfo(np.int64).min  # a time not set (`started_at` of a receipt found at a restart)


@dataclass
class Receipt:
    id: str
    status: str  # queued · running · committed · failed
    sha256: str
    size: int
    received_at: str
    lines: int = 0
    started_at: str | None = None
    finished_at: str | None = None
    batch: int | None = None
    error: str | None = None

    def to_json(self) -> bytes:
        return orjson.dumps(self)  # its fields in order, as `asdict` gives them


def new_id() -> str:
    """A new receipt's id: `ing_` and 64 random bits in hex (the only form pushes were
    ever given)."""
    return f"ing_{secrets.token_hex(8)}"


def is_id(text: str) -> bool:
    """Whether `text` has a receipt id's form (anything else names no push)."""
    return _ID.fullmatch(text) is not None


def now() -> str:
    """The time a receipt records: UTC, ISO 8601 with microseconds."""
    return datetime.now(UTC).isoformat()


def _micros(when: str | None) -> int | None:
    """`when` as microseconds since the epoch (a time not set: `_NONE`), None when it
    would not read back as the same text (not ISO 8601 with an offset, as `now` writes)."""
    if when is None:
        return int(_NONE)
    try:
        parsed = datetime.fromisoformat(when)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    micros = (parsed - _EPOCH) // _MICROSECOND
    return micros if _text(micros) == when else None


#: a group's receipts share their start and finish: each read once
_shared_micros = lru_cache(maxsize=8)(_micros)


def _text(micros: int) -> str | None:
    return None if micros == _NONE else (_EPOCH + micros * _MICROSECOND).isoformat()


class FinishedReceipts:
    """The last `capacity` finished receipts, by id. A receipt that the columns cannot
    hold exactly (a failure's message, an id or a time not written by this server) is
    kept as it is, among the last `capacity // 16` such receipts. Not thread-safe: the
    queue calls it under its lock."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self.capacity = capacity
        self._id = np.zeros(capacity, np.uint64)
        self._sha256 = np.zeros((capacity, 32), np.uint8)
        self._size = np.zeros(capacity, np.int64)
        self._lines = np.zeros(capacity, np.int64)
        self._batch = np.zeros(capacity, np.int64)
        self._received = np.zeros(capacity, np.int64)
        self._started = np.zeros(capacity, np.int64)
        self._finished = np.zeros(capacity, np.int64)
        self._next = 0  # the slot the next receipt takes (the oldest, once all are used)
        self._slots: dict[int, int] = {}  # an id's 64 bits → its slot
        self._odd: OrderedDict[str, Receipt] = OrderedDict()
        self._odd_capacity = max(1, capacity // 16)

    def __len__(self) -> int:
        return len(self._slots) + len(self._odd)

    def add(self, receipt: Receipt) -> None:
        """Keep `receipt` (finished: it is not changed again), in place of one kept under
        its id, forgetting the oldest past the capacity."""
        packed = self._pack(receipt)
        if packed is None:
            if _ID.fullmatch(receipt.id):
                self._slots.pop(int(receipt.id[4:], 16), None)
            self._odd[receipt.id] = receipt
            self._odd.move_to_end(receipt.id)
            while len(self._odd) > self._odd_capacity:
                self._odd.popitem(last=False)
            return
        self._odd.pop(receipt.id, None)
        key, sha, batch, received, started, finished = packed
        slot = self._slots.get(key)
        if slot is None:
            slot = self._next
            self._next = (slot + 1) % self.capacity
            old = int(self._id[slot])
            if self._slots.get(old) == slot:
                del self._slots[old]
            self._slots[key] = slot
        self._id[slot] = key
        self._sha256[slot] = np.frombuffer(sha, np.uint8)
        self._size[slot], self._lines[slot], self._batch[slot] = receipt.size, receipt.lines, batch
        self._received[slot], self._started[slot], self._finished[slot] = received, started, finished

    def get(self, receipt_id: str) -> Receipt | None:
        """The receipt `receipt_id`, None when it is not among those kept."""
        odd = self._odd.get(receipt_id)
        if odd is not None:
            return replace(odd)
        slot = self._slots.get(int(receipt_id[4:], 16)) if _ID.fullmatch(receipt_id) else None
        if slot is None:
            return None
        return Receipt(id=receipt_id, status="committed", sha256=self._sha256[slot].tobytes().hex(),
                       size=int(self._size[slot]), received_at=_text(int(self._received[slot])) or "",
                       lines=int(self._lines[slot]), started_at=_text(int(self._started[slot])),
                       finished_at=_text(int(self._finished[slot])), batch=int(self._batch[slot]))

    @staticmethod
    def _pack(receipt: Receipt) -> tuple[int, bytes, int, int, int, int] | None:
        """The receipt's fields as the columns hold them; None when they would not read
        back as they are."""
        if (receipt.status != "committed" or receipt.error is not None or receipt.batch is None
                or not 0 <= receipt.batch < 2**63 or not 0 <= receipt.size < 2**63
                or not 0 <= receipt.lines < 2**63 or not _ID.fullmatch(receipt.id)
                or not _SHA256.fullmatch(receipt.sha256) or receipt.finished_at is None):
            return None
        received, started, finished = (_micros(receipt.received_at), _shared_micros(receipt.started_at),
                                       _shared_micros(receipt.finished_at))
        if received is None or started is None or finished is None or _NONE in (received, finished):
            return None
        return (int(receipt.id[4:], 16), bytes.fromhex(receipt.sha256), receipt.batch, received, started,
                finished)
