-- Notes the people of the delegations an UPDATE changed (who is away, who stands in).
-- First created by migration 0034.
CREATE OR REPLACE FUNCTION public.approvals_inbox_delegations_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT user_id FROM old_rows UNION SELECT delegate_id FROM old_rows
        UNION SELECT user_id FROM new_rows UNION SELECT delegate_id FROM new_rows
    ));
    RETURN NULL;
END;
$function$;
