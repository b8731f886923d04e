"""One deactivation must not stop an operator's commands: the system check reads the
database only when a command asks for it, and a workflow template naming a person who
can no longer act is a warning, listed on the organisation admin's attention page."""

from __future__ import annotations

import html
from io import StringIO

from django.core.management import call_command
from django.test import Client

from approvals import access
from approvals.checks import check_workflow_templates
from approvals.models import Tenant, User


def _deactivate_victor() -> User:
    # The expense workflow template names victor as the VP step's approver.
    User.objects.filter(username="victor").update(is_active=False)
    return User.objects.get(username="victor")


def test_the_template_check_reads_the_database_only_when_asked(acme: Tenant) -> None:
    _deactivate_victor()

    assert check_workflow_templates(databases=None) == []
    assert check_workflow_templates(databases=["other"]) == []
    assert [m.id for m in check_workflow_templates(databases=["default"])] == ["approvals.W002"]


def test_a_deactivated_approver_is_a_warning_that_stops_no_command(acme: Tenant) -> None:
    victor = _deactivate_victor()
    out, err = StringIO(), StringIO()

    call_command("check", stdout=out, stderr=err)
    call_command("check", "--database", "default", stdout=out, stderr=err)

    text = out.getvalue() + err.getvalue()
    assert "approvals.W002" in text
    assert "approvals.E002" not in text
    reason = access.task_holder_refusal(victor)
    assert reason is not None and reason in text


def test_a_template_naming_a_deactivated_approver_is_on_the_attention_page(acme: Tenant) -> None:
    victor = _deactivate_victor()
    client = Client()
    client.force_login(User.objects.get(username="olga"))

    page = client.get("/admin/approvals/workflow/attention/").content.decode()

    assert "name someone who cannot act" in page
    reason = access.task_holder_refusal(victor)
    assert reason is not None and html.escape(reason) in page
