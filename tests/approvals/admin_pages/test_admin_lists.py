"""The admin's workflow list for a superuser (every organisation, with the
organisation filter), sorted by each column: every sort answers, in words."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from approvals.models import Tenant, User

from ..helpers import start_expense

pytestmark = pytest.mark.django_db


def test_a_superuser_sorts_the_workflow_list_by_every_column(acme: Any, api: Any) -> None:
    alice = api("alice")
    for subject, amount in (("E-1", 150_000), ("E-2", 4_500_000)):
        assert start_expense(alice, amount, subject=subject).status_code == 201
    Tenant.objects.create(slug="globex", name="Globex")
    client = Client()
    client.force_login(User.objects.get(username="admin"))

    page = client.get("/admin/approvals/workflow/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "By organisation" in text or "By tenant" in text
    for column in range(1, 7):
        for order in (str(column), f"-{column}"):
            sorted_page = client.get("/admin/approvals/workflow/", {"o": order})
            body = sorted_page.content.decode()
            assert sorted_page.status_code == 200, order
            assert "Expense claim E-1" in body and "Expense claim E-2" in body, order
            assert "PENDING_MANAGER" not in body, order
    by_amount = client.get("/admin/approvals/workflow/", {"o": "2"}).content.decode()
    assert by_amount.index("₹1,500.00") < by_amount.index("₹45,000.00")
    by_amount = client.get("/admin/approvals/workflow/", {"o": "-2"}).content.decode()
    assert by_amount.index("₹45,000.00") < by_amount.index("₹1,500.00")
