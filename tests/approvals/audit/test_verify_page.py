"""The Verify page: the same check as ``verify_audit`` for the organisation, one workflow
template or one workflow, told in words; only for those who audit."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client

from approvals.audit.pages import (
    ALL_VERIFY,
    NO_SUCH_REQUEST,
    SEALS_CHECK,
    _number,
)
from approvals.audit.seal import seal_create
from approvals.models import Tenant, User, Workflow

from .support import run_expenses, triggers_off

pytestmark = pytest.mark.django_db

URL = "/audit/verify"


def signed_in(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def edit_payload(workflow_id: str, seq: int) -> None:
    with triggers_off(), connection.cursor() as c:
        c.execute(
            'UPDATE approvals_workflowevent SET payload = payload || \'{"comment": "edited"}\' '
            "WHERE workflow_id = %s AND seq = %s",
            [workflow_id, seq],
        )


def test_an_untouched_history_verifies_in_words(acme: Tenant, api: Any) -> None:
    run_expenses(api, 3)
    seal_create(tenant=acme)
    n = Workflow.objects.filter(tenant=acme).count()

    page = signed_in("audrey").get(URL, {"scope": "organisation"})

    assert page.status_code == 200
    text = page.content.decode()
    assert ALL_VERIFY.format(workflows=n, s="s", seals=SEALS_CHECK) in text
    assert 'data-verdict="ok"' in text
    assert "Checked " in text and " events of " in text


def test_a_tampered_event_is_named_with_its_request_and_position(acme: Tenant, api: Any) -> None:
    # given three expenses, the second's third event edited behind the app's back
    ids = run_expenses(api, 3)
    edit_payload(ids[1], 3)
    wf = Workflow.objects.get(pk=ids[1])

    page = signed_in("audrey").get(URL, {"scope": "organisation"})

    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-verdict="broken"' in text
    assert "1 problem found." in text
    first = text[text.index('class="first-break"') :]
    first = first[: first.index("</p>")]
    assert f'href="/workflows/{wf.pk}"' in first
    assert f"Expense claim {wf.subject_id}" in first
    assert f"Event 3 of {wf.version}" in first
    assert "changed after it was written" in first


def test_one_workflow_or_one_template_narrows_the_check(acme: Tenant, api: Any) -> None:
    ids = run_expenses(api, 2)
    edit_payload(ids[0], 2)
    other = Workflow.objects.get(pk=ids[1])
    client = signed_in("olga")

    one = client.get(URL, {"scope": "workflow", "workflow": other.subject_id})
    kind = client.get(URL, {"scope": "template", "template": "expense-approval"})
    by_id = client.get(URL, {"scope": "workflow", "workflow": ids[0]})
    unknown = client.get(URL, {"scope": "workflow", "workflow": "E-none"})

    assert ALL_VERIFY.format(workflows=1, s="", seals="") in one.content.decode().replace(
        " (no seal has been made yet, so only the chains were checked)", ""
    )
    assert "1 problem found." in kind.content.decode()
    assert "1 problem found." in by_id.content.decode()
    assert unknown.status_code == 400
    assert NO_SUCH_REQUEST.format(ref="E-none") in unknown.content.decode()


@pytest.mark.parametrize(
    ("who", "allowed"),
    [("audrey", True), ("olga", True), ("admin", True), ("bob", False), ("fiona", False)],
)
def test_who_may_verify(acme: Tenant, api: Any, who: str, allowed: bool) -> None:
    run_expenses(api, 1)
    client = signed_in(who)

    page = client.get(URL, {"scope": "organisation"})
    inbox = client.get("/")

    assert page.status_code == (200 if allowed else 403)
    assert (f'href="{URL}"' in inbox.content.decode()) == allowed


def test_the_admin_home_leads_auditors_to_verify(acme: Tenant) -> None:
    home = signed_in("audrey").get("/admin/")

    assert home.status_code == 200
    assert f'href="{URL}"' in home.content.decode()


def test_numbers_are_grouped_as_people_read_them() -> None:
    assert [_number(n) for n in (7, 1204, 100000, 12345678)] == [
        "7",
        "1,204",
        "1,00,000",
        "1,23,45,678",
    ]
