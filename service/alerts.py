"""Alerts: the rules of `service.alert_rules`, evaluated on a thread of their own over what
each commit brought and the queue's figures; each alert's state (firing or clear) kept,
listed at `GET /v1/alerts`, written to `<state>/alerts.json`, and each change of state
delivered once to the webhook (`service.webhook`).

The committer hands every `CommitEvent` to `AlertEngine.submit`, which never waits: the
event goes into a queue bounded by the games it holds (`WAITING_GAMES`; past that a commit
is dropped, counted and logged, and the windows miss its games). The alert thread takes the events, adds their games to the windows and
evaluates the rules; between events it wakes every `tick` seconds, so the queue's lag is
watched when nothing commits and time windows empty as time passes.

An alert is one rule for one server build (`violation_rate`, `rules_changed`) or for the
service (`ingest_lag`, `quarantine_rate`). It fires when its measure is above the rule's
threshold with enough evidence in the window (`min_games`, `min_lines`), and clears when it
no longer is (below the threshold, or too little left in the window). Only a change of
state is delivered: one delivery when it fires, one when it clears, never one per batch.

Windows are bounded: a time window keeps 60 buckets of counts, a count window at most the
file's bounds (`alert_rules.MAX_GAMES_WINDOW`), and at most `max_builds` builds are watched
per rule (the one seen least recently is dropped, its alert cleared).

`rules_changed` infers which ruleset profile each sampled game complies with
(`ingest.inference.infer_sample`, the Compliance page's inference: every candidate
profile replayed, about 17 ms a game) — too costly for every game of every batch (a batch
of 500 games would take 8 s), so it runs on a schedule: every `every` seconds, on the
`sample` newest complete games of each build seen since, one build per tick. A build's
first profile (the one most of its first sample plays) is its baseline, kept in the state
file across restarts; the alert fires when at least `threshold` percent of a sample play
another profile, and clears when they play the baseline again or, after `accept_after`,
by taking the new profile as the baseline.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from service.alert_rules import AlertConfig, Kind, Rule
from service.jobs import CommitEvent, QueueStats
from service.webhook import DeliveryStats, WebhookSender

log = logging.getLogger("haftkhabis.service")

ALERTS_FILE = "alerts.json"
FIRING = "firing"
CLEAR = "clear"
#: the games of the commits waiting for the alert thread, at most (one commit is always taken)
WAITING_GAMES = 200_000
#: a time window's buckets
BUCKETS = 60

#: a game's raw lines as `engine.infer` reads them: (line, file, line number)
Line = tuple[bytes, str | None, int | None]


# ------------------------------------------------------------------------ windows


class CountWindow:
    """The last `size` observations' sums."""

    def __init__(self, size: int) -> None:
        self._items: deque[tuple[int, int]] = deque()
        self.size = size
        self.total = 0
        self.hits = 0

    def add(self, total: int, hits: int, now: float) -> None:
        if len(self._items) >= self.size:
            old_total, old_hits = self._items.popleft()
            self.total -= old_total
            self.hits -= old_hits
        self._items.append((total, hits))
        self.total += total
        self.hits += hits

    def sums(self, now: float) -> tuple[int, int]:
        return self.total, self.hits


class TimeWindow:
    """The sums of the last `seconds`, kept in `BUCKETS` buckets (so the window's edge is
    exact to a sixtieth of it)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.width = seconds / BUCKETS
        self._buckets: deque[list[int]] = deque()  # [bucket number, total, hits]
        self.total = 0
        self.hits = 0

    def _expire(self, now: float) -> None:
        oldest = math.floor((now - self.seconds) / self.width)
        while self._buckets and self._buckets[0][0] <= oldest:
            _, total, hits = self._buckets.popleft()
            self.total -= total
            self.hits -= hits

    def add(self, total: int, hits: int, now: float) -> None:
        number = math.floor(now / self.width)
        if self._buckets and self._buckets[-1][0] == number:
            self._buckets[-1][1] += total
            self._buckets[-1][2] += hits
        else:
            self._buckets.append([number, total, hits])
        self.total += total
        self.hits += hits
        self._expire(now)

    def sums(self, now: float) -> tuple[int, int]:
        self._expire(now)
        return self.total, self.hits


Window = CountWindow | TimeWindow


def _window(rule: Rule) -> Window:
    size = rule.games if rule.games is not None else rule.batches
    if size is not None:
        return CountWindow(size)
    return TimeWindow(rule.window or 600.0)


# ------------------------------------------------------------------------ alerts


@dataclass
class Alert:
    """One rule's alert for one build (or the service: `build` None)."""

    rule: Rule
    build: str | None
    state: str = CLEAR
    since: datetime = field(default_factory=lambda: datetime.now(UTC))
    value: float | None = None  # in the rule's unit; None: nothing measured yet
    observed: int = 0  # games, lines or pushes the value is taken over
    message: str = ""
    changes: int = 0  # state changes so far (the delivery id's number)

    @property
    def key(self) -> tuple[str, str | None]:
        return self.rule.name, self.build

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule.name, "kind": self.rule.kind.value, "build": self.build,
                "state": self.state, "since": self.since.isoformat(), "value": self.value,
                "threshold": self.rule.threshold, "unit": self.rule.unit, "observed": self.observed,
                "window": self.rule.describe_window(), "message": self.message}


@dataclass
class _BuildProfiles:
    """rules_changed: one build's baseline profile and its recent complete games."""

    recent: deque[str]
    baseline: str | None = None
    dirty: bool = False  # games committed since its last inference


def _percent(hits: int, total: int) -> float:
    return round(100.0 * hits / total, 3) if total else 0.0


class AlertEngine:
    """The rules' state, the alert thread and the webhook sender."""

    def __init__(self, config: AlertConfig, *, state: Path | None = None,
                 stats: Callable[[], QueueStats] | None = None,
                 lines: Callable[[Sequence[str]], list[Line]] | None = None,
                 tick: float = 1.0, max_builds: int = 256,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.state_file = state / ALERTS_FILE if state is not None else None
        self._stats = stats
        self._lines = lines
        self.tick = tick
        self.max_builds = max_builds
        self._clock = clock
        self._lock = threading.Lock()  # the alerts and figures others read
        self._wake = threading.Condition(threading.Lock())  # the commits waiting
        self._waiting: deque[CommitEvent] = deque()
        self._waiting_games = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="haftkhabis-alerts", daemon=True)
        self.sender = WebhookSender(config.webhook) if config.webhook is not None else None
        self._alerts: dict[tuple[str, str | None], Alert] = {}
        self._windows: dict[str, OrderedDict[str | None, Window]] = {r.name: OrderedDict() for r in config.rules}
        self._profiles: dict[str, OrderedDict[str, _BuildProfiles]] = {
            r.name: OrderedDict() for r in config.rules if r.kind is Kind.rules_changed}
        self._next_inference: dict[str, float] = {}
        self.observed_batch: int | None = None  # the last batch whose games are in the windows
        self.evaluated_batch: int | None = None  # ... and whose changes of state are made
        self.events_dropped = 0
        self._written = 0.0  # monotonic: the state file's last write
        self._unwritten = False
        for rule in config.rules:
            if not rule.kind.per_build:
                self._alerts[(rule.name, None)] = Alert(rule, None, message="nothing measured yet")
        self._load_state()

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        if self.sender is not None:
            self.sender.start()
        self._thread.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping.set()
            self._wake.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        if self.sender is not None:
            self.sender.stop()
        self._write_state(force=True)

    def submit(self, event: CommitEvent) -> None:
        """The committer's listener: queue the event for the alert thread (never waits)."""
        with self._wake:
            if self._waiting and self._waiting_games + len(event.games) > WAITING_GAMES:
                waiting = len(self._waiting)
            else:
                self._waiting.append(event)
                self._waiting_games += len(event.games)
                self._wake.notify_all()
                return
        with self._lock:
            self.events_dropped += 1
        log.warning("the alert thread is behind: batch %d's games are left out of the alerts' "
                    "windows (%d commits wait)", event.batch, waiting)

    def _next(self) -> CommitEvent | None:
        """The next commit waiting, or None after `tick` seconds without one."""
        with self._wake:
            if not self._waiting and not self._stopping.is_set():
                self._wake.wait(self.tick)
            if not self._waiting:
                return None
            event = self._waiting.popleft()
            self._waiting_games -= len(event.games)
            return event

    def _run(self) -> None:
        while not self._stopping.is_set():
            event = self._next()
            try:
                if event is not None:
                    self.observe(event)
                self.evaluate()
            except Exception as exc:  # an alert must not stop the others; it is logged
                log.error("evaluating the alerts failed", exc_info=exc)
            if event is not None:
                with self._lock:  # taken in, judged, and its deliveries queued
                    self.evaluated_batch = event.batch

    # ------------------------------------------------------------------ reading

    def alerts(self) -> list[dict[str, Any]]:
        """Every alert: firing first, then by rule and build."""
        with self._lock:
            found = [a.to_json() for a in self._alerts.values()]
        return sorted(found, key=lambda a: (a["state"] != FIRING, a["rule"], a["build"] or ""))

    def firing(self) -> dict[str, int]:
        """Alerts firing per rule (every rule named, 0 when none)."""
        counts = {rule.name: 0 for rule in self.config.rules}
        with self._lock:
            for alert in self._alerts.values():
                if alert.state == FIRING:
                    counts[alert.rule.name] += 1
        return counts

    def deliveries(self) -> DeliveryStats | None:
        return self.sender.stats() if self.sender is not None else None

    # ------------------------------------------------------------------ observing

    def observe(self, event: CommitEvent) -> None:
        """Add a commit's games and lines to the windows (the alert thread)."""
        now = self._clock()
        for rule in self.config.rules:
            if rule.kind is Kind.violation_rate:
                windows = self._windows[rule.name]
                for game in event.games:
                    build = game.get("server_build") or "?"
                    codes = game.get("codes") or ()
                    hit = bool(codes) if rule.code is None else rule.code in codes
                    self._build_window(rule, windows, build).add(1, int(hit), now)
            elif rule.kind is Kind.quarantine_rate:
                windows = self._windows[rule.name]
                window = windows.get(None) or windows.setdefault(None, _window(rule))
                window.add(event.lines, event.quarantined, now)
            elif rule.kind is Kind.rules_changed:
                builds = self._profiles[rule.name]
                for game in event.games:
                    if not game.get("complete"):
                        continue  # a game in pieces is inferred once whole
                    build = game.get("server_build") or "?"
                    profiles = builds.get(build)
                    if profiles is None:
                        profiles = builds[build] = _BuildProfiles(deque(maxlen=rule.sample))
                        self._evict(rule, builds)
                    builds.move_to_end(build)
                    if game["game"] not in profiles.recent:
                        profiles.recent.append(game["game"])
                    profiles.dirty = True
        with self._lock:
            self.observed_batch = event.batch

    def _build_window(self, rule: Rule, windows: OrderedDict[str | None, Window], build: str) -> Window:
        window = windows.get(build)
        if window is None:
            window = windows[build] = _window(rule)
            self._evict(rule, windows)
        windows.move_to_end(build)
        return window

    def _evict(self, rule: Rule, builds: OrderedDict[Any, Any]) -> None:
        while len(builds) > self.max_builds:
            build, _ = builds.popitem(last=False)
            with self._lock:
                alert = self._alerts.pop((rule.name, build), None)
            if alert is not None and alert.state == FIRING:
                self._change(replace(alert), CLEAR, alert.value, alert.observed,
                             f"{build}: no longer watched (more than {self.max_builds} builds seen)")

    # ------------------------------------------------------------------ evaluating

    def evaluate(self) -> None:
        """Measure every rule now, and change the alerts' states that must change."""
        now = self._clock()
        for rule in self.config.rules:
            if rule.kind is Kind.violation_rate:
                for build, window in list(self._windows[rule.name].items()):
                    games, hits = window.sums(now)
                    what = f"a {rule.code} violation" if rule.code else "a violation"
                    self._judge(rule, build, _percent(hits, games), games, rule.min_games,
                                f"{build}: {_percent(hits, games):g}% of {games} game(s) in "
                                f"{rule.describe_window()} have {what}")
            elif rule.kind is Kind.quarantine_rate:
                service_window = self._windows[rule.name].get(None)
                lines, bad = service_window.sums(now) if service_window is not None else (0, 0)
                self._judge(rule, None, _percent(bad, lines), lines, rule.min_lines,
                            f"{_percent(bad, lines):g}% of {lines} line(s) in {rule.describe_window()} "
                            "were quarantined")
            elif rule.kind is Kind.ingest_lag and self._stats is not None:
                stats = self._stats()
                age = round(stats.oldest_age, 3)
                self._judge(rule, None, age, stats.waiting + stats.committing, 0,
                            f"the oldest waiting push has waited {age:g}s "
                            f"({stats.waiting + stats.committing} push(es) not committed yet)")
            elif rule.kind is Kind.rules_changed:
                self._infer_next(rule, now)
        self._write_state()

    def _judge(self, rule: Rule, build: str | None, value: float, observed: int, least: int,
               message: str) -> None:
        """Set an alert's figures, and its state from them."""
        firing = observed >= least and value > rule.threshold
        with self._lock:
            alert = self._alerts.get((rule.name, build))
            if alert is None:
                alert = self._alerts[(rule.name, build)] = Alert(rule, build)
            if observed < least:
                message += f"; fewer than {least} to judge by"
            changed = (alert.value, alert.observed, alert.message) != (value, observed, message)
            alert.value, alert.observed, alert.message = value, observed, message
            self._unwritten |= changed
        if (alert.state == FIRING) != firing:
            self._change(alert, FIRING if firing else CLEAR, value, observed, message)

    def _change(self, alert: Alert, state: str, value: float | None, observed: int, message: str) -> None:
        """A state change: recorded, written, and delivered once."""
        with self._lock:
            alert.state, alert.since = state, datetime.now(UTC)
            alert.value, alert.observed, alert.message = value, observed, message
            alert.changes += 1
            payload = alert.to_json()
            payload["id"] = f"{alert.rule.name}/{alert.build or '-'}#{alert.changes}"
            payload["batch"] = self.observed_batch
        log.warning("alert %s %s: %s", alert.rule.name, state, message)
        self._write_state(force=True)
        if self.sender is not None:
            self.sender.send(payload)

    # ------------------------------------------------------------------ rules_changed

    def _infer_next(self, rule: Rule, now: float) -> None:
        """One build's sample inferred when it is due (one a tick: an inference takes
        about 17 ms a game, and the other rules wait meanwhile)."""
        due = self._next_inference.get(rule.name, 0.0)
        builds = self._profiles[rule.name]
        waiting = [b for b, p in builds.items() if p.dirty]
        if now < due or not waiting or self._lines is None:
            return
        build = waiting[0]
        if len(waiting) == 1:
            self._next_inference[rule.name] = now + rule.every
        profiles = builds[build]
        profiles.dirty = False
        games = list(profiles.recent)
        if len(games) < rule.min_games:
            return
        from ingest.inference import infer_sample

        inferred = infer_sample(self._lines(games), dict.fromkeys(games, build))
        playing = Counter(r.inferred.name for r in inferred if r.inferred is not None)
        if not playing:
            return
        total = sum(playing.values())
        current, count = playing.most_common(1)[0]
        if profiles.baseline is None:
            if total >= rule.min_games:
                profiles.baseline = current
                self._unwritten = True
                log.info("%s: %s plays %s (%d of %d games sampled)", rule.name, build, current, count, total)
            return
        other = total - playing[profiles.baseline]
        share = _percent(other, total)
        newest = Counter(p for p in playing.elements() if p != profiles.baseline).most_common(1)
        message = (f"{build}: {share:g}% of its {total} newest games play "
                   f"{newest[0][0] if newest else profiles.baseline}, not {profiles.baseline} as before")
        self._judge(rule, build, share, total, rule.min_games, message)
        alert = self._alerts.get((rule.name, build))
        if (alert is not None and alert.state == FIRING and rule.accept_after is not None
                and (datetime.now(UTC) - alert.since).total_seconds() >= rule.accept_after
                and share >= 50.0):
            previous, profiles.baseline = profiles.baseline, current
            self._change(alert, CLEAR, share, total,
                         f"{build} plays {current} since more than {rule.accept_after:g}s "
                         f"(before: {previous}): taken as its profile now")

    # ------------------------------------------------------------------ the state file

    def _load_state(self) -> None:
        """Baselines and alerts as the last run left them (an alert firing then is firing
        now, until measured otherwise: its clear is delivered then)."""
        if self.state_file is None:
            return
        try:
            document = orjson.loads(self.state_file.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return
        rules = {r.name: r for r in self.config.rules}
        for name, baselines in (document.get("baselines") or {}).items():
            rule = rules.get(name)
            if rule is None or rule.kind is not Kind.rules_changed or not isinstance(baselines, dict):
                continue
            for build, profile in list(baselines.items())[-self.max_builds:]:
                self._profiles[name][build] = _BuildProfiles(deque(maxlen=rule.sample), str(profile))
        for item in document.get("alerts") or ():
            rule = rules.get(item.get("rule"))
            if rule is None or item.get("state") != FIRING or (rule.kind.per_build and not item.get("build")):
                continue
            with contextlib.suppress(ValueError, TypeError):
                alert = Alert(rule, item.get("build"), FIRING, datetime.fromisoformat(item["since"]),
                              item.get("value"), int(item.get("observed") or 0), str(item.get("message") or ""),
                              changes=1)
                self._alerts[alert.key] = alert
                if rule.kind is Kind.violation_rate:
                    self._windows[rule.name][alert.build] = _window(rule)

    def _write_state(self, force: bool = False) -> None:
        """`<state>/alerts.json`, atomically: on every change of state, else at most every
        2 seconds while figures change (the dashboard's Live page reads it)."""
        if self.state_file is None:
            return
        now = self._clock()
        with self._lock:
            if not force and (not self._unwritten or now - self._written < 2.0):
                return
            self._unwritten = False
            self._written = now
            alerts = [a.to_json() for a in self._alerts.values()]
        baselines = {name: {b: p.baseline for b, p in builds.items() if p.baseline is not None}
                     for name, builds in self._profiles.items()}
        document = {"written_at": datetime.now(UTC).isoformat(), "pid": os.getpid(),
                    "evaluated_batch": self.evaluated_batch, "alerts": alerts, "baselines": baselines}
        tmp = self.state_file.with_name(f".{self.state_file.name}.{os.getpid()}.tmp")
        try:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
            os.replace(tmp, self.state_file)
        except OSError as exc:
            log.warning("cannot write %s: %s", self.state_file, exc)

