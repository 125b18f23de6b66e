"""`POST /v1/validate`: the body judged by the engine as `haftkhabis validate --json -`
judges standard input — the same call (`engine._core.validate_to` on `-`), so the same
bytes — while it is still arriving.

The engine runs in a worker thread and reads the body through a pipe fed by the event
loop (bounded, so a slow engine slows the upload instead of filling memory); its output
goes to a spooled temporary file (memory up to 8 MiB, then disk) and is sent once the body
has ended. Sending while the client is still uploading would deadlock a client that reads
only after writing, which most do. Nothing is stored.
"""

from __future__ import annotations

import asyncio
import io
import tempfile
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO, BinaryIO, cast

from engine import _core

SPOOL_IN_MEMORY = 8 << 20
PIPE_DEPTH = 16  # body chunks waiting for the engine


class _Aborted(Exception):
    """The request ended early (too large, unreadable, the client left)."""


class BodyPipe(io.RawIOBase):
    """The request body as a blocking binary file for the engine's thread, fed from the
    event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._loop = loop
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(PIPE_DEPTH)
        self._buffer = b""
        self._ended = False
        self._aborted = False

    # the loop's side
    async def put(self, chunk: bytes) -> None:
        await self._queue.put(chunk)

    async def end(self) -> None:
        await self._queue.put(None)

    def abort(self) -> None:
        """Stop the reader: it gets an error at its next read, whatever is queued."""
        self._aborted = True
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

    # the engine's side
    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        while not self._buffer and not self._ended:
            item = asyncio.run_coroutine_threadsafe(self._queue.get(), self._loop).result()
            if self._aborted:
                raise _Aborted("the request was abandoned")
            if item is None:
                self._ended = True
            else:
                self._buffer = item
        if size is None or size < 0:
            out, self._buffer = self._buffer, b""
        else:
            out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out


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
    """The threads the engine validates bodies in."""

    def __init__(self, threads: int) -> None:
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="haftkhabis-validate")

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def validate(self, text: AsyncIterator[bytes]) -> Validated:
        """Judge the lines `text` yields. Exceptions raised by `text` (too large,
        unreadable) propagate after the engine has been stopped."""
        loop = asyncio.get_running_loop()
        pipe = BodyPipe(loop)
        output: IO[bytes] = tempfile.SpooledTemporaryFile(SPOOL_IN_MEMORY)  # noqa: SIM115 - closed by Validated.chunks

        def run() -> _core.ValidateCounts:
            return _core.validate_to(["-"], output.write, stdin=cast(BinaryIO, pipe))

        job = loop.run_in_executor(self._executor, run)
        try:
            async for chunk in text:
                await pipe.put(chunk)
            await pipe.end()
            counts = await job
        except BaseException:
            # the engine's next read fails, it ends and its thread is free again; what it
            # says then is not news (retrieved, so asyncio does not log it as lost)
            pipe.abort()
            output.close()
            job.add_done_callback(lambda done: done.cancelled() or done.exception())
            raise
        output.seek(0)
        return Validated(output, counts["games"], counts["lines"], counts["violations"],
                         counts["errors"], counts["statuses"].get("compliant", 0))

