"""Departments as a list the organisation keeps: the start form offers the list, a start
naming a department not on it is refused in words and changes nothing (the API, the
form and a schedule pass the same check), an organisation keeping none takes free text,
and finance and organisation admins keep the list in the admin (auditors read it)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from approvals.admin.departments import KEY_TAKEN, NAME_TAKEN
from approvals.demo import DEPARTMENTS
from approvals.models import Department, User, Workflow
from approvals.services.departments import NOT_A_DEPARTMENT
from approvals.web.forms import NOT_A_DEPARTMENT as FORM_NOT_A_DEPARTMENT
from approvals.web.inbox_lists import data_changes
from approvals.words.data import format_value
from tests.approvals.helpers import EXPENSE, start_expense

pytestmark = pytest.mark.django_db

NEW = f"/workflows/new?template={EXPENSE}"
ADD = "/admin/approvals/department/add/"


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def test_the_demo_seed_keeps_the_demo_departments(acme: Any) -> None:
    kept = dict(Department.objects.filter(tenant=acme).values_list("key", "name"))

    assert kept == DEPARTMENTS
    assert {"Engineering", "Finance", "Sales", "Operations"} <= set(kept.values())


def test_a_start_naming_no_kept_department_is_refused_in_words_and_changes_nothing(
    acme: Any, api: Any
) -> None:
    response = start_expense(api("alice"), 4_500_000, department="engineering")

    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "INVALID_DATA"
    assert error["message"].startswith(
        '$.department: "engineering" is not one of the organisation\'s departments.'
    )
    assert "Engineering (eng)" in error["message"] and "Sales (sales)" in error["message"]
    assert not Workflow.objects.exists()


def test_a_start_naming_a_kept_department_starts(acme: Any, api: Any) -> None:
    response = start_expense(api("alice"), 4_500_000, department="ops")

    assert response.status_code == 201, response.content
    assert Workflow.objects.get().data["department"] == "ops"


def test_an_organisation_keeping_no_departments_takes_free_text(acme: Any, api: Any) -> None:
    Department.objects.filter(tenant=acme).delete()

    response = start_expense(api("alice"), 4_500_000, department="Research & development")

    assert response.status_code == 201, response.content


def test_the_start_form_offers_the_kept_departments_as_a_choice(acme: Any) -> None:
    page = _client("alice").get(NEW).content.decode()

    select = page[page.index('<select name="department"') :]
    select = select[: select.index("</select>")]
    assert '<option value="" selected>Choose a department</option>' in select
    assert '<option value="eng">Engineering</option>' in select
    assert select.index("Engineering") < select.index("Finance") < select.index("Sales")


def test_the_start_form_refuses_a_department_not_on_the_list_and_starts_nothing(
    acme: Any,
) -> None:
    form = {
        "idempotency_key": "k-dept",
        "amountPaise": "450.00",
        "currency": "INR",
        "department": "engineering",
        "subject_id": "E-DEPT",
    }

    response = _client("alice").post(NEW, form)

    assert response.status_code == 400
    assert FORM_NOT_A_DEPARTMENT.replace("'", "&#x27;") in response.content.decode()
    assert not Workflow.objects.exists()


def test_the_refusal_names_the_field_and_the_choices() -> None:
    from approvals.services.departments import department_problem

    schema = {"properties": {"team": {"type": "string", "x-list": "departments"}}}
    kept = [("eng", "Engineering"), ("fin", "Finance")]

    assert department_problem(schema=schema, data={"team": "eng"}, departments=kept) is None
    assert department_problem(schema=schema, data={"team": "x"}, departments=[]) is None
    assert department_problem(
        schema=schema, data={"team": "x"}, departments=kept
    ) == NOT_A_DEPARTMENT.format(
        field="team", value="x", choices="Engineering (eng), Finance (fin)"
    )


@pytest.mark.parametrize("username", ["fiona", "olga"])
def test_finance_and_organisation_admins_keep_the_list_in_the_admin(
    acme: Any, username: str
) -> None:
    client = _client(username)

    response = client.post(ADD, {"name": "Legal  affairs", "key": "Legal"})

    assert response.status_code == 302, response.content.decode()[:3000]
    added = Department.objects.get(key="legal")
    assert (added.tenant_id, added.name) == (acme.pk, "Legal affairs")
    listing = client.get("/admin/approvals/department/").content.decode()
    assert "Legal affairs" in listing and "Engineering" in listing


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        pytest.param(
            {"name": "Engineering two", "key": "eng"},
            "key",
            KEY_TAKEN.format(key="eng"),
            id="key-taken",
        ),
        pytest.param(
            {"name": "engineering", "key": "eng2"},
            "name",
            NAME_TAKEN.format(name="engineering"),
            id="name-taken-in-other-capitals",
        ),
        pytest.param({"name": "Legal", "key": "legal affairs"}, "key", "slug", id="key-not-a-slug"),
        pytest.param({"name": "", "key": "legal"}, "name", "required", id="name-empty"),
    ],
)
def test_a_department_already_kept_or_badly_named_is_refused_in_words(
    acme: Any, fields: dict[str, str], field: str, message: str
) -> None:
    before = list(Department.objects.values_list("key", "name").order_by("key"))

    response = _client("fiona").post(ADD, fields)

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert any(message in e for e in errors[field]), errors
    assert list(Department.objects.values_list("key", "name").order_by("key")) == before


def test_auditors_read_the_list_and_change_nothing(acme: Any) -> None:
    client = _client("audrey")

    assert client.get("/admin/approvals/department/").status_code == 200
    assert client.post(ADD, {"name": "Legal", "key": "legal"}).status_code == 403
    assert not Department.objects.filter(key="legal").exists()


def test_pages_show_a_kept_department_by_its_name_not_its_key(acme: Any, api: Any) -> None:
    started = start_expense(api("alice"), 4_500_000, department="ops")
    assert started.status_code == 201, started.content
    wid = started.json()["workflowId"]

    inbox = _client("bob").get("/").content.decode()
    request = _client("bob").get(f"/workflows/{wid}").content.decode()

    assert "Department: Operations" in inbox
    assert "Department: ops" not in inbox
    assert re.search(r"Department</dt>\s*<dd[^>]*>\s*Operations\s*</dd>", request), request


def test_a_changed_department_reads_by_its_names() -> None:
    schema = {"properties": {"department": {"type": "string", "x-list": "departments"}}}
    lists = {"departments": {"ops": "Operations", "eng": "Engineering"}}

    changes = data_changes(schema, {"department": "ops"}, {"department": "eng"}, lists)
    unknown = format_value(schema, {"department": "legal"}, "department", lists)

    assert [(c.old, c.new) for c in changes] == [("Operations", "Engineering")]
    assert unknown == "legal"  # a key no longer kept reads as it was sent
