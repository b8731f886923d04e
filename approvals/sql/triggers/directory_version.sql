-- The directory's version bumped by any statement that changes people, groups,
-- memberships, delegations or mail preferences. First created by migration 0013.

DROP TRIGGER IF EXISTS approvals_delegation_directory_changed ON approvals_delegation;
CREATE TRIGGER approvals_delegation_directory_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.approvals_delegation FOR EACH STATEMENT EXECUTE FUNCTION approvals_directory_changed();

DROP TRIGGER IF EXISTS approvals_orggroup_directory_changed ON approvals_orggroup;
CREATE TRIGGER approvals_orggroup_directory_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.approvals_orggroup FOR EACH STATEMENT EXECUTE FUNCTION approvals_directory_changed();

DROP TRIGGER IF EXISTS approvals_orggroup_members_directory_changed ON approvals_orggroup_members;
CREATE TRIGGER approvals_orggroup_members_directory_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.approvals_orggroup_members FOR EACH STATEMENT EXECUTE FUNCTION approvals_directory_changed();

DROP TRIGGER IF EXISTS approvals_user_directory_changed ON approvals_user;
CREATE TRIGGER approvals_user_directory_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.approvals_user FOR EACH STATEMENT EXECUTE FUNCTION approvals_directory_changed();

DROP TRIGGER IF EXISTS notifications_notificationpreference_directory_changed ON notifications_notificationpreference;
CREATE TRIGGER notifications_notificationpreference_directory_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.notifications_notificationpreference FOR EACH STATEMENT EXECUTE FUNCTION approvals_directory_changed();
