-- Refuses UPDATE, DELETE and TRUNCATE of legal holds (as for events).
-- First created by migration 0030.
CREATE OR REPLACE FUNCTION public.approvals_refuse_hold_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('approvals.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'legal holds are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$function$;
