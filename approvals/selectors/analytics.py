"""The analytics page's figures, read from the step visits (``models.StepVisit``, a
read model projected from the events), never from the event table: per workflow
template and step, the visits, how they ended, the time they waited (median and 90th
percentile), deadline breaches and escalations; requests started per week; and the
open visits that have waited longest. Every query is scoped to one organisation."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Aggregate, Count, DurationField, F, Q, QuerySet
from django.db.models.functions import TruncWeek

from ..models import StepVisit
from ..runtime.rollup_buckets import rollup_kept
from . import analytics_rollup

SORT_MEMORY = "64MB"


@dataclass(frozen=True)
class AnalyticsFilter:
    tenant_id: int
    start: dt.datetime  # visits entered from (inclusive)
    end: dt.datetime  # to (exclusive)
    template_key: str = ""
    field: str = ""  # an enum field of the data and its value, or ""
    value: str = ""


@dataclass(frozen=True)
class StepFigures:
    template_key: str
    step: str
    kind: str
    visits: int
    completed: int
    rejected: int
    sent_back: int
    breached: int
    escalated: int
    waiting: int  # still open
    median: dt.timedelta | None  # time waited by the visits that ended
    p90: dt.timedelta | None

    def rate(self, count: int) -> float | None:
        """``count`` as a share of the visits that ended (None before any ended)."""
        ended = self.visits - self.waiting
        return count / ended if ended else None


@dataclass(frozen=True)
class OpenVisit:
    workflow_id: uuid.UUID
    template_key: str
    step: str
    kind: str
    entered_at: dt.datetime
    due_at: dt.datetime | None
    summary: str


class _Percentile(Aggregate):
    """PostgreSQL's ``percentile_cont(p) WITHIN GROUP (ORDER BY x)``."""

    function = "percentile_cont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = DurationField()

    def __init__(self, expression: Any, fraction: float, **extra: Any) -> None:
        super().__init__(expression, fraction=float(fraction), **extra)


def _scoped(f: AnalyticsFilter) -> QuerySet[StepVisit]:
    qs = StepVisit.objects.filter(tenant_id=f.tenant_id)
    if f.template_key:
        qs = qs.filter(template_key=f.template_key)
    if f.field:
        qs = qs.filter(**{f"dims__{f.field}": f.value})
    return qs


def _in_period(f: AnalyticsFilter) -> QuerySet[StepVisit]:
    return _scoped(f).filter(entered_at__gte=f.start, entered_at__lt=f.end)


def breached_q(now: dt.datetime) -> Q:
    """A visit that outlived its deadline: left after it, or still open past it."""
    return Q(due_at__isnull=False) & (
        Q(left_at__gt=F("due_at")) | Q(left_at__isnull=True, due_at__lt=now)
    )


def step_figures(f: AnalyticsFilter, *, now: dt.datetime) -> list[StepFigures]:
    """One row per workflow template and step with visits entered in the period: on
    PostgreSQL from the rollup (exact counts; median and 90th percentile within 5%),
    on SQLite from the visits (exact)."""
    if rollup_kept():
        return [_figures(r) for r in analytics_rollup.step_rows(f, now=now)]
    return [_figures(r) for r in _exact_rows(f, now=now)]


def _figures(r: dict[str, Any]) -> StepFigures:
    return StepFigures(
        template_key=r["template_key"],
        step=r["step"],
        kind=r["kind"],
        visits=r["visits"],
        completed=r["completed"],
        rejected=r["rejected"],
        sent_back=r["sent_back"],
        breached=r["breached"],
        escalated=r["escalated_n"],
        waiting=r["waiting"],
        median=r["median"],
        p90=r["p90"],
    )


def _exact_rows(f: AnalyticsFilter, *, now: dt.datetime) -> list[dict[str, Any]]:
    """The figures sorted from the visits, exact (SQLite; and the rollup's yardstick)."""
    waited = F("left_at") - F("entered_at")
    counts: dict[str, Any] = {
        "visits": Count("id"),
        "completed": Count("id", filter=Q(outcome="completed")),
        "rejected": Count("id", filter=Q(outcome="rejected")),
        "sent_back": Count("id", filter=Q(outcome="sent_back")),
        "breached": Count("id", filter=breached_q(now)),
        "escalated_n": Count("id", filter=Q(escalated=True)),
        "waiting": Count("id", filter=Q(left_at__isnull=True)),
    }
    pg = connection.vendor == "postgresql"
    if pg:
        ended = Q(left_at__isnull=False)
        counts["median"] = _Percentile(waited, 0.5, filter=ended)
        counts["p90"] = _Percentile(waited, 0.9, filter=ended)
    grouped: Any = _in_period(f).values("template_key", "step", "kind")
    with transaction.atomic():
        if pg:
            # The percentiles sort each step's waits: in memory, not in files on disk
            # (the default 4 MB holds some 50,000 visits).
            with connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL work_mem = '{SORT_MEMORY}'")
        rows: list[dict[str, Any]] = list(
            grouped.annotate(**counts).order_by("template_key", "step", "kind")
        )
    if not pg:
        _percentiles_in_python(f, rows)
    return rows


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """``percentile_cont``: linear interpolation between the closest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    at = fraction * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def _percentiles_in_python(f: AnalyticsFilter, rows: list[dict[str, Any]]) -> None:
    """SQLite has no percentile_cont: the waits of the period, ordered here."""
    waits: dict[tuple[str, str, str], list[float]] = {}
    for key, step, kind, entered, left in (
        _in_period(f)
        .filter(left_at__isnull=False)
        .values_list("template_key", "step", "kind", "entered_at", "left_at")
    ):
        if left is not None:
            waits.setdefault((key, step, kind), []).append((left - entered).total_seconds())
    for r in rows:
        got = waits.get((r["template_key"], r["step"], r["kind"]), [])
        for name, fraction in (("median", 0.5), ("p90", 0.9)):
            seconds = percentile(got, fraction)
            r[name] = dt.timedelta(seconds=seconds) if seconds is not None else None


def weekly_starts(f: AnalyticsFilter, *, zone: dt.tzinfo) -> list[tuple[dt.date, str, int]]:
    """(Monday of the week in ``zone``, workflow template, requests) for the requests
    whose first step was entered in the period: the volume by week."""
    if rollup_kept():
        return analytics_rollup.weekly(f, _scoped(f), zone=zone)
    rows = (
        _in_period(f)
        .filter(entry=1)
        .annotate(week=TruncWeek("entered_at", tzinfo=zone))
        .values("week", "template_key")
        .annotate(n=Count("id"))
        .order_by("week", "template_key")
    )
    return [(_as_date(r["week"]), r["template_key"], r["n"]) for r in rows]


def _as_date(value: dt.datetime | dt.date) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value


def longest_open(f: AnalyticsFilter, *, limit: int = 10) -> list[OpenVisit]:
    """The open visits that have waited longest (whatever the period: they wait now)."""
    rows = (
        _scoped(f)
        .filter(left_at__isnull=True)
        .order_by("entered_at", "id")
        .values_list(
            "workflow_id",
            "template_key",
            "step",
            "kind",
            "entered_at",
            "due_at",
            "workflow__summary",
        )[:limit]
    )
    return [OpenVisit(*r) for r in rows]
