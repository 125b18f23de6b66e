"""`POST /v1/validate`: the body judged by the engine as `haftkhabis validate --json -`
judges standard input — the same call (`engine._core.validate_to` on `-`), so the same
bytes.

Bounded by design (issue #34, docs/operations.md "Limits"): the body is first received
into a spooled temporary file (memory up to 1 MiB, then disk), paced by the caller's
minimum rate (`BodyPace`), holding no engine thread; only a whole body is judged, in one of
two lanes — bodies up to `QUICK_BODY` bytes in threads of their own, so a one-line
validation never queues behind large ones — by the engine without the GIL (the event loop
runs meanwhile). The verdicts go to another spooled file (8 MiB in memory, then disk) and
are sent once judged: sending while the client is still uploading would deadlock a client
that reads only after writing, which most do. A key may have `per_key` validations in
flight at once (`KeySlots`). Nothing is stored.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, BinaryIO, cast

from engine import _core

SPOOL_IN_MEMORY = 8 << 20  # verdicts held in memory before the spool goes to disk
BODY_IN_MEMORY = 1 << 20  # body bytes held in memory before the spool goes to disk
#: a body up to this many bytes (decompressed) is judged in the quick lane
QUICK_BODY = 1 << 20
QUICK_THREADS = 2


class BodyTooSlow(Exception):
    """The body arrives slower than the server's minimum rate (408)."""

    def __init__(self, received: int, seconds: float, pace: BodyPace) -> None:
        super().__init__(
            f"the body arrived too slowly: {received:,} bytes in {seconds:.0f}s, expected at "
            f"least {pace.min_rate:,.0f} bytes a second after the first {pace.grace:.0f}s "
            "(the server's --body-min-rate); send it faster, or in smaller requests")


class TooManyAtOnce(Exception):
    """A key has as many validations in flight as it may (429)."""

    def __init__(self, who: str, limit: int) -> None:
        super().__init__(f"{who} has {limit} validations in flight, the most a key may have "
                         "at once (--max-validations-per-key); retry when one has finished")
        self.limit = limit


@dataclass(frozen=True, slots=True)
class BodyPace:
    """How fast a body must arrive: after `grace` seconds, `min_rate` bytes a second on
    average since the request began (as a chunk is awaited, so a stalled body is cut at
    the moment it falls behind)."""

    min_rate: float = 16 * 1024
    grace: float = 10.0

    async def paced(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """`chunks`, BodyTooSlow once they fall behind."""
        started = time.monotonic()
        received = 0
        source = aiter(chunks)
        while True:
            due = started + self.grace + received / self.min_rate if self.min_rate > 0 else None
            wait = None if due is None else max(0.0, due - time.monotonic())
            try:
                chunk = await asyncio.wait_for(anext(source), wait)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise BodyTooSlow(received, time.monotonic() - started, self) from None
            received += len(chunk)
            yield chunk


class KeySlots:
    """Validations in flight per key: at most `per_key` each."""

    def __init__(self, per_key: int) -> None:
        self.per_key = per_key
        self._busy: dict[str, int] = {}

    @contextmanager
    def slot(self, key: str, who: str) -> Iterator[None]:
        """Hold one of `key`'s slots (TooManyAtOnce when none is free)."""
        held = self._busy.get(key, 0)
        if held >= self.per_key:
            raise TooManyAtOnce(who, self.per_key)
        self._busy[key] = held + 1
        try:
            yield
        finally:
            left = self._busy[key] - 1
            if left:
                self._busy[key] = left
            else:
                del self._busy[key]

    def in_flight(self) -> int:
        return sum(self._busy.values())


@dataclass(frozen=True, slots=True)
class Validated:
    """The verdict lines (a file positioned at its start) and the engine's counts."""

    output: IO[bytes]
    games: int
    lines: int
    violations: int
    errors: int
    compliant: int

    @property
    def clean(self) -> bool:
        """`validate`'s exit status would be 0."""
        return self.errors == 0 and self.compliant == self.games

    def chunks(self, size: int = 1 << 16) -> Iterator[bytes]:
        try:
            while chunk := self.output.read(size):
                yield chunk
        finally:
            self.output.close()


class ValidationPool:
    """The threads the engine validates bodies in: a quick lane for small bodies, and
    `threads` for the rest."""

    def __init__(self, threads: int, quick_threads: int = QUICK_THREADS) -> None:
        self._bulk = ThreadPoolExecutor(threads, thread_name_prefix="haftkhabis-validate")
        self._quick = ThreadPoolExecutor(quick_threads, thread_name_prefix="haftkhabis-validate-quick")

    def shutdown(self) -> None:
        self._bulk.shutdown(wait=False, cancel_futures=True)
        self._quick.shutdown(wait=False, cancel_futures=True)

    async def validate(self, text: AsyncIterator[bytes], *,
                       max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES) -> Validated:
        """Judge the lines `text` yields, once it has ended (a line longer than
        `max_line_bytes` is a `line_too_long` error record). Exceptions raised by `text`
        (too large, too slow, unreadable) propagate; no engine thread was taken."""
        loop = asyncio.get_running_loop()
        body: IO[bytes] = tempfile.SpooledTemporaryFile(BODY_IN_MEMORY)  # noqa: SIM115 - closed below
        size = 0
        try:
            async for chunk in text:
                body.write(chunk)
                size += len(chunk)
        except BaseException:
            body.close()
            raise
        body.seek(0)
        output: IO[bytes] = tempfile.SpooledTemporaryFile(SPOOL_IN_MEMORY)  # noqa: SIM115 - closed by Validated.chunks

        def run() -> _core.ValidateCounts:
            return _core.validate_to(["-"], output.write, stdin=cast(BinaryIO, body),
                                     max_line_bytes=max_line_bytes)

        job = loop.run_in_executor(self._quick if size <= QUICK_BODY else self._bulk, run)
        try:
            counts = await asyncio.shield(job)
        except BaseException:
            # the caller left: the engine's thread finishes this body on its own, then its
            # files are closed (what it says is not news: retrieved, so asyncio does not
            # log it as lost)
            def close(done: asyncio.Future[_core.ValidateCounts]) -> None:
                body.close()
                output.close()
                if not done.cancelled():
                    done.exception()

            job.add_done_callback(close)
            raise
        body.close()
        output.seek(0)
        return Validated(output, counts["games"], counts["lines"], counts["violations"],
                         counts["errors"], counts["statuses"].get("compliant", 0))
