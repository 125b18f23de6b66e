"""`POST /v1/validate`: the body judged by the engine as `haftkhabis validate --json -`
judges standard input — the same call (`engine._core.validate_to` on `-`), so the same
bytes.

Bounded by design (issue #34, docs/operations.md "Limits"): the body is first received,
paced by the caller's minimum rate (`BodyPace`), holding no engine thread — in memory up to
`QUICK_BODY`, past it into a file of the pool's spool folder, written a MiB at a time by a
thread so that no disk write blocks the event loop. Only a whole body is judged: up to
`INLINE_BODY` bytes (a one-line body) on the event loop itself, in well under a
millisecond; up to `QUICK_BODY` bytes in a thread of this process (the engine without the
GIL); a larger one in a worker process, `SCHED_IDLE` in a session of its own
(`_bulk_worker_started`). Bulk judging so takes neither this process's GIL nor its
session's share of the cores (issue #34: "a one-line validate stays under 100 ms while 8
slow or huge bodies are in flight"; what is left of the tail is the machine's load:
docs/operations.md, "Limits").
The verdicts go to a file (the quick lane's: 8 MiB in memory, then disk; up to
`WHOLE_ANSWER` bytes answered in one piece) and are sent once judged: sending while the
client is still uploading would deadlock a client that reads only after writing, which
most do. A key may have `per_key` validations in flight at once (`KeySlots`). Nothing is
stored.
"""

from __future__ import annotations

import asyncio
import io
import multiprocessing
import os
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import IO, BinaryIO, cast

from engine import _core
from ingest.lifetime import die_with_parent
from ingest.spools import spool_folder

SPOOL_IN_MEMORY = 8 << 20  # the quick lane's verdicts held in memory before going to disk
#: a body up to this many bytes (decompressed) is held in memory and judged in the quick lane
QUICK_BODY = 1 << 20
QUICK_THREADS = 2
#: a body up to this many bytes is judged on the event loop itself, in under a millisecond
#: or two (0.4 ms for 16 KiB of 137 open games, 0.6 ms for 655 malformed lines, measured
#: 2026-12-06): on a busy machine, handing it to a thread and back would cost two waits
#: for a core, each far longer than that
INLINE_BODY = 16 << 10
#: a larger body is written to its file in pieces of at least this many bytes
WRITE_PIECE = 1 << 20
#: verdicts up to this many bytes are answered in one piece; larger ones are sent from their
#: file in pieces of `ANSWER_PIECE` (each piece read by a thread)
WHOLE_ANSWER = 1 << 20
ANSWER_PIECE = 1 << 20
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
        if self.min_rate <= 0:
            async for chunk in chunks:
                yield chunk
            return
        # each chunk awaited under a timer of the loop (`asyncio.wait_for` would make a task
        # a chunk, measurably dear on a push's path)
        loop = asyncio.get_running_loop()
        started = loop.time()
        received = 0
        source = aiter(chunks)
        while True:
            try:
                async with asyncio.timeout_at(started + self.grace + received / self.min_rate):
                    chunk = await anext(source)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise BodyTooSlow(received, loop.time() - started, self) from None
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
    """The verdict lines — whole when they are at most `WHOLE_ANSWER` bytes, else a file
    positioned at its start (`chunks` sends it) — and the engine's counts."""

    verdicts: bytes | IO[bytes]
    games: int
    lines: int
    violations: int
    errors: int
    compliant: int

    @classmethod
    def of(cls, verdicts: bytes | IO[bytes], counts: _core.ValidateCounts) -> Validated:
        return cls(verdicts, counts["games"], counts["lines"], counts["violations"],
                   counts["errors"], counts["statuses"].get("compliant", 0))

    @property
    def clean(self) -> bool:
        """`validate`'s exit status would be 0."""
        return self.errors == 0 and self.compliant == self.games

    def chunks(self, size: int = ANSWER_PIECE) -> Iterator[bytes]:
        """The verdict lines in pieces of `size` bytes, the file closed at the end."""
        if isinstance(self.verdicts, bytes):
            yield self.verdicts
            return
        try:
            while chunk := self.verdicts.read(size):
                yield chunk
        finally:
            self.verdicts.close()


def _bulk_worker_started() -> None:
    """A bulk worker process's start: gone with the server (a killed server leaves no worker
    judging behind it), in a session of its own, and `SCHED_IDLE`.

    Where the kernel shares the cores between sessions first (autogroup, on by default
    outside systemd's cgroups), a niceness counts only against the same session: at nice
    10 in the server's session the workers' CPU was still the session's, so the event loop,
    waking for a one-line request, waited for that session's next turn behind the machine's
    other sessions. In a session of their own it is not (measured: 2.4 % of one-line
    requests at 100 ms or more during 8 huge bodies, 4.6 % before; `SCHED_IDLE` alone in
    the server's session, 4.8 %: docs/operations.md, Limits). `SCHED_IDLE` still counts
    where they share a cgroup with the server (a systemd unit): any of its threads that
    wakes preempts them at once."""
    die_with_parent()
    # neither may fail the pool (an initializer's exception breaks it): a worker that keeps
    # the server's session or policy still judges, only at the server's priority
    with suppress(OSError):
        os.setsid()
    with suppress(OSError, AttributeError):  # AttributeError: no SCHED_IDLE (not Linux)
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _judge_file(body: str, verdicts: str, max_line_bytes: int) -> _core.ValidateCounts:
    """In a bulk worker process: judge the body in the file `body` as standard input (its
    records name `<stdin>`, not the file), the verdict lines to the file `verdicts`."""
    with open(body, "rb") as text, open(verdicts, "wb") as out:
        return _core.validate_to(["-"], out.write, stdin=cast(BinaryIO, text),
                                 max_line_bytes=max_line_bytes)


class _Received:
    """A body as it arrives: in memory while it is at most `QUICK_BODY` bytes, past it in
    a file of the folder `folder()` names, written by a thread a piece at a time (the
    event loop only hands the pieces over)."""

    def __init__(self, folder: Callable[[], str]) -> None:
        self.folder = folder
        self.size = 0
        self.path: str | None = None
        self._held: list[bytes] = []
        self._held_size = 0
        self._file: IO[bytes] | None = None

    async def add(self, chunk: bytes) -> None:
        self._held.append(chunk)
        self._held_size += len(chunk)
        self.size += len(chunk)
        if self.size > QUICK_BODY and self._held_size >= WRITE_PIECE:
            await self._write_held()

    async def end(self) -> bytes | None:
        """The body has ended: its bytes when it is held in memory, else None (the file,
        `path`, is complete and closed)."""
        if self._file is None and self.size <= QUICK_BODY:
            held, self._held = b"".join(self._held), []
            return held
        await self._write_held()
        assert self._file is not None
        await asyncio.to_thread(self._file.close)
        return None

    def discard(self) -> None:
        self._held = []
        if self._file is not None:
            self._file.close()
        if self.path is not None:
            with suppress(OSError):
                os.unlink(self.path)

    async def _write_held(self) -> None:
        if self._file is None:
            self.path = os.path.join(self.folder(), f"{secrets.token_hex(8)}.jsonl")
            self._file = await asyncio.to_thread(open, self.path, "wb")
        held, self._held, self._held_size = self._held, [], 0
        await asyncio.to_thread(self._file.writelines, held)


class ValidationPool:
    """Where the engine judges a body: on the event loop up to `INLINE_BODY` bytes, in
    `quick_threads` threads of this process up to `QUICK_BODY` bytes, and in `workers`
    processes at a lower priority past it (started at the first large body, spawned: not
    forked from a server running threads)."""

    def __init__(self, workers: int, quick_threads: int = QUICK_THREADS) -> None:
        self._workers = workers
        self._quick = ThreadPoolExecutor(quick_threads, thread_name_prefix="haftkhabis-validate-quick")
        self._bulk = self._new_bulk()
        self._folder: str | None = None  # the spool folder, made at the first large body

    def _new_bulk(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self._workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_bulk_worker_started)

    def shutdown(self) -> None:
        """Stop both lanes: the bulk processes at once (a body they were judging is
        abandoned with the server), then the spool folder."""
        # concurrent.futures stops a worker process only once its job is done (3.14 adds
        # terminate_workers): a 60 MiB body would hold the server's exit for a minute
        processes = list((self._bulk._processes or {}).values())
        self._bulk.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        self._quick.shutdown(wait=False, cancel_futures=True)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def _spool(self) -> str:
        if self._folder is None or not os.path.isdir(self._folder):
            self._folder = spool_folder("validate")
        return self._folder

    async def validate(self, text: AsyncIterator[bytes], *,
                       max_line_bytes: int = _core.DEFAULT_MAX_LINE_BYTES) -> Validated:
        """Judge the lines `text` yields, once it has ended (a line longer than
        `max_line_bytes` is a `line_too_long` error record). Exceptions raised by `text`
        (too large, too slow, unreadable) propagate; no engine thread was taken."""
        received = _Received(self._spool)
        try:
            async for chunk in text:
                await received.add(chunk)
            held = await received.end()
        except BaseException:
            received.discard()
            raise
        if held is not None and len(held) <= INLINE_BODY:
            return _judge_inline(held, max_line_bytes)
        if held is not None:
            return await self._judge_quick(held, max_line_bytes)
        assert received.path is not None
        return await self._judge_bulk(received.path, max_line_bytes)

    async def _judge_quick(self, body: bytes, max_line_bytes: int) -> Validated:
        output: IO[bytes] = tempfile.SpooledTemporaryFile(SPOOL_IN_MEMORY)  # noqa: SIM115 - closed by Validated.chunks

        def run() -> _core.ValidateCounts:
            return _core.validate_to(["-"], output.write, stdin=io.BytesIO(body),
                                     max_line_bytes=max_line_bytes)

        job = asyncio.get_running_loop().run_in_executor(self._quick, run)
        try:
            counts = await _finished(job, output.close)
        except Exception:
            output.close()
            raise
        if output.tell() > WHOLE_ANSWER:
            output.seek(0)
            return Validated.of(output, counts)
        # in memory (the spool keeps up to 8 MiB there): answered whole, without a
        # thread per piece — on a busy machine each thread's turn is a wait
        output.seek(0)
        verdicts = output.read()
        output.close()
        return Validated.of(verdicts, counts)

    async def _judge_bulk(self, body: str, max_line_bytes: int) -> Validated:
        verdicts = f"{body}.verdicts"

        def discard() -> None:
            for path in (body, verdicts):
                with suppress(OSError):
                    os.unlink(path)

        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            pool = self._bulk
            try:
                job = loop.run_in_executor(pool, _judge_file, body, verdicts, max_line_bytes)
                counts = await _finished(job, discard)
                break
            except BrokenProcessPool:
                # a worker process died (killed, out of memory): every body it held fails
                # and the pool takes no more; new workers take this body once more
                if self._bulk is pool:
                    pool.shutdown(wait=False, cancel_futures=True)
                    self._bulk = self._new_bulk()
                if attempt == 2:
                    discard()
                    raise
            except Exception:
                discard()
                raise
        try:
            output = await asyncio.to_thread(open, verdicts, "rb")
        finally:
            discard()  # the open file keeps the verdicts until they are sent
        return Validated.of(output, counts)


def _judge_inline(body: bytes, max_line_bytes: int) -> Validated:
    output = io.BytesIO()
    counts = _core.validate_to(["-"], output.write, stdin=io.BytesIO(body),
                               max_line_bytes=max_line_bytes)
    return Validated.of(output.getvalue(), counts)


async def _finished(job: asyncio.Future[_core.ValidateCounts],
                    cleanup: Callable[[], None]) -> _core.ValidateCounts:
    """`job`'s counts. When the caller leaves first, the job finishes on its own, then
    `cleanup` runs (what it says is not news: retrieved, so asyncio does not log it as
    lost)."""
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        def done(finished: asyncio.Future[_core.ValidateCounts]) -> None:
            cleanup()
            if not finished.cancelled():
                finished.exception()

        job.add_done_callback(done)
        raise
