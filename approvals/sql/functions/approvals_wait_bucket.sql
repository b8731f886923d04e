-- A visit's wait as its rollup histogram bucket (-1 while open; 0 under a
-- minute; log-scale buckets to a year; the last one a year or more).
-- First created by migration 0033.
CREATE OR REPLACE FUNCTION public.approvals_wait_bucket(entered timestamp with time zone, left_at timestamp with time zone)
 RETURNS smallint
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT CASE
        WHEN left_at IS NULL THEN -1
        WHEN extract(epoch FROM left_at - entered) < 60.0 THEN 0
        WHEN extract(epoch FROM left_at - entered) >= 31536000.0 THEN 137
        ELSE least(136, 1 + floor(
            ln(extract(epoch FROM left_at - entered)::float8 / 60.0) / ln(1.1017007430050751)))
    END::smallint
$function$;
