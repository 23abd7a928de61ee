"""Prometheus metrics at ``/metrics``: requests by endpoint, method and status,
their latency, admin writes by action and result, and gauges of the live tables
(live games, open lobbies, active players, games finished in 24 h by variant,
Redis up).  One registry per app; under gunicorn each worker process counts its
own requests.

``/metrics`` needs no token, so nothing a client sends may grow it: the method
label is one of :data:`METHODS` or ``other``, the endpoint label the matched
route template or ``unmatched``.  The live gauges come from one table-service
read per ``METRICS_LIVE_TTL`` seconds (default 15) per process, shared by every
scrape in between -- never a scan of every table per scrape.  The groups'
learned flood budgets come from the reader the app was given
(:mod:`admin_api.budgets`; none given: nothing learned)."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

from flask import Flask, Response, current_app, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from admin_api import budgets as learned_budgets
from admin_api.service import ServiceHolder
from tables import ServiceUnavailable

log = logging.getLogger(__name__)
EXTENSION = "admin_metrics"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""Method labels kept as they are; any other method is counted as ``other``."""


class LiveCollector(Collector):
    """Gauges of the live tables from a snapshot at most ``ttl`` seconds old
    (one table-service read per ``ttl``, whatever the scrape rate)."""

    def __init__(
        self, holder: ServiceHolder, ttl: float, budgets: learned_budgets.BudgetsSource | None
    ) -> None:
        self.holder = holder
        self.ttl = ttl
        self.budgets = budgets
        self._lock = threading.Lock()
        self._taken = -math.inf
        self._stats: dict[str, Any] | None = None

    def snapshot(self) -> dict[str, Any] | None:
        """The live stats (None: Redis did not answer), refreshed once per ``ttl``."""
        with self._lock:  # one refresh at a time; the others wait and share it
            if time.monotonic() - self._taken >= self.ttl:
                try:
                    svc = self.holder.get()
                    self._stats = svc.call(svc.service.admin.global_stats).to_json()
                    self._stats["budgets"] = learned_budgets.learned(svc, self.budgets)
                except ServiceUnavailable as e:
                    log.warning("metrics: Redis is unavailable: %s", e)
                    self._stats = None
                self._taken = time.monotonic()
            return self._stats

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("durak_redis_up", "1 when Redis answered the last refresh")
        s = self.snapshot()
        if s is None:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        for name, key, help_ in (
            ("durak_live_games", "live_by_variant", "games in progress"),
            ("durak_open_lobbies", "lobbies_by_variant", "lobbies waiting for a start"),
            ("durak_games_finished_24h", "finished_24h", "games finished in the last 24 h"),
        ):
            m = GaugeMetricFamily(name, help_, labels=["variant"])
            for variant, n in sorted(s[key].items()):
                m.add_metric([variant], n)
            yield m
        yield GaugeMetricFamily(
            "durak_active_players", "players seated at lobbies and games", value=s["active_players"]
        )
        budgets = s.get("budgets", [])
        learned = GaugeMetricFamily(
            "durak_group_budgets",
            "groups whose message budget was learned from 429s (#24), by what was learned",
            labels=["learned"],
        )
        learned.add_metric(["reduced"], sum(1 for b in budgets if b["public"] < 20))
        learned.add_metric(["ephemerals_counted"], sum(1 for b in budgets if b["counted"]))
        learned.add_metric(["any"], len(budgets))
        yield learned
        yield GaugeMetricFamily(
            "durak_group_budget_public_min",
            "the lowest learned public budget of any group, messages a minute (20: none cut)",
            value=min((b["public"] for b in budgets), default=20),
        )


class Metrics:
    def __init__(
        self,
        holder: ServiceHolder,
        live_ttl: float = 15.0,
        budgets: learned_budgets.BudgetsSource | None = None,
    ) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "admin_api_requests",
            "HTTP requests by endpoint, method and status",
            ["endpoint", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "admin_api_request_duration_seconds",
            "request latency by endpoint and method",
            ["endpoint", "method"],
            registry=self.registry,
        )
        self.writes = Counter(
            "admin_api_writes",
            "admin write attempts by action and result",
            ["action", "result"],
            registry=self.registry,
        )
        self.registry.register(LiveCollector(holder, live_ttl, budgets))


def _metrics() -> Metrics:
    m: Metrics = current_app.extensions[EXTENSION]
    return m


def count_write(action: str, result: str) -> None:
    _metrics().writes.labels(action, result).inc()


def _start() -> None:
    g.started = time.perf_counter()


def _finish(resp: Response) -> Response:
    m = _metrics()
    endpoint = request.url_rule.rule if request.url_rule is not None else "unmatched"
    method = request.method if request.method in METHODS else "other"
    m.requests.labels(endpoint, method, str(resp.status_code)).inc()
    started = g.get("started")
    if started is not None:
        m.latency.labels(endpoint, method).observe(time.perf_counter() - started)
    return resp


def exposition() -> Response:
    return Response(generate_latest(_metrics().registry), mimetype=CONTENT_TYPE_LATEST)


def init_app(app: Flask, holder: Any) -> None:
    app.extensions[EXTENSION] = Metrics(
        holder, float(app.config["METRICS_LIVE_TTL"]), learned_budgets.source_of(app)
    )
    app.before_request(_start)
    app.after_request(_finish)
