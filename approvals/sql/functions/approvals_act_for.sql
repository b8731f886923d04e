-- The transaction acts for ``tenant`` from here on: sets approvals.tenant and its seal
-- (approvals_tenant_seal). The app calls it on the login role, in the statement that
-- then switches to approvals_app (approvals/runtime/tenant_scope.py); called under
-- approvals_app it refuses, so the app role cannot act for a second organisation within
-- its transaction. Setting approvals.tenant by hand gives no seal, and every policy's
-- approvals_acting_tenant refuses it. Once per command: no SET search_path (a setting
-- saved and restored per call) but schema-qualified names, operators included, and
-- the settings set in PL/pgSQL expressions, not queries. First created by migration
-- 0121; without SET search_path since 0240.
CREATE OR REPLACE FUNCTION public.approvals_act_for(tenant pg_catalog.int8)
 RETURNS pg_catalog.text
 LANGUAGE plpgsql
 VOLATILE SECURITY DEFINER
AS $function$
DECLARE
    done pg_catalog.text;
BEGIN
    IF pg_catalog.current_setting('role') OPERATOR(pg_catalog.=) 'approvals_app' THEN
        RAISE EXCEPTION 'approvals_app cannot change the organisation its transaction acts for (asked for %)', tenant
            USING ERRCODE = '42501';
    END IF;
    done := pg_catalog.set_config('approvals.tenant',
        COALESCE(tenant::pg_catalog.text, ''), true);
    done := pg_catalog.set_config('approvals.tenant_seal',
        COALESCE(public.approvals_tenant_seal(tenant::pg_catalog.text), ''), true);
    RETURN tenant::pg_catalog.text;
END $function$;
