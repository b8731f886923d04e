-- The ids of the acting organisation's people whose names match, through
-- the names' GIN index (SECURITY DEFINER; only approvals_app may call it).
-- First created by migration 0043.
CREATE OR REPLACE FUNCTION public.approvals_people_named(names tsquery)
 RETURNS bigint[]
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE found bigint[];
BEGIN
    EXECUTE 'SELECT coalesce(array_agg(id), ''{}''::bigint[]) FROM public.approvals_user u WHERE u.tenant_id = $1 AND to_tsvector(''simple''::regconfig, u.username || '' '' || u.first_name || '' '' || u.last_name) @@ $2'
        INTO found USING public.approvals_acting_tenant(), $1;
    RETURN found;
END $function$;
