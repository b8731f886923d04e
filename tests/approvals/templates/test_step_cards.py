"""The step cards post named fields; each bad one (an approver the picker never
offered, a rejection sent to a later step, a step with no title, an unknown kind) is
refused in words and publishes or drafts nothing. An untouched card posts its step back
as it was, settings the cards do not show included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from approvals.models import OrgGroup, User, WorkflowTemplate, WorkflowTemplateDraft
from approvals.web import step_cards
from approvals.web.definition_editor import complete, editor_schema, to_editor

from ..helpers import EXPENSE

pytestmark = pytest.mark.django_db

BASE = "/admin/approvals/workflowtemplate"


def _v1(acme: Any) -> WorkflowTemplate:
    return WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)


def _card_post(template: WorkflowTemplate) -> dict[str, str]:
    """What the page posts for ``template``'s steps, untouched."""
    out = {step_cards.COUNT: ""}
    cards = step_cards.cards(to_editor(template.definition)["steps"])
    out[step_cards.COUNT] = str(len(cards))
    for c in cards:
        out.update({f"{c.p}-id": c.id, f"{c.p}-kind": c.kind, f"{c.p}-title": c.title})
        out[f"{c.p}-approvers"] = str(len(c.approvers))
        out.update(dict(c.approver_rows))
        out[f"{c.p}-mode"] = c.mode
        out[f"{c.p}-deadline-number"] = c.deadline.number
        out[f"{c.p}-deadline-unit"] = c.deadline.unit
        out[f"{c.p}-reminders"] = str(len(c.reminders))
        for name, d in c.reminder_rows:
            out.update({f"{name}-number": d.number, f"{name}-unit": d.unit})
        out[f"{c.p}-escalate"] = c.escalate
        out[f"{c.p}-on_reject"] = c.on_reject
    return out


def _post(acme: Any, **changes: str) -> Any:
    template = _v1(acme)
    groups = list(OrgGroup.objects.filter(tenant=acme).values_list("key", flat=True))
    users = list(User.objects.filter(tenant=acme).values_list("username", flat=True))
    schema = editor_schema(groups=groups, users=users)
    del schema["properties"]["steps"]
    doc = complete(to_editor(template.definition), schema)
    client = Client()
    client.force_login(User.objects.get(username="fiona"))
    body = {
        "definition": json.dumps(doc),
        "try_submitter": "alice",
        "_save": "Save",
        **_card_post(template),
        **changes,
    }
    return client.post(f"{BASE}/{template.pk}/change/", body)


def test_untouched_cards_change_nothing(acme: Any) -> None:
    response = _post(acme)

    assert response.status_code == 302
    assert not WorkflowTemplateDraft.objects.exists()  # "Nothing changed", nothing drafted


def test_cards_save_a_changed_deadline_and_keep_everything_else(acme: Any) -> None:
    _post(acme, **{"step-0-deadline-number": "3", "step-0-reminder-0-unit": "hours"})

    draft = WorkflowTemplateDraft.objects.get()
    before = _v1(acme).definition["steps"]
    assert draft.definition["steps"][0]["deadline"] == "P3D"
    assert draft.definition["steps"][0]["reminders"] == ["PT1H"]
    assert draft.definition["steps"][1:] == before[1:]


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"step-1-approver-0": "user:audrey"}, "Step 2: choose an approver from the list."),
        ({"step-1-approver-0": "user:erp"}, "Step 2: choose an approver from the list."),
        ({"step-1-approver-0": "manager:assignee"}, "Step 2: choose an approver from the list."),
        ({"step-0-on_reject": "vp"}, "Step 1: a rejection can only go back to an earlier step."),
        ({"step-2-title": "  "}, "Step 3: give it a title, so people know what it asks."),
        ({"step-1-kind": "teleport"}, "Step 2: choose what kind of step it is."),
        ({"step-0-deadline-number": "-2"}, "Step 1, Manager: the deadline must be a positive"),
    ],
    ids=["auditor", "integration", "holder-as-approver", "later-step", "no-title", "kind", "neg"],
)
def test_a_bad_card_is_refused_in_words_and_saves_nothing(
    acme: Any, changes: dict[str, str], words: str
) -> None:
    response = _post(acme, **changes)

    assert response.status_code == 200
    assert words in response.content.decode().replace("&#x27;", "'")
    assert not WorkflowTemplateDraft.objects.exists()
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1


def test_the_picker_lists_only_people_and_groups_who_can_approve(acme: Any) -> None:
    client = Client()
    client.force_login(User.objects.get(username="fiona"))

    page = client.get(f"{BASE}/{_v1(acme).pk}/change/")

    picker = page.context["picker"]
    people = {v for v, _ in picker.people}
    assert {"user:alice", "user:bob", "user:fiona", "user:olga"} <= people
    assert not {"user:audrey", "user:erp", "user:admin"} & people
    assert ("group:finance", "Finance (group)") in picker.groups
