-- The organisation the transaction acts for (approvals.tenant), or NULL when none; an
-- error when the setting carries no seal of approvals_act_for for this transaction (set
-- by hand, or carried over from another). Every row-level security policy asks it once
-- per statement: (SELECT approvals_acting_tenant()). First created by migration 0121.
CREATE OR REPLACE FUNCTION public.approvals_acting_tenant()
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    tenant text := NULLIF(current_setting('approvals.tenant', true), '');
BEGIN
    IF tenant IS NULL THEN
        RETURN NULL;
    END IF;
    IF current_setting('approvals.tenant_seal', true) IS DISTINCT FROM public.approvals_tenant_seal(tenant) THEN
        RAISE EXCEPTION 'approvals.tenant was set to % without approvals_act_for in this transaction: refused', tenant
            USING ERRCODE = '42501';
    END IF;
    RETURN tenant::bigint;
END $function$;
