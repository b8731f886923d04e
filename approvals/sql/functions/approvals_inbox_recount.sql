-- Counts everyone's open tasks again, after a load that skipped the triggers
-- (run as the tables' owner: row-level security would show one organisation).
-- First created by migration 0037.
CREATE OR REPLACE FUNCTION public.approvals_inbox_recount()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    LOCK TABLE approvals_pendingtask IN SHARE MODE;
    UPDATE approvals_inboxversion v SET version = version + 1, open_tasks = 0
    WHERE open_tasks <> 0
      AND NOT EXISTS (SELECT 1 FROM approvals_pendingtask t WHERE t.assignee_id = v.person_id);
    INSERT INTO approvals_inboxversion AS v (person_id, version, open_tasks)
    SELECT assignee_id, 1, count(*) FROM approvals_pendingtask GROUP BY 1 ORDER BY 1
    ON CONFLICT (person_id) DO UPDATE
        SET version = v.version + 1, open_tasks = excluded.open_tasks
        WHERE v.open_tasks <> excluded.open_tasks;
END;
$function$;
