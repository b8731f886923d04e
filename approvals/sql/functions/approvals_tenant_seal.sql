-- The seal of the organisation a transaction acts for: a keyed SHA-256 of the tenant,
-- the backend and the transaction's start, with the key of approvals_tenant_key (which
-- approvals_app may not read). approvals_act_for writes it beside approvals.tenant;
-- approvals_acting_tenant checks it. Only those two (its owner's functions) call it:
-- no role may execute it. First created by migration 0121.
CREATE OR REPLACE FUNCTION public.approvals_tenant_seal(tenant text)
 RETURNS text
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
    SELECT encode(sha256(convert_to(k.key || ':' || tenant || ':' || pg_backend_pid()::text
        || ':' || extract(epoch FROM transaction_timestamp())::text || ':' || k.key, 'UTF8')), 'hex')
    FROM public.approvals_tenant_key k
$function$;
REVOKE ALL ON FUNCTION public.approvals_tenant_seal(text) FROM PUBLIC;
