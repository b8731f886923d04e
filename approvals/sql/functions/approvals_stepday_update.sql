-- Statement trigger: the updated visits' old contributions out, new ones in.
-- First created by migration 0033, 0038.
CREATE OR REPLACE FUNCTION public.approvals_stepday_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$ BEGIN
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
        END $function$;
