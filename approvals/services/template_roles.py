"""Naming who holds a workflow template's roles: who may start it, who may edit it,
who may see its runs (``access.TemplateRole``). A finance admin who may edit the
template names groups and people of its organisation; the grants are django-guardian
object permissions on the template's first version, so publishing keeps them."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db import transaction
from guardian.shortcuts import assign_perm, remove_perm

from .. import access
from ..access import Role, TemplateRole
from ..models import User, WorkflowTemplate
from ..selectors.template_roles import organisation_groups, template_first_version

NOT_OF_ORGANISATION = "{name} is not of this workflow template's organisation."
GROUP_NOT_OF_ORGANISATION = "No one of this workflow template's organisation is in {name}."
PERSON_DEACTIVATED = "{name}'s account is deactivated: name someone who can sign in."
EDITOR_NOT_FINANCE_ADMIN = (
    "{name} is not a finance admin, and editing a workflow template needs that role: "
    "naming {name} would give nothing. Ask an organisation admin to make {name} a "
    "finance admin first."
)
STARTER_CANNOT_START = (
    "{name} starts nothing: auditors read and change nothing, and another system's "
    "account starts what its API token names."
)


class RoleRefused(Exception):
    """Nothing was granted or taken away; the message says why."""


def _check(template: WorkflowTemplate, by: User) -> None:
    refusal = access.edit_refusal(by, template)
    if refusal is not None:
        raise access.Forbidden(refusal)


def _check_person(template: WorkflowTemplate, role: TemplateRole, person: User) -> None:
    name = person.get_full_name() or person.username
    if person.tenant_id != template.tenant_id:
        raise RoleRefused(NOT_OF_ORGANISATION.format(name=name))
    if not person.is_active:
        raise RoleRefused(PERSON_DEACTIVATED.format(name=name))
    roles = access.roles_of(person)
    if role is TemplateRole.EDIT and not person.is_superuser and Role.FINANCE_ADMIN not in roles:
        raise RoleRefused(EDITOR_NOT_FINANCE_ADMIN.format(name=name))
    if role is TemplateRole.START and roles & {Role.AUDITOR, Role.INTEGRATION}:
        raise RoleRefused(STARTER_CANNOT_START.format(name=name))


def _check_group(template: WorkflowTemplate, group: Group) -> None:
    if not organisation_groups(tenant_id=template.tenant_id).filter(pk=group.pk).exists():
        raise RoleRefused(GROUP_NOT_OF_ORGANISATION.format(name=group.name))


@transaction.atomic
def template_role_grant(
    *,
    template: WorkflowTemplate,
    role: TemplateRole,
    by: User,
    group: Group | None = None,
    person: User | None = None,
) -> None:
    """Name ``group`` or ``person`` for ``role`` of ``template`` (any version of it).
    Raises access.Forbidden when ``by`` may not edit the template, RoleRefused when
    the group or person cannot hold the role. Naming someone already named is no
    change."""
    _check(template, by)
    first = template_first_version(template=template)
    if group is not None:
        _check_group(template, group)
        assign_perm(f"approvals.{role.value}", group, first)
    if person is not None:
        _check_person(template, role, person)
        assign_perm(f"approvals.{role.value}", person, first)


@transaction.atomic
def template_role_revoke(
    *,
    template: WorkflowTemplate,
    role: TemplateRole,
    by: User,
    group: Group | None = None,
    person: User | None = None,
) -> None:
    """Take ``role`` of ``template`` from ``group`` or ``person``. Raises
    access.Forbidden when ``by`` may not edit the template."""
    _check(template, by)
    first = template_first_version(template=template)
    if group is not None:
        remove_perm(f"approvals.{role.value}", group, first)
    if person is not None:
        remove_perm(f"approvals.{role.value}", person, first)
