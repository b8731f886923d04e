-- After a TRUNCATE of the tasks or the delegations: every inbox version bumped
-- (and every open-task count set to 0 for the tasks).
-- First created by migration 0034, 0037.
CREATE OR REPLACE FUNCTION public.approvals_inbox_all_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF TG_TABLE_NAME = 'approvals_pendingtask' THEN
        UPDATE approvals_inboxversion SET version = version + 1, open_tasks = 0;
    ELSE
        UPDATE approvals_inboxversion SET version = version + 1;
    END IF;
    RETURN NULL;
END;
$function$;
