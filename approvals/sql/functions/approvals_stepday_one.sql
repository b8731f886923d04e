-- One visit added to (sign 1) or taken off (sign -1) the rollup.
-- First created by migration 0038.
CREATE OR REPLACE FUNCTION public.approvals_stepday_one(v approvals_stepvisit, sign integer)
 RETURNS void
 LANGUAGE sql
AS $function$
    SELECT approvals_stepday_add(v,
        ARRAY[sign * 1, sign * (v.left_at IS NULL)::int, sign * (v.outcome = 'completed')::int, sign * (v.outcome = 'rejected')::int, sign * (v.outcome = 'sent_back')::int, sign * (v.left_at IS NOT NULL AND v.due_at IS NOT NULL AND v.left_at > v.due_at)::int, sign * v.escalated::int],
        CASE WHEN sign < 0 THEN nullif(approvals_wait_bucket(v.entered_at, v.left_at) + 1, 0) END, CASE WHEN sign > 0 THEN nullif(approvals_wait_bucket(v.entered_at, v.left_at) + 1, 0) END,
        CASE WHEN sign < 0 THEN CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END END, CASE WHEN sign > 0 THEN CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END END)
$function$;
