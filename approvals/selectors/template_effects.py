"""What retiring or rolling back a workflow template would touch, for the admin's
confirmation: how many people it is offered to, and how many requests still run."""

from __future__ import annotations

from dataclasses import dataclass

from templates_engine import TERMINAL

from ..access import Role
from ..models import User, Workflow


@dataclass(frozen=True)
class TemplateReach:
    people: int  # active people of the organisation who may start it
    running: int  # its requests not yet finished, on any version


def workflow_template_reach(*, tenant_id: int, key: str) -> TemplateReach:
    """Who may start ``key`` follows access.check_may_start: every active person of the
    organisation but auditors (read only) and integration accounts (scoped tokens)."""
    people = (
        User.objects.filter(tenant_id=tenant_id, is_active=True)
        .exclude(groups__name__in=[Role.AUDITOR.value, Role.INTEGRATION.value])
        .distinct()
        .count()
    )
    running = (
        Workflow.objects.filter(tenant_id=tenant_id, template__key=key)
        .exclude(status__in=TERMINAL)
        .count()
    )
    return TemplateReach(people=people, running=running)
