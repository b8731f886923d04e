"""A step card's approver box is found by name: the page lists the manager and the
groups, never every person (people come from a search of at most ten, of those who can
approve), and the server reads what was typed, whole or in part, without regard to
case, refusing in words a name nobody or several people have."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from approvals.models import User, WorkflowTemplate, WorkflowTemplateDraft
from approvals.web import step_cards

from ..helpers import EXPENSE
from .test_step_cards import BASE, _post, _v1

pytestmark = pytest.mark.django_db


def _as(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


@pytest.mark.parametrize(
    ("typed", "rule"),
    [
        ("cora", {"user": "cora"}),  # the user name the search suggested
        ("Cora", {"user": "cora"}),
        ("  cOrA ", {"user": "cora"}),
        ("Finance (group)", {"group": "finance"}),
        ("IT admins", {"group": "it-admins"}),
        ("manager", {"manager": "submitter"}),  # the holder's manager is never an approver
        ("user:bob", {"user": "bob"}),
    ],
)
def test_an_approver_typed_by_name_is_saved_as_the_one_it_names(
    acme: Any, typed: str, rule: dict[str, str]
) -> None:
    response = _post(acme, **{"step-1-approver-0": typed})

    assert response.status_code == 302, response.content.decode()[:2000]
    draft = WorkflowTemplateDraft.objects.get()
    assert draft.definition["steps"][1]["approvers"] == [rule]


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("Zed", step_cards.PICKER_NOBODY.format(n=2, typed="Zed")),
        ("Audrey", step_cards.PICKER_NOBODY.format(n=2, typed="Audrey")),  # an auditor
        ("a", "Step 2: “a” could be "),
        ("F", "Step 2: “F” could be "),
    ],
    ids=["nobody", "cannot-approve", "several", "several-group-and-people"],
)
def test_a_name_nobody_or_several_have_is_refused_in_words_and_saves_nothing(
    acme: Any, typed: str, words: str
) -> None:
    response = _post(acme, **{"step-1-approver-0": typed})

    assert response.status_code == 200
    page = response.content.decode().replace("&#x27;", "'")
    assert words in page
    assert not WorkflowTemplateDraft.objects.exists()
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1


def test_the_escalation_box_may_name_the_holders_manager_but_manager_alone_is_unclear(
    acme: Any,
) -> None:
    unclear = _post(acme, **{"step-1-escalate": "manager"})
    holder = _post(acme, **{"step-1-escalate": "The manager of whoever holds the step"})

    assert "Step 2: “manager” could be " in unclear.content.decode()
    assert holder.status_code == 302
    draft = WorkflowTemplateDraft.objects.get()
    assert draft.definition["steps"][1]["escalate_to"] == {"manager": "assignee"}


def test_the_page_shows_names_and_lists_no_person(acme: Any) -> None:
    page = _as("fiona").get(f"{BASE}/{_v1(acme).pk}/change/").content.decode()

    assert 'name="step-0-approver-0" value="The submitter&#x27;s manager"' in page
    assert 'name="step-1-approver-0" value="Victor"' in page
    choices = page[page.index('<datalist id="step-0-approver-0-choices">') :]
    choices = choices[: choices.index("</datalist>")]
    assert '<option value="Finance (group)" data-fixed>' in choices
    assert "Victor" not in choices and "Bob" not in choices


def test_the_approver_search_finds_at_most_ten_who_can_approve_by_name(acme: Any) -> None:
    url = "/admin/approvals/workflowtemplate/approvers/"

    found = _as("fiona").get(url, {"q": "vic"}).json()["people"]
    auditor = _as("fiona").get(url, {"q": "aud"}).json()["people"]
    refused = _as("fiona").get(url, {"q": ""})

    assert [p["username"] for p in found] == ["victor"] and found[0]["label"]
    assert auditor == []  # an auditor cannot approve
    assert refused.status_code == 400 and refused.json()["error"]
    assert _as("alice").get(url, {"q": "o"}).status_code in (302, 403)
