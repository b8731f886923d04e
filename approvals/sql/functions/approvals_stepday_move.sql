-- A closed visit (its key unchanged) as one change of its rollup row.
-- First created by migration 0038.
CREATE OR REPLACE FUNCTION public.approvals_stepday_move(o approvals_stepvisit, v approvals_stepvisit)
 RETURNS void
 LANGUAGE sql
AS $function$
    SELECT approvals_stepday_add(v,
        ARRAY[1 - 1, (v.left_at IS NULL)::int - (o.left_at IS NULL)::int, (v.outcome = 'completed')::int - (o.outcome = 'completed')::int, (v.outcome = 'rejected')::int - (o.outcome = 'rejected')::int, (v.outcome = 'sent_back')::int - (o.outcome = 'sent_back')::int, (v.left_at IS NOT NULL AND v.due_at IS NOT NULL AND v.left_at > v.due_at)::int - (o.left_at IS NOT NULL AND o.due_at IS NOT NULL AND o.left_at > o.due_at)::int, v.escalated::int - o.escalated::int],
        nullif(approvals_wait_bucket(o.entered_at, o.left_at) + 1, 0), nullif(approvals_wait_bucket(v.entered_at, v.left_at) + 1, 0),
        CASE WHEN CASE WHEN o.entry = 1 THEN 1 + floor(extract(epoch FROM (o.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END IS DISTINCT FROM CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END THEN CASE WHEN o.entry = 1 THEN 1 + floor(extract(epoch FROM (o.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END END,
        CASE WHEN CASE WHEN o.entry = 1 THEN 1 + floor(extract(epoch FROM (o.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END IS DISTINCT FROM CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END THEN CASE WHEN v.entry = 1 THEN 1 + floor(extract(epoch FROM (v.entered_at AT TIME ZONE 'UTC')::time) / 1800)::int END END)
$function$;
