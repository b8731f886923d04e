-- The seal of the organisation a transaction acts for: a keyed SHA-256 of the backend,
-- the transaction's start and the tenant, with the key of approvals_tenant_key (which
-- approvals_app may not read) before and after; NULL with no tenant or no key. The
-- fields are the binary forms of the backend's pid (4 bytes), the transaction's start
-- (8 bytes), then the tenant's text, between the key's bytes at each end: no two
-- (backend, start, tenant) give the same bytes. approvals_act_for writes it beside
-- approvals.tenant; approvals_acting_tenant computes the same expression to check it.
-- PL/pgSQL, its plan kept for the session with the key in it
-- (approvals_tenant_seal_key). No SET search_path (saved and restored at every call):
-- every name is schema-qualified, operators included, so nothing of the caller's takes
-- part. Only approvals_act_for (its owner's) calls it: no role may execute it. First
-- created by migration 0121; PL/pgSQL since 0140; binary fields and the key read once
-- per session since 0240.
CREATE OR REPLACE FUNCTION public.approvals_tenant_seal(tenant pg_catalog.text)
 RETURNS pg_catalog.text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
AS $function$
BEGIN
    RETURN pg_catalog.encode(pg_catalog.sha256(public.approvals_tenant_seal_key()
        OPERATOR(pg_catalog.||) pg_catalog.int4send(pg_catalog.pg_backend_pid())
        OPERATOR(pg_catalog.||) pg_catalog.timestamptz_send(pg_catalog.transaction_timestamp())
        OPERATOR(pg_catalog.||) pg_catalog.textsend(tenant)
        OPERATOR(pg_catalog.||) public.approvals_tenant_seal_key()), 'hex');
END $function$;
REVOKE ALL ON FUNCTION public.approvals_tenant_seal(text) FROM PUBLIC;
