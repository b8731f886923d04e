"""The analytics figures from the rollup (``models.StepDay``, ``runtime.rollup``): the
whole UTC days of the period from the rollup, the part-days at its ends (the period runs
from midnight in the person's zone) from the step visits, by their index. What the periodic
fold has not yet counted is added as it reads (the uncounted visits of the whole days,
less the retractions of changed or deleted ones: ``runtime.rollup``), in the same
statement, so the figures are exact right after a command. The counts are exact; the
median and 90th percentile are read from the rollup's histogram of waits,
within 5% (``rollup.ERROR``). The visits still open past their deadline are counted
from the visits (their breach depends on now), by the index of the open visits."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from typing import Any

from django.db.models import Count, Q
from django.db.models.functions import TruncWeek

from ..runtime import replica
from ..runtime import rollup_buckets as rollup

_COUNTS = rollup.COUNTS
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


# Not yet in the rollup: (table, condition, sign) added to its whole days as it reads.
_PENDING = (
    ("approvals_stepvisit", " AND NOT counted", 1),
    ("approvals_stepvisitretraction", "", -1),
)


def step_rows(f: Any, *, now: dt.datetime) -> list[dict[str, Any]]:
    """Per (template, step, kind): the counts, the open visits, and the histogram."""
    first, last = whole_days(f.start, f.end)
    params: list[Any] = [f.tenant_id, first, last]
    parts = [
        f"SELECT template_key, step, kind, {', '.join(_COUNTS)}, NULL, waits"
        " FROM approvals_stepday WHERE tenant_id = %s AND day >= %s AND day < %s"
        " AND visits <> 0" + _filters(f, params)
    ]
    spans = [
        (table, cond, sign, _midnight(first), _midnight(last)) for table, cond, sign in _PENDING
    ]
    spans += [("approvals_stepvisit", "", 1, a, b) for a, b in fringes(f.start, f.end)]
    for table, cond, sign, a, b in spans:
        if a >= b:
            continue
        params += [f.tenant_id, a, b]
        parts.append(
            f"SELECT template_key, step, kind, {sign} * count(*),"
            f" {sign} * count(*) FILTER (WHERE left_at IS NULL),"
            f" {sign} * count(*) FILTER (WHERE outcome = 'completed'),"
            f" {sign} * count(*) FILTER (WHERE outcome = 'rejected'),"
            f" {sign} * count(*) FILTER (WHERE outcome = 'sent_back'),"
            f" {sign} * count(*) FILTER (WHERE left_at > due_at),"
            f" {sign} * count(*) FILTER (WHERE escalated),"
            " approvals_wait_bucket(entered_at, left_at), NULL"
            f" FROM {table}"
            f" WHERE tenant_id = %s AND entered_at >= %s AND entered_at < %s{cond}"
            + _filters(f, params)
            + " GROUP BY 1, 2, 3, 11"
        )
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    with replica.read_connection().cursor() as cur:
        cur.execute(" UNION ALL ".join(parts), params)
        for key, step, kind, *got in cur.fetchall():
            r = rows.setdefault(
                (key, step, kind),
                {"template_key": key, "step": step, "kind": kind, "waits": [0] * rollup.BUCKETS}
                | {"arrays": []}
                | dict.fromkeys(_COUNTS, 0),
            )
            *numbers, bucket, waits = got
            for name, n in zip(_COUNTS, numbers, strict=True):
                r[name] += int(n)
            if waits is not None:
                r["arrays"].append(waits)
            elif bucket is not None and bucket >= 0:
                r["waits"][bucket] += int(numbers[0])
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
        if not r["visits"]:
            continue
        r["escalated_n"] = r.pop("escalated")
        summed = [sum(column) for column in zip(r.pop("waits"), *r.pop("arrays"), strict=True)]
        waits = dict(enumerate(summed))
        r["median"] = rollup.histogram_percentile(waits, 0.5)
        r["p90"] = rollup.histogram_percentile(waits, 0.9)
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
    """The requests started per local week: the rollup's whole UTC days, each half-hour
    of them in the week it lies in, and from the visits the part-days at the ends (all
    of it from the visits in a zone not a whole number of half-hours from UTC)."""
    first, last = whole_days(f.start, f.end)
    offsets = {
        (zone.utcoffset(c) or dt.timedelta()) // dt.timedelta(seconds=1)
        for c in (f.start, f.end, *_week_cuts(f.start, f.end, zone))
    }
    halves = all(o % rollup.SLOT_SECONDS == 0 for o in offsets)
    counts: dict[tuple[dt.date, str], int] = defaultdict(int)
    ranges = fringes(f.start, f.end)
    if not halves:
        ranges = [(f.start, f.end)]
    else:
        params: list[Any] = [f.tenant_id, first, last]
        sql = (
            "SELECT day, template_key, firsts, NULL, NULL FROM approvals_stepday"
            " WHERE tenant_id = %s AND day >= %s AND day < %s AND visits <> 0" + _filters(f, params)
        )
        for table, cond, sign in _PENDING:
            params += [f.tenant_id, _midnight(first), _midnight(last)]
            sql += (
                " UNION ALL SELECT (entered_at AT TIME ZONE 'UTC')::date, template_key, NULL,"
                " floor(extract(epoch FROM (entered_at AT TIME ZONE 'UTC')::time)"
                f" / {rollup.SLOT_SECONDS})::int, {sign} * count(*) FROM {table}"
                " WHERE tenant_id = %s AND entered_at >= %s AND entered_at < %s"
                f" AND entry = 1{cond}" + _filters(f, params) + " GROUP BY 1, 2, 4"
            )
        cuts = _week_cuts(_midnight(first), _midnight(last), zone)
        split: dict[dt.date, tuple[dt.date, int, dt.date]] = {}
        for day in (first + i * _DAY for i in range((last - first).days)):
            # the day's half-hours before a local Monday midnight, and after it
            at = next((c for c in cuts if _midnight(day) < c < _midnight(day + _DAY)), None)
            cut = rollup.SLOTS
            if at is not None:
                cut = int((at - _midnight(day)).total_seconds()) // rollup.SLOT_SECONDS
            split[day] = (_monday(_midnight(day), zone), cut, _monday(at or _midnight(day), zone))
        with replica.read_connection().cursor() as cur:
            cur.execute(sql, params)
            for day, key, firsts, slot, n in cur.fetchall():
                before, cut, after = split[day]
                if firsts is None:  # not yet folded: its half-hour's count
                    counts[(before if slot < cut else after, key)] += int(n)
                    continue
                counts[(before, key)] += sum(firsts[:cut])
                if cut < rollup.SLOTS:
                    counts[(after, key)] += sum(firsts[cut:])
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
