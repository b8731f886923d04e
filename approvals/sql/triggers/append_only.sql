-- Append-only tables: each refuses UPDATE and DELETE row by row and TRUNCATE by
-- statement (TRUNCATE allowed where approvals.allow_truncate = on). The events' two sit
-- on the partitioned parent; PostgreSQL puts them on every partition.
-- First created by migrations 0002 (events), 0006 (chain seals), 0021 (overrides),
-- 0029 (events, partitioned), 0030 (legal holds), 0036 (daily seals).

DROP TRIGGER IF EXISTS approvals_auditoverride_append_only ON approvals_auditoverride;
CREATE TRIGGER approvals_auditoverride_append_only BEFORE DELETE OR UPDATE ON public.approvals_auditoverride FOR EACH ROW EXECUTE FUNCTION approvals_refuse_override_change();

DROP TRIGGER IF EXISTS approvals_auditoverride_no_truncate ON approvals_auditoverride;
CREATE TRIGGER approvals_auditoverride_no_truncate BEFORE TRUNCATE ON public.approvals_auditoverride FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_override_change();

DROP TRIGGER IF EXISTS approvals_chainseal_append_only ON approvals_chainseal;
CREATE TRIGGER approvals_chainseal_append_only BEFORE DELETE OR UPDATE ON public.approvals_chainseal FOR EACH ROW EXECUTE FUNCTION approvals_refuse_seal_change();

DROP TRIGGER IF EXISTS approvals_chainseal_no_truncate ON approvals_chainseal;
CREATE TRIGGER approvals_chainseal_no_truncate BEFORE TRUNCATE ON public.approvals_chainseal FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_seal_change();

DROP TRIGGER IF EXISTS approvals_dailyseal_append_only ON approvals_dailyseal;
CREATE TRIGGER approvals_dailyseal_append_only BEFORE DELETE OR UPDATE ON public.approvals_dailyseal FOR EACH ROW EXECUTE FUNCTION approvals_refuse_seal_change();

DROP TRIGGER IF EXISTS approvals_dailyseal_no_truncate ON approvals_dailyseal;
CREATE TRIGGER approvals_dailyseal_no_truncate BEFORE TRUNCATE ON public.approvals_dailyseal FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_seal_change();

DROP TRIGGER IF EXISTS approvals_legalhold_append_only ON approvals_legalhold;
CREATE TRIGGER approvals_legalhold_append_only BEFORE DELETE OR UPDATE ON public.approvals_legalhold FOR EACH ROW EXECUTE FUNCTION approvals_refuse_hold_change();

DROP TRIGGER IF EXISTS approvals_legalhold_no_truncate ON approvals_legalhold;
CREATE TRIGGER approvals_legalhold_no_truncate BEFORE TRUNCATE ON public.approvals_legalhold FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_hold_change();

DROP TRIGGER IF EXISTS approvals_workflowevent_append_only ON approvals_workflowevent;
CREATE TRIGGER approvals_workflowevent_append_only BEFORE DELETE OR UPDATE ON public.approvals_workflowevent FOR EACH ROW EXECUTE FUNCTION approvals_refuse_event_change();

DROP TRIGGER IF EXISTS approvals_workflowevent_no_truncate ON approvals_workflowevent;
CREATE TRIGGER approvals_workflowevent_no_truncate BEFORE TRUNCATE ON public.approvals_workflowevent FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_event_change();
