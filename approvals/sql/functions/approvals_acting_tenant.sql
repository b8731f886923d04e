-- The organisation the transaction acts for (approvals.tenant), or NULL when none; an
-- error when the setting carries no seal of approvals_act_for for this transaction (set
-- by hand, or carried over from another). Every row-level security policy asks it once
-- per statement: (SELECT approvals_acting_tenant()). What a call costs is paid by every
-- policed table of every statement, so it is one PL/pgSQL function (its plans kept for
-- the session) that computes the seal as approvals_tenant_seal does, in one expression
-- with no call of another function of its kind and no read of a table: the key is a
-- constant of that expression's plan (approvals_tenant_seal_key). No SET search_path (a
-- save and restore of the setting per call): every name is schema-qualified, operators
-- included. First created by migration 0121; one function since 0240.
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
    IF (pg_catalog.current_setting('approvals.tenant_seal', true) OPERATOR(pg_catalog.=)
            pg_catalog.encode(pg_catalog.sha256(public.approvals_tenant_seal_key()
                OPERATOR(pg_catalog.||) pg_catalog.int4send(pg_catalog.pg_backend_pid())
                OPERATOR(pg_catalog.||) pg_catalog.timestamptz_send(pg_catalog.transaction_timestamp())
                OPERATOR(pg_catalog.||) pg_catalog.textsend(tenant)
                OPERATOR(pg_catalog.||) public.approvals_tenant_seal_key()), 'hex')) IS NOT TRUE THEN
        RAISE EXCEPTION 'approvals.tenant was set to % without approvals_act_for in this transaction: refused', tenant
            USING ERRCODE = '42501';
    END IF;
    RETURN tenant::pg_catalog.int8;
END $function$;
