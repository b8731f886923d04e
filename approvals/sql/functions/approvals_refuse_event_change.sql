-- Refuses UPDATE, DELETE and TRUNCATE of workflow events (TRUNCATE allowed where
-- approvals.allow_truncate = on: throw-away test databases).
-- First created by migration 0002.
CREATE OR REPLACE FUNCTION public.approvals_refuse_event_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    -- Only a database set up for throw-away test runs may be emptied.
    IF TG_OP = 'TRUNCATE'
       AND current_setting('approvals.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'workflow events are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$function$;
