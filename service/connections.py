"""The HTTP connection `haftkhabis serve` runs: uvicorn's httptools protocol (the C parser
of Node's llhttp: a pushed game's 40 KB body costs the server a fifth less CPU than with
the pure-Python h11, `bench/bench_live.py --accept-only`) with a deadline on a request's
headers, so half-open connections cannot pile up (issue #34: "300 connections with
partial headers still held after 22 s").

uvicorn times out an idle keep-alive connection (`timeout_keep_alive`) but not one that
has sent part of a request line or headers, nor a new connection that sends nothing: each
holds a socket and a protocol object until the client leaves. Here a connection waiting
for a request's headers — from the moment it opens, and again after each response unless
the next request is already in — is closed unless they are complete within
`header_timeout` seconds. A request's body is paced by the application
(`service.validation.BodyPace`).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: seconds a connection may take to send a request's line and headers
HEADER_TIMEOUT = 10.0


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` closing a connection whose request headers are not complete
    within `header_timeout` seconds (`bounded_http` makes the class for a given deadline)."""

    header_timeout: float = HEADER_TIMEOUT
    _header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def on_headers_complete(self) -> None:
        self._disarm_header_deadline()  # the request's headers are in
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        # a request already parsed (pipelined) waits in `pipeline`: its headers are in
        if not self.pipeline and not self.transport.is_closing():
            self._arm_header_deadline()
        super().on_response_complete()

    def _arm_header_deadline(self) -> None:
        self._disarm_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def bounded_http(header_timeout: float) -> type[BoundedHttpToolsProtocol]:
    """The protocol class to pass uvicorn as `http=`, with this header deadline."""
    return type("BoundedHttpToolsProtocol", (BoundedHttpToolsProtocol,), {"header_timeout": header_timeout})
