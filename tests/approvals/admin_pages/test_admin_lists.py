"""The admin's workflow list for a superuser (every organisation, with the
organisation filter), sorted by each column: every sort answers, in words."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from approvals.admin.site import NUL_IN_QUERY
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


# Every list of the admin (tests/approvals/access/test_matrix.py, ADMIN_LISTS).
ADMIN_LISTS = [
    "approvals/workflowtemplate",
    "approvals/delegation",
    "approvals/startschedule",
    "approvals/exchangerate",
    "approvals/workflow",
    "approvals/pendingtask",
    "approvals/timer",
    "approvals/activityattempt",
    "approvals/tenant",
    "approvals/user",
    "approvals/orggroup",
    "approvals/apitoken",
    "auth/group",
    "axes/accessattempt",
    "axes/accesslog",
    "axes/accessfailurelog",
]
NUL_QUERIES = [
    "status__exact=%00",
    "status=%00",
    "status__exact=a%00b",
    "tenant__id__exact=%00",
    "template_key=%00",
    "enabled__exact=%00",
    "q=%00",
    "o=%00",
    "p=%00",
    "%00=1",
]


@pytest.mark.parametrize("model", ADMIN_LISTS)
def test_a_nul_in_a_changelist_query_is_a_400_page_and_changes_nothing(
    acme: Any, api: Any, model: str
) -> None:
    from approvals.models import Workflow, WorkflowEvent

    assert start_expense(api("alice"), 150_000, subject="E-nul").status_code == 201
    before = (Workflow.objects.count(), WorkflowEvent.objects.count())
    client = Client()
    client.force_login(User.objects.get(username="admin"))

    for query in NUL_QUERIES:
        page = client.get(f"/admin/{model}/?{query}")

        assert page.status_code in (200, 302, 400), (query, page.content[:300])
        if page.status_code == 400:
            assert NUL_IN_QUERY in page.content.decode(), query
    assert (Workflow.objects.count(), WorkflowEvent.objects.count()) == before
