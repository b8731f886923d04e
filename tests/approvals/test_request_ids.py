"""Request ids: a client's cannot collide with the ones the app records for itself."""

from __future__ import annotations

import pytest
from django.db import connection

from approvals.models import ActivityAttempt, Workflow
from approvals.services.workflows import workflow_start
from approvals.workers.activities import attempt_run

from .helpers import decide, start_expense

pytestmark = pytest.mark.django_db


def test_an_id_of_the_apps_own_form_is_refused(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]

    response = decide(api("bob"), wid, "approve", "#attempt:1")

    assert response.status_code == 400
    assert "requestId" in response.json()["error"]["message"]
    assert Workflow.objects.get(pk=wid).public_status == "PENDING_MANAGER"


def _next_attempt_id() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT last_value, is_called FROM approvals_activityattempt_id_seq")
        last, called = cursor.fetchone()
    return last + 1 if called else last


def test_an_approver_cannot_swallow_an_activity_outcome_with_a_lookalike_id(acme, api):
    # given a purchase whose manager approval schedules the budget reservation
    alice = acme.users.get(username="alice")
    started = workflow_start(
        submitter=alice,
        template_key="purchase-request",
        subject_type="po",
        subject_id="PO-9",
        data={"amountPaise": 500_000, "currency": "INR", "category": "SOFTWARE", "item": "x"},
    )
    wid = started.workflow_id
    upcoming = _next_attempt_id()

    # when bob approves under an id shaped like that attempt's outcome
    assert decide(api("bob"), wid, "approve", f"attempt:{upcoming}").status_code == 200
    attempt = ActivityAttempt.objects.get(workflow_id=wid)
    assert attempt.pk == upcoming

    # then the outcome is still recorded and the workflow moves on
    attempt_run(attempt_id=attempt.pk)
    assert Workflow.objects.get(pk=wid).public_status == "PENDING_FINANCE"
