-- Refuses UPDATE, DELETE and TRUNCATE of audit overrides (as for events).
-- First created by migration 0021.
CREATE OR REPLACE FUNCTION public.approvals_refuse_override_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('approvals.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'audit overrides are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$function$;
