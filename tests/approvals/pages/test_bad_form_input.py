"""Bad input on the server-rendered pages: a form error or a message, never a 500, and
nothing changes."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core import signing
from django.test import Client

from approvals.models import StartRequest, Tenant, User, Workflow, WorkflowEvent, WorkflowTemplate
from approvals.models.time_bounds import DAY_OUT_OF_RANGE
from approvals.pages.request import COMMENT_NUL, DELEGATE_NUL
from approvals.selectors.tasks import CURSOR_SALT
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import IDEMPOTENCY_KEY_INVALID
from approvals.web.forms import NUMBER_TOO_LARGE

from ..helpers import EXPENSE, decide, start_expense

pytestmark = pytest.mark.django_db

PENDING_AMOUNT = 4_500_000


def _state(workflow_id: str | None = None) -> tuple[Any, ...]:
    counts = tuple(m.objects.count() for m in (Workflow, WorkflowEvent, StartRequest))
    if workflow_id is None:
        return counts
    wf = Workflow.objects.get(pk=workflow_id)
    return (*counts, wf.version, wf.status)


@contextmanager
def changes_nothing(workflow_id: str | None = None) -> Iterator[None]:
    before = _state(workflow_id)
    yield
    assert _state(workflow_id) == before


def _browser(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _form(**overrides: Any) -> dict[str, Any]:
    form = {
        "amountPaise": "45000.00",  # rupees: the form takes currency units
        "currency": "INR",
        "department": "eng",
        "subject_id": "E-9",
        "idempotency_key": uuid.uuid4().hex,
    }
    form.update(overrides)
    return form


def _form_errors(response: Any) -> str:
    assert response.status_code == 400, response.status_code
    form = response.context["form"]
    return json.dumps(form.errors)


@pytest.fixture
def pending(acme: Any, api: Any) -> str:
    response = start_expense(api("alice"), PENDING_AMOUNT)
    assert response.status_code == 201
    return response.json()["workflowId"]


# -- the start form -----------------------------------------------------------------------------


def test_a_good_start_form_starts_a_workflow(acme):
    # the baseline the refusals below are measured against
    response = _browser("alice").post(f"/workflows/new?template={EXPENSE}", _form())

    assert response.status_code == 302
    assert Workflow.objects.count() == 1


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param({"idempotency_key": "k" * 256}, IDEMPOTENCY_KEY_INVALID, id="key-too-long"),
        pytest.param({"idempotency_key": "has space"}, IDEMPOTENCY_KEY_INVALID, id="key-space"),
        pytest.param({"subject_id": "s" * 129}, "subject_id", id="subject-id-too-long"),
        pytest.param({"subject_id": "a\x00b"}, "subject_id", id="subject-id-nul"),
        pytest.param({"department": "d" * 65}, "department", id="department-too-long"),
        pytest.param({"department": "en\x00g"}, "department", id="department-nul"),
        pytest.param({"amountPaise": "12abc"}, "amountPaise", id="amount-not-a-number"),
        pytest.param({"amountPaise": str(2**63)}, "amountPaise", id="amount-past-64-bits"),
        pytest.param({"amountPaise": "9" * 5000}, "amountPaise", id="amount-5000-digits"),
        pytest.param({"amountPaise": "45000.001"}, "amountPaise", id="amount-past-paise"),
        pytest.param({"amountPaise": "1e5"}, "amountPaise", id="amount-exponent"),
        pytest.param({"amountPaise": "NaN"}, "amountPaise", id="amount-nan"),
        pytest.param({"amountPaise": "0.00"}, "amountPaise", id="amount-below-minimum"),
        pytest.param({"currency": "inr"}, "currency", id="currency-lowercase"),
    ],
)
def test_bad_start_form_shows_an_error_and_starts_nothing(acme, overrides, expected):
    with changes_nothing():
        response = _browser("alice").post(f"/workflows/new?template={EXPENSE}", _form(**overrides))

    assert expected in _form_errors(response)


def test_start_form_for_an_unknown_template_starts_nothing(acme):
    with changes_nothing():
        response = _browser("alice").post("/workflows/new?template=no-such-thing", _form())

    assert response.status_code == 200
    assert "form" not in response.context or response.context.get("form") is None


def test_start_form_with_an_integer_the_rules_cannot_hold_is_a_form_error(acme):
    # purchase-request sets no maximum: the engine, not the form, refuses 2**63
    with changes_nothing():
        response = _browser("alice").post(
            "/workflows/new?template=purchase-request",
            {
                "amountPaise": str(2**63),
                "currency": "INR",
                "category": "SOFTWARE",
                "item": "laptop",
                "subject_id": "P-1",
                "idempotency_key": "p-1",
            },
        )

    assert "64-bit" in _form_errors(response)


TRIP = {
    "key": "trip",
    "title": "Trip",
    "schema": {
        "type": "object",
        "required": ["km", "day"],
        "properties": {
            "km": {"type": "number", "title": "Distance"},
            "day": {"type": "string", "format": "date", "title": "Day"},
        },
    },
    "steps": [{"id": "boss", "kind": "approval", "approvers": [{"user": "bob"}]}],
}


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        pytest.param({"km": "1e400"}, "km", NUMBER_TOO_LARGE, id="number-infinite-as-a-float"),
        pytest.param({"km": "-1e400"}, "km", NUMBER_TOO_LARGE, id="number-negative-infinite"),
        pytest.param({"day": "0001-01-01"}, "day", DAY_OUT_OF_RANGE, id="date-year-1"),
        pytest.param({"day": "1969-12-31"}, "day", DAY_OUT_OF_RANGE, id="date-before-1970"),
        pytest.param({"day": "9999-12-31"}, "day", DAY_OUT_OF_RANGE, id="date-year-9999"),
    ],
)
def test_a_number_or_date_the_data_cannot_hold_is_a_form_error(acme, overrides, field, message):
    workflow_template_publish(tenant=acme, definition=TRIP)
    alice = _browser("alice")
    form = {"km": "12.5", "day": "2026-12-01", "subject_id": "T-1", "idempotency_key": "t-1"}

    with changes_nothing():
        response = alice.post("/workflows/new?template=trip", {**form, **overrides})

    assert response.status_code == 400
    assert response.context["form"].errors[field] == [message]


# -- deciding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("workflow_id", ["2f1c6b5e-8d3a-4c7e-9b21-6a0d4e5f7c89", "other-tenant"])
def test_deciding_an_unknown_or_invisible_workflow_is_404(pending, workflow_id):
    if workflow_id == "other-tenant":
        globex = Tenant.objects.create(slug="globex", name="Globex")
        template = WorkflowTemplate.objects.filter(key=EXPENSE).first()
        assert template is not None
        other = Workflow.objects.create(
            tenant=globex,
            template=template,
            template_key=EXPENSE,
            template_version=template.version,
            subject_type="expense",
            subject_id="G-1",
        )
        workflow_id = str(other.pk)

    with changes_nothing(pending):
        response = _browser("bob").post(
            f"/workflows/{workflow_id}/decide", {"decision": "approve", "request_id": "r-1"}
        )

    assert response.status_code == 404


def test_deciding_a_workflow_not_waiting_on_you_is_a_message(pending):
    with changes_nothing(pending):  # olga, an organisation admin, reads it; bob decides it
        response = _browser("olga").post(
            f"/workflows/{pending}/decide", {"decision": "approve", "request_id": "r-2"}
        )

    assert response.status_code == 302
    texts = [m.message for m in get_messages(response.wsgi_request)]
    assert any("not yours" in t for t in texts), texts


@pytest.mark.parametrize(
    "form",
    [
        {"decision": "maybe", "request_id": "r-3"},
        {"decision": "approve", "request_id": "r" * 129},
        {"decision": "approve", "request_id": "bad\x00id"},
        {"decision": "approve"},
    ],
)
def test_an_unreadable_decision_is_a_message(pending, form):
    with changes_nothing(pending):
        response = _browser("bob").post(f"/workflows/{pending}/decide", form)

    assert response.status_code == 302
    texts = [m.message for m in get_messages(response.wsgi_request)]
    assert any("could not be read" in t for t in texts), texts


@pytest.mark.parametrize(
    ("form", "message"),
    [
        pytest.param({"decision": "approve", "comment": "fine\x00"}, COMMENT_NUL, id="comment"),
        pytest.param({"decision": "delegate", "delegate_to": "vic\x00tor"}, DELEGATE_NUL, id="to"),
    ],
)
def test_a_nul_in_the_decide_form_is_a_sentence_and_records_nothing(pending, form, message):
    with changes_nothing(pending):
        page = _browser("bob").post(f"/workflows/{pending}/decide", {**form, "request_id": "n-1"})
        script = _browser("bob").post(
            f"/workflows/{pending}/decide",
            {**form, "request_id": "n-2"},
            HTTP_ACCEPT="application/json",
        )

    assert page.status_code == 302
    assert [m.message for m in get_messages(page.wsgi_request)] == [message]
    assert script.status_code == 400
    assert script.json()["message"] == message


def test_a_nul_in_a_resubmission_comment_is_a_form_error_and_records_nothing(pending, api):
    assert decide(api("bob"), pending, "send_back", "sb-1", comment="receipt?").status_code == 200
    for withdraw in ({}, {"decision": "reject"}):
        with changes_nothing(pending):
            response = _browser("alice").post(
                f"/workflows/{pending}/resubmit",
                {**_form(), **withdraw, "request_id": "rs-1", "comment": "here\x00"},
            )

        assert response.status_code == 400
        assert COMMENT_NUL in response.context["form"].non_field_errors()


# -- the inbox ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        "0",
        "-1",
        signing.dumps(["2020-01-01T00:00:00+00:00", 2**70], salt=CURSOR_SALT, compress=True),
        signing.dumps(["2020-01-01T00:00:00+00:00", -1], salt=CURSOR_SALT, compress=True),
    ],
    ids=["garbage", "zero", "negative", "signed-huge-id", "signed-negative-id"],
)
def test_a_forged_inbox_cursor_starts_the_inbox_again(pending, cursor):
    with changes_nothing(pending):
        response = _browser("bob").get("/", {"cursor": cursor})

    assert response.status_code == 302
    assert response["Location"] == "/"


# -- the admin's workflow template form -----------------------------------------------------------


@pytest.mark.parametrize(
    ("definition", "expected"),
    [
        pytest.param("[" * 50_000 + "]" * 50_000, "nested deeper", id="deep"),
        pytest.param('{"key": "x\\u0000", "steps": []}', "NUL", id="nul"),
        pytest.param('{"key": "ok", "steps": [' * 1 + "}", "JSON", id="malformed"),
    ],
)
def test_admin_template_form_refuses_bad_json_with_a_form_error(acme, definition, expected):
    admin = _browser("admin")
    tenant = Tenant.objects.get(slug="acme")
    before = WorkflowTemplate.objects.count()

    response = admin.post(
        "/admin/approvals/workflowtemplate/add/",
        {"tenant": tenant.pk, "definition": definition},
    )

    assert response.status_code == 200
    assert expected in json.dumps(response.context["adminform"].form.errors)
    assert WorkflowTemplate.objects.count() == before
