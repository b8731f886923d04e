"""Histories for the analytics tests: expenses started and decided through the
services (the command path), with the clock moved between commands."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

from approvals import clock
from approvals.models import User, Workflow
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_decide, workflow_start

_ids = itertools.count(1)

# A workflow template with an enum field (the department filter) and a deadline that
# escalates to cora.
TRAVEL = {
    "key": "travel",
    "title": "Travel request",
    "schema": {
        "type": "object",
        "required": ["department"],
        "properties": {
            "department": {"type": "string", "enum": ["SALES", "IT_OPS"], "title": "Department"},
        },
    },
    "steps": [
        {
            "id": "lead",
            "title": "Team lead",
            "kind": "approval",
            "approvers": [{"manager": "submitter"}],
            "deadline": "P1D",
            "escalate_to": {"user": "cora"},
            "on_reject": "submitter",
        },
        {
            "id": "travel_desk",
            "title": "Travel desk",
            "kind": "approval",
            "approvers": [{"group": "finance"}],
            "deadline": "P2D",
            "send_back_to": "lead",
        },
    ],
}


def travel_published(tenant: Any) -> None:
    workflow_template_publish(tenant=tenant, definition=TRAVEL)


def travel_started(who: str = "alice", department: str = "SALES") -> str:
    started = workflow_start(
        submitter=User.objects.get(username=who),
        template_key="travel",
        subject_type="trip",
        subject_id=f"T-{next(_ids)}",
        data={"department": department},
    )
    return str(started.workflow_id)


def holder(workflow_id: str) -> str:
    """Someone who holds the workflow's current step."""
    wf = Workflow.objects.get(pk=workflow_id)
    task = wf.tasks.select_related("assignee").order_by("assignee__username").first()
    assert task is not None, f"nobody holds {wf.current_step}"
    return task.assignee.username


def act(workflow_id: str, decision: str, **extra: Any) -> None:
    if decision in ("reject", "send_back"):
        extra.setdefault("comment", "Please look again.")
    workflow_decide(
        user=User.objects.get(username=holder(workflow_id)),
        workflow_id=workflow_id,
        decision=decision,
        request_id=f"r-{next(_ids)}",
        **extra,
    )


_moved: list[dt.timedelta] = []


def later(hours: float) -> None:
    """Move the process's clock on (``clock_put_back`` in conftest.py undoes it)."""
    _moved.append(dt.timedelta(hours=hours))
    clock.advance(_moved[-1])


def clock_back() -> None:
    """Undo every ``later`` since the last call."""
    while _moved:
        clock.advance(-_moved.pop())
