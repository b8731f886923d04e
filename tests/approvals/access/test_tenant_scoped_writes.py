"""Use-cases that write outside the command path act for their organisation (row-level
security, approvals/runtime/tenant_scope.py ``atomic_for``): every INSERT, UPDATE and
DELETE they send runs as ``approvals_app`` with ``approvals.tenant`` set to the
organisation whose rows they are, observed on the connection just before the
statement. And the timer poller's group of several organisations' timers fires each
acting for its own organisation, in one transaction.

The tests connect as a superuser, so a write on the login role would succeed here:
what they check is the role and tenant each write ran under."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from approvals import clock
from approvals.audit.retention import hold_set, retention_set
from approvals.models import ApiToken, Delegation, StartSchedule, Tenant, User, Workflow
from approvals.runtime import tenant_scope
from approvals.services.delegations import (
    delegation_change,
    delegation_delete,
    delegation_end,
    delegation_set,
)
from approvals.services.directory import (
    DirectoryEntry,
    DirectoryInvalid,
    directory_sync,
    user_deactivate,
)
from approvals.services.drafts import draft_delete, draft_save, draft_update
from approvals.services.people import user_time_zone_set
from approvals.services.schedules import schedule_plan, schedules_start_due
from approvals.services.templates import workflow_template_publish, workflow_template_retire
from approvals.services.tokens import token_issue, token_revoke, tokens_revoke_for_user
from approvals.services.workflows import workflow_start
from approvals.workers.timers import timer_drain

from ..helpers import EXPENSE, REMINDING, second_organisation

_WRITE = re.compile(r'^\s*(?:INSERT INTO|UPDATE|DELETE FROM)\s+"?(\w+)"?', re.IGNORECASE)
# Django's own bookkeeping, no organisation's rows.
_NOT_TENANTS = {"django_admin_log", "django_session"}


class Writes:
    """(table, current_user, acting tenant) of every write statement sent."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int | None]] = []

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        found = _WRITE.match(sql)
        if found and found.group(1) not in _NOT_TENANTS:
            raw = connection.connection
            assert raw is not None
            row = raw.execute(
                "SELECT current_user, NULLIF(current_setting('approvals.tenant', true), '')::bigint"
            ).fetchone()
            assert row is not None
            self.seen.append((found.group(1), row[0], row[1]))
        return execute(sql, params, many, context)

    def tables(self) -> set[str]:
        return {table for table, _, _ in self.seen}

    def acting_for(self) -> set[tuple[str, int | None]]:
        return {(user, tenant) for _, user, tenant in self.seen}

    def clear(self) -> None:
        self.seen.clear()


@pytest.fixture
def writes() -> Iterator[Writes]:
    observer = Writes()
    with connection.execute_wrapper(observer):
        yield observer


@pytest.fixture
def globex(acme: Any) -> dict[str, Any]:
    tenant, _ = second_organisation()
    gina = User.objects.get(username="gina")
    gus = User.objects.create_user("gus", password="pw", tenant=tenant)
    User.objects.filter(pk=gina.pk).update(manager=gus)
    return {"tenant": tenant, "gina": User.objects.get(pk=gina.pk), "gus": gus}


def _only(writes: Writes, tenant_id: int, *tables: str) -> None:
    assert set(tables) <= writes.tables(), writes.seen
    assert writes.acting_for() == {(tenant_scope.APP_ROLE, tenant_id)}, writes.seen
    writes.clear()


@pytest.mark.django_db
def test_publishing_and_retiring_a_template_act_for_its_organisation(globex, writes):
    tenant = globex["tenant"]
    workflow_template_publish(tenant=tenant, definition=REMINDING, published_by=globex["gina"])
    _only(writes, tenant.pk, "approvals_workflowtemplate")
    workflow_template_retire(tenant=tenant, key="reminding", retired_by=globex["gina"])
    _only(writes, tenant.pk, "approvals_workflowtemplate")
    # and the transaction is the login role's again afterwards
    assert tenant_scope.acting_tenant() is None


@pytest.mark.django_db
def test_absences_set_changed_ended_and_deleted_act_for_the_organisation(acme, writes):
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    victor = User.objects.get(username="victor")
    now = clock.now()
    later = delegation_set(
        user=alice,
        delegate=bob,
        starts_at=now + dt.timedelta(days=2),
        ends_at=now + dt.timedelta(days=3),
    )
    _only(writes, acme.pk, "approvals_delegation")
    delegation_change(
        user=alice,
        delegation_id=later.pk,
        delegate=victor,
        starts_at=later.starts_at,
        ends_at=later.ends_at,
    )
    _only(writes, acme.pk, "approvals_delegation")
    delegation_delete(user=alice, delegation_id=later.pk)
    _only(writes, acme.pk, "approvals_delegation")
    current = delegation_set(
        user=alice,
        delegate=bob,
        starts_at=now - dt.timedelta(hours=1),
        ends_at=now + dt.timedelta(days=1),
    )
    delegation_end(user=alice, delegation_id=current.pk)
    _only(writes, acme.pk, "approvals_delegation")
    assert not Delegation.objects.filter(ends_at__gt=clock.now()).exists()


@pytest.mark.django_db
def test_the_directory_sync_and_a_deactivation_act_for_the_organisation(globex, writes):
    tenant = globex["tenant"]
    entries = [
        DirectoryEntry("gina", "gina@globex.test", "Gina", "G", "gus", ("buyers",), True),
        DirectoryEntry("gus", "gus@globex.test", "Gus", "G", "", (), True),
        DirectoryEntry("gwen", "gwen@globex.test", "Gwen", "G", "gus", ("buyers",), False),
    ]
    report = directory_sync(tenant=tenant, entries=entries)
    assert report.created == ["gwen"]
    _only(writes, tenant.pk, "approvals_user", "approvals_orggroup", "approvals_orggroup_members")
    assert User.objects.get(username="gwen").tenant_id == tenant.pk
    # a user name another organisation holds is still refused by name: the check asks
    # across organisations before the sync acts for this one
    alice = DirectoryEntry("alice", "a@globex.test", "A", "A", "", (), True)
    with pytest.raises(DirectoryInvalid, match="belongs to another organisation"):
        directory_sync(tenant=tenant, entries=[*entries, alice])
    gwen = User.objects.get(username="gwen")
    User.objects.filter(pk=gwen.pk).update(is_active=True)
    writes.clear()
    user_deactivate(user=gwen, by=globex["gus"], reason="left")
    _only(writes, tenant.pk, "approvals_user")
    assert not User.objects.get(pk=gwen.pk).is_active


@pytest.mark.django_db
def test_drafts_saved_updated_and_deleted_act_for_the_authors_organisation(acme, writes):
    alice = User.objects.get(username="alice")
    data = {"amountPaise": 100_000, "currency": "INR"}
    draft = draft_save(author=alice, template_key=EXPENSE, data=data)
    _only(writes, acme.pk, "approvals_draft")
    draft_update(
        author=alice, draft_id=draft.pk, template_key=EXPENSE, subject_type="expense", data=data
    )
    _only(writes, acme.pk, "approvals_draft")
    draft_delete(author=alice, draft_id=draft.pk)
    _only(writes, acme.pk, "approvals_draft")


@pytest.mark.django_db
def test_api_tokens_issued_and_revoked_act_for_the_persons_organisation(globex, writes):
    gina, tenant = globex["gina"], globex["tenant"]
    token, _ = token_issue(user=gina, name="ci")
    _only(writes, tenant.pk, "approvals_apitoken")
    token_revoke(token=token)
    _only(writes, tenant.pk, "approvals_apitoken")
    token_issue(user=gina, name="other")
    writes.clear()
    assert tokens_revoke_for_user(user=gina) == 1
    _only(writes, tenant.pk, "approvals_apitoken")
    assert not ApiToken.objects.filter(revoked_at__isnull=True).exists()


@pytest.mark.django_db
def test_settings_retention_and_legal_holds_act_for_the_organisation(acme, writes):
    alice, olga = User.objects.get(username="alice"), User.objects.get(username="olga")
    user_time_zone_set(user=alice, time_zone="Europe/London")
    _only(writes, acme.pk, "approvals_user")
    retention_set(tenant=acme, years=9, by="olga")
    _only(writes, acme.pk, "approvals_retentionpolicy")
    hold_set(by=olga, reason="litigation")
    hold_set(by=User.objects.get(username="audrey"), reason="audit", release=True)
    _only(writes, acme.pk, "approvals_legalhold")


@pytest.mark.django_db
def test_an_organisation_admins_time_zone_in_the_admin_acts_for_her_organisation(acme, writes):
    client = Client()
    client.force_login(User.objects.get(username="olga"))
    writes.clear()  # signing in (last_login, the sign-in log) is nobody's organisation's yet
    url = f"/admin/approvals/tenant/{acme.pk}/change/"
    response = client.post(url, {"time_zone": "Asia/Tokyo", "outbound_hosts": ""})
    assert response.status_code == 302, response.content[:2000]
    assert Tenant.objects.get(pk=acme.pk).time_zone == "Asia/Tokyo"
    _only(writes, acme.pk, "approvals_tenant")


@pytest.mark.django_db
def test_a_scheduled_start_acts_for_the_schedules_organisation(globex, writes):
    tenant, gina = globex["tenant"], globex["gina"]
    workflow_template_publish(tenant=tenant, definition=REMINDING)
    schedule = StartSchedule(
        tenant=tenant,
        name="weekly",
        template_key="reminding",
        subject_type="check",
        subject_id="{due}",
        submitter=gina,
        owner=gina,
        cron="0 9 * * 1",
        timezone="UTC",
    )
    schedule_plan(schedule=schedule, now=clock.now() - dt.timedelta(days=8))
    schedule.save()
    writes.clear()
    (run,) = schedules_start_due()
    assert run.workflow_id is not None and run.error == ""
    _only(writes, tenant.pk, "approvals_startschedule", "approvals_startrequest")


@pytest.mark.django_db(transaction=True)
def test_a_timer_group_of_two_organisations_fires_each_acting_for_its_own(globex, caplog):
    """The real pipelined transaction (no test transaction around it): a trigger notes
    the role and tenant of each workflow row the group writes."""
    tenant, gina = globex["tenant"], globex["gina"]
    acme = User.objects.get(username="alice").tenant
    workflow_template_publish(tenant=tenant, definition=REMINDING)
    workflow_template_publish(tenant=acme, definition=REMINDING)
    started = [
        workflow_start(
            submitter=who, template_key="reminding", subject_type="t", subject_id=str(i), data={}
        ).workflow_id
        for i, who in enumerate([gina, User.objects.get(username="alice"), gina])
    ]
    with connection.cursor() as cursor:
        cursor.execute(_NOTE_SQL)
    try:
        with clock.shifted(dt.timedelta(hours=1, seconds=1)):
            assert timer_drain(group=10) == 3
        with connection.cursor() as cursor:
            cursor.execute("SELECT workflow, who, acting, tenant FROM rls_probe_writes")
            noted = cursor.fetchall()
    finally:
        with connection.cursor() as cursor:
            cursor.execute(_UNNOTE_SQL)
    assert "failed together" not in caplog.text  # one group, not one by one
    by_workflow = {str(w): (who, acting, t) for w, who, acting, t in noted}
    tenants = dict(Workflow.objects.filter(pk__in=started).values_list("pk", "tenant_id"))
    assert {tenants[w] for w in started} == {tenant.pk, acme.pk}
    for wid in started:
        assert by_workflow[str(wid)] == (tenant_scope.APP_ROLE, str(tenants[wid]), tenants[wid])
        assert Workflow.objects.get(pk=wid).version == 4  # started (2), fired, reminded
    assert tenant_scope.acting_tenant() is None


_NOTE_SQL = """
CREATE TABLE rls_probe_writes (workflow uuid, who text, acting text, tenant bigint);
GRANT INSERT ON rls_probe_writes TO approvals_app;
CREATE FUNCTION rls_probe_note() RETURNS trigger AS $$
BEGIN
    INSERT INTO rls_probe_writes VALUES
        (NEW.id, current_user, current_setting('approvals.tenant', true), NEW.tenant_id);
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER rls_probe_note AFTER UPDATE ON approvals_workflow
    FOR EACH ROW EXECUTE FUNCTION rls_probe_note();
"""
_UNNOTE_SQL = """
DROP TRIGGER IF EXISTS rls_probe_note ON approvals_workflow;
DROP FUNCTION IF EXISTS rls_probe_note();
DROP TABLE IF EXISTS rls_probe_writes;
"""
