"""The analytics rollup (``models.StepDay``): the step visits counted per organisation,
workflow template, step, kind, UTC day of entry, values of the enum fields and wait
bucket, so the page sums a few thousand rows instead of sorting every wait of a period.

The waits are kept as a histogram with fixed log-scale buckets: bucket 0 holds waits
under a minute, buckets 1 to ``LOG_BUCKETS`` split one minute to one year in equal
ratios (each about 10% wider than the one before), the last one a year or more; -1
holds the visits still open. A percentile read from it is the middle of its bucket
(geometric), within ``ERROR`` (5%) of the wait it stands for, or half a minute for the
waits under a minute.

PostgreSQL keeps it with statement-level triggers on the step visits: the statement
that opens, closes or rebuilds visits adds their rows (and takes away their old ones)
in the same statement, so a command sends no statement and no round trip more. The
sums are applied in key order (no two commands lock the same rows in opposite order);
the rows' locks last to the command's COMMIT, which travels in the same round trip.
The functions and triggers are in approvals/sql/ (``functions/approvals_stepday_*.sql``,
``approvals_wait_bucket.sql``, ``approvals_histogram*.sql``, ``approvals_bump.sql``,
``approvals_add_arrays.sql`` and ``triggers/analytics_rollup.sql``); the trigger functions'
general path is the same statement as ``_upsert`` here. ``rollup_refresh`` recounts an
organisation's rollup from its visits (the rebuild's last step).
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

from .rollup_buckets import BUCKETS, COUNTS, SLOT_SECONDS, SLOTS

# -- the recount's SQL ----------------------------------------------------------------------

_COUNTS = COUNTS
_KEY = ("tenant_id", "template_key", "step", "kind", "day", "dims")


def _contributions(table: str, sign: int) -> str:
    """Each visit of ``table`` as its rollup key, wait bucket, half-hour and counts,
    times ``sign``."""
    return f"""
        SELECT tenant_id, template_key, step, kind,
            (entered_at AT TIME ZONE 'UTC')::date AS day, dims,
            approvals_wait_bucket(entered_at, left_at) AS bucket,
            floor(extract(epoch FROM (entered_at AT TIME ZONE 'UTC')::time)
                  / {SLOT_SECONDS})::int AS slot,
            {sign} AS visits,
            {sign} * (left_at IS NULL)::int AS waiting,
            {sign} * (outcome = 'completed')::int AS completed,
            {sign} * (outcome = 'rejected')::int AS rejected,
            {sign} * (outcome = 'sent_back')::int AS sent_back,
            {sign} * (left_at IS NOT NULL AND due_at IS NOT NULL
                      AND left_at > due_at)::int AS breached,
            {sign} * escalated::int AS escalated,
            {sign} * (entry = 1)::int AS firsts
        FROM {table}"""


def _upsert(source: str) -> str:
    """Add the summed contributions of ``source`` to the rollup, in key order: per
    (key, bucket, half-hour) first, then per key with the two histograms."""
    keys = ", ".join(_KEY)
    fine = ", ".join(f"sum({c}) AS {c}" for c in (*_COUNTS, "firsts"))
    moved = " OR ".join(f"sum({c}) <> 0" for c in (*_COUNTS, "firsts"))
    sums = ", ".join(f"sum({c})" for c in _COUNTS)
    adds = ", ".join(f"{c} = r.{c} + excluded.{c}" for c in _COUNTS)
    zeros = "array_fill(0, ARRAY[{}])"
    return f"""
        INSERT INTO approvals_stepday AS r ({keys}, {", ".join(_COUNTS)}, waits, firsts)
        SELECT {keys}, {sums},
            coalesce(approvals_histogram({BUCKETS}, bucket::int, visits::int)
                     FILTER (WHERE bucket >= 0), {zeros.format(BUCKETS)}),
            coalesce(approvals_histogram({SLOTS}, slot, firsts::int)
                     FILTER (WHERE firsts <> 0), {zeros.format(SLOTS)})
        FROM (SELECT {keys}, bucket, slot, {fine} FROM ({source}) c
              GROUP BY {keys}, bucket, slot HAVING {moved}) g
        GROUP BY {keys}
        ORDER BY {keys}
        ON CONFLICT ON CONSTRAINT stepday_key DO UPDATE SET {adds},
            waits = approvals_add_arrays(r.waits, excluded.waits),
            firsts = approvals_add_arrays(r.firsts, excluded.firsts)"""


def rollup_refresh(*, tenant_id: int | None = None) -> None:
    """Recount the organisation's (or every) rollup from its step visits. The rollup is
    locked against the commands' triggers meanwhile (they wait, then add their visits
    to the recounted rows), so no visit is counted twice or missed."""
    where = "" if tenant_id is None else " WHERE tenant_id = %s"
    params = [] if tenant_id is None else [tenant_id]
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("LOCK TABLE approvals_stepday IN SHARE ROW EXCLUSIVE MODE")
        cur.execute("DELETE FROM approvals_stepday" + where, params)
        cur.execute(_upsert(_contributions("approvals_stepvisit" + where, 1)), params)


def rollup_rows(*, tenant_id: int) -> set[tuple[Any, ...]]:
    """The organisation's rollup rows that count something (key and counts): what a
    test compares before and after a rebuild."""
    from ..models import StepDay

    return {
        (*row[:4], tuple(sorted(row[4].items())), *row[5:-2], tuple(row[-2]), tuple(row[-1]))
        for row in StepDay.objects.filter(tenant_id=tenant_id)
        .exclude(visits=0)
        .values_list(*_KEY[1:], *_COUNTS, "waits", "firsts")
    }
