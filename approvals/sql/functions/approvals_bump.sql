-- One bucket of a rollup histogram moved by n in place (the single-visit path).
-- First created by migration 0038.
CREATE OR REPLACE FUNCTION public.approvals_bump(a integer[], i integer, n integer)
 RETURNS integer[]
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
    IF i IS NOT NULL AND n <> 0 THEN
        a[i] := a[i] + n;
    END IF;
    RETURN a;
END $function$;
