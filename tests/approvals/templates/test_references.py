"""Reference checks at publish: a definition naming a group, user, activity or data
field this organisation does not have is refused at that field, and nothing is
published. The system check reports a published version whose references broke later."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from approvals.models import OrgGroup, Tenant, WorkflowTemplate
from approvals.services.templates import DefinitionRefused, workflow_template_publish
from templates_engine.references import condition_fields

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[3] / "approvals" / "demo"


def expense() -> dict[str, Any]:
    return copy.deepcopy(json.loads((DEMO / "expense-approval.json").read_text()))


def purchase() -> dict[str, Any]:
    return copy.deepcopy(json.loads((DEMO / "purchase-request.json").read_text()))


def _refused(acme: Tenant, doc: dict[str, Any]) -> DefinitionRefused:
    before = WorkflowTemplate.objects.count()
    with pytest.raises(DefinitionRefused) as refused:
        workflow_template_publish(tenant=acme, definition=doc)
    assert WorkflowTemplate.objects.count() == before  # nothing published
    return refused.value


def test_a_misspelt_group_is_refused_at_its_field(acme: Tenant) -> None:
    doc = expense()
    doc["steps"][2]["approvers"] = [{"group": "finanse"}]

    refused = _refused(acme, doc)

    assert refused.path == "$.steps[2].approvers[0].group"
    assert "'finanse'" in refused.problem


def test_an_unknown_activity_is_refused_at_its_field(acme: Tenant) -> None:
    doc = purchase()
    doc["steps"][2]["compensate"] = {"activity": "release_budgett"}

    refused = _refused(acme, doc)

    assert refused.path == "$.steps[2].compensate.activity"
    assert "'release_budgett'" in refused.problem


def test_a_condition_on_an_unknown_field_is_refused_at_the_condition(acme: Tenant) -> None:
    doc = expense()
    doc["steps"][1]["when"] = "data.amount > 10000000"

    refused = _refused(acme, doc)

    assert refused.path == "$.steps[1].when"
    assert "data.amount," in refused.problem
    assert "amountPaise" in refused.problem  # what it could have said


def test_every_problem_is_reported_not_only_the_first(acme: Tenant) -> None:
    doc = expense()
    doc["steps"][0]["approvers"] = [{"user": "nobody"}]
    doc["steps"][1]["fallback"] = [{"group": "board"}]
    doc["steps"][2]["when"] = "data.colour == 'red'"

    refused = _refused(acme, doc)

    assert [p.path for p in refused.problems] == [
        "$.steps[0].approvers[0].user",
        "$.steps[1].fallback[0].group",
        "$.steps[2].when",
    ]


def test_another_organisations_group_does_not_count(acme: Tenant) -> None:
    globex = Tenant.objects.create(slug="globex", name="Globex")
    OrgGroup.objects.create(tenant=globex, key="auditors-x", name="Globex auditors")
    doc = expense()
    doc["steps"][2]["approvers"] = [{"group": "auditors-x"}]

    refused = _refused(acme, doc)

    assert refused.path == "$.steps[2].approvers[0].group"


def test_a_shape_problem_is_still_refused_with_its_path(acme: Tenant) -> None:
    doc = expense()
    doc["steps"][0]["deadline"] = "two days"

    refused = _refused(acme, doc)

    assert refused.path == "$.steps[0].deadline"


def test_a_condition_may_read_an_earlier_activity_result(acme: Tenant) -> None:
    doc = purchase()
    doc["steps"][3]["when"] = "data.results.reserve_budget.approved == true"

    published = workflow_template_publish(tenant=acme, definition=doc)

    assert published.definition["steps"][3]["when"] == doc["steps"][3]["when"]


def test_the_demo_definitions_resolve(acme: Tenant) -> None:
    published = workflow_template_publish(tenant=acme, definition=purchase())

    assert published.version >= 1


@pytest.mark.parametrize(
    ("source", "fields"),
    [
        ("data.amountPaise >= 100000", ["amountPaise"]),
        ("data['category'] == 'IT' && data.amountPaise > 1", ["category", "amountPaise"]),
        ("data.item == 'data.secret'", ["item"]),
        ("has(data.note) && submitter == 'alice'", ["note"]),
        ("metadata.x == 1", []),
    ],
    ids=["dot", "index-and-dot", "string-literal", "has", "not-data"],
)
def test_condition_fields(source: str, fields: list[str]) -> None:
    assert condition_fields(source) == fields


def test_the_system_check_reports_a_group_deleted_after_publishing(acme: Tenant) -> None:
    call_command("check", "--database", "default")  # the demo resolves
    OrgGroup.objects.filter(tenant=acme, key="it-admins").delete()

    with pytest.raises(SystemCheckError) as failed:
        call_command("check", "--database", "default")

    text = str(failed.value)
    assert "approvals.E002" in text
    assert "purchase-request v1: $.steps[0].approvers[1].group" in text
    assert "'it-admins'" in text
