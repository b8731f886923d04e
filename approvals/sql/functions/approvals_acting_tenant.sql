-- The organisation the transaction acts for (approvals.tenant), or NULL when none; an
-- error when the setting carries no seal of approvals_act_for for this transaction (set
-- by hand, or carried over from another). Every row-level security policy asks it once
-- per statement: (SELECT approvals_acting_tenant()). What a call costs is paid by every
-- policed table of every statement: PL/pgSQL (its plans kept for the session) calling
-- the seal's, and no SET search_path (a save and restore of the setting per call) but
-- schema-qualified names, operators included. First created by migration 0121.
CREATE OR REPLACE FUNCTION public.approvals_acting_tenant()
 RETURNS pg_catalog.int8
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
AS $function$
DECLARE
    tenant pg_catalog.text := pg_catalog.current_setting('approvals.tenant', true);
BEGIN
    IF tenant IS NULL OR tenant OPERATOR(pg_catalog.=) '' THEN
        RETURN NULL;
    END IF;
    IF (pg_catalog.current_setting('approvals.tenant_seal', true)
            OPERATOR(pg_catalog.=) public.approvals_tenant_seal(tenant)) IS NOT TRUE THEN
        RAISE EXCEPTION 'approvals.tenant was set to % without approvals_act_for in this transaction: refused', tenant
            USING ERRCODE = '42501';
    END IF;
    RETURN tenant::pg_catalog.int8;
END $function$;
