"""`GET /v1/live`: each committed game's verdict summary, handed to the subscribers that may
see it, as Server-Sent Events.

The committer's listener calls `LiveHub.publish` with every `CommitEvent`; it must never
wait for a subscriber. Each subscriber has a queue of at most `capacity` summaries: when a
client reads more slowly than games commit (a stalled connection: the server's send waits
once the socket's buffers are full), the oldest waiting summary makes room for the newest,
and the client is told, as one `dropped` event before the next game, how many it missed and
the ids of the first and last of them. The connection stays up. Memory is bounded by
`capacity` per subscriber and `max_subscribers` in all; a summary is serialized once per
game, whoever receives it.

An event's id is `BATCH:POSITION`, the warehouse batch and the game's place among the games
that batch added or changed (a client filtered by player or ruleset sees gaps in positions;
a batch it sees nothing of is one it had nothing in).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from sse_starlette import ServerSentEvent

from service.jobs import CommitEvent

#: the summary's fields, from a `CommitEvent` game (ingest.live.committed_games)
SUMMARY_FIELDS = ("game", "ruleset", "server_build", "status", "complete", "hands", "codes",
                  "players", "end_time")


@dataclass(frozen=True, slots=True)
class Watch:
    """What one subscriber may and wants to see: a player's games only (a player's token),
    and the filters asked for (empty: any)."""

    player: str | None = None
    rulesets: frozenset[str] = frozenset()
    builds: frozenset[str] = frozenset()  # `?` stands for a game without a build
    statuses: frozenset[str] = frozenset()

    def admits(self, game: Mapping[str, Any]) -> bool:
        if self.player is not None and self.player not in (game.get("players") or ()):
            return False
        if self.rulesets and game.get("ruleset") not in self.rulesets:
            return False
        if self.builds and (game.get("server_build") or "?") not in self.builds:
            return False
        return not self.statuses or game.get("status") in self.statuses

    def describe(self) -> dict[str, Any]:
        return {"player": self.player, "ruleset": sorted(self.rulesets), "build": sorted(self.builds),
                "status": sorted(self.statuses)}


def summary_of(batch: int, position: int, game: Mapping[str, Any]) -> dict[str, Any]:
    """A committed game as the feed shows it."""
    out: dict[str, Any] = {"id": f"{batch}:{position}", "batch": batch, "position": position}
    out.update((name, game.get(name)) for name in SUMMARY_FIELDS)
    return out


class Subscriber:
    """One `/v1/live` connection's queue. `offer` is called on the committer's thread and
    never waits; `events` runs on the server's event loop."""

    def __init__(self, watch: Watch, capacity: int, loop: asyncio.AbstractEventLoop) -> None:
        self.watch = watch
        self.capacity = capacity
        self._loop = loop
        self._lock = threading.Lock()
        self._items: deque[tuple[str, str]] = deque()  # (id, the summary's JSON)
        self._ready = asyncio.Event()
        self._wake_pending = False  # a wake-up is scheduled on the loop and not yet taken
        self._dropped = 0  # since the last `dropped` event
        self._first_dropped: str | None = None
        self._last_dropped: str | None = None
        self.dropped_total = 0
        self.closed = False

    def offer(self, event_id: str, data: str) -> int:
        """Queue a summary (dropping the oldest when full): how many were dropped for it."""
        with self._lock:
            if self.closed:
                return 0
            dropped = 0
            if len(self._items) >= self.capacity:
                old_id, _ = self._items.popleft()
                if self._dropped == 0:
                    self._first_dropped = old_id
                self._dropped += 1
                self._last_dropped = old_id
                self.dropped_total += 1
                dropped = 1
            self._items.append((event_id, data))
            if not self._wake_pending:
                self._wake_pending = True
                try:
                    self._loop.call_soon_threadsafe(self._ready.set)
                except RuntimeError:  # the loop is closed: the server is stopping
                    self.closed = True
        return dropped

    def _take(self) -> ServerSentEvent | None:
        with self._lock:
            if self._dropped:
                # the drops come before everything still queued (the oldest went first)
                payload = {"dropped": self._dropped, "first": self._first_dropped,
                           "last": self._last_dropped}
                self._dropped, self._first_dropped, self._last_dropped = 0, None, None
                return ServerSentEvent(orjson.dumps(payload).decode(), event="dropped")
            if self._items:
                event_id, data = self._items.popleft()
                return ServerSentEvent(data, event="game", id=event_id)
            self._wake_pending = False
            self._ready.clear()  # on the loop's thread, as every `set` it is woken by
            return None

    async def events(self) -> AsyncIterator[ServerSentEvent]:
        """The queued events as they come, one at a time (a stalled client holds back at
        most one taken from the queue)."""
        while True:
            event = self._take()
            if event is None:
                await self._ready.wait()
                continue
            yield event

    def close(self) -> None:
        with self._lock:
            self.closed = True
            self._items.clear()


class LiveHub:
    """The subscribers, and the summaries handed to them."""

    def __init__(self, capacity: int = 1000, max_subscribers: int = 100) -> None:
        if capacity < 1 or max_subscribers < 1:
            raise ValueError(f"a live feed needs a queue of at least 1 game and room for at "
                             f"least 1 subscriber, not {capacity} and {max_subscribers}")
        self.capacity = capacity
        self.max_subscribers = max_subscribers
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        self._dropped_total = 0  # by subscribers gone, and those here
        self.last_batch: int | None = None

    def subscribe(self, watch: Watch, loop: asyncio.AbstractEventLoop) -> Subscriber | None:
        """A new subscriber (None: there are `max_subscribers` already)."""
        with self._lock:
            if len(self._subscribers) >= self.max_subscribers:
                return None
            subscriber = Subscriber(watch, self.capacity, loop)
            self._subscribers.append(subscriber)
            return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        subscriber.close()
        with self._lock:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)

    @property
    def dropped_total(self) -> int:
        """Summaries dropped for slow subscribers since the start."""
        with self._lock:
            return self._dropped_total

    def publish(self, event: CommitEvent) -> None:
        """Hand each game of a commit to the subscribers that admit it (never waits: a full
        queue drops its oldest summary)."""
        with self._lock:
            self.last_batch = event.batch
            subscribers = list(self._subscribers)
        if not subscribers:
            return
        dropped = 0
        for position, game in enumerate(event.games):
            takers = [s for s in subscribers if s.watch.admits(game)]
            if not takers:
                continue
            event_id = f"{event.batch}:{position}"
            data = orjson.dumps(summary_of(event.batch, position, game)).decode()
            for subscriber in takers:
                dropped += subscriber.offer(event_id, data)
        if dropped:
            with self._lock:
                self._dropped_total += dropped
