"""A decision refused as not the person's step says, on the page, which step the
request waits for, in the words the API uses."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import User, WorkflowEvent
from approvals.services.workflows import workflow_decide
from templates_engine.steps.approval import NOT_WAITING_FOR

from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db

AT_FINANCE = "This request is waiting for the Finance step; it is not yours to decide."


def _at_finance() -> str:
    wid = expense_started("R-20")
    workflow_decide(
        user=User.objects.get(username="bob"), workflow_id=wid, decision="approve", request_id="b"
    )
    return wid


def test_the_inbox_script_hears_which_step_the_request_waits_for(acme: Any) -> None:
    wid = _at_finance()
    before = WorkflowEvent.objects.filter(workflow_id=wid).count()

    response = signed_in("bob").post(
        f"/workflows/{wid}/decide",
        {"decision": "approve", "request_id": "b-again"},
        HTTP_ACCEPT="application/json",
    )

    assert response.status_code == 409
    assert response.json()["message"] == NOT_WAITING_FOR.format(step="Finance") == AT_FINANCE
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == before


def test_the_flash_after_a_plain_form_post_names_the_step(acme: Any) -> None:
    wid = _at_finance()

    response = signed_in("bob").post(
        f"/workflows/{wid}/decide", {"decision": "approve", "request_id": "b-form"}, follow=True
    )

    assert response.status_code == 200
    assert AT_FINANCE in response.content.decode()
