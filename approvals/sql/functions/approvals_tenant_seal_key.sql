-- The key of the tenant's seal (approvals_tenant_key, one row written once by migration
-- 0121), as the bytes the seal hashes. Declared IMMUTABLE so that PostgreSQL evaluates
-- it when it plans the expression of approvals_tenant_seal or approvals_acting_tenant
-- that calls it, and keeps the key in that plan, which PL/pgSQL keeps for the session:
-- the key is read once per session and function, not once per policed table and
-- statement. A key changed in the table therefore holds for sessions opened afterwards
-- (reconnect the app after changing it). SECURITY DEFINER, and no role may execute it
-- (approvals_app may not read the key): only its owner's two functions plan it. First
-- created by migration 0240.
CREATE OR REPLACE FUNCTION public.approvals_tenant_seal_key()
 RETURNS pg_catalog.bytea
 LANGUAGE sql
 IMMUTABLE SECURITY DEFINER
AS $function$
    SELECT pg_catalog.textsend(k.key) FROM public.approvals_tenant_key k
$function$;
REVOKE ALL ON FUNCTION public.approvals_tenant_seal_key() FROM PUBLIC;
