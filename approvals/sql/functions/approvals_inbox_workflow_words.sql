-- A request's line or amount changed: its assignees' inbox versions bumped.
-- First created by migration 0034.
CREATE OR REPLACE FUNCTION public.approvals_inbox_workflow_words()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT assignee_id FROM approvals_pendingtask WHERE workflow_id = NEW.id
    ));
    PERFORM approvals_inbox_flush_now();
    RETURN NULL;
END;
$function$;
