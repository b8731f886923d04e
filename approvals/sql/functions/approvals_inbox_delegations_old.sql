-- Notes the people of the delegations a DELETE removed.
-- First created by migration 0034.
CREATE OR REPLACE FUNCTION public.approvals_inbox_delegations_old()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT user_id FROM old_rows UNION SELECT delegate_id FROM old_rows
    ));
    RETURN NULL;
END;
$function$;
