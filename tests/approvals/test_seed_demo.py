"""``seed_demo`` runs on every ``make run``: idempotent, and an organisation seeded
with an older demo template gets the new version published over it."""

from __future__ import annotations

import copy

import pytest
from django.core.management import call_command

from approvals import demo
from approvals.models import OrgGroup, User, WorkflowTemplate

pytestmark = pytest.mark.django_db

EXPENSE = "expense-approval"


def _latest() -> WorkflowTemplate:
    return WorkflowTemplate.objects.filter(key=EXPENSE).order_by("-version").first()


def test_seeding_twice_changes_nothing(db):
    call_command("seed_demo")
    counts = (User.objects.count(), OrgGroup.objects.count(), WorkflowTemplate.objects.count())

    call_command("seed_demo")

    assert (
        User.objects.count(),
        OrgGroup.objects.count(),
        WorkflowTemplate.objects.count(),
    ) == counts


def test_reseeding_publishes_the_new_expense_template_over_an_old_one(db, monkeypatch):
    # given an organisation seeded when a manager's rejection ended the request
    current = demo.definitions()
    old = copy.deepcopy(current)
    for doc in old:
        for step in doc["steps"]:
            step.pop("on_reject", None)
            step.pop("send_back_to", None)
    monkeypatch.setattr(demo, "definitions", lambda: old)
    demo.seed_demo()
    assert _latest().version == 1
    monkeypatch.undo()

    # when it is seeded again
    call_command("seed_demo")

    # then the specification's flow is the newest version
    latest = _latest()
    assert latest.version == 2
    steps = {s["id"]: s for s in latest.definition["steps"]}
    assert steps["manager"]["on_reject"] == "submitter"
    assert steps["finance"]["send_back_to"] == "manager"
