"""The ``--tenant SLUG`` option the audit commands share."""

from __future__ import annotations

from django.core.management.base import CommandError

from approvals.models import Tenant

NO_SUCH_TENANT = "No organisation with the slug {slug!r}."


def tenant_by_slug(slug: str) -> Tenant:
    """The organisation ``slug`` names, or a CommandError that says there is none."""
    tenant = Tenant.objects.filter(slug=slug).first()
    if tenant is None:
        raise CommandError(NO_SUCH_TENANT.format(slug=slug))
    return tenant
