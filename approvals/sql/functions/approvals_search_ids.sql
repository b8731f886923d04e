-- The ids of the acting organisation's workflows whose words match, through
-- the words' GIN index (SECURITY DEFINER; only approvals_app may call it).
-- First created by migration 0043.
CREATE OR REPLACE FUNCTION public.approvals_search_ids(words tsquery)
 RETURNS uuid[]
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE found uuid[];
BEGIN
    EXECUTE 'SELECT coalesce(array_agg(id), ''{}''::uuid[]) FROM public.approvals_workflow w WHERE w.tenant_id = $1 AND w.search_words @@ $2'
        INTO found USING public.approvals_acting_tenant(), $1;
    RETURN found;
END $function$;
