-- Row-level security on every tenant-owned table (first created by migration 0035;
-- the events' policy estimated per statement since 0045; every policy asks the sealed
-- setting since 0060). approvals_app sees and writes the rows of the tenant its
-- transaction acts for (approvals_acting_tenant(): the setting approvals.tenant as
-- approvals_act_for sealed it, once per statement; none when unset, an error when set
-- by hand); members of approvals_system see every row; any other role, the tables'
-- owner included (FORCE), none. The tables without a tenant_id of their own answer
-- through their parent, itself under its policy (the person's groups, permissions and
-- admin log through the person); the organisations' own table by its id. Applied only
-- where the roles exist (docs/operations.md, "Row-level security").

ALTER TABLE approvals_activityattempt ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_activityattempt FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_activityattempt;
CREATE POLICY tenant_isolation ON approvals_activityattempt TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_activityattempt;
CREATE POLICY cross_tenant ON approvals_activityattempt TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_apitoken ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_apitoken FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_apitoken;
CREATE POLICY tenant_isolation ON approvals_apitoken TO approvals_app
    USING (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = approvals_apitoken.user_id))
    WITH CHECK (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = approvals_apitoken.user_id));
DROP POLICY IF EXISTS cross_tenant ON approvals_apitoken;
CREATE POLICY cross_tenant ON approvals_apitoken TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_archivedmonth ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_archivedmonth FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_archivedmonth;
CREATE POLICY tenant_isolation ON approvals_archivedmonth TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_archivedmonth;
CREATE POLICY cross_tenant ON approvals_archivedmonth TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_archivedworkflow ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_archivedworkflow FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_archivedworkflow;
CREATE POLICY tenant_isolation ON approvals_archivedworkflow TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_archivedworkflow;
CREATE POLICY cross_tenant ON approvals_archivedworkflow TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_auditoverride ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_auditoverride FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_auditoverride;
CREATE POLICY tenant_isolation ON approvals_auditoverride TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_auditoverride;
CREATE POLICY cross_tenant ON approvals_auditoverride TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_chainseal ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_chainseal FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_chainseal;
CREATE POLICY tenant_isolation ON approvals_chainseal TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_chainseal;
CREATE POLICY cross_tenant ON approvals_chainseal TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_dailyseal ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_dailyseal FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_dailyseal;
CREATE POLICY tenant_isolation ON approvals_dailyseal TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_dailyseal;
CREATE POLICY cross_tenant ON approvals_dailyseal TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_delegation ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_delegation FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_delegation;
CREATE POLICY tenant_isolation ON approvals_delegation TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_delegation;
CREATE POLICY cross_tenant ON approvals_delegation TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_department ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_department FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_department;
CREATE POLICY tenant_isolation ON approvals_department TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_department;
CREATE POLICY cross_tenant ON approvals_department TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_draft ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_draft FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_draft;
CREATE POLICY tenant_isolation ON approvals_draft TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_draft;
CREATE POLICY cross_tenant ON approvals_draft TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_draftfile ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_draftfile FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_draftfile;
CREATE POLICY tenant_isolation ON approvals_draftfile TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_draftfile;
CREATE POLICY cross_tenant ON approvals_draftfile TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_exchangerate ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_exchangerate FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_exchangerate;
CREATE POLICY tenant_isolation ON approvals_exchangerate TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_exchangerate;
CREATE POLICY cross_tenant ON approvals_exchangerate TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_helddecision ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_helddecision FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_helddecision;
CREATE POLICY tenant_isolation ON approvals_helddecision TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_helddecision;
CREATE POLICY cross_tenant ON approvals_helddecision TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_legalhold ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_legalhold FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_legalhold;
CREATE POLICY tenant_isolation ON approvals_legalhold TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_legalhold;
CREATE POLICY cross_tenant ON approvals_legalhold TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_orggroup ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_orggroup FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_orggroup;
CREATE POLICY tenant_isolation ON approvals_orggroup TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_orggroup;
CREATE POLICY cross_tenant ON approvals_orggroup TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_orggroup_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_orggroup_members FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_orggroup_members;
CREATE POLICY tenant_isolation ON approvals_orggroup_members TO approvals_app
    USING (EXISTS (SELECT 1 FROM approvals_orggroup p WHERE p.id = approvals_orggroup_members.orggroup_id))
    WITH CHECK (EXISTS (SELECT 1 FROM approvals_orggroup p WHERE p.id = approvals_orggroup_members.orggroup_id));
DROP POLICY IF EXISTS cross_tenant ON approvals_orggroup_members;
CREATE POLICY cross_tenant ON approvals_orggroup_members TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_pendingtask ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_pendingtask FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_pendingtask;
CREATE POLICY tenant_isolation ON approvals_pendingtask TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_pendingtask;
CREATE POLICY cross_tenant ON approvals_pendingtask TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_retentionpolicy ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_retentionpolicy FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_retentionpolicy;
CREATE POLICY tenant_isolation ON approvals_retentionpolicy TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_retentionpolicy;
CREATE POLICY cross_tenant ON approvals_retentionpolicy TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_sealedhead ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_sealedhead FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_sealedhead;
CREATE POLICY tenant_isolation ON approvals_sealedhead TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_sealedhead;
CREATE POLICY cross_tenant ON approvals_sealedhead TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_startrequest ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_startrequest FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_startrequest;
CREATE POLICY tenant_isolation ON approvals_startrequest TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_startrequest;
CREATE POLICY cross_tenant ON approvals_startrequest TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_startschedule ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_startschedule FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_startschedule;
CREATE POLICY tenant_isolation ON approvals_startschedule TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_startschedule;
CREATE POLICY cross_tenant ON approvals_startschedule TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_stepday ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_stepday FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_stepday;
CREATE POLICY tenant_isolation ON approvals_stepday TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_stepday;
CREATE POLICY cross_tenant ON approvals_stepday TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_stepvisit ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_stepvisit FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_stepvisit;
CREATE POLICY tenant_isolation ON approvals_stepvisit TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_stepvisit;
CREATE POLICY cross_tenant ON approvals_stepvisit TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_stepvisitretraction ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_stepvisitretraction FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_stepvisitretraction;
CREATE POLICY tenant_isolation ON approvals_stepvisitretraction TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_stepvisitretraction;
CREATE POLICY cross_tenant ON approvals_stepvisitretraction TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_tenant ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_tenant FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_tenant;
CREATE POLICY tenant_isolation ON approvals_tenant TO approvals_app
    USING (id = (SELECT approvals_acting_tenant()))
    WITH CHECK (id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_tenant;
CREATE POLICY cross_tenant ON approvals_tenant TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_timer ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_timer FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_timer;
CREATE POLICY tenant_isolation ON approvals_timer TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_timer;
CREATE POLICY cross_tenant ON approvals_timer TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_user ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_user FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_user;
CREATE POLICY tenant_isolation ON approvals_user TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_user;
CREATE POLICY cross_tenant ON approvals_user TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_user_groups ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_user_groups FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_user_groups;
CREATE POLICY tenant_isolation ON approvals_user_groups TO approvals_app
    USING (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = approvals_user_groups.user_id))
    WITH CHECK (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = approvals_user_groups.user_id));
DROP POLICY IF EXISTS cross_tenant ON approvals_user_groups;
CREATE POLICY cross_tenant ON approvals_user_groups TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_user_user_permissions ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_user_user_permissions FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_user_user_permissions;
CREATE POLICY tenant_isolation ON approvals_user_user_permissions TO approvals_app
    USING (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = approvals_user_user_permissions.user_id))
    WITH CHECK (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = approvals_user_user_permissions.user_id));
DROP POLICY IF EXISTS cross_tenant ON approvals_user_user_permissions;
CREATE POLICY cross_tenant ON approvals_user_user_permissions TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_workflow ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_workflow FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_workflow;
CREATE POLICY tenant_isolation ON approvals_workflow TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_workflow;
CREATE POLICY cross_tenant ON approvals_workflow TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_workflowevent ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_workflowevent FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_workflowevent;
CREATE POLICY tenant_isolation ON approvals_workflowevent TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_workflowevent;
CREATE POLICY cross_tenant ON approvals_workflowevent TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_workflowparticipant ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_workflowparticipant FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_workflowparticipant;
CREATE POLICY tenant_isolation ON approvals_workflowparticipant TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_workflowparticipant;
CREATE POLICY cross_tenant ON approvals_workflowparticipant TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_workflowtemplate ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_workflowtemplate FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_workflowtemplate;
CREATE POLICY tenant_isolation ON approvals_workflowtemplate TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_workflowtemplate;
CREATE POLICY cross_tenant ON approvals_workflowtemplate TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE approvals_workflowtemplatedraft ENABLE ROW LEVEL SECURITY;
ALTER TABLE approvals_workflowtemplatedraft FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON approvals_workflowtemplatedraft;
CREATE POLICY tenant_isolation ON approvals_workflowtemplatedraft TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON approvals_workflowtemplatedraft;
CREATE POLICY cross_tenant ON approvals_workflowtemplatedraft TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE django_admin_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE django_admin_log FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON django_admin_log;
CREATE POLICY tenant_isolation ON django_admin_log TO approvals_app
    USING (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = django_admin_log.user_id))
    WITH CHECK (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = django_admin_log.user_id));
DROP POLICY IF EXISTS cross_tenant ON django_admin_log;
CREATE POLICY cross_tenant ON django_admin_log TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE notifications_linkuse ENABLE ROW LEVEL SECURITY;
ALTER TABLE notifications_linkuse FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON notifications_linkuse;
CREATE POLICY tenant_isolation ON notifications_linkuse TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON notifications_linkuse;
CREATE POLICY cross_tenant ON notifications_linkuse TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE notifications_mailmessage ENABLE ROW LEVEL SECURITY;
ALTER TABLE notifications_mailmessage FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON notifications_mailmessage;
CREATE POLICY tenant_isolation ON notifications_mailmessage TO approvals_app
    USING (tenant_id = (SELECT approvals_acting_tenant()))
    WITH CHECK (tenant_id = (SELECT approvals_acting_tenant()));
DROP POLICY IF EXISTS cross_tenant ON notifications_mailmessage;
CREATE POLICY cross_tenant ON notifications_mailmessage TO approvals_system USING (true) WITH CHECK (true);

ALTER TABLE notifications_notificationpreference ENABLE ROW LEVEL SECURITY;
ALTER TABLE notifications_notificationpreference FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS tenant_isolation ON notifications_notificationpreference;
CREATE POLICY tenant_isolation ON notifications_notificationpreference TO approvals_app
    USING (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = notifications_notificationpreference.user_id))
    WITH CHECK (EXISTS (SELECT 1 FROM approvals_user p WHERE p.id = notifications_notificationpreference.user_id));
DROP POLICY IF EXISTS cross_tenant ON notifications_notificationpreference;
CREATE POLICY cross_tenant ON notifications_notificationpreference TO approvals_system USING (true) WITH CHECK (true);
