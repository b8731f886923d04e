"""An approver chosen by a condition in the workflow template pages: the structured
editor shows the condition and keeps it on save, and "try it" says who a condition
chose and who it left out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from approvals.models import OrgGroup, Tenant, User, WorkflowTemplate, WorkflowTemplateDraft
from approvals.services.templates import workflow_template_publish
from approvals.web.definition_editor import complete, editor_schema, from_editor, to_editor

pytestmark = pytest.mark.django_db

BASE = "/admin/approvals/workflowtemplate"
KEY = "purchase-signing"
VP_ABOVE = "data.amountPaise > 10000000"
DEFINITION: dict[str, Any] = {
    "key": KEY,
    "title": "Purchase signing",
    "schema": {
        "type": "object",
        "required": ["amountPaise"],
        "properties": {
            "amountPaise": {
                "type": "integer",
                "title": "Amount",
                "x-money": {"currency": "currency"},
            },
            "currency": {"type": "string", "enum": ["INR", "USD"], "title": "Currency"},
        },
    },
    "steps": [
        {
            "id": "sign",
            "title": "Signing",
            "kind": "approval",
            "mode": "all",
            "approvers": [{"manager": "submitter"}, {"user": "victor", "when": VP_ABOVE}],
            "deadline": "P2D",
        }
    ],
}
SCHEMA = editor_schema(groups=["finance"], users=["victor", "cora"])


def _published(acme: Tenant) -> WorkflowTemplate:
    return workflow_template_publish(tenant=acme, definition=DEFINITION)


def _as(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _editor_doc(template: WorkflowTemplate) -> Any:
    groups = list(OrgGroup.objects.filter(tenant=template.tenant).values_list("key", flat=True))
    users = list(User.objects.filter(tenant=template.tenant).values_list("username", flat=True))
    doc = complete(to_editor(template.definition), editor_schema(groups=groups, users=users))
    return json.loads(json.dumps(doc))


def test_the_editor_keeps_each_approver_s_condition_its_builder_shows() -> None:
    posted = json.loads(json.dumps(complete(to_editor(DEFINITION), SCHEMA)))

    # the form leaves conditions to their builders (web/condition_form.py)...
    assert "when" not in posted["steps"][0]["approvers"][1]
    # ...and gives the definition back with them
    assert from_editor(posted, DEFINITION) == DEFINITION


def test_the_editor_adds_a_condition_to_an_approver() -> None:
    posted = json.loads(json.dumps(complete(to_editor(DEFINITION), SCHEMA)))
    posted["steps"][0]["approvers"][0]["when"] = "data.amountPaise > 100"

    approvers = from_editor(posted, DEFINITION)["steps"][0]["approvers"]

    assert approvers == [
        {"manager": "submitter", "when": "data.amountPaise > 100"},
        {"user": "victor", "when": VP_ABOVE},
    ]


def test_the_change_page_shows_the_approver_s_condition(acme: Tenant) -> None:
    template = _published(acme)

    page = _as("fiona").get(f"{BASE}/{template.pk}/change/").content.decode()

    assert 'name="when-sign-by-1-0-value" value="1,00,000"' in page  # in its builder
    assert "Victor too, above ₹1,00,000.00" in page  # and in the diagram


def test_saving_the_editor_keeps_the_approver_s_condition(acme: Tenant) -> None:
    # given
    template = _published(acme)
    doc = _editor_doc(template)
    doc["steps"][0]["deadline"] = {"number": 3, "unit": "days"}

    # when
    response = _as("fiona").post(
        f"{BASE}/{template.pk}/change/",
        {
            "definition": json.dumps(doc),
            "try_submitter": "alice",
            "try_data": json.dumps({"amountPaise": 100}),
            "_save": "Save",
        },
    )

    # then: saved as a draft for a second finance admin (four eyes on rules)
    assert response.status_code == 302, response.content.decode()[:2000]
    saved = WorkflowTemplateDraft.objects.get(tenant=acme, key=KEY).definition
    assert saved["steps"][0]["deadline"] == "P3D"
    assert saved["steps"][0]["approvers"] == DEFINITION["steps"][0]["approvers"]


def test_a_condition_that_does_not_compile_is_refused_at_the_approver_s_field(
    acme: Tenant,
) -> None:
    template = _published(acme)
    doc = _editor_doc(template)
    doc["steps"][0]["approvers"][1]["when"] = "data.amountPaise >"

    response = _as("fiona").post(
        f"{BASE}/{template.pk}/change/",
        {
            "definition": json.dumps(doc),
            "try_submitter": "alice",
            "try_data": "{}",
            "_save": "Save",
        },
    )

    assert response.status_code == 200
    widget = response.context["adminform"].form.fields["definition"].widget
    assert "steps§0§approvers§1§when" in widget.error_map
    assert not WorkflowTemplate.objects.filter(key=KEY, version=2).exists()


@pytest.mark.parametrize(
    ("amount", "words"),
    [
        (20_000_000, "Asks Bob and Victor (all must approve); Victor as the amount is above"),
        (
            5_000_000,
            "Asks Bob (all must approve); not Victor: only when the amount is above ₹1,00,000.00",
        ),
    ],
    ids=["condition-true", "condition-false"],
)
def test_try_it_says_who_a_condition_chose_and_who_it_left_out(
    acme: Tenant, amount: int, words: str
) -> None:
    template = _published(acme)

    response = _as("fiona").post(
        f"{BASE}/{template.pk}/try/",
        {"try_submitter": "alice", "try_data": json.dumps({"amountPaise": amount})},
    )

    page = response.content.decode()
    assert words in page
    assert "Finished: approved" in page
