-- Two histograms of the analytics rollup added bucket by bucket.
-- First created by migration 0033.
CREATE OR REPLACE FUNCTION public.approvals_add_arrays(a integer[], b integer[])
 RETURNS integer[]
 LANGUAGE sql
 IMMUTABLE
AS $function$
    SELECT array_agg(x + y ORDER BY i) FROM unnest(a, b) WITH ORDINALITY u(x, y, i)
$function$;
