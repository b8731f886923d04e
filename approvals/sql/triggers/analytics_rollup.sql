-- The analytics rollup (approvals_stepday) kept by statement triggers on the step
-- visits, with transition tables. First created by migration 0033.

DROP TRIGGER IF EXISTS stepday_delete ON approvals_stepvisit;
CREATE TRIGGER stepday_delete AFTER DELETE ON public.approvals_stepvisit REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_stepday_delete();

DROP TRIGGER IF EXISTS stepday_insert ON approvals_stepvisit;
CREATE TRIGGER stepday_insert AFTER INSERT ON public.approvals_stepvisit REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_stepday_insert();

DROP TRIGGER IF EXISTS stepday_update ON approvals_stepvisit;
CREATE TRIGGER stepday_update AFTER UPDATE ON public.approvals_stepvisit REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_stepday_update();
