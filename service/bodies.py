"""Request bodies of JSON lines: read as they arrive, inflated when gzip'd (whether the
transport says so with `Content-Encoding: gzip` or the bytes start with gzip's magic, as a
`.gz` file `validate` reads would), and never let past a size cap — counted on the
inflated text, piece by piece, so a small bomb is refused like a large body, before it is
inflated in full.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

GZIP_MAGIC = b"\x1f\x8b"
PIECE = 1 << 20  # the most one inflate call may produce


class BodyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the body is larger than {limit:,} bytes (decompressed); "
                         "send it in several requests")
        self.limit = limit


class BadBody(Exception):
    """The body cannot be read as sent (an unknown encoding, a broken gzip stream)."""


class Gunzip:
    """Inflate a gzip stream, member after member (as `gzip` and the engine's reader do),
    in pieces of at most PIECE bytes."""

    def __init__(self) -> None:
        self._inflater = zlib.decompressobj(wbits=31)
        self._started = False  # the current member has had input

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            self._started = True
            try:
                out = self._inflater.decompress(data, PIECE)
            except zlib.error as exc:
                raise BadBody(f"the gzip stream is corrupt: {exc}") from None
            if out:
                yield out
            if self._inflater.eof:
                data = self._inflater.unused_data
                self._inflater = zlib.decompressobj(wbits=31)
                self._started = False
                if data and not data.startswith(GZIP_MAGIC[: len(data)]):
                    raise BadBody("the gzip stream is followed by bytes that are not gzip")
            else:
                data = self._inflater.unconsumed_tail

    def close(self) -> None:
        if self._started:
            raise BadBody("the gzip stream ends before its end-of-stream marker")


class Decoder:
    """A body's bytes → the text of its lines, at most `limit` bytes of it."""

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        encoding = (content_encoding or "identity").strip().lower()
        if encoding not in ("identity", "gzip", "x-gzip"):
            raise BadBody(f"Content-Encoding {content_encoding!r} is not supported "
                          "(send gzip, or no encoding)")
        self.limit = limit
        self.size = 0  # text bytes produced
        self._transport = Gunzip() if encoding != "identity" else None
        self._file: Gunzip | None = None  # a gzip'd log inside the transport encoding
        self._head = b""  # the first bytes, until gzip's magic can be told apart
        self._sniffed = False
        self._text_started = False

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        pieces = self._transport.feed(chunk) if self._transport is not None else iter((chunk,))
        for piece in pieces:
            yield from self._file_layer(piece)

    def close(self) -> Iterator[bytes]:
        """The rest, once the body has ended."""
        if self._transport is not None:
            self._transport.close()
        if not self._sniffed:
            self._sniffed = True
            head, self._head = self._head, b""
            yield from self._text(head)
        if self._file is not None:
            self._file.close()

    def _file_layer(self, data: bytes) -> Iterator[bytes]:
        if not self._sniffed:
            self._head += data
            if len(self._head) < len(GZIP_MAGIC):
                return
            data, self._head, self._sniffed = self._head, b"", True
            if data.startswith(GZIP_MAGIC):
                self._file = Gunzip()
        if self._file is None:
            yield from self._text(data)
            return
        for piece in self._file.feed(data):
            yield from self._text(piece)

    def _text(self, data: bytes) -> Iterator[bytes]:
        if not data:
            return
        if not self._text_started:
            self._text_started = True
            if self._file is not None and data.startswith(GZIP_MAGIC):
                raise BadBody("the body is gzip inside gzip; compress it once")
        self.size += len(data)
        if self.size > self.limit:
            raise BodyTooLarge(self.limit)
        yield data


async def decoded(chunks: AsyncIterator[bytes], content_encoding: str | None,
                  limit: int) -> AsyncIterator[bytes]:
    """The body's text, chunk by chunk: BodyTooLarge past `limit`, BadBody when unreadable."""
    decoder = Decoder(content_encoding, limit)
    async for chunk in chunks:
        if chunk:
            for piece in decoder.feed(chunk):
                yield piece
    for piece in decoder.close():
        yield piece
