-- The deferred constraint trigger's function: approvals_inbox_flush_now at commit.
-- First created by migration 0034.
CREATE OR REPLACE FUNCTION public.approvals_inbox_flush()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM approvals_inbox_flush_now();
    RETURN NULL;
END;
$function$;
