"""The rules of approvals.access, tried through the API and the admin as each kind of
person would: roles, the read rule, signal senders, cancel and reassign, request ids."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from approvals.access import Role
from approvals.models import (
    Delegation,
    Tenant,
    User,
    Workflow,
    WorkflowEvent,
    WorkflowTemplate,
    WorkflowTemplateDraft,
)
from approvals.runtime.commands import REQUEST_ID_REUSED
from approvals.services.templates import workflow_template_publish

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db

DRAFTS = "/admin/approvals/workflowtemplate/drafts"
PENDING = 4_500_000  # waits for the manager (bob)


def _events(wid: str) -> int:
    return WorkflowEvent.objects.filter(workflow_id=wid).count()


@pytest.fixture
def pending(acme: Any, api: Any) -> str:
    response = start_expense(api("alice"), PENDING)
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "PENDING_MANAGER"
    return response.json()["workflowId"]


# -- request ids belong to one command ------------------------------------------------------


def test_the_same_request_id_and_body_is_a_duplicate(pending, api):
    first = decide(api("bob"), pending, "approve", "rid-1", comment="ok")
    again = decide(api("bob"), pending, "approve", "rid-1", comment="ok")

    assert first.status_code == 200
    assert again.status_code == 200
    assert again.json() == {**first.json(), "duplicate": True}


@pytest.mark.parametrize(
    ("who", "body"),
    [
        ("bob", {"decision": "reject"}),  # another verb
        ("bob", {"decision": "approve", "comment": "changed my words"}),  # another body
        ("olga", {"decision": "approve"}),  # another person
    ],
)
def test_a_request_id_reused_for_another_command_is_refused(pending, api, who, body):
    assert decide(api("bob"), pending, "approve", "rid-2", comment="ok").status_code == 200
    before = _events(pending)

    response = api(who).post(
        f"/api/workflows/{pending}/decisions", {"requestId": "rid-2", **body}, format="json"
    )

    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "REQUEST_ID_REUSED"
    assert response.json()["error"]["message"] == REQUEST_ID_REUSED
    assert _events(pending) == before


def test_a_request_id_of_a_decision_reused_by_a_cancel_is_refused(pending, api):
    assert decide(api("bob"), pending, "approve", "rid-3").status_code == 200
    before = _events(pending)

    response = api("olga").post(
        f"/api/workflows/{pending}/cancel", {"requestId": "rid-3"}, format="json"
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "REQUEST_ID_REUSED"
    assert _events(pending) == before
    assert Workflow.objects.get(pk=pending).status == "RUNNING"


# -- reading ----------------------------------------------------------------------------------


def test_past_assignees_keep_reading_and_others_see_nothing(pending, api):
    assert decide(api("bob"), pending, "approve", "b-1").status_code == 200
    assert Workflow.objects.get(pk=pending).public_status == "PENDING_FINANCE"

    assert api("bob").get(f"/api/workflows/{pending}").status_code == 200  # a past assignee
    assert api("fiona").get(f"/api/workflows/{pending}").status_code == 200  # assignee now
    assert api("victor").get(f"/api/workflows/{pending}").status_code == 404
    found = api("victor").get("/api/workflows").json()["workflows"]
    assert pending not in [w["workflowId"] for w in found]


@pytest.mark.parametrize("username", ["audrey", "olga"])
def test_auditors_and_org_admins_read_every_workflow_of_their_organisation(pending, api, username):
    assert api(username).get(f"/api/workflows/{pending}").status_code == 200
    found = api(username).get("/api/workflows").json()["workflows"]
    assert pending in [w["workflowId"] for w in found]


def test_is_staff_alone_grants_nothing(pending, api):
    User.objects.filter(username="victor").update(is_staff=True)

    assert api("victor").get(f"/api/workflows/{pending}").status_code == 404
    found = api("victor").get("/api/workflows").json()["workflows"]
    assert found == []
    response = api("victor").post(
        f"/api/workflows/{pending}/cancel", {"requestId": "staff-1"}, format="json"
    )
    assert response.status_code == 404
    assert Workflow.objects.get(pk=pending).status == "RUNNING"


def test_a_delegate_standing_in_now_reads_and_decides_for_the_assignee(pending, api):
    from approvals import clock

    now = clock.now()
    bob, ivan = User.objects.get(username="bob"), User.objects.get(username="ivan")
    Delegation.objects.create(
        tenant=bob.tenant,
        user=bob,
        delegate=ivan,
        starts_at=now.replace(year=now.year - 1),
        ends_at=now.replace(year=now.year + 1),
    )

    assert api("ivan").get(f"/api/workflows/{pending}").status_code == 200
    response = decide(api("ivan"), pending, "approve", "i-1", onBehalfOf="bob")

    assert response.status_code == 200, response.content
    event = WorkflowEvent.objects.get(workflow_id=pending, type="DecisionRecorded")
    assert (event.actor.username, event.on_behalf_of.username) == ("ivan", "bob")


# -- auditors change nothing --------------------------------------------------------------------


def test_an_auditor_cannot_start_decide_signal_or_cancel(pending, api):
    before = (Workflow.objects.count(), _events(pending))
    auditor = api("audrey")

    started = start_expense(auditor, PENDING)
    decided = decide(auditor, pending, "approve", "a-1")
    signalled = auditor.post(
        f"/api/workflows/{pending}/signals/anything", {"requestId": "a-2"}, format="json"
    )
    cancelled = auditor.post(
        f"/api/workflows/{pending}/cancel", {"requestId": "a-3"}, format="json"
    )

    assert [r.status_code for r in (started, decided, signalled, cancelled)] == [403] * 4
    assert {r.json()["error"]["code"] for r in (started, decided, signalled, cancelled)} == {
        "FORBIDDEN"
    }
    assert (Workflow.objects.count(), _events(pending)) == before


# -- signals ----------------------------------------------------------------------------------


def _vendor(acme: Any, api: Any, senders: list[dict[str, str]] | None = None) -> str:
    step: dict[str, Any] = {"id": "contract", "kind": "signal", "signal": "contract_signed"}
    if senders is not None:
        step["senders"] = senders
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "vendor-onboarding",
            "steps": [
                step,
                {"id": "finance", "kind": "approval", "approvers": [{"user": "fiona"}]},
            ],
        },
    )
    body = {"template": "vendor-onboarding", "subject": {"type": "vendor", "id": "V-1"}, "data": {}}
    response = api("alice").post("/api/workflows", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["workflowId"]


def _signal(client: Any, wid: str, rid: str) -> Any:
    return client.post(
        f"/api/workflows/{wid}/signals/contract_signed", {"requestId": rid}, format="json"
    )


def test_by_default_only_org_admins_and_integrations_send_signals(acme, api):
    wid = _vendor(acme, api)

    assert _signal(api("alice"), wid, "s-1").status_code == 403  # reads it, may not send
    assert _signal(api("victor"), wid, "s-2").status_code == 404  # neither
    assert _events(wid) == 2  # started, awaiting: nothing recorded
    response = _signal(api("olga"), wid, "s-3")

    assert response.status_code == 200
    assert response.json()["status"] == "PENDING_FINANCE"


def test_a_signal_step_names_its_senders_and_sending_grants_no_reading(acme, api):
    wid = _vendor(acme, api, senders=[{"user": "ivan"}])

    assert _signal(api("olga"), wid, "s-1").status_code == 403
    response = _signal(api("ivan"), wid, "s-2")

    assert response.status_code == 200
    assert api("ivan").get(f"/api/workflows/{wid}").status_code == 404
    received = WorkflowEvent.objects.get(workflow_id=wid, type="SignalReceived")
    assert received.actor.username == "ivan"


# -- cancel and reassign ------------------------------------------------------------------------


def test_an_assignee_may_not_cancel_but_an_org_admin_may(pending, api):
    refused = api("bob").post(
        f"/api/workflows/{pending}/cancel", {"requestId": "c-1"}, format="json"
    )
    assert refused.status_code == 403

    response = api("olga").post(
        f"/api/workflows/{pending}/cancel", {"requestId": "c-2", "reason": "dup"}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["status"] == "CANCELLED"
    event = WorkflowEvent.objects.get(workflow_id=pending, type="WorkflowCancelled")
    assert (event.actor.username, event.role) == ("olga", "admin")


def test_an_org_admin_reassigns_a_task_through_the_command_path(pending, api):
    body = {"requestId": "r-1", "fromUser": "bob", "toUser": "victor", "comment": "bob is away"}

    refused = api("bob").post(f"/api/workflows/{pending}/reassign", body, format="json")
    assert refused.status_code == 403
    response = api("olga").post(f"/api/workflows/{pending}/reassign", body, format="json")

    assert response.status_code == 200, response.content
    event = WorkflowEvent.objects.get(workflow_id=pending, type="TaskReassigned")
    assert (event.actor.username, event.role) == ("olga", "admin")
    assert event.payload["to_user"] == "victor"
    tasks = api("victor").get("/api/me/tasks").json()["items"]
    assert [t["workflowId"] for t in tasks] == [pending]
    assert decide(api("victor"), pending, "approve", "v-1").status_code == 200


def test_a_reassign_to_an_unknown_person_is_refused_and_changes_nothing(pending, api):
    before = _events(pending)
    body = {"requestId": "r-2", "fromUser": "bob", "toUser": "nobody"}

    response = api("olga").post(f"/api/workflows/{pending}/reassign", body, format="json")

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "UNKNOWN_USER"
    assert _events(pending) == before


# -- the admin --------------------------------------------------------------------------------


def _admin(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


@pytest.fixture
def globex(acme: Any) -> Tenant:
    tenant = Tenant.objects.create(slug="globex", name="Globex")
    User.objects.create_user("gina", password="pw", tenant=tenant)
    return tenant


def test_a_finance_admin_reaches_the_admin_without_being_staff(acme):
    fiona = User.objects.get(username="fiona")
    assert not fiona.is_staff and not fiona.is_superuser

    assert _admin("fiona").get("/admin/").status_code == 200
    assert _admin("fiona").get("/admin/approvals/workflowtemplate/").status_code == 200


def test_a_finance_admin_publishes_only_into_her_own_organisation(acme, globex):
    doc = {
        "key": "travel",
        "title": "Travel",
        "steps": [{"id": "boss", "kind": "approval", "approvers": [{"manager": "submitter"}]}],
    }
    client = _admin("fiona")

    form = client.get("/admin/approvals/workflowtemplate/add/")
    assert form.status_code == 200
    assert 'name="tenant"' not in form.content.decode()
    response = client.post(
        "/admin/approvals/workflowtemplate/add/",
        {"tenant": globex.pk, "definition": json.dumps(doc)},
    )

    # with four eyes on, saving keeps a draft, in her own organisation whatever was posted
    assert response.status_code == 302, response.content
    draft = WorkflowTemplateDraft.objects.get(key="travel")
    assert draft.tenant == acme
    assert not WorkflowTemplate.objects.filter(key="travel").exists()
    # a finance admin of the other organisation cannot even open it
    gina = User.objects.get(username="gina")
    gina.groups.add(Group.objects.get(name=Role.FINANCE_ADMIN.value))
    assert (
        _admin("gina")
        .post(f"{DRAFTS}/{draft.pk}/", {"_publish": "Publish", "confirmed": "yes"})
        .status_code
        == 404
    )
    assert not WorkflowTemplate.objects.filter(key="travel").exists()

    # a second finance admin of her organisation publishes it there
    _admin("farah").post(f"{DRAFTS}/{draft.pk}/", {"_publish": "Publish", "confirmed": "yes"})
    published = WorkflowTemplate.objects.get(key="travel")
    assert published.tenant == acme
    assert (published.drafted_by.username, published.published_by.username) == ("fiona", "farah")
    assert not WorkflowTemplate.objects.filter(tenant=globex).exists()


def test_a_finance_admin_sees_only_her_organisations_rows(acme, globex):
    workflow_template_publish(
        tenant=globex,
        definition={
            "key": "globex-only",
            "steps": [{"id": "a", "kind": "approval", "approvers": [{"user": "gina"}]}],
        },
    )
    page = _admin("fiona").get("/admin/approvals/workflowtemplate/").content.decode()

    assert "expense-approval" in page
    assert "globex-only" not in page
    other = WorkflowTemplate.objects.get(key="globex-only")
    response = _admin("fiona").get(f"/admin/approvals/workflowtemplate/{other.pk}/change/")
    assert response.status_code in (302, 404)  # Django's "does not exist" redirect


@pytest.mark.parametrize(
    "url",
    [
        "/admin/approvals/workflow/",
        "/admin/approvals/user/",
        "/admin/approvals/tenant/",
        "/admin/approvals/orggroup/",
        "/admin/auth/group/",
    ],
)
def test_a_finance_admin_cannot_open_what_is_not_hers(acme, url):
    assert _admin("fiona").get(url).status_code == 403


def test_a_templates_roles_are_named_by_its_editors_on_its_roles_screen(acme):
    template = WorkflowTemplate.objects.filter(key="expense-approval").first()
    assert template is not None
    roles = f"/admin/approvals/workflowtemplate/{template.pk}/roles/"
    name_victor = {"role": "view_workflowtemplate_runs", "person": "victor"}

    assert _admin("audrey").get(roles).status_code == 200  # read, not changed
    assert _admin("audrey").post(roles, name_victor).status_code == 403
    assert _admin("olga").get(roles).status_code == 403
    assert _admin("fiona").post(roles, name_victor).status_code == 302
    # guardian's own screen of a single version's permissions is gone: one place
    old = f"/admin/approvals/workflowtemplate/{template.pk}/permissions/"
    assert _admin("admin").get(old).status_code in (302, 404)


def test_an_auditor_reads_in_the_admin_and_changes_nothing(pending):
    client = _admin("audrey")

    assert client.get("/admin/approvals/workflow/").status_code == 200
    assert client.get(f"/admin/approvals/workflow/{pending}/change/").status_code == 200
    assert client.get("/admin/approvals/workflowtemplate/add/").status_code == 403
    assert client.get("/admin/approvals/delegation/add/").status_code == 403


def test_staff_without_a_role_does_not_reach_the_admin(acme):
    User.objects.filter(username="victor").update(is_staff=True)

    response = _admin("victor").get("/admin/")

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_an_out_of_office_delegate_who_submitted_a_waiting_request_is_refused(pending):
    from approvals import clock

    now = clock.now()
    bob, alice = User.objects.get(username="bob"), User.objects.get(username="alice")

    response = _admin("fiona").post(
        "/admin/approvals/delegation/add/",
        {
            "user": bob.pk,
            "delegate": alice.pk,
            "starts_at_0": now.strftime("%Y-%m-%d"),
            "starts_at_1": "00:00:00",
            "ends_at_0": now.replace(year=now.year + 1).strftime("%Y-%m-%d"),
            "ends_at_1": "00:00:00",
            "reason": "leave",
        },
    )

    assert response.status_code == 200  # the form again, with the error
    assert "alice submitted a request that waits for bob" in response.content.decode()
    assert not Delegation.objects.exists()


@pytest.mark.parametrize(("username", "admitted"), [("fiona", True), ("audrey", True)])
def test_role_holders_sign_in_to_the_admin_without_being_staff(acme, username, admitted):
    client = Client()

    response = client.post("/admin/login/?next=/admin/", {"username": username, "password": "demo"})

    assert response.status_code == 302, response.content[:500]
    assert response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_an_employee_without_a_role_is_told_the_admin_is_not_for_them(acme):
    response = Client().post("/admin/login/?next=/admin/", {"username": "bob", "password": "demo"})

    assert response.status_code == 200
    assert "has no role that uses the administration" in response.content.decode()
