"""One search for the page and the API (approvals/web/search.py): the same parameters
give the same workflows, only those the person may read; bad values are a form error on
the page and a 400 from the API, and the OpenAPI schema lists every parameter."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.test import Client
from guardian.shortcuts import assign_perm

from approvals.models import User, Workflow, WorkflowEvent, WorkflowTemplate
from approvals.models.time_bounds import MOMENT_OUT_OF_RANGE, OFFSET_OUT_OF_RANGE
from approvals.services.delegations import delegation_set
from approvals.web import search as search_module

from ..helpers import EXPENSE, decide, start_expense
from .support import signed_in

pytestmark = pytest.mark.django_db


def _start(api: Any, subject: str, amount: int = 4_500_000, who: str = "alice") -> str:
    response = start_expense(api(who), amount, subject=subject)
    assert response.status_code == 201, response.content
    return str(response.json()["workflowId"])


def _page_ids(client: Client, params: dict[str, str]) -> list[str]:
    response = client.get("/search", params)
    assert response.status_code == 200, response.content
    return re.findall(r'<tr data-workflow="([0-9a-f-]+)"', response.content.decode())


def _api_ids(client: Any, params: dict[str, str]) -> list[str]:
    response = client.get("/api/workflows", params)
    assert response.status_code == 200, response.content
    return [w["workflowId"] for w in response.json()["workflows"]]


@pytest.fixture
def world(acme: Any, api: Any) -> dict[str, str]:
    """Alice's trip waits for bob; her laptop for finance (bob approved); her lunch is
    approved at once; victor's taxi waits for his manager."""
    trip = _start(api, "TRIP-1")
    laptop = _start(api, "LAPTOP-7")
    assert decide(api("bob"), laptop, "approve", "s-1").status_code == 200
    lunch = _start(api, "LUNCH-1", amount=50_000)
    taxi = _start(api, "TAXI-3", who="victor")
    return {"trip": trip, "laptop": laptop, "lunch": lunch, "taxi": taxi}


QUERIES = [
    pytest.param({"status": "RUNNING"}, id="running"),
    pytest.param({"status": "PENDING_FINANCE"}, id="at-finance"),
    pytest.param({"status": "APPROVED"}, id="approved"),
    pytest.param({"template": EXPENSE}, id="template"),
    pytest.param({"template": "purchase-request"}, id="other-template"),
    pytest.param({"subjectId": "LAPTOP-7"}, id="subject"),
    pytest.param({"subjectType": "expense", "subjectId": "TRIP-1"}, id="subject-type"),
    pytest.param({"submitter": "victor"}, id="submitter"),
    pytest.param({"assignee": "bob"}, id="assignee"),
    pytest.param({"text": "trip"}, id="text-subject"),
    pytest.param({"text": "expense claim victor"}, id="text-every-word"),
    pytest.param({"text": "Alice lunch"}, id="text-submitter-name"),
    pytest.param({"createdAfter": "2000-01-01", "createdBefore": "2100-01-01"}, id="range"),
]


@pytest.mark.parametrize("params", QUERIES)
@pytest.mark.parametrize("who", ["alice", "bob", "audrey", "farah"])
def test_the_page_and_the_api_find_the_same_workflows(world, api, who, params):
    assert _page_ids(signed_in(who), params) == _api_ids(api(who), params)


def test_each_filter_finds_what_it_says(world, api):
    audrey = api("audrey")  # an auditor reads everything

    assert _api_ids(audrey, {"status": "PENDING_MANAGER"}) == [world["taxi"], world["trip"]]
    assert _api_ids(audrey, {"status": "PENDING_FINANCE"}) == [world["laptop"]]
    assert _api_ids(audrey, {"status": "APPROVED"}) == [world["lunch"]]
    assert _api_ids(audrey, {"submitter": "victor"}) == [world["taxi"]]
    assert _api_ids(audrey, {"assignee": "farah"}) == [world["laptop"]]
    assert _api_ids(audrey, {"subjectId": "LAPTOP-7"}) == [world["laptop"]]
    # free text: every word must match the reference, the kind of request or a name
    assert _api_ids(audrey, {"text": "victor claim"}) == [world["taxi"]]
    assert _api_ids(audrey, {"text": "Alice TRIP"}) == [world["trip"]]
    assert _api_ids(audrey, {"text": "purchase"}) == []


def test_a_search_lists_only_what_the_person_may_read(world, api, acme):
    # farah takes part in the laptop only; ivan in nothing
    assert _api_ids(api("farah"), {}) == [world["laptop"]]
    assert _api_ids(api("ivan"), {}) == []
    # ivan stands in for bob from now: he finds what waits for bob, as he may open it
    now = dt.datetime.now(dt.UTC)
    bob, ivan = User.objects.get(username="bob"), User.objects.get(username="ivan")
    delegation_set(
        user=bob,
        delegate=ivan,
        starts_at=now - dt.timedelta(hours=1),
        ends_at=now + dt.timedelta(days=1),
    )
    assert _api_ids(api("ivan"), {}) == [world["trip"]]
    assert _page_ids(signed_in("ivan"), {"text": "trip"}) == [world["trip"]]
    # a grant on the workflow template lets him read (and find) every one of its workflows
    template = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE)
    assign_perm("approvals.view_workflowtemplate_runs", ivan, template)
    assert len(_api_ids(api("ivan"), {})) == 4


def test_a_date_alone_is_the_start_of_that_day_in_the_persons_zone(world, api):
    # the trip was submitted at 20:00 UTC on 1 March: 01:30 on 2 March in India
    Workflow.objects.filter(pk=world["trip"]).update(
        created_at=dt.datetime(2026, 3, 1, 20, 0, tzinfo=dt.UTC)
    )
    day = {"createdAfter": "2026-03-02", "createdBefore": "2026-03-03"}

    assert _page_ids(signed_in("alice", tz_cookie="Asia/Kolkata"), day) == [world["trip"]]
    assert _page_ids(signed_in("alice", tz_cookie="Europe/London"), day) == []
    assert _api_ids(api("alice"), {"createdAfter": "2026-03-01T19:59:00Z"}) != []
    assert world["trip"] not in _api_ids(api("alice"), {"createdAfter": "2026-03-01T20:00:01Z"})


BAD = [
    pytest.param("status", "PENDING", id="status-unknown"),
    pytest.param("status", "PENDING_NOWHERE", id="status-no-such-step"),
    pytest.param("template", "no-such-template", id="template-unknown"),
    pytest.param("createdAfter", "yesterday", id="date-words"),
    pytest.param("createdAfter", "2026-02-30", id="date-impossible"),
    pytest.param("createdBefore", "2026-13-01T00:00:00Z", id="time-impossible"),
    pytest.param("createdAfter", "0001-01-01T00:00:00+05:00", id="before-year-one-in-utc"),
    pytest.param("createdBefore", "9999-12-31T23:00:00-05:00", id="after-9999-in-utc"),
    pytest.param("text", "x" * 201, id="text-too-long"),
    pytest.param("subjectId", "s" * 129, id="subject-too-long"),
    pytest.param("assignee", "bad\x00name", id="nul"),
]


@pytest.mark.parametrize(("name", "value"), BAD)
def test_a_bad_value_is_a_form_error_and_a_400(world, api, name, value):
    events = WorkflowEvent.objects.count()

    page = signed_in("alice").get("/search", {name: value})
    response = api("alice").get("/api/workflows", {name: value})

    assert page.status_code == 400
    assert page.context["form"].errors[name]
    assert 'role="alert"' in page.content.decode()
    assert "<tr data-workflow" not in page.content.decode()
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["message"].startswith(f"{name}: ")
    assert WorkflowEvent.objects.count() == events


OUT_OF_RANGE = [
    pytest.param("2026-12-01T00:00:00+16:00", OFFSET_OUT_OF_RANGE, id="offset-east"),
    pytest.param("2026-12-01T00:00:00-16:00", OFFSET_OUT_OF_RANGE, id="offset-west"),
    pytest.param("2026-12-01T00:00:00+23:59", OFFSET_OUT_OF_RANGE, id="offset-largest"),
    pytest.param("1969-12-31T23:00:00Z", MOMENT_OUT_OF_RANGE, id="before-1970"),
    pytest.param("2201-01-01T00:00:00Z", MOMENT_OUT_OF_RANGE, id="after-2200"),
    pytest.param("0001-01-01", MOMENT_OUT_OF_RANGE, id="day-of-year-1"),
]


@pytest.mark.parametrize(("value", "message"), OUT_OF_RANGE)
def test_a_search_time_outside_the_range_is_a_sentence_not_a_500(acme, api, value, message):
    events = WorkflowEvent.objects.count()

    page = signed_in("alice").get("/search", {"createdBefore": value})
    response = api("alice").get("/api/workflows", {"createdBefore": value})

    assert page.status_code == 400
    assert page.context["form"].errors["createdBefore"] == [message]
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["message"] == f"createdBefore: {message}"
    assert error["requestId"]
    assert WorkflowEvent.objects.count() == events


def test_an_inverted_date_range_is_refused(world, api):
    params = {"createdAfter": "2026-03-05", "createdBefore": "2026-03-01"}

    page = signed_in("alice").get("/search", params)
    response = api("alice").get("/api/workflows", params)

    assert page.status_code == 400
    assert page.context["form"].errors["createdBefore"] == [search_module.RANGE_INVERTED]
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (f"createdBefore: {search_module.RANGE_INVERTED}")


def test_blank_fields_mean_any_on_the_page_and_are_refused_by_the_api(world, api):
    blank = {"text": "", "status": "", "template": "", "createdAfter": ""}

    assert len(_page_ids(signed_in("audrey"), blank)) == 4
    response = api("audrey").get("/api/workflows", {"status": ""})
    assert response.status_code == 400
    assert response.json()["error"]["message"] == f"status: {search_module.BLANK_REFUSED}"


def test_the_page_offers_the_organisations_steps_and_kinds_in_words(acme):
    body = signed_in("alice").get("/search").content.decode()

    assert '<option value="PENDING_FINANCE">Waiting: Finance</option>' in body
    assert '<option value="PENDING_REVIEW">Waiting: Manager and IT</option>' in body
    assert '<option value="PENDING_SUBMITTER">Sent back for changes</option>' in body
    assert '<option value="expense-approval">Expense claim</option>' in body
    assert '<label for="id_createdAfter">Submitted from</label>' in body
    assert 'type="date" name="createdAfter"' in body


def test_the_openapi_schema_documents_every_search_parameter(acme, api):
    schema = api("alice").get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/workflows"]["get"]
    params = {p["name"]: p for p in operation["parameters"]}

    assert set(params) == {
        "text",
        "status",
        "template",
        "subjectId",
        "subjectType",
        "submitter",
        "assignee",
        "createdAfter",
        "createdBefore",
        "amountMin",
        "amountMax",
        "decidedBy",
        "sort",
        "limit",
        "offset",
    }
    assert all(p["in"] == "query" and not p.get("required") for p in params.values())
    assert params["text"]["schema"]["maxLength"] == search_module.TEXT_MAX
    assert params["subjectId"]["schema"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 128,
        "pattern": "^[^\\u0000]*$",
    }
    assert re.fullmatch(params["status"]["schema"]["pattern"], "PENDING_FINANCE")
    assert not re.fullmatch(params["status"]["schema"]["pattern"], "pending")
    assert {"format": "date"} in params["createdAfter"]["schema"]["anyOf"]
    assert params["limit"]["schema"]["maximum"] == 200
    assert re.fullmatch(params["amountMin"]["schema"]["pattern"], "10,000.50")
    assert params["sort"]["schema"]["enum"] == ["amount", "newest", "oldest", "status"]
    assert "400" in operation["responses"]
