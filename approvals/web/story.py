"""A request as people read it: its status in a sentence, its history as sentences and
its diagram. The request page and the admin's workflow view both tell it this way."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..models import OrgGroup, User, Workflow
from ..selectors.workflows import HistoryEntry, workflow_assignees, workflow_history
from . import present
from .diagram import workflow_svg

# The events after which a step waits for someone, newest first: "waiting since".
_WAITING_FROM = frozenset(
    {"ApprovalRequested", "SentBack", "Escalated", "TaskReassigned", "ApproverAdded"}
)


@dataclass(frozen=True)
class Story:
    history: list[HistoryEntry]
    assignees: list[dict[str, str | None]]
    names: dict[str, str]
    ctx: present.Context
    status_label: str
    status_sentence: str
    timeline: list[present.Line]
    diagram: str
    submitter_name: str
    # the amount as the rules compared it, at the rate its start recorded
    # ("$999.00 ≈ ₹83,117 at 83.20 on 6 Dec 2026"); "" in the base currency
    conversion: str = ""


def names_in(tenant_id: int, usernames: Iterable[str | None]) -> dict[str, str]:
    """Usernames of one organisation -> first names (the username when none), in one
    query."""
    wanted = {u for u in usernames if u}
    if not wanted:
        return {}
    rows = User.objects.filter(tenant_id=tenant_id, username__in=wanted).values_list(
        "username", "first_name"
    )
    return {u: first or u for u, first in rows}


def group_names_in(tenant_id: int, raw: Mapping[str, Any]) -> dict[str, str]:
    """The names of the groups a workflow template names, as ``names`` keeps them."""
    keys = present.named_groups(raw)
    if not keys:
        return {}
    rows = OrgGroup.objects.filter(tenant_id=tenant_id, key__in=keys)
    return {present.GROUP_NAME + k: n for k, n in rows.values_list("key", "name")}


def raw_definition(wf: Workflow) -> Mapping[str, Any]:
    definition = wf.template.definition
    return definition if isinstance(definition, Mapping) else {}


def workflow_story(wf: Workflow) -> Story:
    """``wf`` told in sentences, with every name it mentions read from its own
    organisation's directory."""
    history = workflow_history(workflow=wf)
    assignees = workflow_assignees(workflow=wf)
    submitter = wf.submitter.username if wf.submitter else None
    raw = raw_definition(wf)
    wanted = present.usernames_in(history) | {submitter or ""}
    wanted |= {a["user"] or "" for a in assignees} | {a["onBehalfOf"] or "" for a in assignees}
    names = names_in(wf.tenant_id, wanted | present.named_approvers(raw))
    names |= group_names_in(wf.tenant_id, raw)
    base = present.conversion_base(history)
    ctx = present.Context(
        raw_definition=raw, data=wf.data, names=names, submitter=submitter, base=base
    )
    since = next((h.at for h in reversed(history) if h.type in _WAITING_FROM), None)
    due_epoch = wf.snapshot.get("due_at")
    due = dt.datetime.fromtimestamp(due_epoch, tz=dt.UTC) if due_epoch else None
    status = present.cancelled_sentence(history, ctx) or present.status_sentence(
        status=wf.status,
        step=present.step_title(raw, wf.current_step),
        assignees=[(a["user"] or "", a["onBehalfOf"]) for a in assignees],
        submitter=submitter,
        since=since,
        due=due,
        names=names,
    )
    done = {str(h.payload.get("step")) for h in history if h.type == "StepCompleted"}
    skipped = {str(h.payload.get("step")) for h in history if h.type == "StepSkipped"}
    diagram = workflow_svg(
        raw,
        data=wf.data,
        current=wf.current_step if wf.status == "RUNNING" else None,
        done=done,
        skipped=skipped,
        finished=wf.status == "COMPLETED",
        names=names,
        base=base,
    )
    return Story(
        history=history,
        assignees=assignees,
        names=names,
        ctx=ctx,
        status_label=present.status_label(wf.public_status, raw),
        status_sentence=status,
        timeline=present.timeline(history, ctx),
        diagram=diagram,
        submitter_name=present.person(submitter, names),
        conversion=present.conversion_words(ctx.schema, wf.data, _conversion(history)),
    )


def _conversion(history: list[HistoryEntry]) -> Mapping[str, Any] | None:
    started = next((h for h in history if h.type == "WorkflowStarted"), None)
    conversion = started.payload.get("conversion") if started is not None else None
    return conversion if isinstance(conversion, Mapping) else None
