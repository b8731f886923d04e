-- The state function of the aggregate approvals_histogram.
-- First created by migration 0033.
CREATE OR REPLACE FUNCTION public.approvals_histogram_add(state integer[], size integer, i integer, n integer)
 RETURNS integer[]
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT s[:i] || (s[i + 1] + n) || s[i + 2:]
    FROM (SELECT coalesce(state, array_fill(0, ARRAY[size])) AS s) z
$function$;
