"""What retiring or rolling back a workflow template would touch, for the admin's
confirmation: how many people it is offered to, and how many requests still run."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.contenttypes.models import ContentType
from django.db.models import Q
from guardian.models import GroupObjectPermission, UserObjectPermission

from templates_engine import TERMINAL

from ..access import Role, TemplateRole
from ..models import User, Workflow, WorkflowTemplate


@dataclass(frozen=True)
class TemplateReach:
    people: int  # active people of the organisation who may start it
    running: int  # its requests not yet finished, on any version


def workflow_template_reach(*, tenant_id: int, key: str) -> TemplateReach:
    """Who may start ``key`` follows access.check_may_start: every active person of the
    organisation but auditors (read only) and integration accounts (scoped tokens); when
    the template names who may start it, those of them."""
    people_qs = User.objects.filter(tenant_id=tenant_id, is_active=True).exclude(
        groups__name__in=[Role.AUDITOR.value, Role.INTEGRATION.value]
    )
    first = (
        WorkflowTemplate.objects.filter(tenant_id=tenant_id, key=key).order_by("version").first()
    )
    if first is not None:
        ct = ContentType.objects.get_for_model(WorkflowTemplate)
        named = {"content_type": ct, "permission__codename": TemplateRole.START.value}
        persons = UserObjectPermission.objects.filter(object_pk=str(first.pk), **named)
        groups = GroupObjectPermission.objects.filter(object_pk=str(first.pk), **named)
        if persons.exists() or groups.exists():
            people_qs = people_qs.filter(
                Q(pk__in=persons.values("user_id")) | Q(groups__in=groups.values("group_id"))
            )
    people = people_qs.distinct().count()
    running = (
        Workflow.objects.filter(tenant_id=tenant_id, template__key=key)
        .exclude(status__in=TERMINAL)
        .count()
    )
    return TemplateReach(people=people, running=running)
