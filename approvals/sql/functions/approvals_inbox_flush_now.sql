-- At commit: bumps every noted person's inbox version once and adds up their
-- change in open tasks, in id order, in one statement.
-- First created by migration 0034, 0037.
CREATE OR REPLACE FUNCTION public.approvals_inbox_flush_now()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    noted text := current_setting('approvals.inbox_dirty', true);
BEGIN
    IF noted IS NULL OR noted = '' THEN
        RETURN;
    END IF;
    PERFORM set_config('approvals.inbox_dirty', '', true);
    INSERT INTO approvals_inboxversion AS v (person_id, version, open_tasks)
    SELECT split_part(e, ':', 1)::bigint, 1,
           sum(coalesce(nullif(split_part(e, ':', 2), '')::bigint, 0))
    FROM unnest(string_to_array(noted, ',')) AS e
    WHERE e <> ''
    GROUP BY 1
    ORDER BY 1
    ON CONFLICT (person_id) DO UPDATE
        SET version = v.version + 1, open_tasks = v.open_tasks + excluded.open_tasks;
END;
$function$;
