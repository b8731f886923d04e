-- The analytics rollup (approvals_stepday) is folded from the step visits by a
-- periodic job (runtime/rollup.py, rollup_fold). A new visit is written uncounted;
-- these row triggers fire only for a visit already counted: they keep what was
-- counted as a retraction and mark a changed visit uncounted. Statement triggers
-- that upserted the rollup rows first created by migration 0033; these by 0150.

DROP TRIGGER IF EXISTS stepvisit_retract_delete ON approvals_stepvisit;
CREATE TRIGGER stepvisit_retract_delete AFTER DELETE ON public.approvals_stepvisit FOR EACH ROW WHEN (old.counted) EXECUTE FUNCTION approvals_visit_retract();

DROP TRIGGER IF EXISTS stepvisit_retract_update ON approvals_stepvisit;
CREATE TRIGGER stepvisit_retract_update BEFORE UPDATE ON public.approvals_stepvisit FOR EACH ROW WHEN (old.counted) EXECUTE FUNCTION approvals_visit_retract();
