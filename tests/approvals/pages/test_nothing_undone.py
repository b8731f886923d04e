"""A request whose first step fails had nothing done to undo: its page and the
submitter's mail say so, never "the steps already done were undone"; one that failed
after a step was done still says that step was undone."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import User, Workflow
from approvals.notifications.bodies import mail_bodies
from approvals.notifications.models import MailMessage
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start

from ..helpers import run_activities
from .support import signed_in
from .test_people_words import visible_text

pytestmark = pytest.mark.django_db

BIG = 1_500_000_000  # more than reserve_budget allows: it fails for good
RESERVE = {
    "id": "reserve_budget",
    "title": "Budget check",
    "kind": "action",
    "activity": "reserve_budget",
    "compensate": {"activity": "release_budget"},
    "retry": {"max_attempts": 1},
}
ORDER = {
    "id": "order",
    "title": "Hardware order",
    "kind": "action",
    "activity": "order_hardware",
    "compensate": {"activity": "cancel_hardware_order"},
    "retry": {"max_attempts": 1},
}


def _failed(acme: Any, steps: list[dict[str, Any]]) -> str:
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "kit-order",
            "title": "Kit order",
            "summary": "{item}, {amountPaise}",
            "schema": {
                "type": "object",
                "properties": {
                    "amountPaise": {"type": "integer", "x-money": {"currency": "currency"}},
                    "currency": {"type": "string", "enum": ["INR"]},
                    "item": {"type": "string"},
                },
            },
            "steps": steps,
        },
    )
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="kit-order",
        subject_type="kit",
        subject_id="K-1",
        data={"amountPaise": BIG, "currency": "INR", "item": "Desks"},
    )
    wid = str(started.workflow_id)
    for _ in range(4):  # the order, the budget check, the order's undo
        run_activities(wid)
    assert Workflow.objects.get(pk=wid).status == "ROLLED_BACK"
    return wid


def _mail(wid: str) -> str:
    return mail_bodies(MailMessage.objects.get(workflow_id=wid, kind="outcome_failed"))[0]


def test_a_first_step_that_fails_says_there_was_nothing_to_undo(acme):
    wid = _failed(acme, [RESERVE])

    page = visible_text(signed_in("alice").get(f"/workflows/{wid}").content.decode())
    mail = _mail(wid)

    assert "Could not be completed" in page
    assert "no step had been done yet, so there was nothing to undo" in page
    assert "already done" not in page
    assert "No step had been done yet, so there was nothing to undo." in mail
    assert "already done" not in mail


def test_a_step_that_fails_after_one_was_done_says_it_was_undone(acme):
    wid = _failed(acme, [ORDER, RESERVE])

    page = visible_text(signed_in("alice").get(f"/workflows/{wid}").content.decode())
    mail = _mail(wid)

    assert "The Hardware order step was undone" in page
    assert "the steps already done were undone" in page
    assert "nothing to undo" not in page
    assert "The steps already done were undone." in mail
    assert "nothing to undo" not in mail
