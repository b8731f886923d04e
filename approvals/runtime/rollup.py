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
``rollup_refresh`` recounts an organisation's rollup from its visits (the rebuild's
last step).
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction

from .rollup_buckets import (
    BUCKETS,
    COUNTS,
    LOG_BUCKETS,
    MINUTE,
    OPEN,
    OVER_A_YEAR,
    RATIO,
    SLOT_SECONDS,
    SLOTS,
    UNDER_A_MINUTE,
    YEAR,
)

# -- the SQL ------------------------------------------------------------------------------

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


_FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION approvals_wait_bucket(entered timestamptz, left_at timestamptz)
RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN left_at IS NULL THEN {OPEN}
        WHEN extract(epoch FROM left_at - entered) < {MINUTE} THEN {UNDER_A_MINUTE}
        WHEN extract(epoch FROM left_at - entered) >= {YEAR} THEN {OVER_A_YEAR}
        ELSE least({LOG_BUCKETS}, 1 + floor(
            ln(extract(epoch FROM left_at - entered)::float8 / {MINUTE}) / ln({RATIO!r})))
    END::smallint
$$;
CREATE OR REPLACE FUNCTION approvals_histogram_add(state int[], size int, i int, n int)
RETURNS int[] LANGUAGE sql IMMUTABLE AS $$
    SELECT s[:i] || (s[i + 1] + n) || s[i + 2:]
    FROM (SELECT coalesce(state, array_fill(0, ARRAY[size])) AS s) z
$$;
CREATE OR REPLACE AGGREGATE approvals_histogram(int, int, int) (
    SFUNC = approvals_histogram_add, STYPE = int[]
);
CREATE OR REPLACE FUNCTION approvals_add_arrays(a int[], b int[])
RETURNS int[] LANGUAGE sql IMMUTABLE AS $$
    SELECT array_agg(x + y ORDER BY i) FROM unnest(a, b) WITH ORDINALITY u(x, y, i)
$$;
"""

_TRIGGERS = {
    # event: (transition tables, contributions)
    "insert": ("NEW TABLE AS new_rows", _contributions("new_rows", 1)),
    "delete": ("OLD TABLE AS old_rows", _contributions("old_rows", -1)),
    "update": (
        "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        _contributions("old_rows", -1) + " UNION ALL " + _contributions("new_rows", 1),
    ),
}

# One visit opened or closed by one statement (every command's case) is counted without
# the general statement's grouping and histogram aggregates (SQL functions called per
# row, and an unnest to add two arrays): one row's counts, and its buckets bumped in
# place. A visit's key row is there already but on the day's first visit of its key, so
# each function tries an UPDATE of that row first (no VALUES built, no speculative
# insertion) and inserts only when it found none; ON CONFLICT takes the row another
# command inserted meanwhile. A closed visit (an UPDATE that keeps the key) is one
# change of one row: its counts' differences, its wait's bucket moved. That was most of
# the rollup's cost to a command (bench/write_path.py). A statement of several visits
# (a timer batch, a rebuild) takes the general path.
_KEY_VALUES = (
    "v.tenant_id, v.template_key, v.step, v.kind, (v.entered_at AT TIME ZONE 'UTC')::date, v.dims"
)
_KEY_MATCH = " AND ".join(
    f"r.{k} = {v}"
    for k, v in zip(
        _KEY,
        (
            "v.tenant_id",
            "v.template_key",
            "v.step",
            "v.kind",
            "(v.entered_at AT TIME ZONE 'UTC')::date",
            "v.dims",
        ),
        strict=True,
    )
)


def _counts(v: str) -> list[str]:
    """The visit ``v``'s counts, in the order of ``COUNTS``."""
    return [
        "1",
        f"({v}.left_at IS NULL)::int",
        f"({v}.outcome = 'completed')::int",
        f"({v}.outcome = 'rejected')::int",
        f"({v}.outcome = 'sent_back')::int",
        f"({v}.left_at IS NOT NULL AND {v}.due_at IS NOT NULL AND {v}.left_at > {v}.due_at)::int",
        f"{v}.escalated::int",
    ]


assert len(_counts("v")) == len(_COUNTS)


def _slot(v: str) -> str:
    """The half-hour of the day ``v`` entered (1-based), when it is its step's first."""
    return (
        f"CASE WHEN {v}.entry = 1 THEN 1 + floor(extract(epoch FROM"
        f" ({v}.entered_at AT TIME ZONE 'UTC')::time) / {SLOT_SECONDS})::int END"
    )


def _bucket(v: str) -> str:
    """The wait's bucket of ``v`` (1-based), none while it is open."""
    return f"nullif(approvals_wait_bucket({v}.entered_at, {v}.left_at) + 1, {OPEN + 1})"


# The key row changed by ``sign`` times a visit's counts and buckets: (a, b, c) is the
# UPDATE's SET, the INSERT's values and the conflict's SET. Called with the row's old
# and new buckets (NULL: none), so one call moves a closed visit's wait.
_ONE_ROW_FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION approvals_bump(a int[], i int, n int) RETURNS int[]
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF i IS NOT NULL AND n <> 0 THEN
        a[i] := a[i] + n;
    END IF;
    RETURN a;
END $$;
CREATE OR REPLACE FUNCTION approvals_stepday_add(
    v approvals_stepvisit, counts int[], wait_from int, wait_to int,
    slot_from int, slot_to int)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE approvals_stepday r SET
        {", ".join(f"{c} = r.{c} + counts[{i + 1}]" for i, c in enumerate(_COUNTS))},
        waits = approvals_bump(approvals_bump(r.waits, wait_from, -1), wait_to, 1),
        firsts = approvals_bump(approvals_bump(r.firsts, slot_from, -1), slot_to, 1)
    WHERE {_KEY_MATCH};
    IF NOT FOUND THEN
        INSERT INTO approvals_stepday AS r ({", ".join(_KEY)}, {", ".join(_COUNTS)}, waits, firsts)
        VALUES ({_KEY_VALUES}, {", ".join(f"counts[{i + 1}]" for i in range(len(_COUNTS)))},
            approvals_bump(approvals_bump(array_fill(0, ARRAY[{BUCKETS}]), wait_from, -1),
                           wait_to, 1),
            approvals_bump(approvals_bump(array_fill(0, ARRAY[{SLOTS}]), slot_from, -1),
                           slot_to, 1))
        ON CONFLICT ON CONSTRAINT stepday_key DO UPDATE SET
            {", ".join(f"{c} = r.{c} + excluded.{c}" for c in _COUNTS)},
            waits = approvals_add_arrays(r.waits, excluded.waits),
            firsts = approvals_add_arrays(r.firsts, excluded.firsts);
    END IF;
END $$;
CREATE OR REPLACE FUNCTION approvals_stepday_one(v approvals_stepvisit, sign int)
RETURNS void LANGUAGE sql AS $$
    SELECT approvals_stepday_add(v,
        ARRAY[{", ".join(f"sign * {c}" for c in _counts("v"))}],
        CASE WHEN sign < 0 THEN {_bucket("v")} END, CASE WHEN sign > 0 THEN {_bucket("v")} END,
        CASE WHEN sign < 0 THEN {_slot("v")} END, CASE WHEN sign > 0 THEN {_slot("v")} END)
$$;
CREATE OR REPLACE FUNCTION approvals_stepday_move(o approvals_stepvisit, v approvals_stepvisit)
RETURNS void LANGUAGE sql AS $$
    SELECT approvals_stepday_add(v,
        ARRAY[{", ".join(f"{n} - {o}" for n, o in zip(_counts("v"), _counts("o"), strict=True))}],
        {_bucket("o")}, {_bucket("v")},
        CASE WHEN {_slot("o")} IS DISTINCT FROM {_slot("v")} THEN {_slot("o")} END,
        CASE WHEN {_slot("o")} IS DISTINCT FROM {_slot("v")} THEN {_slot("v")} END)
$$;
"""
# event: the statement's one visit counted (a visit taken away: counted negative; a
# visit closed: moved, when its key stayed as it was, the two sums on one row and no
# lock order to keep), in one query that finds nothing for any other statement
_ONE_ROW = {
    "insert": "PERFORM approvals_stepday_one(v, 1) FROM new_rows v"
    " WHERE (SELECT count(*) FROM new_rows) = 1",
    "delete": "PERFORM approvals_stepday_one(v, -1) FROM old_rows v"
    " WHERE (SELECT count(*) FROM old_rows) = 1",
    "update": "PERFORM approvals_stepday_move(o, n) FROM old_rows o JOIN new_rows n"
    " ON n.id = o.id AND (o.tenant_id, o.template_key, o.step, o.kind, o.entered_at, o.dims)"
    " = (n.tenant_id, n.template_key, n.step, n.kind, n.entered_at, n.dims)"
    " WHERE (SELECT count(*) FROM old_rows) = 1",
}


def _trigger_function(event: str, source: str) -> str:
    return f"""CREATE OR REPLACE FUNCTION approvals_stepday_{event}() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
            {_ONE_ROW[event]};
            IF NOT FOUND THEN
                {_upsert(source)};
            END IF;
            RETURN NULL;
        END $$;"""


TRIGGER_FUNCTIONS = [_ONE_ROW_FUNCTIONS] + [
    _trigger_function(e, s) for e, (_, s) in _TRIGGERS.items()
]

INSTALL = [_FUNCTIONS, _ONE_ROW_FUNCTIONS]
for _event, (_tables, _source) in _TRIGGERS.items():
    INSTALL += [
        _trigger_function(_event, _source),
        f"DROP TRIGGER IF EXISTS stepday_{_event} ON approvals_stepvisit;",
        f"""CREATE TRIGGER stepday_{_event} AFTER {_event.upper()} ON approvals_stepvisit
            REFERENCING {_tables} FOR EACH STATEMENT
            EXECUTE FUNCTION approvals_stepday_{_event}();""",
    ]
RECOUNT_ALL = _upsert(_contributions("approvals_stepvisit", 1))

UNINSTALL = [
    *(f"DROP TRIGGER IF EXISTS stepday_{e} ON approvals_stepvisit;" for e in _TRIGGERS),
    *(f"DROP FUNCTION IF EXISTS approvals_stepday_{e}();" for e in _TRIGGERS),
    "DROP FUNCTION IF EXISTS approvals_stepday_move(approvals_stepvisit, approvals_stepvisit);",
    "DROP FUNCTION IF EXISTS approvals_stepday_one(approvals_stepvisit, int);",
    "DROP FUNCTION IF EXISTS approvals_stepday_add("
    "approvals_stepvisit, int[], int, int, int, int);",
    "DROP FUNCTION IF EXISTS approvals_bump(int[], int, int);",
    "DROP AGGREGATE IF EXISTS approvals_histogram(int, int, int);",
    "DROP FUNCTION IF EXISTS approvals_histogram_add(int[], int, int, int);",
    "DROP FUNCTION IF EXISTS approvals_add_arrays(int[], int[]);",
    "DROP FUNCTION IF EXISTS approvals_wait_bucket(timestamptz, timestamptz);",
]


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
