"""The HTTP connection `haftkhabis serve` runs: uvicorn's h11 protocol with a deadline on a
request's headers, so half-open connections cannot pile up (issue #34: "300 connections
with partial headers still held after 22 s").

uvicorn times out an idle keep-alive connection (`timeout_keep_alive`) but not one that
has sent part of a request line or headers, nor a new connection that sends nothing: each
holds a socket and a protocol object until the client leaves. Here a connection waiting
for a request's headers — from the moment it opens, and again after each response — is
closed unless they are complete within `header_timeout` seconds. A request's body is paced
by the application (`service.validation.BodyPace`).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: seconds a connection may take to send a request's line and headers
HEADER_TIMEOUT = 10.0


class BoundedH11Protocol(H11Protocol):
    """`H11Protocol` closing a connection whose request headers are not complete within
    `header_timeout` seconds (`bounded_h11` makes the class for a given deadline)."""

    header_timeout: float = HEADER_TIMEOUT
    _header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_deadline()  # the request's headers are in

    def on_response_complete(self) -> None:
        # armed first: a request already received (pipelined) disarms it at once
        if not self.transport.is_closing():
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
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def bounded_h11(header_timeout: float) -> type[BoundedH11Protocol]:
    """The protocol class to pass uvicorn as `http=`, with this header deadline."""
    return type("BoundedH11Protocol", (BoundedH11Protocol,), {"header_timeout": header_timeout})
