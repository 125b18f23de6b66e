"""Alert deliveries: each change of an alert's state POSTed as JSON to the webhook, on a
thread of its own, retried with exponential backoff.

Deliveries go out one at a time in the order the changes happened (a `clear` never
overtakes its `firing`). A failure — no connection, a timeout, `408`, `429` or a `5xx` —
is retried after `backoff`, doubled each time up to `max_backoff`, at most `attempts`
times in all; any other answer but a `2xx` is final. A delivery given up is logged. The
queue holds at most `capacity` deliveries; past that the oldest waiting one is given up.
Each delivery carries an `id` (the rule, the build and the change's number) that stays the
same across its retries, so a receiver that saw a retry's first attempt can drop it.
"""

from __future__ import annotations

import logging
import threading
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from service.alert_rules import Webhook

log = logging.getLogger("haftkhabis.service")

USER_AGENT = "haftkhabis-alerts/1"
#: answers worth another attempt (the receiver was busy or failed, not the request)
RETRYABLE = frozenset({408, 425, 429, 500, 502, 503, 504})


@dataclass
class DeliveryStats:
    pending: int = 0  # queued or being tried
    delivered: int = 0
    failed: int = 0  # given up
    retries: int = 0


class _Final(Exception):
    """An answer that another attempt would not change."""


class WebhookSender:
    """The delivery thread and its bounded queue."""

    def __init__(self, hook: Webhook, capacity: int = 1000) -> None:
        self.hook = hook
        self.capacity = capacity
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: deque[dict[str, Any]] = deque()
        self._busy = False
        self._stopping = False
        self._stats = DeliveryStats()
        self._thread = threading.Thread(target=self._run, name="haftkhabis-webhook", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def send(self, payload: Mapping[str, Any]) -> None:
        """Queue a delivery (never waits)."""
        with self._wake:
            if len(self._queue) >= self.capacity:
                lost = self._queue.popleft()
                self._stats.failed += 1
                log.error("alert delivery %s given up: %d deliveries wait for %s",
                          lost.get("id"), self.capacity, self.hook.url)
            self._queue.append(dict(payload))
            self._wake.notify_all()

    def stats(self) -> DeliveryStats:
        with self._lock:
            return DeliveryStats(len(self._queue) + (1 if self._busy else 0), self._stats.delivered,
                                 self._stats.failed, self._stats.retries)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._stopping:
                    self._wake.wait()
                if self._stopping:
                    return
                payload = self._queue.popleft()
                self._busy = True
            try:
                delivered = self._deliver(payload)
            finally:
                with self._lock:
                    self._busy = False
                    if delivered:
                        self._stats.delivered += 1
                    else:
                        self._stats.failed += 1

    def _deliver(self, payload: dict[str, Any]) -> bool:
        body = orjson.dumps(payload)
        delay = self.hook.backoff
        for attempt in range(1, self.hook.attempts + 1):
            try:
                self._post(body)
                return True
            except _Final as exc:
                log.error("alert delivery %s to %s refused: %s", payload.get("id"), self.hook.url, exc)
                return False
            except (OSError, urllib.error.URLError) as exc:
                problem = str(exc)
            if attempt == self.hook.attempts:
                break
            log.warning("alert delivery %s to %s failed (%s); attempt %d of %d in %.1fs",
                        payload.get("id"), self.hook.url, problem, attempt + 1, self.hook.attempts, delay)
            with self._wake:
                self._stats.retries += 1
                if self._wake.wait_for(lambda: self._stopping, timeout=delay):
                    return False
            delay = min(delay * 2, self.hook.max_backoff)
        log.error("alert delivery %s to %s given up after %d attempts (%s)", payload.get("id"),
                  self.hook.url, self.hook.attempts, problem)
        return False

    def _post(self, body: bytes) -> None:
        headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **dict(self.hook.headers)}
        request = urllib.request.Request(self.hook.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.hook.timeout) as answer:
                answer.read(65536)
        except urllib.error.HTTPError as exc:
            if exc.code in RETRYABLE:
                raise OSError(f"HTTP {exc.code}") from None
            raise _Final(f"HTTP {exc.code}; expected a 2xx answer") from None
