"""The analytics figures from the rollup (``models.StepDay``, ``runtime.rollup``): the
whole UTC days of the period from the rollup, the part-days at its ends (the period runs
from midnight in the person's zone) from the step visits, by their index. The counts
are exact; the median and 90th percentile are read from the rollup's histogram of waits,
within 5% (``rollup.ERROR``). The visits still open past their deadline are counted
from the visits (their breach depends on now), by the index of the open visits."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from typing import Any

from django.db import connection
from django.db.models import Count, Q
from django.db.models.functions import TruncWeek

from ..runtime import rollup

_COUNTS = ("visits", "completed", "rejected", "sent_back", "breached", "escalated")
_DAY = dt.timedelta(days=1)


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


def whole_days(start: dt.datetime, end: dt.datetime) -> tuple[dt.date, dt.date]:
    """The UTC days [first, last) that lie wholly in [start, end) (maybe none)."""
    first = start.astimezone(dt.UTC).date()
    if _midnight(first) < start:
        first += _DAY
    last = end.astimezone(dt.UTC).date()
    return first, max(first, last)


def fringes(start: dt.datetime, end: dt.datetime) -> list[tuple[dt.datetime, dt.datetime]]:
    """The parts of [start, end) outside its whole UTC days."""
    first, last = whole_days(start, end)
    if first >= last:
        return [(start, end)] if start < end else []
    out = []
    if start < _midnight(first):
        out.append((start, _midnight(first)))
    if _midnight(last) < end:
        out.append((_midnight(last), end))
    return out


def _filters(f: Any, params: list[Any]) -> str:
    sql = ""
    if f.template_key:
        sql += " AND template_key = %s"
        params.append(f.template_key)
    if f.field:
        sql += " AND dims @> %s::jsonb"
        params.append(json.dumps({f.field: f.value}))
    return sql


def step_rows(f: Any, *, now: dt.datetime) -> list[dict[str, Any]]:
    """Per (template, step, kind): the counts, the open visits, and the histogram."""
    first, last = whole_days(f.start, f.end)
    params: list[Any] = [f.tenant_id, first, last]
    parts = [
        "SELECT template_key, step, kind, bucket, visits, completed, rejected, sent_back,"
        " breached, escalated FROM approvals_stepday"
        " WHERE tenant_id = %s AND day >= %s AND day < %s" + _filters(f, params)
    ]
    for a, b in fringes(f.start, f.end):
        params += [f.tenant_id, a, b]
        parts.append(
            "SELECT template_key, step, kind, approvals_wait_bucket(entered_at, left_at), 1,"
            " (outcome = 'completed')::int, (outcome = 'rejected')::int,"
            " (outcome = 'sent_back')::int,"
            " (left_at IS NOT NULL AND due_at IS NOT NULL AND left_at > due_at)::int,"
            " escalated::int FROM approvals_stepvisit"
            " WHERE tenant_id = %s AND entered_at >= %s AND entered_at < %s" + _filters(f, params)
        )
    sums = ", ".join(f"sum({c})" for c in _COUNTS)
    sql = (
        f"SELECT template_key, step, kind, bucket, {sums} FROM ("
        + " UNION ALL ".join(parts)
        + ") u GROUP BY 1, 2, 3, 4 HAVING sum(visits) <> 0"
    )
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    with connection.cursor() as cur:
        cur.execute(sql, params)
        for key, step, kind, bucket, *counts in cur.fetchall():
            r = rows.setdefault(
                (key, step, kind),
                {"template_key": key, "step": step, "kind": kind, "waits": {}}
                | dict.fromkeys(_COUNTS, 0)
                | {"waiting": 0},
            )
            for name, n in zip(_COUNTS, counts, strict=True):
                r[name] += int(n)
            if bucket == rollup.OPEN:
                r["waiting"] += int(counts[0])
            else:
                r["waits"][bucket] = r["waits"].get(bucket, 0) + int(counts[0])
        # the open visits past their deadline: breached as of now
        late: list[Any] = [f.tenant_id, f.start, f.end, now]
        cur.execute(
            "SELECT template_key, step, kind, count(*) FROM approvals_stepvisit"
            " WHERE tenant_id = %s AND left_at IS NULL AND entered_at >= %s"
            " AND entered_at < %s AND due_at < %s" + _filters(f, late) + " GROUP BY 1, 2, 3",
            late,
        )
        for key, step, kind, n in cur.fetchall():
            if (key, step, kind) in rows:
                rows[(key, step, kind)]["breached"] += int(n)
    out = []
    for key in sorted(rows):
        r = rows[key]
        r["escalated_n"] = r.pop("escalated")
        r["median"] = rollup.histogram_percentile(r["waits"], 0.5)
        r["p90"] = rollup.histogram_percentile(r.pop("waits"), 0.9)
        out.append(r)
    return out


def _week_cuts(start: dt.datetime, end: dt.datetime, zone: dt.tzinfo) -> list[dt.datetime]:
    """The local Mondays' midnights (as instants) inside (start, end)."""
    day = start.astimezone(zone).date()
    day += dt.timedelta(days=(7 - day.weekday()) % 7)
    cuts: list[dt.datetime] = []
    while True:
        at = dt.datetime.combine(day, dt.time(), tzinfo=zone)
        if at >= end:
            return cuts
        if at > start:
            cuts.append(at)
        day += dt.timedelta(days=7)


def _monday(at: dt.datetime, zone: dt.tzinfo) -> dt.date:
    local = at.astimezone(zone).date()
    return local - dt.timedelta(days=local.weekday())


def weekly(f: Any, scoped: Any, *, zone: dt.tzinfo) -> list[tuple[dt.date, str, int]]:
    """The requests started per local week: the rollup's whole UTC days no week begins
    inside, and from the visits the rest (the ends, and the days a local week begins in
    the middle of)."""
    first, last = whole_days(f.start, f.end)
    cuts = _week_cuts(f.start, f.end, zone)
    utc = [c.astimezone(dt.UTC) for c in cuts]
    cut_days = {c.date() for c in utc if c != _midnight(c.date()) and first <= c.date() < last}
    params: list[Any] = [f.tenant_id, first, last]
    sql = (
        "SELECT day, template_key, sum(firsts) FROM approvals_stepday"
        " WHERE tenant_id = %s AND day >= %s AND day < %s AND firsts <> 0"
        + _filters(f, params)
        + " GROUP BY 1, 2"
    )
    counts: dict[tuple[dt.date, str], int] = defaultdict(int)
    with connection.cursor() as cur:
        cur.execute(sql, params)
        for day, key, n in cur.fetchall():
            if day not in cut_days:
                counts[(_monday(_midnight(day), zone), key)] += int(n)
    ranges = fringes(f.start, f.end) + [(_midnight(d), _midnight(d + _DAY)) for d in cut_days]
    if ranges:
        where = Q()
        for a, b in ranges:
            where |= Q(entered_at__gte=a, entered_at__lt=b)
        for r in (
            scoped.filter(where, entry=1)
            .annotate(week=TruncWeek("entered_at", tzinfo=zone))
            .values("week", "template_key")
            .annotate(n=Count("id"))
        ):
            week = r["week"]
            monday = week.date() if isinstance(week, dt.datetime) else week
            counts[(monday, r["template_key"])] += r["n"]
    return sorted((m, k, n) for (m, k), n in counts.items() if n)
