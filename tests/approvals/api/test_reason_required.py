"""POST /api/workflows/{id}/decisions: a rejection or a send-back without a reason is
refused (422 REASON_REQUIRED, nothing recorded) unless the workflow template's step
says ``"reason_required": false``."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import User, WorkflowEvent
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start
from templates_engine.steps.approval import REASON_REQUIRED

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db

# One approval step by the submitter's manager, which waives the reason.
RELAXED = {
    "key": "leave-note",
    "title": "Leave note",
    "schema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "steps": [
        {
            "id": "sign_off",
            "kind": "approval",
            "approvers": [{"manager": "submitter"}],
            "reason_required": False,
        }
    ],
}


def _decisions(wid: str) -> int:
    return WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").count()


@pytest.mark.parametrize(("decision", "words"), [("reject", "reject"), ("send_back", "send back")])
@pytest.mark.parametrize("comment", ["", "  "])
def test_turning_a_request_back_without_a_reason_is_422_and_records_nothing(
    acme: Any, api: Any, decision: str, words: str, comment: str
) -> None:
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]

    answer = decide(api("bob"), wid, decision, "no-reason", comment=comment)

    assert answer.status_code == 422, answer.content
    error = answer.json()["error"]
    assert error["code"] == "REASON_REQUIRED"
    assert error["message"] == REASON_REQUIRED.format(decision=words)
    assert _decisions(wid) == 0
    # the same request id with a reason is then recorded (nothing was kept of the first)
    again = decide(api("bob"), wid, decision, "no-reason", comment="Wrong cost centre")
    assert again.status_code == 200, again.content
    assert _decisions(wid) == 1


def test_a_step_that_waives_the_reason_takes_a_rejection_without_one(acme: Any, api: Any) -> None:
    workflow_template_publish(tenant=acme, definition=RELAXED)
    wid = str(
        workflow_start(
            submitter=User.objects.get(username="alice"),
            template_key="leave-note",
            subject_type="note",
            subject_id="N-1",
            data={"text": "Friday off"},
        ).workflow_id
    )

    answer = decide(api("bob"), wid, "reject", "r-1", comment="")

    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "REJECTED"
