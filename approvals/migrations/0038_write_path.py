"""The command path's cost inside PostgreSQL (bench/write_path.py measures each part).

- The rollup's triggers count a statement's one step visit without the general
  statement's aggregates (the single-row path; the SQL is this migration's own text, as
  ``runtime.rollup`` generated it, and approvals/sql/ holds the current definitions): most of what the
  rollup cost a start or a decision. The single-row path is one query of the trigger
  (its test and its call together), an UPDATE of the key row before any INSERT, and a
  closed visit one change of its row (the counts' differences, the wait's bucket moved)
  instead of a visit taken away and one added.
- Workflows are kept at fillfactor 80: a decision rewrites its workflow's row, and
  with room on the page that is a HOT update (no new entry in the workflow's eleven
  indexes, the full-text GIN among them, whose words PostgreSQL would otherwise compute
  again) unless the status changes. New pages only: the table is not rewritten here.
  A decision's UPDATE names the status and the data only when they change
  (``runtime.commands``).
"""

from typing import Any

from django.db import migrations

FILLFACTOR = "ALTER TABLE approvals_workflow SET (fillfactor = 80)"
FILLFACTOR_BACK = "ALTER TABLE approvals_workflow RESET (fillfactor)"


TRIGGER_FUNCTIONS = [
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
]


def forward(apps: Any, schema_editor: Any) -> None:
    for sql in TRIGGER_FUNCTIONS:
        schema_editor.execute(sql)
    schema_editor.execute(FILLFACTOR)


def backward(apps: Any, schema_editor: Any) -> None:
    # the functions stay (the general path is their ELSE); the table's default back
    schema_editor.execute(FILLFACTOR_BACK)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0037_list_speed")]
    operations: list[migrations.operations.base.Operation] = [
        migrations.RunPython(forward, backward),
    ]
