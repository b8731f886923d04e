-- Notes each assignee of a DELETE's tasks with how many they lost.
-- First created by migration 0034, 0037.
CREATE OR REPLACE FUNCTION public.approvals_inbox_tasks_old()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM approvals_inbox_note_counts((
        SELECT string_agg(assignee_id || ':' || -n, ',')
        FROM (SELECT assignee_id, count(*) AS n FROM old_rows GROUP BY 1) c
    ));
    RETURN NULL;
END;
$function$;
