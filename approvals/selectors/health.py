"""Operational gauges, read from the tables when /metrics is scraped."""

from __future__ import annotations

from django.db.models import Count, Min

from .. import clock
from ..models import ActivityAttempt, Timer


def oldest_due_timer_age() -> float:
    """Seconds since the oldest unfired timer came due; 0 when none is late."""
    now = clock.now()
    oldest = Timer.objects.filter(
        fired_at__isnull=True, dead_at__isnull=True, fire_at__lte=now
    ).aggregate(m=Min("fire_at"))["m"]
    return (now - oldest).total_seconds() if oldest else 0.0


def due_timer_count() -> int:
    return Timer.objects.filter(
        fired_at__isnull=True, dead_at__isnull=True, fire_at__lte=clock.now()
    ).count()


def dead_timer_count() -> int:
    """Timers parked after failing to fire again and again: each needs a person."""
    return Timer.objects.filter(dead_at__isnull=False, fired_at__isnull=True).count()


def outbox_depth_by_queue() -> dict[str, int]:
    rows = (
        ActivityAttempt.objects.filter(finished_at__isnull=True)
        .values("queue")
        .annotate(n=Count("pk"))
        .values_list("queue", "n")
    )
    return dict(rows)
