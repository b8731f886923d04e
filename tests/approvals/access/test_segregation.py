"""Segregation of duties through the API, on the demo organisation: the submitter never
decides her own request, and the demo templates let no one approve two steps."""

from __future__ import annotations

from typing import Any

import pytest

from approvals import clock
from approvals.models import Delegation, User, Workflow, WorkflowEvent
from templates_engine.steps.approval import NOT_WAITING_FOR

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db

RS_45_000 = 4_500_000
RS_2_00_000 = 20_000_000  # above the VP threshold


def _events(wid: str) -> int:
    return WorkflowEvent.objects.filter(workflow_id=wid).count()


def _fiona_claim(api: Any) -> str:
    started = start_expense(api("fiona"), RS_45_000)
    assert started.status_code == 201, started.content
    wid = started.json()["workflowId"]
    assert decide(api("victor"), wid, "approve", "v-1").status_code == 200
    return wid


def test_a_submitter_in_the_finance_group_is_not_asked_and_cannot_approve(acme, api):
    wid = _fiona_claim(api)
    before = _events(wid)

    response = decide(api("fiona"), wid, "approve", "f-1")

    # she holds no task on it: not her step, before segregation of duties is asked
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "NOT_YOUR_STEP"
    assert response.json()["error"]["message"] == NOT_WAITING_FOR.format(step="Finance")
    assert _events(wid) == before
    detail = api("fiona").get(f"/api/workflows/{wid}").json()
    assert detail["assignees"] == [{"user": "farah", "onBehalfOf": None}]
    excluded = WorkflowEvent.objects.get(workflow_id=wid, type="ApproversExcluded")
    assert excluded.payload["excluded"] == [["fiona", "submitter"]]
    assert decide(api("farah"), wid, "approve", "fa-1").json()["status"] == "APPROVED"


def test_an_approver_cannot_delegate_to_the_submitter(acme, api):
    wid = _fiona_claim(api)
    before = _events(wid)

    response = decide(api("farah"), wid, "delegate", "fa-2", delegateTo="fiona")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "SEGREGATION_OF_DUTIES"
    assert _events(wid) == before


def test_an_org_admin_cannot_reassign_to_the_submitter(acme, api):
    wid = _fiona_claim(api)
    before = _events(wid)
    body = {"requestId": "o-1", "fromUser": "farah", "toUser": "fiona"}

    response = api("olga").post(f"/api/workflows/{wid}/reassign", body, format="json")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "SEGREGATION_OF_DUTIES"
    assert _events(wid) == before


def test_the_submitter_cannot_decide_as_someones_out_of_office_delegate(acme, api):
    now = clock.now()
    Delegation.objects.create(
        tenant=acme,
        user=User.objects.get(username="farah"),
        delegate=User.objects.get(username="fiona"),
        starts_at=now.replace(year=now.year - 1),
        ends_at=now.replace(year=now.year + 1),
    )
    wid = _fiona_claim(api)  # farah's task stays with farah: fiona is the submitter
    tasks = WorkflowEvent.objects.filter(workflow_id=wid, type="ApprovalRequested").last()
    assert tasks is not None
    assert [a["user"] for a in tasks.payload["assignments"]] == ["farah"]

    response = decide(api("fiona"), wid, "approve", "f-2", onBehalfOf="farah")

    assert response.status_code == 403
    assert Workflow.objects.get(pk=wid).public_status == "PENDING_FINANCE"


def test_four_eyes_sends_the_vp_step_to_its_fallback(acme, api):
    # bob's manager is victor, who is also the VP: he may approve only one of the two
    started = start_expense(api("bob"), RS_2_00_000)
    wid = started.json()["workflowId"]
    assert decide(api("victor"), wid, "approve", "v-2").json()["status"] == "PENDING_VP"

    detail = api("bob").get(f"/api/workflows/{wid}").json()

    assert detail["assignees"] == [{"user": "cora", "onBehalfOf": None}]
    excluded = WorkflowEvent.objects.get(workflow_id=wid, type="ApproversExcluded")
    assert excluded.payload["excluded"] == [["victor", "already approved manager"]]
    assert excluded.payload["fallback"] is True
    assert decide(api("victor"), wid, "approve", "v-3").status_code == 409  # not his step
    assert decide(api("cora"), wid, "approve", "c-1").json()["status"] == "PENDING_FINANCE"
