-- Refuses UPDATE, DELETE and TRUNCATE of chain seals and daily seals (as for events).
-- First created by migration 0006.
CREATE OR REPLACE FUNCTION public.approvals_refuse_seal_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('approvals.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'chain seals are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$function$;
