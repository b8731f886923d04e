"""The analytics rollup (``models.StepDay``): the step visits counted per organisation,
workflow template, step, kind, UTC day of entry, values of the enum fields and wait
bucket, so the page sums a few thousand rows instead of sorting every wait of a period.

The waits are kept as a histogram with fixed log-scale buckets: bucket 0 holds waits
under a minute, buckets 1 to ``LOG_BUCKETS`` split one minute to one year in equal
ratios (each about 10% wider than the one before), the last one a year or more; -1
holds the visits still open. A percentile read from it is the middle of its bucket
(geometric), within ``ERROR`` (5%) of the wait it stands for, or half a minute for the
waits under a minute.

A periodic job keeps it (``rollup_fold``, the job ``fold-analytics``), so a command
writes no rollup row. The command path writes a visit uncounted (``StepVisit.counted``
false, the column's default); a row trigger on a visit already counted keeps it, as
counted, in ``StepVisitRetraction`` before a change or deletion, and marks a changed one
uncounted (approvals/sql/triggers/analytics_rollup.sql,
``functions/approvals_visit_retract.sql``). The fold adds the uncounted visits, takes
off the retractions, marks the visits counted and deletes the retractions, a batch per
statement: one transaction, claimed with SKIP LOCKED (two folds never take one row; a
command closing a visit meanwhile is skipped, not waited for), the sums applied in key
order (two folds lock the rollup rows in one order). A fold killed at any point rolls
back whole, so nothing is counted twice or lost. Between folds the rollup plus the
uncounted visits minus the retractions is the exact count at every commit; the page
reads the three (``selectors.analytics_rollup``). ``rollup_refresh`` recounts an
organisation's rollup from its visits (the rebuild's last step).
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

from .rollup_buckets import BUCKETS, COUNTS, SLOT_SECONDS, SLOTS

VISITS = "approvals_stepvisit"
RETRACTIONS = "approvals_stepvisitretraction"
FOLD_BATCH_ERROR = "A fold's batch is at least one visit."
# Visits (and retractions) folded per statement: a batch's locks and its transaction stay
# short, and a backlog drains in a few statements.
FOLD_BATCH = 5000

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


def _fold_sql(tenant: str) -> str:
    """One batch: claim uncounted visits and retractions (SKIP LOCKED), mark the visits
    counted, delete the retractions, add the visits and take off the retractions."""
    where = f" AND tenant_id = {tenant}" if tenant else ""
    source = f"{_contributions('visits', 1)} UNION ALL {_contributions('retracted', -1)}"
    return f"""
        WITH claimed AS MATERIALIZED (
            SELECT id FROM {VISITS} WHERE NOT counted{where}
            LIMIT %(batch)s FOR UPDATE SKIP LOCKED
        ), visits AS (
            UPDATE {VISITS} v SET counted = true FROM claimed c
            WHERE v.id = c.id AND NOT v.counted RETURNING v.*
        ), taken AS MATERIALIZED (
            SELECT id FROM {RETRACTIONS} WHERE true{where}
            LIMIT %(batch)s FOR UPDATE SKIP LOCKED
        ), retracted AS (
            DELETE FROM {RETRACTIONS} r USING taken t WHERE r.id = t.id RETURNING r.*
        ), folded AS ({_upsert(source)} RETURNING 1)
        SELECT (SELECT count(*) FROM visits), (SELECT count(*) FROM retracted),
            (SELECT count(*) FROM folded)"""


_FOLD_ALL = _fold_sql("")
_FOLD_TENANT = _fold_sql("%(tenant)s")


def rollup_fold_batch(*, tenant_id: int | None = None, batch: int = FOLD_BATCH) -> tuple[int, int]:
    """Fold one batch in its own transaction: (visits counted, retractions taken off)."""
    sql = _FOLD_ALL if tenant_id is None else _FOLD_TENANT
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(sql, {"batch": batch, "tenant": tenant_id})
        visits, retracted, _ = cur.fetchone()
    return int(visits), int(retracted)


def rollup_fold(*, tenant_id: int | None = None, batch: int = FOLD_BATCH) -> int:
    """Fold what is pending (of one organisation, or all) into the rollup, a batch per
    transaction, until a batch finds less than a full one; returns the rows folded."""
    if batch < 1:
        raise ValueError(FOLD_BATCH_ERROR)
    done = 0
    while True:
        visits, retracted = rollup_fold_batch(tenant_id=tenant_id, batch=batch)
        done += visits + retracted
        if visits < batch and retracted < batch:
            return done


def rollup_refresh(*, tenant_id: int | None = None) -> None:
    """Recount the organisation's (or every) rollup from its step visits. The visits
    are locked against change meanwhile (commands wait, as folds do), so the recount,
    the retractions dropped and the visits marked counted see the same rows."""
    where = "" if tenant_id is None else " WHERE tenant_id = %s"
    params = [] if tenant_id is None else [tenant_id]
    with transaction.atomic(), connection.cursor() as cur:
        # In the order a fold's statement takes them: no deadlock with one.
        cur.execute(f"LOCK TABLE {VISITS} IN SHARE MODE")
        cur.execute(f"LOCK TABLE {RETRACTIONS} IN SHARE ROW EXCLUSIVE MODE")
        cur.execute("LOCK TABLE approvals_stepday IN SHARE ROW EXCLUSIVE MODE")
        cur.execute("DELETE FROM approvals_stepday" + where, params)
        cur.execute(f"DELETE FROM {RETRACTIONS}" + where, params)
        cur.execute(_upsert(_contributions(VISITS + where, 1)), params)
        and_tenant = "" if tenant_id is None else " AND tenant_id = %s"
        cur.execute(f"UPDATE {VISITS} SET counted = true WHERE NOT counted" + and_tenant, params)


def rollup_rows(*, tenant_id: int) -> set[tuple[Any, ...]]:
    """The organisation's rollup rows that count something (key and counts), what is
    pending folded first: what a test compares before and after a rebuild."""
    from ..models import StepDay

    rollup_fold(tenant_id=tenant_id)

    return {
        (*row[:4], tuple(sorted(row[4].items())), *row[5:-2], tuple(row[-2]), tuple(row[-1]))
        for row in StepDay.objects.filter(tenant_id=tenant_id)
        .exclude(visits=0)
        .values_list(*_KEY[1:], *_COUNTS, "waits", "firsts")
    }
