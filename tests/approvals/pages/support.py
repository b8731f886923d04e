"""Helpers for the page tests: a signed-in browser client, an expense started as
someone, a search's form."""

from __future__ import annotations

from django.test import Client, RequestFactory

from approvals.models import User
from approvals.services.workflows import workflow_decide, workflow_start
from approvals.web.search import WorkflowSearch


def signed_in(username: str, tz_cookie: str | None = None) -> Client:
    """A Django test client signed in as ``username``; ``tz_cookie`` is what the
    browser's script would store as its time zone."""
    client = Client()
    client.force_login(User.objects.get(username=username))
    if tz_cookie:
        client.cookies["tz"] = tz_cookie
    return client


def expense_started(subject: str, who: str = "alice", amount: int = 4_500_000) -> str:
    """The id of an expense ``who`` submitted (through the service, as the form does)."""
    started = workflow_start(
        submitter=User.objects.get(username=who),
        template_key="expense-approval",
        subject_type="expense",
        subject_id=subject,
        data={"amountPaise": amount, "currency": "INR", "department": "eng"},
    )
    return str(started.workflow_id)


def at_finance(subject: str) -> str:
    """An expense of Alice's that Bob approved: it waits at the Finance step, where a
    rejection ends the request."""
    wid = expense_started(subject)
    workflow_decide(
        user=User.objects.get(username="bob"),
        workflow_id=wid,
        decision="approve",
        request_id=f"bob-{subject}",
    )
    return wid


def searched(username: str, text: str) -> WorkflowSearch:
    """The search page's form, valid, of ``username`` asking for ``text``."""
    request = RequestFactory().get("/search")
    request.user = User.objects.get(username=username)
    found = WorkflowSearch({"text": text}, request=request)
    assert found.is_valid(), found.errors
    return found
