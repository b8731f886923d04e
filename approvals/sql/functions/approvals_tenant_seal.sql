-- The seal of the organisation a transaction acts for: a keyed SHA-256 of the tenant,
-- the backend and the transaction's start, with the key of approvals_tenant_key (which
-- approvals_app may not read); NULL with no tenant or no key. approvals_act_for writes
-- it beside approvals.tenant; approvals_acting_tenant checks it, once per policed table
-- and statement, so it is PL/pgSQL: the key's read is planned once per session (written
-- in SQL, a SECURITY DEFINER function is never inlined and was planned again at every
-- call). No SET search_path (saved and restored at every call): every name is
-- schema-qualified, so nothing of the caller's (a table of the same name in pg_temp, a
-- function or type of its own) takes part. Only those two (its owner's functions) call
-- it: no role may execute it. First created by migration 0121; PL/pgSQL since 0140.
CREATE OR REPLACE FUNCTION public.approvals_tenant_seal(tenant pg_catalog.text)
 RETURNS pg_catalog.text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
AS $function$
DECLARE
    k pg_catalog.text;
BEGIN
    SELECT t.key INTO k FROM public.approvals_tenant_key t;
    IF k IS NULL OR tenant IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.concat_ws(':',
        k, tenant, pg_catalog.pg_backend_pid(),
        EXTRACT(epoch FROM pg_catalog.transaction_timestamp()), k), 'UTF8')), 'hex');
END $function$;
REVOKE ALL ON FUNCTION public.approvals_tenant_seal(text) FROM PUBLIC;
