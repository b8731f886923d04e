-- Notes each assignee of an UPDATE's tasks with their change in open tasks
-- (a hand-over moves one from a person to another).
-- First created by migration 0034, 0037.
CREATE OR REPLACE FUNCTION public.approvals_inbox_tasks_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM approvals_inbox_note_counts((
        SELECT string_agg(assignee_id || ':' || n, ',')
        FROM (SELECT assignee_id, sum(d) AS n FROM (
                  SELECT assignee_id, -1 AS d FROM old_rows
                  UNION ALL SELECT assignee_id, 1 FROM new_rows) u
              GROUP BY 1) c
    ));
    RETURN NULL;
END;
$function$;
