"""The admin's lists and forms where the first round left codes or odd buttons: the
workflow list sorts by "Waiting on" (by the first name it shows; nobody after everyone), the
timer list's kind filter reads in words, and an organisation's change page offers
only "Save" (no "Save and continue editing", no "Save and add another")."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from approvals.models import PendingTask, Tenant, Timer, User

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _waiting_column(body: str) -> list[str]:
    cells = re.findall(r'<td class="field-waiting_on">(.*?)</td>', body, re.S)
    return [c.strip() for c in cells]


def test_the_workflow_list_sorts_by_whom_it_waits_on(acme: Any, api: Any) -> None:
    alice, bob = api("alice"), api("bob")
    ids = {}
    for subject in ("E-BOB", "E-FIN", "E-DONE"):
        ids[subject] = start_expense(alice, 4_500_000, subject=subject).json()["workflowId"]
    assert decide(bob, ids["E-FIN"], "approve", "b-fin").status_code == 200
    PendingTask.objects.filter(workflow_id=ids["E-DONE"]).delete()  # waits on nobody
    admin = _client("admin")
    column = admin.get("/admin/approvals/workflow/").content.decode()
    header = re.search(r'<th scope="col" class="sortable column-waiting_on.*?</th>', column, re.S)
    assert header is not None, "Waiting on is not sortable"

    index = ["reference", "amount", "status_words", "waiting_on"].index("waiting_on") + 1
    ascending = _waiting_column(
        admin.get("/admin/approvals/workflow/", {"o": str(index)}).content.decode()
    )
    descending = _waiting_column(
        admin.get("/admin/approvals/workflow/", {"o": f"-{index}"}).content.decode()
    )

    assert ascending == ["Bob (Manager)", "Farah, Fiona (Finance)", "—"], ascending
    assert descending == ascending[::-1], descending


def test_the_timer_list_filters_by_kind_in_words(acme: Any, api: Any) -> None:
    assert start_expense(api("alice"), 4_500_000, subject="E-T").status_code == 201
    kinds = set(Timer.objects.values_list("kind", flat=True))
    assert kinds, "an expense sets a deadline"
    page = _client("admin").get("/admin/approvals/timer/")
    body = page.content.decode()
    assert page.status_code == 200
    filter_block = body[body.index('id="changelist-filter"') :]
    for kind in kinds:
        assert f">{kind}<" not in filter_block, kind
        assert f"?kind={kind}" in filter_block
    chosen = sorted(kinds)[0]
    filtered = _client("admin").get("/admin/approvals/timer/", {"kind": chosen})
    assert filtered.status_code == 200
    shown = Timer.objects.filter(kind=chosen).count()
    assert f"{shown} timer" in filtered.content.decode()


def test_an_organisation_page_offers_only_save(acme: Any) -> None:
    admin = _client("admin")
    change = admin.get(f"/admin/approvals/tenant/{acme.pk}/change/").content.decode()
    assert 'name="_save"' in change
    assert 'name="_continue"' not in change and 'name="_addanother"' not in change
    add = admin.get("/admin/approvals/tenant/add/").content.decode()
    assert 'name="_addanother"' in add  # after a new one, another may follow
    olga = _client("olga").get(f"/admin/approvals/tenant/{acme.pk}/change/").content.decode()
    assert 'name="_save"' in olga
    assert 'name="_continue"' not in olga and 'name="_addanother"' not in olga
    assert Tenant.objects.count() >= 1
