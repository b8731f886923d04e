-- The rollup's key row of a visit changed by the given counts and buckets:
-- an UPDATE first, an INSERT only when the day's first visit of its key.
-- First created by migration 0038.
CREATE OR REPLACE FUNCTION public.approvals_stepday_add(v approvals_stepvisit, counts integer[], wait_from integer, wait_to integer, slot_from integer, slot_to integer)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
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
END $function$;
