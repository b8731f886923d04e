"""The pages on the server: a constant number of queries in the inbox, decisions that
answer the inbox's script in JSON, handing a task on, out of office and search."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from approvals.models import Delegation, PendingTask, Tenant, User, WorkflowEvent
from approvals.services.workflows import workflow_start

pytestmark = pytest.mark.django_db


def _browser(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _start(acme: Any, subject: str, amount: int = 4_500_000) -> str:
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id=subject,
        data={"amountPaise": amount, "currency": "INR", "department": "eng"},
    )
    return str(started.workflow_id)


def _inbox_queries(client: Client) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get("/")
    assert response.status_code == 200
    return len(ctx.captured_queries)


def test_the_inbox_query_count_does_not_grow_with_its_rows(acme: Any) -> None:
    bob = _browser("bob")
    for i in range(2):
        _start(acme, f"E-q{i}")
    two = _inbox_queries(bob)
    for i in range(2, 20):
        _start(acme, f"E-q{i}")
    assert PendingTask.objects.filter(assignee__username="bob").count() == 20
    twenty = _inbox_queries(bob)
    assert twenty == two


def test_the_inbox_shows_amount_requester_step_and_due(acme: Any) -> None:
    _start(acme, "E-show")
    body = _browser("bob").get("/").content.decode()
    assert "Expense claim E-show" in body
    assert "₹45,000.00" in body
    assert "from Alice" in body
    assert "Manager step" in body
    assert "amountPaise" not in body


def test_a_decision_from_the_inbox_script_is_answered_in_json(acme: Any) -> None:
    wid = _start(acme, "E-json")
    response = _browser("bob").post(
        f"/workflows/{wid}/decide",
        {"decision": "approve", "request_id": "j-1", "comment": "fine"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 200
    assert response.json()["ok"] is True
    assert "Approved Expense claim E-json" in response.json()["message"]
    assert response.json()["status"] == "PENDING_FINANCE"


def test_a_refused_decision_is_a_json_error_and_records_nothing(acme: Any) -> None:
    wid = _start(acme, "E-refused")
    before = WorkflowEvent.objects.filter(workflow_id=wid).count()
    response = _browser("ivan").post(
        f"/workflows/{wid}/decide",
        {"decision": "approve", "request_id": "j-2"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code in (404, 409)
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == before


def test_handing_a_task_to_a_colleague_from_the_inbox(acme: Any) -> None:
    wid = _start(acme, "E-hand")
    response = _browser("bob").post(
        f"/workflows/{wid}/decide",
        {"decision": "delegate", "delegate_to": "ivan", "request_id": "d-1"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 200, response.content
    assert "handed to Ivan" in response.json()["message"]
    task = PendingTask.objects.get(workflow_id=wid)
    assert task.assignee.username == "ivan"
    assert ">for Bob<" in _browser("ivan").get("/").content.decode()


def test_handing_on_without_a_colleague_is_refused(acme: Any) -> None:
    wid = _start(acme, "E-hand-none")
    before = WorkflowEvent.objects.filter(workflow_id=wid).count()
    response = _browser("bob").post(
        f"/workflows/{wid}/decide",
        {"decision": "delegate", "request_id": "d-2"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 400
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == before


def _away(
    client: Client, delegate: str, first: str = "2026-12-01", last: str = "2026-12-05"
) -> Any:
    return client.post(
        "/account/out-of-office",
        {"delegate": delegate, "first_day": first, "last_day": last, "reason": "leave"},
    )


def test_out_of_office_sets_a_delegation_in_the_users_tenant(acme: Any) -> None:
    response = _away(_browser("bob"), "ivan")
    assert response.status_code == 302
    d = Delegation.objects.get(user__username="bob")
    assert (d.delegate.username, d.tenant_id, d.reason) == ("ivan", acme.pk, "leave")
    assert d.starts_at.date().isoformat() == "2026-12-01"
    assert (d.ends_at - d.starts_at).days == 5  # the whole of the last day


@pytest.mark.parametrize(
    ("delegate", "first", "last", "field"),
    [
        ("bob", "2026-12-01", "2026-12-05", "delegate"),
        ("gina", "2026-12-01", "2026-12-05", "delegate"),
        ("ivan", "2026-12-05", "2026-12-01", "last_day"),
        ("", "2026-12-01", "2026-12-05", "delegate"),
    ],
    ids=["self", "other-tenant", "backwards", "nobody"],
)
def test_out_of_office_refuses_with_a_form_error(
    acme: Any, delegate: str, first: str, last: str, field: str
) -> None:
    globex = Tenant.objects.create(slug="globex", name="Globex")
    User.objects.create_user("gina", password="pw", tenant=globex)
    response = _away(_browser("bob"), delegate, first, last)
    assert response.status_code == 400
    assert response.context["form"].errors[field]
    assert not Delegation.objects.exists()


def test_a_delegate_sees_tasks_assigned_while_away_marked_on_behalf(acme: Any) -> None:
    assert _away(_browser("bob"), "ivan", "2026-01-01", "2030-12-31").status_code == 302
    _start(acme, "E-away")
    body = _browser("ivan").get("/").content.decode()
    assert "Expense claim E-away" in body
    assert ">for Bob<" in body


def test_search_finds_what_the_person_may_see_only(acme: Any) -> None:
    _start(acme, "E-find")
    for who, found in [("alice", True), ("bob", True), ("audrey", True), ("farah", False)]:
        response = _browser(who).get("/search", {"text": "E-find", "status": "RUNNING"})
        assert response.status_code == 200
        assert ("Expense claim E-find" in response.content.decode()) is found, who


def test_search_with_a_bad_date_is_a_form_error(acme: Any) -> None:
    response = _browser("alice").get("/search", {"createdAfter": "yesterday"})
    assert response.status_code == 400
    assert response.context["form"].errors["createdAfter"]


def test_a_resubmission_changes_the_data_and_shows_both_rounds(acme: Any) -> None:
    wid = _start(acme, "E-round")
    bob = _browser("bob")
    assert (
        bob.post(
            f"/workflows/{wid}/decide",
            {"decision": "send_back", "request_id": "s-1", "comment": "add the hotel bill"},
        ).status_code
        == 302
    )
    alice = _browser("alice")
    page = alice.get(f"/workflows/{wid}")
    assert page.context["sent_back"] is True
    assert "edit and resubmit" in alice.get("/workflows/").content.decode()
    bad = alice.post(
        f"/workflows/{wid}/resubmit",
        {"amountPaise": "lots", "currency": "INR", "department": "eng", "request_id": "r-1"},
    )
    assert bad.status_code == 400
    assert bad.context["form"].errors["amountPaise"]
    good = alice.post(
        f"/workflows/{wid}/resubmit",
        {"amountPaise": "46000", "currency": "INR", "department": "eng", "request_id": "r-2"},
        follow=True,
    )
    assert good.status_code == 200
    lines = [line.text for line in good.context["timeline"]]
    assert "Alice changed the request and resubmitted it" in lines
    assert sum(1 for line in lines if line == "The Manager step asked Bob") == 2
    assert "₹46,000.00" in good.content.decode()
    # answered: neither the page nor the list offers the form again, and a second
    # resubmission records nothing
    assert alice.get(f"/workflows/{wid}").context["sent_back"] is False
    assert "edit and resubmit" not in alice.get("/workflows/").content.decode()
    before = WorkflowEvent.objects.filter(workflow_id=wid).count()
    again = alice.post(
        f"/workflows/{wid}/resubmit",
        {"amountPaise": "1", "currency": "INR", "department": "eng", "request_id": "r-3"},
    )
    assert again.status_code == 409
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == before


def test_times_are_shown_in_the_browsers_zone_named(acme: Any) -> None:
    wid = _start(acme, "E-zone")
    alice = _browser("alice")
    alice.cookies["tz"] = "Asia/Kolkata"
    assert "IST" in alice.get(f"/workflows/{wid}").content.decode()
    alice.cookies["tz"] = "Not/AZone"
    assert "UTC" in alice.get(f"/workflows/{wid}").content.decode()


@pytest.mark.parametrize("url", ["/workflows/", "/search?text=E-"])
def test_lists_of_requests_take_a_constant_number_of_queries(acme: Any, url: str) -> None:
    alice = _browser("alice")
    for i in range(2):
        _start(acme, f"E-l{i}")

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert alice.get(url).status_code == 200
        return len(ctx.captured_queries)

    count()  # once for the process-wide caches (content types of the read rule's grants)
    two = count()
    for i in range(2, 12):
        _start(acme, f"E-l{i}")
    assert count() == two
