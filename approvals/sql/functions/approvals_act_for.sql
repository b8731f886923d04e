-- The transaction acts for ``tenant`` from here on: sets approvals.tenant and its seal
-- (approvals_tenant_seal). The app calls it on the login role, in the statement that
-- then switches to approvals_app (approvals/runtime/tenant_scope.py); called under
-- approvals_app it refuses, so the app role cannot act for a second organisation within
-- its transaction. Setting approvals.tenant by hand gives no seal, and every policy's
-- approvals_acting_tenant refuses it. First created by migration 0121.
CREATE OR REPLACE FUNCTION public.approvals_act_for(tenant bigint)
 RETURNS text
 LANGUAGE plpgsql
 VOLATILE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    IF current_setting('role') = 'approvals_app' THEN
        RAISE EXCEPTION 'approvals_app cannot change the organisation its transaction acts for (asked for %)', tenant
            USING ERRCODE = '42501';
    END IF;
    PERFORM set_config('approvals.tenant', coalesce(tenant::text, ''), true);
    PERFORM set_config('approvals.tenant_seal', coalesce(public.approvals_tenant_seal(tenant::text), ''), true);
    RETURN tenant::text;
END $function$;
