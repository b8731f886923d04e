-- Each person's inbox version and open-task count (approvals_inboxversion): the
-- statement triggers on the tasks and the delegations note who changed, and one
-- deferred constraint trigger bumps them all at commit. A command's transaction counts
-- its own task writes in the statement that writes them (approvals/runtime/store.py,
-- inbox_counted) and says so in approvals.inbox_counted: the task triggers skip it.
-- First created by migration 0034, 0250.

DROP TRIGGER IF EXISTS approvals_inbox_delegation_delete ON approvals_delegation;
CREATE TRIGGER approvals_inbox_delegation_delete AFTER DELETE ON public.approvals_delegation REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_delegations_old();

DROP TRIGGER IF EXISTS approvals_inbox_delegation_flush ON approvals_delegation;
CREATE CONSTRAINT TRIGGER approvals_inbox_delegation_flush AFTER INSERT OR DELETE OR UPDATE ON public.approvals_delegation DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION approvals_inbox_flush();

DROP TRIGGER IF EXISTS approvals_inbox_delegation_insert ON approvals_delegation;
CREATE TRIGGER approvals_inbox_delegation_insert AFTER INSERT ON public.approvals_delegation REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_delegations_new();

DROP TRIGGER IF EXISTS approvals_inbox_delegation_truncate ON approvals_delegation;
CREATE TRIGGER approvals_inbox_delegation_truncate AFTER TRUNCATE ON public.approvals_delegation FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_all_changed();

DROP TRIGGER IF EXISTS approvals_inbox_delegation_update ON approvals_delegation;
CREATE TRIGGER approvals_inbox_delegation_update AFTER UPDATE ON public.approvals_delegation REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_delegations_changed();

DROP TRIGGER IF EXISTS approvals_inbox_task_delete ON approvals_pendingtask;
CREATE TRIGGER approvals_inbox_task_delete AFTER DELETE ON public.approvals_pendingtask REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT WHEN ((current_setting('approvals.inbox_counted'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION approvals_inbox_tasks_old();

DROP TRIGGER IF EXISTS approvals_inbox_task_flush ON approvals_pendingtask;
CREATE CONSTRAINT TRIGGER approvals_inbox_task_flush AFTER INSERT OR DELETE OR UPDATE ON public.approvals_pendingtask DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((current_setting('approvals.inbox_counted'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION approvals_inbox_flush();

DROP TRIGGER IF EXISTS approvals_inbox_task_insert ON approvals_pendingtask;
CREATE TRIGGER approvals_inbox_task_insert AFTER INSERT ON public.approvals_pendingtask REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT WHEN ((current_setting('approvals.inbox_counted'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION approvals_inbox_tasks_new();

DROP TRIGGER IF EXISTS approvals_inbox_task_truncate ON approvals_pendingtask;
CREATE TRIGGER approvals_inbox_task_truncate AFTER TRUNCATE ON public.approvals_pendingtask FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_all_changed();

DROP TRIGGER IF EXISTS approvals_inbox_task_update ON approvals_pendingtask;
CREATE TRIGGER approvals_inbox_task_update AFTER UPDATE ON public.approvals_pendingtask REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT WHEN ((current_setting('approvals.inbox_counted'::text, true) IS DISTINCT FROM 'on'::text)) EXECUTE FUNCTION approvals_inbox_tasks_changed();

DROP TRIGGER IF EXISTS approvals_inbox_workflow_words ON approvals_workflow;
CREATE CONSTRAINT TRIGGER approvals_inbox_workflow_words AFTER UPDATE ON public.approvals_workflow DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((old.summary IS DISTINCT FROM new.summary) OR (old.amount_display IS DISTINCT FROM new.amount_display))) EXECUTE FUNCTION approvals_inbox_workflow_words();
