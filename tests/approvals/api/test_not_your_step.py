"""A decision on a step that is not the caller's is 409 NOT_YOUR_STEP, naming the step
the request waits for by its title, even where segregation of duties would also rule
the caller out; SEGREGATION_OF_DUTIES (403) answers where the step reaches the person
(an out-of-office delegate, a hand-over, an administrator's reassignment)."""

from __future__ import annotations

from typing import Any

import pytest

from approvals import clock
from approvals.models import Delegation, User, WorkflowEvent
from templates_engine.segregation import ONE_STEP_EACH
from templates_engine.steps.approval import NOT_WAITING_FOR

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db

RS_45_000 = 4_500_000  # the manager, then finance


def _events(wid: str) -> int:
    return WorkflowEvent.objects.filter(workflow_id=wid).count()


def _at_finance(api: Any) -> str:
    """alice's claim, approved by bob (her manager): it waits for finance."""
    started = start_expense(api("alice"), RS_45_000)
    assert started.status_code == 201, started.content
    wid = started.json()["workflowId"]
    assert decide(api("bob"), wid, "approve", "bob-1").json()["status"] == "PENDING_FINANCE"
    return wid


def _away(user: str, delegate: str) -> None:
    now = clock.now()
    Delegation.objects.create(
        tenant=User.objects.get(username=user).tenant,
        user=User.objects.get(username=user),
        delegate=User.objects.get(username=delegate),
        starts_at=now.replace(year=now.year - 1),
        ends_at=now.replace(year=now.year + 1),
    )


def test_the_manager_approving_again_at_finance_is_told_it_waits_for_finance(acme, api):
    wid = _at_finance(api)
    before = _events(wid)

    response = decide(api("bob"), wid, "approve", "bob-2")

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "NOT_YOUR_STEP"
    assert error["message"] == NOT_WAITING_FOR.format(step="Finance")
    assert error["message"] == (
        "This request is waiting for the Finance step; it is not yours to decide."
    )
    assert error["requestId"] == "bob-2"
    assert _events(wid) == before


def test_an_out_of_office_delegate_who_approved_earlier_is_refused_for_segregation(acme, api):
    # given: farah is away and bob stands in for her; four eyes kept finance with her
    _away("farah", "bob")
    wid = _at_finance(api)
    before = _events(wid)

    # when: bob decides for farah
    response = decide(api("bob"), wid, "approve", "bob-3", onBehalfOf="farah")

    # then: the step reaches him through her, and segregation of duties stops him
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "SEGREGATION_OF_DUTIES"
    assert error["message"] == ONE_STEP_EACH.format(user="bob", step="manager")
    assert _events(wid) == before


def test_handing_the_finance_task_to_the_manager_who_approved_is_refused(acme, api):
    wid = _at_finance(api)

    response = decide(api("farah"), wid, "delegate", "fa-1", delegateTo="bob")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "SEGREGATION_OF_DUTIES"


def test_an_admin_reassigning_finance_to_the_manager_who_approved_is_refused(acme, api):
    wid = _at_finance(api)
    body = {"requestId": "o-1", "fromUser": "farah", "toUser": "bob"}

    response = api("olga").post(f"/api/workflows/{wid}/reassign", body, format="json")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "SEGREGATION_OF_DUTIES"
