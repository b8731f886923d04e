"""What changes between two versions of a workflow template reads as sentences: a
threshold in rupees, a new step where it stands, a removed step, a deadline in days,
approvers, the mode; a setting without words names its step and setting, never JSON;
two identical versions read "No changes". The compare page shows the sentences first and
the JSON line diff behind a "Technical details" fold."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from approvals.models import Tenant, User, WorkflowTemplate
from approvals.services.templates import workflow_template_publish
from approvals.web.definition_changes import NO_CHANGES, definition_changes, duration_words

from ..helpers import EXPENSE

DEMO = json.loads(
    (Path(__file__).parents[3] / "approvals" / "demo" / "expense-approval.json").read_text()
)


def _step(doc: dict[str, Any], step_id: str) -> dict[str, Any]:
    return next(s for s in doc["steps"] if s["id"] == step_id)


def _threshold(doc: dict[str, Any]) -> None:
    _step(doc, "vp")["when"] = "data.amountPaise > 5000000"


def _new_ceo(doc: dict[str, Any]) -> None:
    ceo = {"id": "ceo", "title": "CEO", "kind": "approval", "approvers": [{"user": "victor"}]}
    doc["steps"].insert(2, ceo)


def _no_legal(doc: dict[str, Any]) -> None:
    doc["steps"] = [s for s in doc["steps"] if s["id"] != "manager"]


def _deadline(doc: dict[str, Any]) -> None:
    _step(doc, "finance")["deadline"] = "P3D"


def _approvers(doc: dict[str, Any]) -> None:
    _step(doc, "finance")["approvers"] = [{"group": "it"}]


def _mode(doc: dict[str, Any]) -> None:
    _step(doc, "finance")["approvers"] = [{"group": "finance"}, {"manager": "submitter"}]
    _step(doc, "finance")["mode"] = "all"


def _escalation(doc: dict[str, Any]) -> None:
    _step(doc, "finance")["escalate_to"] = {"user": "cora"}


def _reminders(doc: dict[str, Any]) -> None:
    _step(doc, "manager")["reminders"] = ["P1D", "PT36H"]


def _relabel(doc: dict[str, Any]) -> None:
    doc["schema"]["properties"]["department"]["title"] = "Cost centre"


def _nothing(doc: dict[str, Any]) -> None:
    pass


CASES: list[tuple[str, Callable[[dict[str, Any]], None], list[str]]] = [
    (
        "threshold-in-rupees",
        _threshold,
        ["VP: approves when Amount is above ₹50,000.00 (was ₹1,00,000.00)"],
    ),
    (
        "new-step-with-its-place-and-every-setting",
        _new_ceo,
        ["New step: CEO, after VP", "CEO: approves always", "CEO: approvers: victor"],
    ),
    ("removed-step", _no_legal, ["Step removed: Manager"]),
    ("deadline-in-days", _deadline, ["Finance: deadline 3 days (was 2 days)"]),
    ("approvers", _approvers, ["Finance: approvers: the It group (was Finance group)"]),
    (
        "mode",
        _mode,
        [
            "Finance: approvers: the Finance group and the manager (was the Finance group)",
            "Finance: mode: all must approve (was any one approves)",
        ],
    ),
    (
        "reminders",
        _reminders,
        ["Manager: reminders after 1 day and 1 day 12 hours (was after 1 day)"],
    ),
    ("field-relabelled", _relabel, ["Field Department is now called Cost centre"]),
    ("escalation", _escalation, ["Finance: escalates to cora (was no escalation)"]),
    ("identical", _nothing, [NO_CHANGES]),
]


@pytest.mark.parametrize(("change", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_change_between_versions_reads_as_sentences(
    change: Callable[[dict[str, Any]], None], expected: list[str]
) -> None:
    new = copy.deepcopy(DEMO)
    change(new)

    assert definition_changes(DEMO, new) == expected


def test_a_change_without_words_never_shows_json() -> None:
    new = copy.deepcopy(DEMO)
    _step(new, "vp")["fallback"] = [{"bogus": {"deep": [1, 2]}}]
    new["open_thing"] = {"x": 1}

    changes = definition_changes(DEMO, new)

    assert changes == ["The template's open thing changed", "VP: its fallback changed"]
    assert not any(c in s for s in changes for c in '{}[]"')


def test_durations_read_in_days_hours_and_minutes() -> None:
    assert [duration_words(v) for v in ("P3D", 86400, "PT90M", "P1DT2H", "later")] == [
        "3 days",
        "1 day",
        "1 hour 30 minutes",
        "1 day 2 hours",
        None,
    ]


@pytest.mark.django_db
def test_the_compare_page_shows_the_changes_in_words_and_folds_the_json(acme: Tenant) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    doc = copy.deepcopy(v1.definition)
    _threshold(doc)
    _new_ceo(doc)
    v2 = workflow_template_publish(tenant=acme, definition=doc)
    client = Client()
    client.force_login(User.objects.get(username="fiona"))

    page = client.get(f"/admin/approvals/workflowtemplate/{v2.pk}/diff/?a=1&b=2").content.decode()

    words = page.index('<ul class="wt-changes" id="changes">')
    assert "<li>New step: CEO, after VP</li>" in page
    assert "<li>VP: approves when Amount is above ₹50,000.00 (was ₹1,00,000.00)</li>" in page
    fold = page.index('<details class="wt-technical"><summary>Technical details')
    assert words < fold < page.index('<div class="wt-diff" id="diff">')
    assert "&quot;data.amountPaise &gt; 5000000&quot;" in page[fold:]


@pytest.mark.django_db
def test_the_preview_before_publishing_lists_the_changes_in_words(acme: Tenant) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    doc = copy.deepcopy(v1.definition)
    _deadline(doc)
    client = Client()
    client.force_login(User.objects.get(username="fiona"))

    response = client.post(
        f"/admin/approvals/workflowtemplate/{v1.pk}/change/?as=json",
        {"definition": json.dumps(doc), "try_submitter": "alice", "_preview": "Preview"},
    )

    page = response.content.decode()
    assert "Preview only: nothing is published" in page
    assert "<li>Finance: deadline 3 days (was 2 days)</li>" in page
    assert not WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE, version=2).exists()


def test_a_new_step_reads_with_each_of_its_settings() -> None:
    new = copy.deepcopy(DEMO)
    new["steps"].append(
        {
            "id": "cfo",
            "title": "CFO",
            "kind": "approval",
            "approvers": [{"user": "cora"}],
            "deadline": "P2D",
            "reminders": ["P1D"],
            "escalate_to": {"manager": "assignee"},
            "on_reject": "manager",
        }
    )

    changes = definition_changes(DEMO, new, names={"cora": "Cora"})

    assert changes[-7:] == [
        "New step: CFO, after Finance",
        "CFO: approves always",
        "CFO: approvers: Cora",
        "CFO: deadline 2 days",
        "CFO: reminders after 1 day",
        "CFO: escalates to the manager of whoever holds the step",
        "CFO: on reject, it goes back to Manager",
    ]


def test_a_setting_without_words_falls_back_to_naming_it() -> None:
    new = copy.deepcopy(DEMO)
    _step(new, "finance")["x_note"] = "something new"

    assert definition_changes(DEMO, new) == ["Finance: its x note changed"]
