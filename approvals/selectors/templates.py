"""Reads of workflow templates: the newest published version (the one new workflows
start on), and whether a definition's references resolve in a tenant."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import Count, Q, QuerySet

from templates_engine import TERMINAL, Definition, DefinitionError
from templates_engine.references import (
    ACTIVITY,
    ENGINE_FIELDS,
    FIELD,
    GROUP,
    USER,
    Reference,
    references,
    schema_fields,
)
from templates_engine.steps import ActionStep

from .. import access
from ..activities import get_activity
from ..activities.http import http_params_problems
from ..activities.outbound import allow_list
from ..models import OrgGroup, Tenant, User, WorkflowTemplate, WorkflowTemplateDraft

HTTP_REQUEST = "http_request"
UNKNOWN_GROUP = "there is no group {name!r} in this organisation"
UNKNOWN_USER = "there is no active user {name!r} in this organisation"
UNKNOWN_ACTIVITY = "there is no activity {name!r} (register it with @activity)"
UNKNOWN_FIELD = (
    "the condition reads data.{name}, which the data schema does not declare (it declares {known})"
)


def _newest_first(tenant_id: int) -> QuerySet[WorkflowTemplate]:
    return WorkflowTemplate.objects.filter(tenant_id=tenant_id).order_by("key", "-version")


def workflow_template_latest(*, tenant_id: int, key: str) -> WorkflowTemplate | None:
    """The newest version of the workflow template ``key``, or None."""
    return _newest_first(tenant_id).filter(key=key).first()


def workflow_templates_latest(*, tenant_id: int) -> list[WorkflowTemplate]:
    """The newest version of each of the tenant's workflow templates that takes new
    workflows (not retired), by key."""
    latest: dict[str, WorkflowTemplate] = {}
    for template in _newest_first(tenant_id):
        latest.setdefault(template.key, template)
    return [t for t in latest.values() if t.retired_at is None]


def workflow_template_versions(*, tenant_id: int, key: str) -> list[WorkflowTemplate]:
    """Every version of ``key``, newest first, each with ``running`` (workflows on it
    not yet finished) and ``started`` (all workflows ever started on it)."""
    running = Count("workflow", filter=~Q(workflow__status__in=TERMINAL))
    return list(
        _newest_first(tenant_id)
        .filter(key=key)
        .select_related("published_by", "retired_by", "drafted_by")
        .annotate(running=running, started=Count("workflow"))
    )


def workflow_template_four_eyes(*, tenant_id: int | None) -> bool:
    """Does the organisation keep four eyes on rules (a second finance admin publishes
    each change)? On unless it turned them off; on where no organisation is known yet."""
    if tenant_id is None:
        return True
    return not Tenant.objects.filter(pk=tenant_id, template_four_eyes=False).exists()


def workflow_template_drafts_open(
    *, tenant_id: int, key: str | None = None
) -> list[WorkflowTemplateDraft]:
    """The drafts waiting for a second finance admin, newest first (of ``key`` only,
    when given)."""
    drafts = WorkflowTemplateDraft.objects.filter(tenant_id=tenant_id, closed_at__isnull=True)
    if key is not None:
        drafts = drafts.filter(key=key)
    return list(drafts.select_related("drafted_by", "based_on").order_by("-drafted_at"))


def workflow_template_problems(*, tenant_id: int, doc: Mapping[str, Any]) -> list[DefinitionError]:
    """Every way ``doc`` does not fit this tenant, each at its JSON path: its shape
    (``Definition.parse``: only the first problem, since nothing after it can be read),
    else each group, user or activity it names that does not exist and each data field
    a condition reads that the schema does not declare. Empty when it may be published.
    Active users only: a step naming someone who has left would find no approver."""
    try:
        parsed = Definition.parse(doc)
    except DefinitionError as exc:
        return [exc]
    outbound = _outbound_problems(tenant_id, parsed) + _retry_problems(parsed)
    refs = list(references(doc))
    groups = set(
        OrgGroup.objects.filter(
            tenant_id=tenant_id, key__in=[r.name for r in refs if r.kind == GROUP]
        ).values_list("key", flat=True)
    )
    users = {
        person.username: person
        for person in User.objects.filter(
            tenant_id=tenant_id, username__in=[r.name for r in refs if r.kind == USER]
        )
    }
    declared = schema_fields(doc)
    problems: list[DefinitionError] = list(outbound)
    for ref in refs:
        if ref.kind == GROUP and ref.name not in groups:
            problems.append(DefinitionError(ref.path, UNKNOWN_GROUP.format(name=ref.name)))
        elif ref.kind == USER and _given_tasks(ref) and ref.name in users:
            cannot = access.task_holder_refusal(users[ref.name])
            if cannot is not None:  # deactivated, an auditor, an integration account
                problems.append(DefinitionError(ref.path, cannot))
        elif ref.kind == USER and (ref.name not in users or not users[ref.name].is_active):
            problems.append(DefinitionError(ref.path, UNKNOWN_USER.format(name=ref.name)))
        elif ref.kind == ACTIVITY and get_activity(ref.name) is None:
            problems.append(DefinitionError(ref.path, UNKNOWN_ACTIVITY.format(name=ref.name)))
        elif ref.kind == FIELD and declared is not None and ref.name not in declared:
            known = ", ".join(sorted(declared - ENGINE_FIELDS)) or "none"
            problems.append(
                DefinitionError(ref.path, UNKNOWN_FIELD.format(name=ref.name, known=known))
            )
    return problems


def _given_tasks(ref: Reference) -> bool:
    """Whether the person a reference names would be given tasks: an approver, a
    fallback approver or an escalation target (a signal's sender is not)."""
    return ".senders" not in ref.path


def _retry_problems(definition: Definition) -> list[DefinitionError]:
    """Each retry policy's first interval at least a second
    (``RetryPolicy.publish_problem``): a storm of retries is refused at publish."""
    return [
        DefinitionError(f"$.steps[{i}]{'.compensate' if undo else ''}.retry.initial_interval", why)
        for i, step in enumerate(definition.steps)
        if isinstance(step, ActionStep)
        for undo, spec in ((False, step.run), (True, step.compensate))
        if spec is not None and (why := spec.retry.publish_problem()) is not None
    ]


def _outbound_problems(tenant_id: int, definition: Definition) -> list[DefinitionError]:
    """Each http_request step's URL must name a host on the organisation's list of
    outbound hosts (approvals.activities.outbound)."""
    calls = [
        (f"$.steps[{i}]" + (".compensate" if undo else ""), spec.params)
        for i, step in enumerate(definition.steps)
        if isinstance(step, ActionStep)
        for undo, spec in ((False, step.run), (True, step.compensate))
        if spec is not None and spec.activity == HTTP_REQUEST
    ]
    if not calls:
        return []
    text = Tenant.objects.filter(pk=tenant_id).values_list("outbound_hosts", flat=True).first()
    try:
        hosts = allow_list(text)
    except ValueError as exc:
        return [DefinitionError(calls[0][0], str(exc))]
    return [
        DefinitionError(f"{path}.params.{where}", problem)
        for path, params in calls
        for where, problem in http_params_problems(params, hosts)
    ]
