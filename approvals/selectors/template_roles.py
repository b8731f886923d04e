"""Who holds a workflow template's roles (who may start it, edit it, see its runs), for
the admin's screen: the groups and people named, by their names. The rules themselves
are access.py's; the grants are django-guardian's, on the template's first version."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.db.models import QuerySet
from guardian.models import GroupObjectPermission, UserObjectPermission

from ..access import TemplateRole
from ..models import User, WorkflowTemplate

GROUPS_LIMIT = 10


@dataclass
class Holders:
    """The groups (id, name, members of the organisation) and people (username, name)
    a template names for one role."""

    groups: list[tuple[int, str, int]] = field(default_factory=list)
    people: list[tuple[str, str]] = field(default_factory=list)

    @property
    def named(self) -> bool:
        return bool(self.groups or self.people)


def template_first_version(*, template: WorkflowTemplate) -> WorkflowTemplate:
    """The first version of ``template``'s workflow template: the one its roles are
    held on."""
    first = (
        WorkflowTemplate.objects.filter(tenant_id=template.tenant_id, key=template.key)
        .order_by("version")
        .first()
    )
    return first or template


def template_role_holders(*, template: WorkflowTemplate) -> dict[TemplateRole, Holders]:
    """Each role of ``template`` with the groups and people it names, by name."""
    first = template_first_version(template=template)
    ct = ContentType.objects.get_for_model(WorkflowTemplate)
    out = {role: Holders() for role in TemplateRole}
    by_codename = {role.value: role for role in TemplateRole}
    grants = (
        GroupObjectPermission.objects.filter(content_type=ct, object_pk=str(first.pk))
        .filter(permission__codename__in=list(by_codename))
        .select_related("group", "permission")
        .order_by("group__name")
    )
    for g in grants:
        members = User.objects.filter(groups=g.group, tenant_id=template.tenant_id).count()
        out[by_codename[g.permission.codename]].groups.append((g.group.pk, g.group.name, members))
    people = (
        UserObjectPermission.objects.filter(content_type=ct, object_pk=str(first.pk))
        .filter(permission__codename__in=list(by_codename))
        .select_related("user", "permission")
        .order_by("user__first_name", "user__last_name", "user__username")
    )
    for p in people:
        person = p.user
        name = person.get_full_name() or person.username
        out[by_codename[p.permission.codename]].people.append((person.username, name))
    return out


def organisation_groups(*, tenant_id: int) -> QuerySet[Group]:
    """The groups a finance admin of the organisation may name: those with at least one
    member in it (groups are shared by the deployment; another organisation's are not
    shown)."""
    return Group.objects.filter(user__tenant_id=tenant_id).distinct()


def groups_matching(*, tenant_id: int, text: str, limit: int = GROUPS_LIMIT) -> list[str]:
    """The names of the organisation's groups containing ``text``, by name; at most
    ``limit``."""
    names = (
        organisation_groups(tenant_id=tenant_id)
        .filter(name__icontains=text.strip())
        .order_by("name")
        .values_list("name", flat=True)
    )
    return list(names[:limit])


GROUP_UNKNOWN = "No group of your organisation is called “{text}”: pick one from the list."


def group_named(*, tenant_id: int, text: str) -> tuple[Group | None, str]:
    """The organisation's group called ``text`` (any case), or None and why."""
    text = text.strip()[:150]
    if not text:
        return None, ""
    found = organisation_groups(tenant_id=tenant_id).filter(name__iexact=text).first()
    if found is None:
        return None, GROUP_UNKNOWN.format(text=text)
    return found, ""
