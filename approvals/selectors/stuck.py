"""Requests nobody can finish: a running workflow waiting in an approval step that no
open task of an active person can complete. Its approvers left (deactivated with no
one to hand their tasks to), or an escalation of the past gave every open slot to
someone who had already approved it. Only an admin can help: add an approver
(``services.admin_operations.workflow_add_approver``) or cancel it.

Two passes, so the check stays bounded: SQL picks the candidates, running workflows
in an approval step whose active task holders are fewer than the approvals the step
requires (``required`` in the snapshot; with none who can act, fewer than one); the
engine then confirms each from its state (``templates_engine.steps.approval.
unfinishable``: the rule an escalation keeps), since in mode ``all`` or with a quorum
several people may hold tasks and still be unable to finish."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce

from templates_engine.snapshot import state_from_dict
from templates_engine.state import SUBMITTER_STEP
from templates_engine.steps.approval import ALL_LEFT, NO_OPEN_TASK, TOO_FEW, unfinishable

from ..models import PendingTask, User, Workflow, WorkflowStatus

# A page a person reads, and a command's report: the longest-waiting first.
LIMIT = 200

WHY = {
    NO_OPEN_TASK: "nobody holds an open task",
    ALL_LEFT: "every open task belongs to someone who has left",
    TOO_FEW: (
        "the people who hold its open tasks are too few to give the approvals it still needs"
    ),
}


@dataclass(frozen=True)
class StuckRequest:
    workflow: Workflow
    step: str
    reason: str  # NO_OPEN_TASK | ALL_LEFT | TOO_FEW

    @property
    def why(self) -> str:
        return WHY[self.reason]


def stuck_candidates(qs: QuerySet[Any]) -> QuerySet[Any]:
    """The running workflows of ``qs`` waiting in an approval step whose active task
    holders are fewer than the approvals the step requires."""
    holders = (
        PendingTask.objects.filter(workflow_id=OuterRef("pk"), assignee__is_active=True)
        .order_by()
        .values("workflow_id")
        .annotate(n=Count("assignee_id", distinct=True))
        .values("n")
    )
    return (
        qs.filter(status=WorkflowStatus.RUNNING, public_status__startswith="PENDING_")
        .exclude(current_step__in=("", SUBMITTER_STEP))
        .annotate(
            active_holders=Coalesce(Subquery(holders, output_field=IntegerField()), 0),
            required=Cast(KT("snapshot__required"), IntegerField()),
        )
        .filter(active_holders__lt=F("required"))
    )


def stuck_requests(qs: QuerySet[Any], *, limit: int = LIMIT) -> list[StuckRequest]:
    """The workflows of ``qs`` nobody can finish, the longest-waiting first (at most
    ``limit`` candidates are confirmed)."""
    candidates = list(
        stuck_candidates(qs.select_related("template", "tenant")).order_by("updated_at", "id")[
            :limit
        ]
    )
    active = _active_people(candidates)
    out = []
    for wf in candidates:
        state = state_from_dict(wf.snapshot)
        if state is None:  # no snapshot: a workflow with no events yet waits nowhere
            continue
        people = active.get(wf.tenant_id, set())
        reason = unfinishable(state, people.__contains__)
        if reason is not None:
            out.append(StuckRequest(wf, state.step or "", reason))
    return out


def _active_people(workflows: Iterable[Workflow]) -> dict[int, set[str]]:
    """tenant -> the usernames among the workflows' assignees whose accounts are active;
    one query."""
    wanted: dict[int, set[str]] = {}
    for wf in workflows:
        names = wanted.setdefault(wf.tenant_id, set())
        names.update(a["user"] for a in _assignments(wf.snapshot))
    out: dict[int, set[str]] = {}
    if not wanted:
        return out
    names = set().union(*wanted.values())
    rows = User.objects.filter(
        tenant_id__in=list(wanted), username__in=names, is_active=True
    ).values_list("tenant_id", "username")
    for tenant_id, username in rows:
        out.setdefault(tenant_id, set()).add(username)
    return out


def _assignments(snapshot: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    return list((snapshot or {}).get("assignments") or [])
