-- Notes each person's change in open tasks ("12:+3") in the same setting.
-- First created by migration 0037.
CREATE OR REPLACE FUNCTION public.approvals_inbox_note_counts(counts text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF counts IS NULL OR counts = '' THEN
        RETURN;
    END IF;
    PERFORM set_config(
        'approvals.inbox_dirty',
        coalesce(current_setting('approvals.inbox_dirty', true), '') || ',' || counts,
        true
    );
END;
$function$;
