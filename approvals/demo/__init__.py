"""The demo organisation "Acme" and its workflow templates."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group
from django.db import transaction

from .. import clock
from ..access import Role, TemplateRole
from ..models import Department, ExchangeRate, OrgGroup, Tenant, User
from ..services.template_roles import template_role_grant
from ..services.templates import workflow_template_publish

HERE = Path(__file__).parent
DEMO_PASSWORD = "demo"  # the demo organisation only

# username -> (first name, manager, approver groups, roles)
PEOPLE: dict[str, tuple[str, str | None, tuple[str, ...], tuple[Role, ...]]] = {
    "cora": ("Cora", None, (), ()),
    "victor": ("Victor", "cora", (), ()),
    "bob": ("Bob", "victor", (), ()),
    "alice": ("Alice", "bob", (), ()),
    "fiona": ("Fiona", "victor", ("finance",), (Role.FINANCE_ADMIN,)),
    "farah": ("Farah", "victor", ("finance",), (Role.FINANCE_ADMIN,)),
    "ivan": ("Ivan", "victor", ("it-admins",), ()),
    "audrey": ("Audrey", "victor", (), (Role.AUDITOR,)),
    "olga": ("Olga", "victor", (), (Role.ORG_ADMIN,)),
    # The ERP's account: it signs in with a scoped API token, never a password.
    "erp": ("ERP", None, (), (Role.INTEGRATION,)),
}
# The demo's rules compare amounts in rupees; claims in these currencies convert at
# these rates (units of rupees per unit), seeded for the week around the seed's day.
BASE_CURRENCY = "INR"
RATES = {"USD": Decimal("83.20"), "EUR": Decimal("90.10"), "GBP": Decimal("105.40")}
RATE_DAYS = range(-7, 2)
# Approver groups that routing rules name ({"group": KEY}).
GROUPS = {"finance": "Finance", "it-admins": "IT admins"}
# The departments a claim names (key -> name): the start form offers the names.
DEPARTMENTS = {
    "eng": "Engineering",
    "fin": "Finance",
    "sales": "Sales",
    "ops": "Operations",
    "mkt": "Marketing",
    "people": "People",
    "IT_HARDWARE": "IT hardware",  # the cost centre API clients already send for kit
}
# What each demo person does, for the sign-in list `make run` prints.
DESCRIPTIONS = {
    "cora": "CEO, victor's manager",
    "victor": "VP",
    "bob": "alice's manager",
    "alice": "employee, submits",
    "fiona": "finance approver and finance admin (opens the admin)",
    "farah": "finance approver and finance admin (publishes what fiona drafts)",
    "ivan": "IT admins",
    "audrey": "auditor (reads everything, changes nothing)",
    "olga": "organisation admin (cancels, reassigns)",
    "admin": "superuser",
}


def definitions() -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(HERE.glob("*.json"))]


DEMO_ZONE = "Asia/Kolkata"


@cache
def _demo_password_hash() -> str:
    return make_password(DEMO_PASSWORD)  # hashed once per process: slow by design


@transaction.atomic
def seed_demo() -> Tenant:
    """Create (or bring up to date) the demo organisation. Idempotent."""
    tenant, _ = Tenant.objects.get_or_create(slug="acme", defaults={"name": "Acme"})
    if not tenant.time_zone:  # an organisation in India: its mails' times in IST
        Tenant.objects.filter(pk=tenant.pk).update(time_zone=DEMO_ZONE)
        tenant.time_zone = DEMO_ZONE
    groups = {
        key: OrgGroup.objects.get_or_create(tenant=tenant, key=key, defaults={"name": name})[0]
        for key, name in GROUPS.items()
    }
    users: dict[str, User] = {}
    password = _demo_password_hash()
    roles = {role: Group.objects.get_or_create(name=role.value)[0] for role in Role}
    for username, (first, manager, member_of, has_roles) in PEOPLE.items():
        user, created = User.objects.get_or_create(
            username=username,
            defaults={"tenant": tenant, "first_name": first, "email": f"{username}@acme.example"},
        )
        if created:
            user.password = password if Role.INTEGRATION not in has_roles else "!"
        user.manager = users.get(manager) if manager else None
        user.save()
        users[username] = user
        for key in member_of:
            groups[key].members.add(user)
        for role in has_roles:
            user.groups.add(roles[role])
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
        template = workflow_template_publish(tenant=tenant, definition=doc, published_by=admin)
        # Its roles, as an organisation starts: the finance admins edit it (named, so the
        # roles screen shows who); nobody is named to start it, so everyone may; nobody
        # beyond those who take part (and auditors, organisation admins) sees its runs.
        template_role_grant(
            template=template, role=TemplateRole.EDIT, by=admin, group=roles[Role.FINANCE_ADMIN]
        )
    _seed_rates(tenant)
    Department.objects.bulk_create(
        [Department(tenant=tenant, key=key, name=name) for key, name in DEPARTMENTS.items()],
        ignore_conflicts=True,
    )
    return tenant


def _seed_rates(tenant: Tenant) -> None:
    """The base currency and a rate a day around today for each of ``RATES``, so a claim
    in dollars routes as its rupees would (a rate already there is kept)."""
    if not tenant.base_currency:
        tenant.base_currency = BASE_CURRENCY
        tenant.save(update_fields=["base_currency"])
    today = clock.now().date()
    ExchangeRate.objects.bulk_create(
        [
            ExchangeRate(
                tenant=tenant,
                base=tenant.base_currency,
                currency=code,
                on=today + dt.timedelta(days=n),
                rate=rate,
            )
            for code, rate in RATES.items()
            if code != tenant.base_currency
            for n in RATE_DAYS
        ],
        ignore_conflicts=True,
    )
