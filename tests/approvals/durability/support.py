"""Workflow templates and checks shared by the durability tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Count, F

FAST_RETRY = {"max_attempts": 8, "initial_interval": 0.2, "max_interval": 1, "jitter": False}


def action_template(
    key: str, queue: str, *, steps: int = 1, timeout: str = "PT2S", wait: str | None = None
) -> dict[str, Any]:
    """``steps`` action steps running ``durable_effect`` on ``queue`` (with a ``wait``
    between them)."""
    out: list[dict[str, Any]] = []
    for i in range(steps):
        if i and wait:
            out.append({"id": f"pause{i}", "kind": "wait", "duration": wait})
        out.append(
            {
                "id": f"effect{i}",
                "kind": "action",
                "activity": "durable_effect",
                "queue": queue,
                "timeout": timeout,
                "retry": FAST_RETRY,
            }
        )
    return {"key": key, "title": key, "steps": out}


def reminders_template(key: str, reminders: int) -> dict[str, Any]:
    """One approval step (bob, alice's manager) with ``reminders`` reminders, a minute apart,
    and no deadline: every timer is a reminder, and each fires a ReminderSent."""
    return {
        "key": key,
        "title": key,
        "steps": [
            {
                "id": "manager",
                "kind": "approval",
                "approvers": [{"manager": "submitter"}],
                "reminders": [f"PT{i + 1}M" for i in range(reminders)],
            }
        ],
    }


def deadline_template(key: str, deadline: str) -> dict[str, Any]:
    """One approval step (bob) whose deadline escalates to his manager (victor)."""
    return {
        "key": key,
        "title": key,
        "steps": [
            {
                "id": "manager",
                "kind": "approval",
                "approvers": [{"manager": "submitter"}],
                "deadline": deadline,
            }
        ],
    }


def publish(tenant: Any, definition: dict[str, Any]) -> None:
    from approvals.services.templates import workflow_template_publish

    from ..helpers import fast_retries

    with fast_retries():  # FAST_RETRY: a fifth of a second, so the faults stay short
        workflow_template_publish(tenant=tenant, definition=definition)


def start(key: str, count: int, *, submitter: str = "alice", first: int = 0) -> list[str]:
    from approvals.models import User
    from approvals.services.workflows import workflow_start

    user = User.objects.get(username=submitter)
    return [
        str(
            workflow_start(
                submitter=user,
                template_key=key,
                subject_type="durability",
                subject_id=f"{key}-{i}",
                data={},
            ).workflow_id
        )
        for i in range(first, first + count)
    ]


def event_types(workflow_id: str) -> list[str]:
    from approvals.models import WorkflowEvent

    rows = WorkflowEvent.objects.filter(workflow_id=workflow_id).order_by("seq")
    return list(rows.values_list("type", flat=True))


def statuses(ids: Iterable[str]) -> dict[str, int]:
    from approvals.models import Workflow

    rows = Workflow.objects.filter(pk__in=list(ids)).values("public_status")
    return dict(rows.annotate(n=Count("pk")).values_list("public_status", "n"))


def assert_histories_intact(ids: Iterable[str] | None = None) -> None:
    """Every workflow's version is its number of events, and its hash chain holds."""
    from approvals.audit.verify import chain_verify as verify_chain
    from approvals.models import Workflow

    workflows = Workflow.objects.all() if ids is None else Workflow.objects.filter(pk__in=list(ids))
    torn = list(
        workflows.annotate(events_n=Count("events"))
        .exclude(version=F("events_n"))
        .values_list("pk", "version", "events_n")
    )
    assert torn == [], "version != number of events"
    broken = [(wf.pk, seq) for wf in workflows if (seq := verify_chain(workflow=wf)) is not None]
    assert broken == [], "hash chain broken"
