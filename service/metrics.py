"""`GET /metrics`: the service's figures in Prometheus' text format, from a registry of its
own (one per application, never the process-wide default: tests make several apps in one
process, and each counts only its own pushes).

Counters move as things happen (a push accepted or refused, a batch committed: its lines,
games, quarantined lines and violations by code, its commit time and each push's lag); the
queue, the live feed and the alerts are read when Prometheus scrapes (gauges of what is true
at that moment). Every violation code is a `code` label from the start, at 0, so a rate
over a code that has not happened yet is 0, not missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from engine.violations import Code
from service.jobs import CommitEvent, QueueStats
from service.webhook import DeliveryStats

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: seconds: a commit of a few pushes takes ~0.1 s, of 100,000 lines 1–2 s
COMMIT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
#: seconds from a push's 202 to its commit: about the commit interval when keeping up
LAG_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0)


class _Now(Collector):
    """What is read at scrape time: the queue, the live feed, the alerts."""

    def __init__(self, queue: Callable[[], QueueStats], live: Callable[[], tuple[int, int]],
                 firing: Callable[[], Mapping[str, int]], deliveries: Callable[[], DeliveryStats | None]) -> None:
        self._queue, self._live, self._firing, self._deliveries = queue, live, firing, deliveries

    def collect(self) -> Iterable[Metric]:
        stats = self._queue()
        for name, value, text in (
            ("haftkhabis_queue_pushes", stats.waiting + stats.committing,
             "Pushes accepted and not committed yet (waiting, or in the group being committed)."),
            ("haftkhabis_queue_lines", stats.waiting_lines, "Lines of the pushes not committed yet."),
            ("haftkhabis_queue_bytes", stats.waiting_bytes, "Bytes of the pushes not committed yet."),
            ("haftkhabis_queue_oldest_age_seconds", stats.oldest_age,
             "Seconds the oldest push not committed yet has waited (0: none waits)."),
        ):
            yield GaugeMetricFamily(name, text, value=value)
        subscribers, dropped = self._live()
        yield GaugeMetricFamily("haftkhabis_live_subscribers", "Clients watching GET /v1/live.",
                                value=subscribers)
        yield CounterMetricFamily("haftkhabis_live_dropped",
                                  "Game summaries dropped for live subscribers reading too slowly.",
                                  value=dropped)
        firing = GaugeMetricFamily("haftkhabis_alerts_firing", "Alerts firing, per rule.", labels=["rule"])
        for rule, count in sorted(self._firing().items()):
            firing.add_metric([rule], count)
        yield firing
        deliveries = self._deliveries()
        if deliveries is not None:
            sent = CounterMetricFamily("haftkhabis_alert_deliveries", "Alert deliveries to the webhook.",
                                       labels=["outcome"])
            sent.add_metric(["delivered"], deliveries.delivered)
            sent.add_metric(["failed"], deliveries.failed)
            yield sent
            yield GaugeMetricFamily("haftkhabis_alert_deliveries_pending",
                                    "Alert deliveries queued or being tried.", value=deliveries.pending)


class ServiceMetrics:
    """The counters the service moves, and the registry they are read from."""

    def __init__(self, queue: Callable[[], QueueStats],
                 live: Callable[[], tuple[int, int]] = lambda: (0, 0),
                 firing: Callable[[], Mapping[str, int]] = dict,
                 deliveries: Callable[[], DeliveryStats | None] = lambda: None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.pushes_accepted = Counter("haftkhabis_pushes_accepted", "Pushes answered 202 (POST /v1/ingest).",
                                       registry=r)
        self.pushes_refused = Counter("haftkhabis_pushes_refused",
                                      "Pushes answered 429: the committer was behind (back-pressure).", registry=r)
        self.batches = Counter("haftkhabis_batches_committed", "Warehouse batches committed from pushes.", registry=r)
        self.lines = Counter("haftkhabis_lines_committed", "Lines committed from pushes.", registry=r)
        self.games = Counter("haftkhabis_games_committed",
                             "Games added or changed by the batches committed (a game completed by a "
                             "later push counts again).", registry=r)
        self.quarantined = Counter("haftkhabis_lines_quarantined", "Pushed lines quarantined (unusable).",
                                   registry=r)
        self.violations = Counter("haftkhabis_violations_committed",
                                  "Violations in the games committed, by code (a game committed again "
                                  "brings its whole set again).", ["code"], registry=r)
        for code in Code:
            self.violations.labels(code.value)
        self.commit_seconds = Histogram("haftkhabis_commit_seconds",
                                        "Seconds from taking a group of pushes to its commit.",
                                        buckets=COMMIT_BUCKETS, registry=r)
        self.ingest_lag = Histogram("haftkhabis_ingest_lag_seconds",
                                    "Seconds from a push's 202 to the commit of its batch.",
                                    buckets=LAG_BUCKETS, registry=r)
        r.register(_Now(queue, live, firing, deliveries))

    def committed(self, event: CommitEvent) -> None:
        """Count a commit (the committer's listener: a few increments, never a wait)."""
        self.batches.inc()
        self.lines.inc(event.lines)
        self.games.inc(len(event.games))
        self.quarantined.inc(event.quarantined)
        self.commit_seconds.observe(event.seconds)
        for waited in event.waited:
            self.ingest_lag.observe(waited)
        for game in event.games:
            for code, count in (game.get("violations") or {}).items():
                self.violations.labels(code).inc(count)

    def render(self) -> bytes:
        return generate_latest(self.registry)
