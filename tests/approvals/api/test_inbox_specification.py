"""The inbox item in the specification's shape: its example
``{workflowId, step: "FINANCE", subject: "Expense exp_88213, ₹45,000", dueAt: "…+05:30"}``
holds, with ``subject`` the request in one line and ``dueAt`` in the organisation's
offset; the structured subject is ``subjectRef`` and the richer fields stay beside.
(Step ids are lower case in workflow templates: the example's step reads ``finance``.)"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from rest_framework.test import APIClient

from approvals.models import Tenant, User
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start

from ..helpers import start_expense

pytestmark = pytest.mark.django_db

RS_45_000 = 4_500_000
# The specification's request: an expense of ₹45,000 waiting at a finance step.
EXPENSE = {
    "key": "expense",
    "title": "Expense",
    "schema": {
        "type": "object",
        "properties": {
            "amountPaise": {"type": "integer", "x-money": {"currency": "currency"}},
            "currency": {"type": "string"},
        },
    },
    "steps": [
        {
            "id": "finance",  # step ids are lower case here; the example's FINANCE
            "title": "Finance",
            "kind": "approval",
            "approvers": [{"user": "bob"}],
            "deadline": "P2D",
        }
    ],
}


def _organisation_zone(acme: Any, zone: str) -> None:
    Tenant.objects.filter(pk=acme.pk).update(time_zone=zone)


def _inbox(api: Any) -> list[dict[str, Any]]:
    response = api("bob").get("/api/me/tasks")
    assert response.status_code == 200, response.content
    return response.json()["items"]


def test_the_specifications_example_holds(acme, api):
    _organisation_zone(acme, "Asia/Kolkata")
    workflow_template_publish(tenant=acme, definition=EXPENSE)
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="expense",
        subject_type="expense",
        subject_id="exp_88213",
        data={"amountPaise": RS_45_000, "currency": "INR"},
    )

    (item,) = _inbox(api)

    assert item["workflowId"] == str(started.workflow_id)
    assert item["step"] == "finance"
    assert item["subject"] == "Expense exp_88213, ₹45,000"
    assert item["dueAt"].endswith("+05:30")
    # the richer fields beside the specification's
    assert item["subjectRef"] == {"type": "expense", "id": "exp_88213"}
    assert item["amount"] == "₹45,000.00"
    assert item["stepName"] == "Finance"
    assert item["summary"] == "Expense exp_88213"


def test_due_at_is_the_same_moment_in_the_organisations_offset(acme, api):
    start_expense(api("alice"), RS_45_000, subject="R-1")
    _organisation_zone(acme, "")
    (in_utc,) = _inbox(api)
    assert in_utc["dueAt"].endswith("+00:00")  # no zone chosen: UTC

    _organisation_zone(acme, "America/New_York")
    (in_new_york,) = _inbox(api)

    assert in_new_york["dueAt"][-6:] in ("-05:00", "-04:00")
    moment = dt.datetime.fromisoformat
    assert moment(in_new_york["dueAt"]) == moment(in_utc["dueAt"])


def test_a_change_of_the_organisations_zone_changes_the_inbox_tag(acme, api):
    start_expense(api("alice"), RS_45_000, subject="R-2")
    _organisation_zone(acme, "")
    first = api("bob").get("/api/me/tasks")

    _organisation_zone(acme, "Asia/Kolkata")
    again = api("bob").get("/api/me/tasks", HTTP_IF_NONE_MATCH=first["ETag"])

    assert again.status_code == 200  # not a 304 holding the old offset
    assert again.json()["items"][0]["dueAt"].endswith("+05:30")


def test_a_request_without_an_amount_is_its_title_and_reference(acme, api):
    workflow_template_publish(tenant=acme, definition={**EXPENSE, "key": "memo", "title": "Memo"})
    workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="memo",
        subject_type="memo",
        subject_id="M-7",
        data={},
    )

    (item,) = _inbox(api)

    assert item["subject"] == "Memo M-7"
    assert item["amount"] is None


def test_an_amount_with_a_fraction_keeps_it(acme, api):
    start_expense(api("alice"), 4_500_050, subject="R-3")

    (item,) = _inbox(api)

    assert item["subject"] == "Expense claim R-3, ₹45,000.50"


def test_the_openapi_schema_describes_the_specifications_fields():
    schema = _api_schema()
    item = schema["components"]["schemas"]["TaskItem"]["properties"]

    assert item["subject"]["type"] == "string"
    assert item["dueAt"]["type"] == "string"
    assert item["dueAt"]["format"] == "date-time"
    assert item["subjectRef"]["allOf"][0]["$ref"].endswith("/SubjectOf") or (
        item["subjectRef"].get("$ref", "").endswith("/SubjectOf")
    )
    for name in ("workflowId", "step", "summary", "amount", "stepName"):
        assert name in item


def _api_schema() -> dict[str, Any]:
    response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200, response.content
    return response.json()
