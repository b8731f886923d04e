-- Bumps the directory's version on any change to people, groups,
-- memberships, delegations or mail preferences, whoever makes it.
-- First created by migration 0013.
CREATE OR REPLACE FUNCTION public.approvals_directory_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    UPDATE approvals_directoryversion SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END;
$function$;
