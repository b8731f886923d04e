"""Only people who may act, act: tasks never go to someone who cannot act on them (an
integration account, an auditor, a deactivated person), whoever hands them (a delegate
decision, an out-of-office, a reassignment, a workflow template); whoever reassigns a
task may not receive it; a signal must be one the workflow's template declares, and
small; deactivating people asks permission before looking anyone up."""

from __future__ import annotations

import datetime as dt
import html
from typing import Any

import pytest
from django.test import Client

from approvals import access, clock
from approvals.models import Delegation, User, WorkflowEvent, WorkflowTemplate
from approvals.services.directory import USER_NOT_FOUND
from approvals.services.templates import DefinitionRefused, workflow_template_publish
from approvals.services.workflows import SIGNAL_TOO_LARGE, SIGNAL_UNDECLARED

from ..helpers import decide, start_expense

PENDING = 4_500_000  # waits for the manager (bob)


def _events(wid: str) -> int:
    return WorkflowEvent.objects.filter(workflow_id=wid).count()


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


@pytest.fixture
def pending(acme: Any, api: Any) -> str:
    response = start_expense(api("alice"), PENDING)
    assert response.status_code == 201, response.content
    return str(response.json()["workflowId"])


def _cannot(username: str) -> str:
    person = User.objects.get(username=username)
    reason = access.task_holder_refusal(person)
    assert reason is not None
    return reason


def _deactivated_cora() -> str:
    User.objects.filter(username="cora").update(is_active=False)
    return "cora"


# -- approver groups ----------------------------------------------------------------------


def test_an_auditor_or_integration_account_in_an_approver_group_is_not_asked(acme, api):
    # given: audrey (an auditor) and erp (the integration account) added to Finance
    from approvals.models import OrgGroup, PendingTask

    finance = OrgGroup.objects.get(tenant=acme, key="finance")
    finance.members.add(User.objects.get(username="audrey"), User.objects.get(username="erp"))
    wid = start_expense(api("alice"), PENDING).json()["workflowId"]

    # when: the request reaches the Finance step
    assert decide(api("bob"), wid, "approve", "r-bob").status_code == 200

    # then: only the finance members who can act hold it
    holders = set(
        PendingTask.objects.filter(workflow_id=wid).values_list("assignee__username", flat=True)
    )
    assert holders == {"fiona", "farah"}


# -- delegate decisions --------------------------------------------------------------------


@pytest.mark.parametrize("delegate_to", ["erp", "audrey", "inactive"])
def test_a_task_cannot_be_delegated_to_someone_who_cannot_act_in_the_api(pending, api, delegate_to):
    if delegate_to == "inactive":
        delegate_to = _deactivated_cora()
    before = _events(pending)

    response = decide(api("bob"), pending, "delegate", "d-1", delegateTo=delegate_to)

    assert response.status_code == 422
    error = response.json()["error"]
    assert (error["code"], error["message"]) == (access.CANNOT_HOLD_TASKS, _cannot(delegate_to))
    assert _events(pending) == before


def test_a_task_cannot_be_delegated_to_the_integration_account_from_the_page(pending):
    before = _events(pending)

    response = _client("bob").post(
        f"/workflows/{pending}/decide",
        {"decision": "delegate", "request_id": "d-page-1", "delegate_to": "erp"},
        follow=True,
    )

    assert html.escape(_cannot("erp")) in response.content.decode()
    assert _events(pending) == before


# -- out of office ---------------------------------------------------------------------------


@pytest.mark.parametrize("delegate", ["erp", "audrey"])
def test_an_out_of_office_stand_in_must_be_able_to_act_on_the_page(acme, delegate):
    today = clock.now().date()
    response = _client("bob").post(
        "/account/out-of-office",
        {
            "delegate": delegate,
            "first_day": today.isoformat(),
            "last_day": (today + dt.timedelta(days=5)).isoformat(),
        },
    )

    assert response.status_code == 400  # the form again, with the error
    assert html.escape(_cannot(delegate)) in response.content.decode()
    assert not Delegation.objects.exists()


def test_an_out_of_office_stand_in_must_be_able_to_act_in_the_admin(acme):
    now = clock.now()
    bob, erp = User.objects.get(username="bob"), User.objects.get(username="erp")

    response = _client("fiona").post(
        "/admin/approvals/delegation/add/",
        {
            "user": bob.pk,
            "delegate": erp.pk,
            "starts_at_0": now.strftime("%Y-%m-%d"),
            "starts_at_1": "00:00:00",
            "ends_at_0": (now + dt.timedelta(days=30)).strftime("%Y-%m-%d"),
            "ends_at_1": "00:00:00",
            "reason": "leave",
        },
    )

    assert response.status_code == 200  # the form again, with the error
    assert html.escape(_cannot("erp")) in response.content.decode()
    assert not Delegation.objects.exists()


# -- reassignments -------------------------------------------------------------------------


@pytest.mark.parametrize("to_user", ["erp", "audrey", "inactive"])
def test_a_task_cannot_be_reassigned_to_someone_who_cannot_act(pending, api, to_user):
    if to_user == "inactive":
        to_user = _deactivated_cora()
    before = _events(pending)
    body = {"requestId": "r-1", "fromUser": "bob", "toUser": to_user}

    response = api("olga").post(f"/api/workflows/{pending}/reassign", body, format="json")

    assert response.status_code == 422
    assert response.json()["error"]["message"] == _cannot(to_user)
    assert _events(pending) == before


def test_an_org_admin_may_not_reassign_a_task_to_herself(pending, api):
    before = _events(pending)
    body = {"requestId": "r-self", "fromUser": "bob", "toUser": "olga"}

    response = api("olga").post(f"/api/workflows/{pending}/reassign", body, format="json")

    assert response.status_code == 403
    assert response.json()["error"]["message"] == access.FORBIDDEN_REASSIGN_SELF
    assert _events(pending) == before
    assert decide(api("olga"), pending, "approve", "o-1").status_code in (403, 404, 409)


def test_an_org_admin_may_not_reassign_a_task_to_herself_on_the_operations_page(pending):
    before = _events(pending)

    response = _client("olga").post(
        f"/admin/approvals/workflow/{pending}/operations/",
        {
            "operation": "reassign",
            "reassign-request_id": "admin-r-self",
            "reassign-from_user": "bob",
            "reassign-to_user": "olga",
            "reassign-reason": "I will do it",
        },
        follow=True,
    )

    assert html.escape(access.FORBIDDEN_REASSIGN_SELF) in response.content.decode()
    assert _events(pending) == before


# -- workflow templates ------------------------------------------------------------------------


@pytest.mark.parametrize("approver", ["erp", "audrey", "inactive"])
def test_a_workflow_template_may_not_name_an_approver_who_cannot_act(acme, approver):
    if approver == "inactive":
        approver = _deactivated_cora()
    doc = {
        "key": "access-review",
        "steps": [{"id": "it", "kind": "approval", "approvers": [{"user": approver}]}],
    }

    with pytest.raises(DefinitionRefused) as refused:
        workflow_template_publish(tenant=acme, definition=doc)

    assert refused.value.path == "$.steps[0].approvers[0].user"
    assert refused.value.problem == _cannot(approver)
    assert not WorkflowTemplate.objects.filter(key="access-review").exists()


def test_a_workflow_template_may_still_name_the_integration_as_a_signals_sender(acme):
    doc = {
        "key": "vendor-onboarding",
        "steps": [
            {
                "id": "contract",
                "kind": "signal",
                "signal": "contract_signed",
                "senders": [{"user": "erp"}],
            }
        ],
    }

    assert workflow_template_publish(tenant=acme, definition=doc).version == 1


# -- signals -----------------------------------------------------------------------------------


@pytest.fixture
def vendor(acme: Any, api: Any) -> str:
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "vendor-onboarding",
            "steps": [
                {"id": "contract", "kind": "signal", "signal": "contract_signed"},
                {"id": "finance", "kind": "approval", "approvers": [{"user": "fiona"}]},
            ],
        },
    )
    body = {"template": "vendor-onboarding", "subject": {"type": "vendor", "id": "V-1"}, "data": {}}
    response = api("alice").post("/api/workflows", body, format="json")
    assert response.status_code == 201, response.content
    return str(response.json()["workflowId"])


def test_a_signal_the_workflow_template_does_not_declare_is_refused_and_not_stored(vendor, api):
    before = _events(vendor)

    response = api("olga").post(
        f"/api/workflows/{vendor}/signals/invoice_paid",
        {"requestId": "s-1", "payload": {"x": 1}},
        format="json",
    )

    assert response.status_code == 409
    assert response.json()["error"]["message"] == SIGNAL_UNDECLARED.format(name="invoice_paid")
    assert _events(vendor) == before


def test_a_signal_payload_over_16_kb_is_refused_and_not_stored(vendor, api):
    before = _events(vendor)
    payload = {"blob": "x" * (16 * 1024)}

    response = api("olga").post(
        f"/api/workflows/{vendor}/signals/contract_signed",
        {"requestId": "s-2", "payload": payload},
        format="json",
    )

    assert response.status_code == 413
    size = len('{"blob":""}') + 16 * 1024
    assert response.json()["error"]["message"] == SIGNAL_TOO_LARGE.format(size=size)
    assert _events(vendor) == before


def test_a_declared_small_signal_is_still_delivered(vendor, api):
    response = api("olga").post(
        f"/api/workflows/{vendor}/signals/contract_signed",
        {"requestId": "s-3", "payload": {"signedBy": "Vendor Ltd"}},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "PENDING_FINANCE"


# -- deactivation ------------------------------------------------------------------------------


@pytest.mark.parametrize("username", ["bob", "nobody", "%00"])
def test_a_member_who_may_not_deactivate_learns_nothing_of_who_exists(acme, api, username):
    response = api("alice").post(f"/api/users/{username}/deactivate", {}, format="json")

    assert response.status_code == 403
    assert response.json()["error"]["message"] == access.FORBIDDEN_DEACTIVATE
    assert User.objects.get(username="bob").is_active


def test_deactivating_a_name_with_a_nul_is_not_found(acme, api):
    response = api("olga").post("/api/users/%00/deactivate", {}, format="json")

    assert response.status_code == 404
    assert response.json()["error"]["message"] == USER_NOT_FOUND.format(username="\x00")
    assert User.objects.filter(is_active=False).count() == 0
