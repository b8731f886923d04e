"""The read rule asked from the person's side (``access.workflows_readable_from_own``, the
search's): the same workflows as ``workflows_readable`` for everyone of the organisation,
whatever they take part in, stand in for or hold a grant on; a search by words never
finds a request its reader may not read."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from guardian.shortcuts import assign_perm

from approvals import access
from approvals.models import User, WorkflowTemplate
from approvals.services.delegations import delegation_set

from ..helpers import EXPENSE, decide, start_expense

pytestmark = pytest.mark.django_db


def _start(api: Any, who: str, subject: str, description: str) -> str:
    response = start_expense(api(who), 4_500_000, subject=subject, description=description)
    assert response.status_code == 201, response.content
    return str(response.json()["workflowId"])


@pytest.fixture
def hotels(acme: Any, api: Any) -> dict[str, str]:
    """Three requests that say "hotel": alice's (waits for bob), victor's (waits for his
    manager), and alice's second, which bob approved (waits for finance)."""
    found = {
        "alice": _start(api, "alice", "H-1", "Hotel in Pune"),
        "victor": _start(api, "victor", "H-2", "Hotel in Goa"),
        "approved": _start(api, "alice", "H-3", "Hotel in Delhi"),
    }
    assert decide(api("bob"), found["approved"], "approve", "s-1").status_code == 200
    return found


def _ids(qs: Any) -> set[str]:
    return {str(pk) for pk in qs.values_list("pk", flat=True)}


def _same_for_everyone(acme: Any) -> None:
    for person in User.objects.filter(tenant=acme):
        own = _ids(access.workflows_readable_from_own(person))
        assert own == _ids(access.workflows_readable(person)), person.username


def test_the_same_workflows_as_the_read_rule_for_everyone(acme, hotels):
    _same_for_everyone(acme)
    ivan = User.objects.get(username="ivan")
    assert _ids(access.workflows_readable_from_own(ivan)) == set()


def test_a_delegate_reads_what_waits_for_the_absent_and_no_more(acme, hotels):
    bob, ivan = User.objects.get(username="bob"), User.objects.get(username="ivan")
    now = dt.datetime.now(dt.UTC)
    # an absence that ended yesterday lets him read nothing
    delegation_set(
        user=bob,
        delegate=ivan,
        starts_at=now - dt.timedelta(days=3),
        ends_at=now - dt.timedelta(days=1),
    )
    assert _ids(access.workflows_readable_from_own(ivan)) == set()
    delegation_set(
        user=bob,
        delegate=ivan,
        starts_at=now - dt.timedelta(hours=1),
        ends_at=now + dt.timedelta(days=1),
    )

    # alice's first waits for bob; her second left him for finance
    assert _ids(access.workflows_readable_from_own(ivan)) == {hotels["alice"]}
    _same_for_everyone(acme)


def test_a_grant_on_the_template_reads_all_of_its_workflows(acme, hotels):
    ivan = User.objects.get(username="ivan")
    template = WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).first()
    assign_perm("approvals.view_workflowtemplate_runs", ivan, template)

    assert _ids(access.workflows_readable_from_own(ivan)) == set(hotels.values())
    _same_for_everyone(acme)


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        pytest.param("alice", ["approved", "alice"], id="the-submitter-her-own"),
        pytest.param("bob", ["approved", "alice"], id="the-manager-what-he-decides"),
        pytest.param("victor", ["victor"], id="another-submitter-his-own"),
        pytest.param("ivan", [], id="someone-who-takes-part-in-none"),
        pytest.param("audrey", ["approved", "victor", "alice"], id="the-auditor-all"),
    ],
)
def test_an_employee_searching_a_common_word_finds_only_what_they_may_read(
    hotels, api, who, expected
):
    response = api(who).get("/api/workflows", {"text": "hotel"})

    assert response.status_code == 200, response.content
    found = [w["workflowId"] for w in response.json()["workflows"]]
    assert found == [hotels[name] for name in expected]


def test_past_the_listed_many_the_ids_are_asked_in_the_query_alike(acme, hotels, monkeypatch):
    monkeypatch.setattr(access, "OWN_LISTED_MAX", 1)  # alice reads two

    _same_for_everyone(acme)
    alice = User.objects.get(username="alice")
    assert _ids(access.workflows_readable_from_own(alice)) == {
        hotels["alice"],
        hotels["approved"],
    }
