"""Test helpers that watch a running service from outside: a `/v1/live` subscription read on
a thread of its own (`Feed`), a webhook receiver on a free loopback port (`Receiver`), and a
scrape of `/metrics` parsed by Prometheus' own parser (`scrape`).

Every wait is on what was received (a condition notified by the reading thread), with a
deadline that only guards against a hung server.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import orjson
from prometheus_client.parser import text_string_to_metric_families

from tests.service.conftest import HOST, Server

DEADLINE = 120.0  # seconds: a failure guard, not a wait


@dataclass(frozen=True)
class Event:
    event: str
    id: str | None
    data: Any


class Feed:
    """`GET /v1/live` as a client sees it. With `read=False` the stream is opened (its
    headers read) and then left unread until `start()`: a client that stalls."""

    def __init__(self, server: Server, key: str | None, params: dict[str, Any] | None = None, *,
                 read: bool = True) -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(base_url=server.url, headers=headers,
                                    timeout=httpx.Timeout(30.0, read=None))
        self._stream = self._client.stream("GET", "/v1/live", params=params)
        self.response = self._stream.__enter__()
        self.status = self.response.status_code
        self.events: list[Event] = []
        self.comments = 0
        self._done = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True)
        if read and self.status == 200:
            self.start()

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        fields: dict[str, str] = {}
        try:
            for line in self.response.iter_lines():
                if line.startswith(":"):
                    with self._changed:
                        self.comments += 1
                        self._changed.notify_all()
                elif line == "":
                    if "data" in fields:
                        event = Event(fields.get("event", "message"), fields.get("id"), orjson.loads(fields["data"]))
                        with self._changed:
                            self.events.append(event)
                            self._changed.notify_all()
                    fields = {}
                else:
                    name, _, value = line.partition(":")
                    fields[name] = value[1:] if value.startswith(" ") else value
        except (httpx.HTTPError, RuntimeError):
            pass  # closed by the test, or the server stopped
        finally:
            with self._changed:
                self._done = True
                self._changed.notify_all()

    def wait(self, what: str, predicate: Callable[[Feed], bool], timeout: float = DEADLINE) -> None:
        """Until `predicate(self)` holds (AssertionError naming `what` past the deadline)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                assert left > 0 and not self._done, \
                    f"the feed never got {what}: {self.events[-5:]} ({len(self.events)} events)"
                self._changed.wait(left)

    def games(self) -> list[dict[str, Any]]:
        with self._changed:
            return [e.data for e in self.events if e.event == "game"]

    def of(self, kind: str) -> list[Event]:
        with self._changed:
            return [e for e in self.events if e.event == kind]

    def __enter__(self) -> Feed:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        """Closed; its reader must have ended with the socket, unless the block is already
        failing (that failure is the one to see)."""
        ended = self.close()
        if kind is None:
            assert ended, "the feed's reader did not end with its socket"

    def close(self) -> bool:
        """Close the stream, and end the reading thread at once: a thread blocked in the
        socket's `recv` (nothing sent since) wakes only when the socket is shut down, not
        when the response is closed from this thread. Whether the reader has ended."""
        stream = self.response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.response.close()
        self._client.close()
        if self._thread.is_alive():
            self._thread.join(timeout=DEADLINE)
        return not self._thread.is_alive()


class Receiver:
    """A webhook receiver on a free port of 127.0.0.1: records each POST's JSON, answering
    with the next status of `answers` (then 200)."""

    def __init__(self, answers: list[int] | None = None) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.times: list[float] = []  # monotonic, as each request came
        self.answers = list(answers or [])
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._changed:
                    receiver.bodies.append(orjson.loads(body))
                    receiver.times.append(time.monotonic())
                    status = receiver.answers.pop(0) if receiver.answers else 200
                    receiver._changed.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((HOST, 0), Handler)
        self.url = f"http://{HOST}:{self._server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def wait_for(self, count: int, timeout: float = DEADLINE) -> list[dict[str, Any]]:
        """Until `count` requests have come; those requests."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.bodies) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"the webhook got {len(self.bodies)} requests, not {count}: {self.bodies}"
                self._changed.wait(left)
            return list(self.bodies)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def scrape(server: Server) -> dict[str, float]:
    """`/metrics` read by Prometheus' parser: each sample by its name and labels
    (`name{label="value"}`)."""
    with server.client() as client:
        answer = client.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return samples
