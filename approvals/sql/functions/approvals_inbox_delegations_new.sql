-- Notes the people of the delegations an INSERT added.
-- First created by migration 0034.
CREATE OR REPLACE FUNCTION public.approvals_inbox_delegations_new()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT user_id FROM new_rows UNION SELECT delegate_id FROM new_rows
    ));
    RETURN NULL;
END;
$function$;
