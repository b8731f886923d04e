"""An inbox item carries the request in one line (``summary``, the workflow template's
summary line filled from the data, else its title and the subject's reference), its
``amount`` as people read it, and the step's title (``stepName``), in the API and on
the inbox page. The line is projected onto the workflow row when the data is set, a
rebuild derives it again, and the migration that added it filled it the same way."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import User, Workflow
from approvals.runtime.rebuild import read_models_check, read_models_rebuild
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_decide, workflow_start

from ..helpers import start_expense
from ..pages.support import signed_in

pytestmark = pytest.mark.django_db

RS_45_000 = 4_500_000

# A workflow template with no summary line and no amount: the line is its title and
# reference; a step without a title is named by its id in words.
MEMO = {
    "key": "memo",
    "title": "Memo",
    "schema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "steps": [
        {
            "id": "sign_off",
            "kind": "approval",
            "approvers": [{"manager": "submitter"}],
            "on_reject": "submitter",
        }
    ],
}
# The same, with a summary line over its one field: resubmitting changes the line.
NOTE = {**MEMO, "key": "note", "title": "Note", "summary": "Note: {text}"}


def _only_item(api: Any, who: str = "bob") -> dict[str, Any]:
    body = api(who).get("/api/me/tasks").json()
    (item,) = body["items"]
    return item


def _start(acme: Any, doc: dict[str, Any], subject: str, data: dict[str, Any]) -> str:
    workflow_template_publish(tenant=acme, definition=doc)
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key=doc["key"],
        subject_type="memo",
        subject_id=subject,
        data=data,
    )
    return str(started.workflow_id)


def test_an_expense_item_reads_its_summary_amount_and_step_name(acme, api):
    start_expense(api("alice"), RS_45_000, subject="R-8", description="Team dinner in Pune")

    item = _only_item(api)

    assert item["summary"] == "Team dinner in Pune, ₹45,000.00"
    assert item["amount"] == "₹45,000.00"
    assert item["stepName"] == "Manager"
    assert item["step"] == "manager"  # the id stays, for programs


def test_a_field_the_data_lacks_leaves_no_stray_separator(acme, api):
    start_expense(api("alice"), RS_45_000, subject="R-9")  # no description

    assert _only_item(api)["summary"] == "₹45,000.00"


def test_money_in_another_currency_reads_in_that_currency(acme, api):
    start_expense(api("alice"), 123_456, subject="R-10", currency="USD", description="Books")

    item = _only_item(api)

    assert item["summary"] == "Books, $1,234.56"
    assert item["amount"] == "$1,234.56"


def test_without_a_summary_line_the_item_reads_the_title_and_reference(acme, api):
    _start(acme, MEMO, "M-1", {"text": "hello"})

    item = _only_item(api)

    assert item["summary"] == "Memo M-1"
    assert item["amount"] is None
    assert item["stepName"] == "Sign off"


def test_a_resubmission_changes_the_summary_line(acme, api):
    wid = _start(acme, NOTE, "N-1", {"text": "first draft"})
    assert _only_item(api)["summary"] == "Note: first draft"
    workflow_decide(
        user=User.objects.get(username="bob"),
        workflow_id=wid,
        decision="reject",
        request_id="b1",
        comment="say what it is for",
    )

    workflow_decide(
        user=User.objects.get(username="alice"),
        workflow_id=wid,
        decision="approve",
        request_id="a1",
        data={"text": "second draft"},
    )

    assert _only_item(api)["summary"] == "Note: second draft"
    assert Workflow.objects.get(pk=wid).summary == "Note: second draft"


def test_the_api_list_reads_the_line_in_its_one_query(acme, api):
    for n in range(3):
        start_expense(api("alice"), RS_45_000, subject=f"Q-{n}", description=f"Trip {n}")
    bob = api("bob")
    bob.get("/api/me/tasks")  # the definition is cached once per process

    with CaptureQueriesContext(connection) as ctx:
        items = bob.get("/api/me/tasks").json()["items"]

    assert sorted(i["summary"] for i in items) == [f"Trip {n}, ₹45,000.00" for n in range(3)]
    listed = [q["sql"] for q in ctx.captured_queries if "approvals_pendingtask" in q["sql"]]
    assert len(listed) == 1
    assert "approvals_workflowtemplate" not in " ".join(q["sql"] for q in ctx.captured_queries)


def test_the_inbox_page_shows_the_summary_amount_and_step(acme, api):
    start_expense(api("alice"), RS_45_000, subject="R-11", description="Team dinner in Pune")

    body = signed_in("bob").get("/").content.decode()

    assert "Team dinner in Pune, ₹45,000.00" in body
    assert "Expense claim R-11" in body
    assert "Manager step" in body


def test_a_rebuild_derives_the_summary_line_again(acme, api):
    start_expense(api("alice"), RS_45_000, subject="R-12", description="Taxi")
    _start(acme, MEMO, "M-2", {})
    live = set(Workflow.objects.values_list("pk", "summary", "amount_display"))
    Workflow.objects.update(summary="stale", amount_display="")

    assert {name for _, name in read_models_check(tenant_id=acme.pk)} == {"workflow"}
    read_models_rebuild(tenant_id=acme.pk)

    assert set(Workflow.objects.values_list("pk", "summary", "amount_display")) == live
    assert read_models_check(tenant_id=acme.pk) == []


def test_the_migration_fills_the_line_as_the_command_path_projects_it(acme, api):
    start_expense(api("alice"), RS_45_000, subject="R-13", description="Hotel")
    _start(acme, MEMO, "M-3", {})
    live = set(Workflow.objects.values_list("pk", "summary", "amount_display"))
    Workflow.objects.update(summary="", amount_display="")
    migration = importlib.import_module("approvals.migrations.0023_workflow_summary")

    migration.fill_summaries(apps, None)

    assert set(Workflow.objects.values_list("pk", "summary", "amount_display")) == live
    assert ("Hotel, ₹45,000.00", "₹45,000.00") in {(s, a) for _, s, a in live}
