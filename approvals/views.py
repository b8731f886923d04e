"""Health and metrics endpoints."""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Iterator

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden, JsonResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

from .runtime import replica
from .selectors import health


def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:
        return JsonResponse({"status": "unavailable", "database": str(exc)[:200]}, status=503)
    return JsonResponse({"status": "ok"})


class _TableCollector:
    """Gauges computed from the tables at scrape time."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily(
            "approvals_oldest_due_timer_age_seconds",
            "Age of the oldest due, unfired timer: the alarm that matters.",
            value=health.oldest_due_timer_age(),
        )
        yield GaugeMetricFamily(
            "approvals_due_timers", "Timers due and not yet fired.", value=health.due_timer_count()
        )
        yield GaugeMetricFamily(
            "approvals_dead_timers",
            "Timers parked after failing to fire again and again: each needs a person.",
            value=health.dead_timer_count(),
        )
        depth = GaugeMetricFamily(
            "approvals_outbox_depth", "Unfinished activity attempts.", labels=["queue"]
        )
        for queue, n in sorted(health.outbox_depth_by_queue().items()):
            depth.add_metric([queue], n)
        yield depth
        lag = replica.lag_seconds()
        if lag is not None:
            yield GaugeMetricFamily(
                "approvals_replica_lag_seconds",
                "How far the streaming replica is behind the primary (NaN: it does not"
                " answer); past APPROVALS_REPLICA_MAX_LAG_SECONDS reads go to the primary.",
                value=lag,
            )


_collector_registered = False

METRICS_FORBIDDEN = "Metrics are for the scraper: send its bearer token, or ask from this host."


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def metrics_allowed(request: HttpRequest) -> bool:
    """The configured bearer token (compared in constant time), or a request whose TCP
    peer is this host. X-Forwarded-For never grants access; with a proxy of ours in front
    (APPROVALS_TRUSTED_PROXY_COUNT) a loopback request that carries the header came
    through that proxy, so it is not taken as local."""
    expected = settings.APPROVALS_METRICS_TOKEN
    if expected:
        given = request.headers.get("Authorization", "")
        if hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
            return True
    if not _is_loopback(str(request.META.get("REMOTE_ADDR") or "")):
        return False
    proxied = "HTTP_X_FORWARDED_FOR" in request.META
    return not (settings.APPROVALS_TRUSTED_PROXY_COUNT > 0 and proxied)


def _registry() -> CollectorRegistry:
    """What a scrape reports. Under gunicorn (config/gunicorn.py sets
    PROMETHEUS_MULTIPROC_DIR) the counters are the sum over every worker's file, whichever
    worker answers; in one process (runserver, tests) they are this process's."""
    global _collector_registered
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(_TableCollector())
        return registry
    if not _collector_registered:
        REGISTRY.register(_TableCollector())
        _collector_registered = True
    return REGISTRY


def metrics(request: HttpRequest) -> HttpResponse:
    if not metrics_allowed(request):
        return HttpResponseForbidden(METRICS_FORBIDDEN, content_type="text/plain")
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
