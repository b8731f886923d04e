"""Irreversible admin actions ask first even without the page's script: a POST that
lacks ``confirmed=yes`` changes nothing and answers with a page that says what will
happen, "Keep it" focused, and a form that sends the same fields again, confirmed; that
form then acts. (With the script, static/confirm.js's dialog asks and sends
``confirmed=yes``.)"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from approvals.admin.confirm import KEEP
from approvals.admin.offboarding import OFFBOARD_QUESTION
from approvals.admin.operation_pages import CancelForm, ResolveForm, RetryStepForm
from approvals.admin.templates import DRAFT_PUBLISH_QUESTION
from approvals.models import User, Workflow, WorkflowEvent, WorkflowStatus, WorkflowTemplate
from tests.approvals.helpers import EXPENSE, start_expense
from tests.approvals.templates.test_four_eyes import _draft_by_fiona

pytestmark = pytest.mark.django_db

BASE = "/admin/approvals/workflowtemplate"
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def _as(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _asks_first(response: Any, question: str) -> dict[str, str]:
    """The confirmation page: the question, Keep it focused; its form's fields."""
    assert response.status_code == 200, response.content[:500]
    page = response.content.decode()
    assert question.replace("'", "&#x27;") in page
    assert re.search(rf'id="keep-it" autofocus>{KEEP}</a>', page)
    fields = dict(HIDDEN.findall(page))
    assert fields["confirmed"] == "yes"
    fields.pop("csrfmiddlewaretoken", None)
    return fields


def test_every_operation_that_cannot_be_taken_back_has_its_question() -> None:
    for form in (CancelForm, RetryStepForm, ResolveForm):
        assert form.confirm and "{what}" in form.confirm


def test_an_admin_cancel_without_confirmation_changes_nothing_and_asks_first(
    acme: Any, api: Any
) -> None:
    wid = start_expense(api("alice"), 4_500_000, subject="E-ASK").json()["workflowId"]
    olga = _as("olga")
    url = f"/admin/approvals/workflow/{wid}/operations/"
    body = {"operation": "cancel", "cancel-request_id": "admin-ask", "cancel-reason": "dup"}
    events = WorkflowEvent.objects.filter(workflow_id=wid).count()

    asked = olga.post(url, body)

    fields = _asks_first(asked, CancelForm.confirm.format(what="Expense claim E-ASK"))
    assert 'value="Cancel the request"' in asked.content.decode()
    assert Workflow.objects.get(pk=wid).status == WorkflowStatus.RUNNING
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == events
    assert {k: fields[k] for k in body} == body

    done = olga.post(url, fields)

    assert done.status_code == 302
    assert Workflow.objects.get(pk=wid).status == WorkflowStatus.CANCELLED


def test_offboarding_without_confirmation_changes_nothing_and_asks_first(acme: Any) -> None:
    olga = _as("olga")
    page = "/admin/approvals/user/offboard/"
    body = {"person": "ivan", "reason": "moved on", "confirm": "1"}

    asked = olga.post(page, body)

    fields = _asks_first(asked, OFFBOARD_QUESTION.format(name="Ivan"))
    assert User.objects.get(username="ivan").is_active
    done = olga.post(page, fields)
    assert done.status_code == 302
    assert not User.objects.get(username="ivan").is_active


@pytest.mark.parametrize("action", ["retire", "rollback"])
def test_retire_and_roll_back_without_confirmation_change_nothing_and_ask_again(
    acme: Any, action: str
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    fiona = _as("fiona")

    asked = fiona.post(f"{BASE}/{v1.pk}/{action}/")

    assert asked.status_code == 200
    page = asked.content.decode()
    assert "autofocus>Cancel: change nothing</a>" in page
    assert '<input type="hidden" name="confirmed" value="yes">' in page
    v1.refresh_from_db()
    assert v1.retired_at is None
    assert WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).count() == 1


def test_publishing_a_draft_without_confirmation_changes_nothing_and_asks_first(
    acme: Any,
) -> None:
    draft = _draft_by_fiona(acme)
    farah = _as("farah")
    url = f"{BASE}/drafts/{draft.pk}/"

    asked = farah.post(url, {"_publish": "Publish as version 2"})

    fields = _asks_first(asked, DRAFT_PUBLISH_QUESTION.format(title="Expense claim"))
    draft.refresh_from_db()
    assert draft.closed_at is None
    assert not WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE, version=2).exists()
    farah.post(url, fields)
    assert WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE, version=2).exists()
