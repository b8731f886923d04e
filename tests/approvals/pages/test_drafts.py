"""Drafts on the pages: Save as draft beside Submit on the new-request form, My requests
listing the person's drafts first with Edit / Submit / Delete, and bad input refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import Draft, StartRequest, User, Workflow, WorkflowEvent
from approvals.pages.drafts import DRAFT_DELETED
from approvals.web import present

from .support import signed_in

pytestmark = pytest.mark.django_db

NEW = "/workflows/new?template=expense-approval"


def _form(**fields: str) -> dict[str, str]:
    return {"idempotency_key": "k-1", **fields}


def _saved(client: Any, **fields: str) -> Draft:
    # a select always sends a value, as the browser does: the currency is never empty
    response = client.post(NEW, _form(intent="draft", **{"currency": "INR", **fields}))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert response["Location"] == "/workflows/"
    return Draft.objects.latest("created_at")


def test_an_incomplete_request_is_saved_as_a_draft_and_routed_nowhere(acme):
    alice = signed_in("alice")

    draft = _saved(alice, amountPaise="450.00", description="Taxi to the airport")

    assert draft.data == {
        "amountPaise": 45_000,
        "currency": "INR",
        "description": "Taxi to the airport",
    }
    assert draft.author.username == "alice" and draft.subject_id == ""
    assert not Workflow.objects.exists() and not WorkflowEvent.objects.exists()
    page = alice.get("/workflows/").content.decode()
    assert present.draft_saved("Expense claim") in page


def test_my_requests_lists_my_drafts_first_with_their_actions(acme):
    from .support import expense_started

    expense_started("E-SUBMITTED")
    alice = signed_in("alice")
    draft = _saved(alice, amountPaise="450.00", subject_id="E-77")

    page = alice.get("/workflows/").content.decode()

    assert page.index("Drafts") < page.index(f'data-draft="{draft.pk}"') < page.index("E-SUBMITTED")
    assert "Expense claim E-77" in page and "₹450.00" in page
    assert f"/workflows/new?template=expense-approval&amp;draft={draft.pk}" in page
    assert f'action="/drafts/{draft.pk}/submit"' in page
    assert f'href="/drafts/{draft.pk}/delete"' in page
    # bob sees neither the draft on his list nor the draft by its address
    bob = signed_in("bob")
    assert str(draft.pk) not in bob.get("/workflows/").content.decode()
    assert bob.get(f"{NEW}&draft={draft.pk}").status_code == 404
    assert bob.post(f"/drafts/{draft.pk}/submit").status_code == 404
    assert bob.post(f"/drafts/{draft.pk}/delete").status_code == 404
    assert Draft.objects.filter(pk=draft.pk).exists()


def test_editing_a_draft_shows_what_was_saved_and_saves_over_it(acme):
    alice = signed_in("alice")
    draft = _saved(alice, amountPaise="450.00", subject_id="E-78")
    edit = f"{NEW}&draft={draft.pk}"

    page = alice.get(edit).content.decode()
    alice.post(edit, _form(intent="draft", amountPaise="500.00", subject_id="E-78"))

    assert 'value="450.00"' in page and 'value="E-78"' in page
    assert "Your draft, saved" in page
    assert Draft.objects.count() == 1
    assert Draft.objects.get().data["amountPaise"] == 50_000


def test_submitting_a_draft_from_its_form_starts_it_with_the_drafts_key(acme):
    alice = signed_in("alice")
    draft = _saved(alice, amountPaise="45000.00", subject_id="E-79")
    form = _form(
        intent="submit", amountPaise="45000.00", currency="INR", department="eng", subject_id="E-79"
    )

    response = alice.post(f"{NEW}&draft={draft.pk}", form)

    wf = Workflow.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/workflows/{wf.pk}"
    assert StartRequest.objects.get().key == draft.idempotency_key
    assert wf.public_status == "PENDING_MANAGER"
    assert "Drafts" not in alice.get("/workflows/").content.decode()


def test_submit_from_my_requests_starts_the_workflow_once(acme):
    alice = signed_in("alice")
    draft = _saved(
        alice, amountPaise="45000.00", currency="INR", department="eng", subject_id="E-80"
    )

    first = alice.post(f"/drafts/{draft.pk}/submit")
    second = alice.post(f"/drafts/{draft.pk}/submit")

    wf = Workflow.objects.get()
    assert first["Location"] == second["Location"] == f"/workflows/{wf.pk}"
    assert wf.subject_id == "E-80"


def test_submitting_an_incomplete_draft_names_what_is_missing(acme):
    alice = signed_in("alice")
    draft = _saved(alice, amountPaise="450.00")

    response = alice.post(f"/drafts/{draft.pk}/submit", follow=True)

    page = response.content.decode()
    assert response.redirect_chain[-1][0] == f"{NEW}&draft={draft.pk}"
    assert "fill in “Department” and “Reference”, then submit it" in page
    assert not Workflow.objects.exists()


def test_delete_asks_first_then_deletes(acme):
    alice = signed_in("alice")
    draft = _saved(alice, amountPaise="450.00", subject_id="E-81")

    asked = alice.get(f"/drafts/{draft.pk}/delete").content.decode()
    assert "Delete the draft Expense claim E-81?" in asked
    assert Draft.objects.filter(pk=draft.pk).exists()

    done = alice.post(f"/drafts/{draft.pk}/delete", follow=True)

    assert not Draft.objects.filter(pk=draft.pk).exists()
    assert DRAFT_DELETED.format(subject="Expense claim E-81") in done.content.decode()


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        pytest.param({"description": "a\x00b"}, "Null characters are not allowed.", id="nul"),
        pytest.param({"subject_id": "E" * 129}, "at most 128 characters", id="long-reference"),
        pytest.param({"description": "d" * 2001}, "at most 2000 characters", id="long-value"),
        pytest.param({"amountPaise": "lots"}, "Enter an amount such as", id="wrong-type"),
    ],
)
def test_bad_input_in_a_draft_is_a_form_error_and_saves_nothing(acme, fields, error):
    response = signed_in("alice").post(NEW, _form(intent="draft", **fields))

    assert response.status_code == 400
    assert error in response.content.decode()
    assert not Draft.objects.exists()


def test_a_draft_id_that_names_nothing_is_404(acme):
    alice = signed_in("alice")

    assert alice.get(f"{NEW}&draft=not-a-uuid").status_code == 404
    assert alice.get(f"{NEW}&draft=00000000-0000-0000-0000-000000000000").status_code == 404
    assert alice.post("/drafts/00000000-0000-0000-0000-000000000000/submit").status_code == 404


def test_my_requests_takes_a_constant_number_of_queries_however_many_drafts(acme):
    alice = signed_in("alice")
    _saved(alice, amountPaise="1.00")

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert alice.get("/workflows/").status_code == 200
        return len(ctx.captured_queries)

    count()
    one = count()
    for i in range(5):
        _saved(alice, amountPaise=f"{i + 2}.00")
    assert count() == one
    assert User.objects.get(username="alice").drafts.count() == 6
