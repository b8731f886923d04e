"""Publishing, retiring and rolling back workflow template definitions; and the drafts
of four eyes on rules: a change saved by one finance admin is published by another."""

from __future__ import annotations

from typing import Any

from templates_engine import Definition, DefinitionError

from .. import access, clock
from ..models import Tenant, User, WorkflowTemplate, WorkflowTemplateDraft
from ..notifications.messages import template_draft_mails
from ..runtime import tenant_scope
from ..selectors.templates import workflow_template_four_eyes, workflow_template_problems

ALREADY_RETIRED = "{key} is already retired."
OWN_DRAFT = (
    "You saved this draft, so another finance admin publishes it: four eyes on rules "
    "are on for your organisation."
)
DRAFT_CLOSED = "This draft was already {what}: nothing changed."
DRAFT_UNKNOWN = "There is no such draft in your organisation."


class DefinitionRefused(DefinitionError):
    """A definition that may not be published in this tenant. ``problems`` holds
    every problem found, each at its JSON path; the exception itself reads as the
    first, so callers that show one message still name a field."""

    def __init__(self, problems: list[DefinitionError]) -> None:
        assert problems
        super().__init__(problems[0].path, problems[0].problem)
        self.problems = problems


def workflow_template_publish(
    *,
    tenant: Tenant,
    definition: dict[str, Any],
    published_by: User | None = None,
    drafted_by: User | None = None,
) -> WorkflowTemplate:
    """Validate ``definition`` and publish it as the next version of its key.

    Raises DefinitionRefused (every problem, each naming its JSON path) and publishes
    nothing when the definition does not validate or names a group, user, activity or
    data field this tenant does not have. A published version is never edited; the
    new version is open for starts even when the one before it was retired.
    """
    problems = workflow_template_problems(tenant_id=tenant.pk, doc=definition)
    if problems:
        raise DefinitionRefused(problems)
    parsed = Definition.parse(definition)
    with tenant_scope.atomic_for(tenant):
        latest = (
            WorkflowTemplate.objects.select_for_update()
            .filter(tenant=tenant, key=parsed.key)
            .order_by("-version")
            .first()
        )
        _check_may_edit(published_by, latest)
        if latest is not None and latest.definition == definition and latest.retired_at is None:
            return latest
        version = (latest.version + 1) if latest is not None else 1
        Definition.parse(definition, version=version)
        return WorkflowTemplate.objects.create(
            tenant=tenant,
            key=parsed.key,
            version=version,
            title=parsed.title,
            definition=definition,
            published_by=published_by,
            drafted_by=drafted_by,
        )


def _check_may_edit(person: User | None, latest: WorkflowTemplate | None) -> None:
    """A change to an existing workflow template is its editors' (its edit role,
    access.edit_refusal): raises access.Forbidden, in words, for anyone else. A new key,
    and a change made by no person (a migration, the demo's seed), are not asked."""
    if person is None or latest is None:
        return
    refusal = access.edit_refusal(person, latest)
    if refusal is not None:
        raise access.Forbidden(refusal)


def workflow_template_rollback(
    *, template: WorkflowTemplate, published_by: User | None = None
) -> WorkflowTemplate:
    """Publish a copy of the earlier version ``template`` as the newest version. Its
    references are checked again: a group deleted since refuses the roll back."""
    return workflow_template_publish(
        tenant=template.tenant, definition=template.definition, published_by=published_by
    )


class AlreadyRetired(Exception):
    pass


def workflow_template_retire(*, tenant: Tenant, key: str, retired_by: User | None) -> None:
    """Refuse new starts of ``key`` from now on: its newest version is marked retired.
    Running workflows keep their version and finish; publishing a version (or rolling
    back) opens the workflow template again."""
    with tenant_scope.atomic_for(tenant):
        latest = (
            WorkflowTemplate.objects.select_for_update()
            .filter(tenant=tenant, key=key)
            .order_by("-version")
            .first()
        )
        if latest is None:
            raise WorkflowTemplate.DoesNotExist(key)
        if latest.retired_at is not None:
            raise AlreadyRetired(ALREADY_RETIRED.format(key=key))
        latest.retired_at = clock.now()
        latest.retired_by = retired_by
        latest.save(update_fields=["retired_at", "retired_by"])


class DraftRefused(Exception):
    """A draft that may not be published (or discarded) now; the message says why."""


def workflow_template_draft_save(
    *,
    tenant: Tenant,
    definition: dict[str, Any],
    drafted_by: User | None,
    based_on: WorkflowTemplate | None = None,
) -> WorkflowTemplateDraft:
    """Keep ``definition`` as a draft for a second finance admin to publish. Refused as
    publishing would be (DefinitionRefused): a draft is always one that could publish.
    With four eyes on, those who may publish it (the organisation's other finance
    admins; of a template that names its editors, the other editors) are mailed after
    commit ("Fiona changed Expense claim: review and publish", with the draft's page)."""
    problems = workflow_template_problems(tenant_id=tenant.pk, doc=definition)
    if problems:
        raise DefinitionRefused(problems)
    parsed = Definition.parse(definition)
    with tenant_scope.atomic_for(tenant):
        latest = (
            WorkflowTemplate.objects.filter(tenant=tenant, key=parsed.key)
            .order_by("-version")
            .first()
        )
        _check_may_edit(drafted_by, latest)
        draft = WorkflowTemplateDraft.objects.create(
            tenant=tenant,
            key=parsed.key,
            definition=definition,
            based_on=based_on,
            drafted_by=drafted_by,
        )
        if workflow_template_four_eyes(tenant_id=tenant.pk):
            template_draft_mails(
                draft=draft, drafter=drafted_by, reviewers=_reviewers(tenant, drafted_by, latest)
            )
        return draft


def _reviewers(tenant: Tenant, drafter: User | None, latest: WorkflowTemplate | None) -> list[User]:
    """Who may publish ``drafter``'s draft: the organisation's other finance admins,
    active, with an address, and of a template that names its editors only those named
    (its edit role, as publishing asks: access.edit_refusal)."""
    people = User.objects.filter(
        tenant=tenant, is_active=True, groups__name=access.Role.FINANCE_ADMIN.value
    ).exclude(email="")
    if drafter is not None:
        people = people.exclude(pk=drafter.pk)
    found = list(people.distinct().order_by("username"))
    if latest is None:
        return found
    return [person for person in found if access.may_edit_template(person, latest)]


def _open_draft(tenant: Tenant, draft_id: int) -> WorkflowTemplateDraft:
    draft = (
        WorkflowTemplateDraft.objects.select_for_update().filter(tenant=tenant, pk=draft_id).first()
    )
    if draft is None:
        raise DraftRefused(DRAFT_UNKNOWN)
    if draft.closed_at is not None:
        what = "published" if draft.published_id else "discarded"
        raise DraftRefused(DRAFT_CLOSED.format(what=what))
    return draft


def workflow_template_draft_publish(
    *, tenant: Tenant, draft_id: int, published_by: User
) -> WorkflowTemplate:
    """Publish the draft as the next version, recording who drafted it and who
    published it. While the organisation keeps four eyes on rules, the person who saved
    a draft may not publish it (DraftRefused, nothing changes)."""
    with tenant_scope.atomic_for(tenant):
        draft = _open_draft(tenant, draft_id)
        if (
            workflow_template_four_eyes(tenant_id=tenant.pk)
            and draft.drafted_by_id == published_by.pk
        ):
            raise DraftRefused(OWN_DRAFT)
        published = workflow_template_publish(
            tenant=tenant,
            definition=draft.definition,
            published_by=published_by,
            drafted_by=draft.drafted_by,
        )
        draft.published = published
        draft.closed_by = published_by
        draft.closed_at = clock.now()
        draft.save(update_fields=["published", "closed_by", "closed_at"])
        return published


def workflow_template_draft_discard(
    *, tenant: Tenant, draft_id: int, discarded_by: User
) -> WorkflowTemplateDraft:
    """Close the draft unpublished; its author or another finance admin may."""
    with tenant_scope.atomic_for(tenant):
        draft = _open_draft(tenant, draft_id)
        draft.closed_by = discarded_by
        draft.closed_at = clock.now()
        draft.save(update_fields=["closed_by", "closed_at"])
        return draft
