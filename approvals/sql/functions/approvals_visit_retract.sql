-- Row trigger on a counted step visit changed or deleted: the visit as the rollup
-- counted it kept as a retraction for the periodic fold to take off, and a changed
-- visit marked uncounted (the fold adds it again as it now reads). Only appends: no
-- rollup row is written on the command path. First created by migration 0150.
CREATE OR REPLACE FUNCTION public.approvals_visit_retract()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    INSERT INTO approvals_stepvisitretraction (tenant_id, template_key, entry, step, kind, entered_at, left_at, due_at, outcome, escalated, dims)
    VALUES (OLD.tenant_id, OLD.template_key, OLD.entry, OLD.step, OLD.kind, OLD.entered_at, OLD.left_at, OLD.due_at, OLD.outcome, OLD.escalated, OLD.dims);
    IF TG_OP = 'UPDATE' THEN
        NEW.counted := false;
        RETURN NEW;
    END IF;
    RETURN NULL;
END $function$;
