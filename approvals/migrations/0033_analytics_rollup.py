"""The analytics rollup (``StepDay``) and the statement-level triggers on the step
visits that keep it, counted from the visits already there.

The SQL is this migration's own text, as ``approvals.runtime.rollup`` generated it (a
migration imports no code of the app). Migration 0038 replaced the trigger functions;
approvals/sql/ holds the current definitions."""

from typing import Any

import django.db.models.deletion
from django.contrib.postgres.fields import ArrayField
from django.db import migrations, models

INSTALL = [
    """
CREATE OR REPLACE FUNCTION approvals_wait_bucket(entered timestamptz, left_at timestamptz)
RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN left_at IS NULL THEN -1
        WHEN extract(epoch FROM left_at - entered) < 60.0 THEN 0
        WHEN extract(epoch FROM left_at - entered) >= 31536000.0 THEN 137
        ELSE least(136, 1 + floor(
            ln(extract(epoch FROM left_at - entered)::float8 / 60.0) / ln(1.1017007430050751)))
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
""",
    """
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
        visits = r.visits + counts[1], waiting = r.waiting + counts[2], completed = r.completed + counts[3], rejected = r.rejected + counts[4], sent_back = r.sent_back + counts[5], breached = r.breached + counts[6], escalated = r.escalated + counts[7],
        waits = approvals_bump(approvals_bump(r.waits, wait_from, -1), wait_to, 1),
        firsts = approvals_bump(approvals_bump(r.firsts, slot_from, -1), slot_to, 1)
    WHERE r.tenant_id = v.tenant_id AND r.template_key = v.template_key AND r.step = v.step AND r.kind = v.kind AND r.day = (v.entered_at AT TIME ZONE 'UTC')::date AND r.dims = v.dims;
    IF NOT FOUND THEN
        INSERT INTO approvals_stepday AS r (tenant_id, template_key, step, kind, day, dims, visits, waiting, completed, rejected, sent_back, breached, escalated, waits, firsts)
        VALUES (v.tenant_id, v.template_key, v.step, v.kind, (v.entered_at AT TIME ZONE 'UTC')::date, v.dims, counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7],
            approvals_bump(approvals_bump(array_fill(0, ARRAY[138]), wait_from, -1),
                           wait_to, 1),
            approvals_bump(approvals_bump(array_fill(0, ARRAY[48]), slot_from, -1),
                           slot_to, 1))
        ON CONFLICT ON CONSTRAINT stepday_key DO UPDATE SET
            visits = r.visits + excluded.visits, waiting = r.waiting + excluded.waiting, completed = r.completed + excluded.completed, rejected = r.rejected + excluded.rejected, sent_back = r.sent_back + excluded.sent_back, breached = r.breached + excluded.breached, escalated = r.escalated + excluded.escalated,
            waits = approvals_add_arrays(r.waits, excluded.waits),
            firsts = approvals_add_arrays(r.firsts, excluded.firsts);
    END IF;
END $$;
CREATE OR REPLACE FUNCTION approvals_stepday_one(v approvals_stepvisit, sign int)
RETURNS void LANGUAGE sql AS $$
    SELECT approvals_stepday_add(v,
        ARRAY[sign * 1, sign * (v.left_at IS NULL)::int, sign * (v.outcome = 'completed')::int, sign * (v.outcome = 'rejected')::int, sign * (v.outcome = 'sent_back')::int, sign * (v.left_at IS NOT NULL AND v.due_at IS NOT NULL AND v.left_at > v.due_at)::int, sign * v.escalated::int],
        CASE WHEN sign < 0 THEN nullif(approvals_wait_bucket(v.entered_at, v.left_at) + 1, 0) END, CASE WHEN sign > 0 THEN nullif(approvals_wait_bucket(v.entered_at, v.left_at) + 1, 0) END,
        CASE WHEN sign < 0 THEN CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END END, CASE WHEN sign > 0 THEN CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END END)
$$;
CREATE OR REPLACE FUNCTION approvals_stepday_move(o approvals_stepvisit, v approvals_stepvisit)
RETURNS void LANGUAGE sql AS $$
    SELECT approvals_stepday_add(v,
        ARRAY[1 - 1, (v.left_at IS NULL)::int - (o.left_at IS NULL)::int, (v.outcome = 'completed')::int - (o.outcome = 'completed')::int, (v.outcome = 'rejected')::int - (o.outcome = 'rejected')::int, (v.outcome = 'sent_back')::int - (o.outcome = 'sent_back')::int, (v.left_at IS NOT NULL AND v.due_at IS NOT NULL AND v.left_at > v.due_at)::int - (o.left_at IS NOT NULL AND o.due_at IS NOT NULL AND o.left_at > o.due_at)::int, v.escalated::int - o.escalated::int],
        nullif(approvals_wait_bucket(o.entered_at, o.left_at) + 1, 0), nullif(approvals_wait_bucket(v.entered_at, v.left_at) + 1, 0),
        CASE WHEN CASE WHEN o.entry = 1 THEN 1 + floor(extract(epoch FROM (o.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END IS DISTINCT FROM CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END THEN CASE WHEN o.entry = 1 THEN 1 + floor(extract(epoch FROM (o.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END END,
        CASE WHEN CASE WHEN o.entry = 1 THEN 1 + floor(extract(epoch FROM (o.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END IS DISTINCT FROM CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END THEN CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END END)
$$;
""",
    """CREATE OR REPLACE FUNCTION approvals_stepday_insert() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
            PERFORM approvals_stepday_one(v, 1) FROM new_rows v WHERE (SELECT count(*) FROM new_rows) = 1;
            IF NOT FOUND THEN
                
        INSERT INTO approvals_stepday AS r (tenant_id, template_key, step, kind, day, dims, visits, waiting, completed, rejected, sent_back, breached, escalated, waits, firsts)
        SELECT tenant_id, template_key, step, kind, day, dims, sum(visits), sum(waiting), sum(completed), sum(rejected), sum(sent_back), sum(breached), sum(escalated),
            coalesce(approvals_histogram(138, bucket::int, visits::int)
                     FILTER (WHERE bucket >= 0), array_fill(0, ARRAY[138])),
            coalesce(approvals_histogram(48, slot, firsts::int)
                     FILTER (WHERE firsts <> 0), array_fill(0, ARRAY[48]))
        FROM (SELECT tenant_id, template_key, step, kind, day, dims, bucket, slot, sum(visits) AS visits, sum(waiting) AS waiting, sum(completed) AS completed, sum(rejected) AS rejected, sum(sent_back) AS sent_back, sum(breached) AS breached, sum(escalated) AS escalated, sum(firsts) AS firsts FROM (
        SELECT tenant_id, template_key, step, kind,
            (entered_at AT TIME ZONE 'UTC')::date AS day, dims,
            approvals_wait_bucket(entered_at, left_at) AS bucket,
            floor(extract(epoch FROM (entered_at AT TIME ZONE 'UTC')::time)
                  / 1800)::int AS slot,
            1 AS visits,
            1 * (left_at IS NULL)::int AS waiting,
            1 * (outcome = 'completed')::int AS completed,
            1 * (outcome = 'rejected')::int AS rejected,
            1 * (outcome = 'sent_back')::int AS sent_back,
            1 * (left_at IS NOT NULL AND due_at IS NOT NULL
                      AND left_at > due_at)::int AS breached,
            1 * escalated::int AS escalated,
            1 * (entry = 1)::int AS firsts
        FROM new_rows) c
              GROUP BY tenant_id, template_key, step, kind, day, dims, bucket, slot HAVING sum(visits) <> 0 OR sum(waiting) <> 0 OR sum(completed) <> 0 OR sum(rejected) <> 0 OR sum(sent_back) <> 0 OR sum(breached) <> 0 OR sum(escalated) <> 0 OR sum(firsts) <> 0) g
        GROUP BY tenant_id, template_key, step, kind, day, dims
        ORDER BY tenant_id, template_key, step, kind, day, dims
        ON CONFLICT ON CONSTRAINT stepday_key DO UPDATE SET visits = r.visits + excluded.visits, waiting = r.waiting + excluded.waiting, completed = r.completed + excluded.completed, rejected = r.rejected + excluded.rejected, sent_back = r.sent_back + excluded.sent_back, breached = r.breached + excluded.breached, escalated = r.escalated + excluded.escalated,
            waits = approvals_add_arrays(r.waits, excluded.waits),
            firsts = approvals_add_arrays(r.firsts, excluded.firsts);
            END IF;
            RETURN NULL;
        END $$;""",
    """DROP TRIGGER IF EXISTS stepday_insert ON approvals_stepvisit;""",
    """CREATE TRIGGER stepday_insert AFTER INSERT ON approvals_stepvisit
            REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
            EXECUTE FUNCTION approvals_stepday_insert();""",
    """CREATE OR REPLACE FUNCTION approvals_stepday_delete() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
            PERFORM approvals_stepday_one(v, -1) FROM old_rows v WHERE (SELECT count(*) FROM old_rows) = 1;
            IF NOT FOUND THEN
                
        INSERT INTO approvals_stepday AS r (tenant_id, template_key, step, kind, day, dims, visits, waiting, completed, rejected, sent_back, breached, escalated, waits, firsts)
        SELECT tenant_id, template_key, step, kind, day, dims, sum(visits), sum(waiting), sum(completed), sum(rejected), sum(sent_back), sum(breached), sum(escalated),
            coalesce(approvals_histogram(138, bucket::int, visits::int)
                     FILTER (WHERE bucket >= 0), array_fill(0, ARRAY[138])),
            coalesce(approvals_histogram(48, slot, firsts::int)
                     FILTER (WHERE firsts <> 0), array_fill(0, ARRAY[48]))
        FROM (SELECT tenant_id, template_key, step, kind, day, dims, bucket, slot, sum(visits) AS visits, sum(waiting) AS waiting, sum(completed) AS completed, sum(rejected) AS rejected, sum(sent_back) AS sent_back, sum(breached) AS breached, sum(escalated) AS escalated, sum(firsts) AS firsts FROM (
        SELECT tenant_id, template_key, step, kind,
            (entered_at AT TIME ZONE 'UTC')::date AS day, dims,
            approvals_wait_bucket(entered_at, left_at) AS bucket,
            floor(extract(epoch FROM (entered_at AT TIME ZONE 'UTC')::time)
                  / 1800)::int AS slot,
            -1 AS visits,
            -1 * (left_at IS NULL)::int AS waiting,
            -1 * (outcome = 'completed')::int AS completed,
            -1 * (outcome = 'rejected')::int AS rejected,
            -1 * (outcome = 'sent_back')::int AS sent_back,
            -1 * (left_at IS NOT NULL AND due_at IS NOT NULL
                      AND left_at > due_at)::int AS breached,
            -1 * escalated::int AS escalated,
            -1 * (entry = 1)::int AS firsts
        FROM old_rows) c
              GROUP BY tenant_id, template_key, step, kind, day, dims, bucket, slot HAVING sum(visits) <> 0 OR sum(waiting) <> 0 OR sum(completed) <> 0 OR sum(rejected) <> 0 OR sum(sent_back) <> 0 OR sum(breached) <> 0 OR sum(escalated) <> 0 OR sum(firsts) <> 0) g
        GROUP BY tenant_id, template_key, step, kind, day, dims
        ORDER BY tenant_id, template_key, step, kind, day, dims
        ON CONFLICT ON CONSTRAINT stepday_key DO UPDATE SET visits = r.visits + excluded.visits, waiting = r.waiting + excluded.waiting, completed = r.completed + excluded.completed, rejected = r.rejected + excluded.rejected, sent_back = r.sent_back + excluded.sent_back, breached = r.breached + excluded.breached, escalated = r.escalated + excluded.escalated,
            waits = approvals_add_arrays(r.waits, excluded.waits),
            firsts = approvals_add_arrays(r.firsts, excluded.firsts);
            END IF;
            RETURN NULL;
        END $$;""",
    """DROP TRIGGER IF EXISTS stepday_delete ON approvals_stepvisit;""",
    """CREATE TRIGGER stepday_delete AFTER DELETE ON approvals_stepvisit
            REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
            EXECUTE FUNCTION approvals_stepday_delete();""",
    """CREATE OR REPLACE FUNCTION approvals_stepday_update() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
            PERFORM approvals_stepday_move(o, n) FROM old_rows o JOIN new_rows n ON n.id = o.id AND (o.tenant_id, o.template_key, o.step, o.kind, o.entered_at, o.dims) = (n.tenant_id, n.template_key, n.step, n.kind, n.entered_at, n.dims) WHERE (SELECT count(*) FROM old_rows) = 1;
            IF NOT FOUND THEN
                
        INSERT INTO approvals_stepday AS r (tenant_id, template_key, step, kind, day, dims, visits, waiting, completed, rejected, sent_back, breached, escalated, waits, firsts)
        SELECT tenant_id, template_key, step, kind, day, dims, sum(visits), sum(waiting), sum(completed), sum(rejected), sum(sent_back), sum(breached), sum(escalated),
            coalesce(approvals_histogram(138, bucket::int, visits::int)
                     FILTER (WHERE bucket >= 0), array_fill(0, ARRAY[138])),
            coalesce(approvals_histogram(48, slot, firsts::int)
                     FILTER (WHERE firsts <> 0), array_fill(0, ARRAY[48]))
        FROM (SELECT tenant_id, template_key, step, kind, day, dims, bucket, slot, sum(visits) AS visits, sum(waiting) AS waiting, sum(completed) AS completed, sum(rejected) AS rejected, sum(sent_back) AS sent_back, sum(breached) AS breached, sum(escalated) AS escalated, sum(firsts) AS firsts FROM (
        SELECT tenant_id, template_key, step, kind,
            (entered_at AT TIME ZONE 'UTC')::date AS day, dims,
            approvals_wait_bucket(entered_at, left_at) AS bucket,
            floor(extract(epoch FROM (entered_at AT TIME ZONE 'UTC')::time)
                  / 1800)::int AS slot,
            -1 AS visits,
            -1 * (left_at IS NULL)::int AS waiting,
            -1 * (outcome = 'completed')::int AS completed,
            -1 * (outcome = 'rejected')::int AS rejected,
            -1 * (outcome = 'sent_back')::int AS sent_back,
            -1 * (left_at IS NOT NULL AND due_at IS NOT NULL
                      AND left_at > due_at)::int AS breached,
            -1 * escalated::int AS escalated,
            -1 * (entry = 1)::int AS firsts
        FROM old_rows UNION ALL 
        SELECT tenant_id, template_key, step, kind,
            (entered_at AT TIME ZONE 'UTC')::date AS day, dims,
            approvals_wait_bucket(entered_at, left_at) AS bucket,
            floor(extract(epoch FROM (entered_at AT TIME ZONE 'UTC')::time)
                  / 1800)::int AS slot,
            1 AS visits,
            1 * (left_at IS NULL)::int AS waiting,
            1 * (outcome = 'completed')::int AS completed,
            1 * (outcome = 'rejected')::int AS rejected,
            1 * (outcome = 'sent_back')::int AS sent_back,
            1 * (left_at IS NOT NULL AND due_at IS NOT NULL
                      AND left_at > due_at)::int AS breached,
            1 * escalated::int AS escalated,
            1 * (entry = 1)::int AS firsts
        FROM new_rows) c
              GROUP BY tenant_id, template_key, step, kind, day, dims, bucket, slot HAVING sum(visits) <> 0 OR sum(waiting) <> 0 OR sum(completed) <> 0 OR sum(rejected) <> 0 OR sum(sent_back) <> 0 OR sum(breached) <> 0 OR sum(escalated) <> 0 OR sum(firsts) <> 0) g
        GROUP BY tenant_id, template_key, step, kind, day, dims
        ORDER BY tenant_id, template_key, step, kind, day, dims
        ON CONFLICT ON CONSTRAINT stepday_key DO UPDATE SET visits = r.visits + excluded.visits, waiting = r.waiting + excluded.waiting, completed = r.completed + excluded.completed, rejected = r.rejected + excluded.rejected, sent_back = r.sent_back + excluded.sent_back, breached = r.breached + excluded.breached, escalated = r.escalated + excluded.escalated,
            waits = approvals_add_arrays(r.waits, excluded.waits),
            firsts = approvals_add_arrays(r.firsts, excluded.firsts);
            END IF;
            RETURN NULL;
        END $$;""",
    """DROP TRIGGER IF EXISTS stepday_update ON approvals_stepvisit;""",
    """CREATE TRIGGER stepday_update AFTER UPDATE ON approvals_stepvisit
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
            EXECUTE FUNCTION approvals_stepday_update();""",
]

RECOUNT_ALL = """
        INSERT INTO approvals_stepday AS r (tenant_id, template_key, step, kind, day, dims, visits, waiting, completed, rejected, sent_back, breached, escalated, waits, firsts)
        SELECT tenant_id, template_key, step, kind, day, dims, sum(visits), sum(waiting), sum(completed), sum(rejected), sum(sent_back), sum(breached), sum(escalated),
            coalesce(approvals_histogram(138, bucket::int, visits::int)
                     FILTER (WHERE bucket >= 0), array_fill(0, ARRAY[138])),
            coalesce(approvals_histogram(48, slot, firsts::int)
                     FILTER (WHERE firsts <> 0), array_fill(0, ARRAY[48]))
        FROM (SELECT tenant_id, template_key, step, kind, day, dims, bucket, slot, sum(visits) AS visits, sum(waiting) AS waiting, sum(completed) AS completed, sum(rejected) AS rejected, sum(sent_back) AS sent_back, sum(breached) AS breached, sum(escalated) AS escalated, sum(firsts) AS firsts FROM (
        SELECT tenant_id, template_key, step, kind,
            (entered_at AT TIME ZONE 'UTC')::date AS day, dims,
            approvals_wait_bucket(entered_at, left_at) AS bucket,
            floor(extract(epoch FROM (entered_at AT TIME ZONE 'UTC')::time)
                  / 1800)::int AS slot,
            1 AS visits,
            1 * (left_at IS NULL)::int AS waiting,
            1 * (outcome = 'completed')::int AS completed,
            1 * (outcome = 'rejected')::int AS rejected,
            1 * (outcome = 'sent_back')::int AS sent_back,
            1 * (left_at IS NOT NULL AND due_at IS NOT NULL
                      AND left_at > due_at)::int AS breached,
            1 * escalated::int AS escalated,
            1 * (entry = 1)::int AS firsts
        FROM approvals_stepvisit) c
              GROUP BY tenant_id, template_key, step, kind, day, dims, bucket, slot HAVING sum(visits) <> 0 OR sum(waiting) <> 0 OR sum(completed) <> 0 OR sum(rejected) <> 0 OR sum(sent_back) <> 0 OR sum(breached) <> 0 OR sum(escalated) <> 0 OR sum(firsts) <> 0) g
        GROUP BY tenant_id, template_key, step, kind, day, dims
        ORDER BY tenant_id, template_key, step, kind, day, dims
        ON CONFLICT ON CONSTRAINT stepday_key DO UPDATE SET visits = r.visits + excluded.visits, waiting = r.waiting + excluded.waiting, completed = r.completed + excluded.completed, rejected = r.rejected + excluded.rejected, sent_back = r.sent_back + excluded.sent_back, breached = r.breached + excluded.breached, escalated = r.escalated + excluded.escalated,
            waits = approvals_add_arrays(r.waits, excluded.waits),
            firsts = approvals_add_arrays(r.firsts, excluded.firsts)"""

UNINSTALL = [
    'DROP TRIGGER IF EXISTS stepday_insert ON approvals_stepvisit;',
    'DROP TRIGGER IF EXISTS stepday_delete ON approvals_stepvisit;',
    'DROP TRIGGER IF EXISTS stepday_update ON approvals_stepvisit;',
    'DROP FUNCTION IF EXISTS approvals_stepday_insert();',
    'DROP FUNCTION IF EXISTS approvals_stepday_delete();',
    'DROP FUNCTION IF EXISTS approvals_stepday_update();',
    'DROP FUNCTION IF EXISTS approvals_stepday_move(approvals_stepvisit, approvals_stepvisit);',
    'DROP FUNCTION IF EXISTS approvals_stepday_one(approvals_stepvisit, int);',
    'DROP FUNCTION IF EXISTS approvals_stepday_add(approvals_stepvisit, int[], int, int, int, int);',
    'DROP FUNCTION IF EXISTS approvals_bump(int[], int, int);',
    'DROP AGGREGATE IF EXISTS approvals_histogram(int, int, int);',
    'DROP FUNCTION IF EXISTS approvals_histogram_add(int[], int, int, int);',
    'DROP FUNCTION IF EXISTS approvals_add_arrays(int[], int[]);',
    'DROP FUNCTION IF EXISTS approvals_wait_bucket(timestamptz, timestamptz);',
]


def install(apps: Any, schema_editor: Any) -> None:
    for sql in INSTALL:
        schema_editor.execute(sql)
    schema_editor.execute(RECOUNT_ALL)


def uninstall(apps: Any, schema_editor: Any) -> None:
    for sql in UNINSTALL:
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0032_inbox_sort")]
    operations: list[migrations.operations.base.Operation] = [
        migrations.CreateModel(
            name="StepDay",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("template_key", models.SlugField(db_index=False, max_length=64)),
                ("step", models.CharField(max_length=64)),
                ("kind", models.CharField(max_length=16)),
                ("day", models.DateField()),
                ("dims", models.JSONField(blank=True, default=dict)),
                ("visits", models.IntegerField(default=0)),
                ("waiting", models.IntegerField(default=0)),
                ("completed", models.IntegerField(default=0)),
                ("rejected", models.IntegerField(default=0)),
                ("sent_back", models.IntegerField(default=0)),
                ("breached", models.IntegerField(default=0)),
                ("escalated", models.IntegerField(default=0)),
                ("waits", ArrayField(base_field=models.IntegerField(), size=None)),
                ("firsts", ArrayField(base_field=models.IntegerField(), size=None)),
                (
                    "tenant",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        to="approvals.tenant",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["tenant", "day"], name="stepday_tenant_day"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tenant", "template_key", "step", "kind", "day", "dims"),
                        name="stepday_key",
                    )
                ],
            },
        ),
        migrations.RunPython(install, uninstall),
    ]
