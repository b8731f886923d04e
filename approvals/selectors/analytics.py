"""The analytics page's figures, read from the step visits (``models.StepVisit``, a
read model projected from the events), never from the event table: per workflow
template and step, the visits, how they ended, the time they waited (median and 90th
percentile), deadline breaches and escalations; requests started per week; and the
open visits that have waited longest. Every query is scoped to one organisation."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from ..models import StepVisit
from ..runtime import replica
from . import analytics_rollup


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


def _scoped(f: AnalyticsFilter) -> QuerySet[StepVisit]:
    qs = StepVisit.objects.filter(tenant_id=f.tenant_id)
    if f.template_key:
        qs = qs.filter(template_key=f.template_key)
    if f.field:
        qs = qs.filter(**{f"dims__{f.field}": f.value})
    return qs


@replica.replica_read
def step_figures(f: AnalyticsFilter, *, now: dt.datetime) -> list[StepFigures]:
    """One row per workflow template and step with visits entered in the period, from
    the rollup (exact counts; median and 90th percentile within 5%)."""
    return [_figures(r) for r in analytics_rollup.step_rows(f, now=now)]


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


@replica.replica_read
def weekly_starts(f: AnalyticsFilter, *, zone: dt.tzinfo) -> list[tuple[dt.date, str, int]]:
    """(Monday of the week in ``zone``, workflow template, requests) for the requests
    whose first step was entered in the period: the volume by week."""
    return analytics_rollup.weekly(f, _scoped(f), zone=zone)


@replica.replica_read
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
