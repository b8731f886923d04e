"""The demo organisation "Acme" and its workflow templates."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from django.contrib.auth.hashers import make_password
from django.db import transaction

from ..models import OrgGroup, Tenant, User
from ..services.templates import workflow_template_publish

HERE = Path(__file__).parent
DEMO_PASSWORD = "demo"  # the demo organisation only

# username -> (first name, manager, groups, staff)
PEOPLE: dict[str, tuple[str, str | None, tuple[str, ...], bool]] = {
    "victor": ("Victor", None, (), False),
    "bob": ("Bob", "victor", (), False),
    "alice": ("Alice", "bob", (), False),
    "fiona": ("Fiona", "victor", ("finance",), False),
    "ivan": ("Ivan", "victor", ("it-admins",), False),
    "audrey": ("Audrey", "victor", ("auditors",), False),
}
GROUPS = {"finance": "Finance", "it-admins": "IT admins", "auditors": "Auditors"}


def definitions() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(HERE.glob("*.json"))]


@cache
def _demo_password_hash() -> str:
    return make_password(DEMO_PASSWORD)  # hashed once per process: slow by design


@transaction.atomic
def seed_demo() -> Tenant:
    """Create (or bring up to date) the demo organisation. Idempotent."""
    tenant, _ = Tenant.objects.get_or_create(slug="acme", defaults={"name": "Acme"})
    groups = {
        key: OrgGroup.objects.get_or_create(tenant=tenant, key=key, defaults={"name": name})[0]
        for key, name in GROUPS.items()
    }
    users: dict[str, User] = {}
    password = _demo_password_hash()
    for username, (first, manager, member_of, staff) in PEOPLE.items():
        user, created = User.objects.get_or_create(
            username=username,
            defaults={
                "tenant": tenant,
                "first_name": first,
                "email": f"{username}@acme.example",
                "is_staff": staff,
            },
        )
        if created:
            user.password = password
        user.manager = users.get(manager) if manager else None
        user.save()
        users[username] = user
        for key in member_of:
            groups[key].members.add(user)
    admin, created = User.objects.get_or_create(
        username="admin",
        defaults={
            "tenant": tenant,
            "is_staff": True,
            "is_superuser": True,
            "email": "admin@acme.example",
        },
    )
    if created:
        admin.password = password
        admin.save()
    for doc in definitions():
        workflow_template_publish(tenant=tenant, definition=doc, published_by=admin)
    return tenant
