-- Notes people whose inbox changed in a transaction-local setting (no lock taken).
-- First created by migration 0034.
CREATE OR REPLACE FUNCTION public.approvals_inbox_note(people bigint[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF people IS NULL OR cardinality(people) = 0 THEN
        RETURN;
    END IF;
    PERFORM set_config(
        'approvals.inbox_dirty',
        coalesce(current_setting('approvals.inbox_dirty', true), '') || ','
            || array_to_string(people, ','),
        true
    );
END;
$function$;
