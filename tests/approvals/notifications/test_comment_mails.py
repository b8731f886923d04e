"""A comment mails the request's other participants (the submitter, who holds the step
now, who decided before; never its author) and each person it mentions, with the
request's summary line and the comment, respecting each person's digest setting."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail

from approvals.models import User, Workflow
from approvals.notifications.models import MailMessage, NotificationPreference
from approvals.notifications.sender import mail_send

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db

RS_45_000 = 4_500_000  # the manager, then finance


def _at_finance(api: Any) -> str:
    started = start_expense(api("alice"), RS_45_000, description="Hotel in Pune")
    assert started.status_code == 201, started.content
    wid = str(started.json()["workflowId"])
    assert decide(api("bob"), wid, "approve", "bob-1").json()["status"] == "PENDING_FINANCE"
    return wid


def _comment(client: Any, wid: str, text: str, request_id: str) -> Any:
    body = {"text": text, "requestId": request_id}
    response = client.post(f"/api/workflows/{wid}/comments", body, format="json")
    assert response.status_code == 200, response.content
    return response


def _comment_rows(wid: str) -> dict[str, str]:
    return dict(
        MailMessage.objects.filter(workflow_id=wid, kind__in=("comment", "mentioned")).values_list(
            "recipient__username", "kind"
        )
    )


def _finance() -> set[str]:
    return set(
        User.objects.filter(org_groups__key="finance", tenant__slug="acme").values_list(
            "username", flat=True
        )
    )


def test_a_comment_mails_the_other_participants_and_not_its_author(acme, api):
    # given: bob approved; the finance group holds the step
    wid = _at_finance(api)

    # when: alice asks a question
    _comment(api("alice"), wid, "Do you need the hotel's GST number?", "c-1")

    # then: bob (who decided) and every finance holder are told; alice is not
    rows = _comment_rows(wid)
    assert set(rows) == {"bob"} | _finance()
    assert "alice" not in rows
    assert set(rows.values()) == {"comment"}


def test_a_mention_mails_that_person_as_mentioned(acme, api):
    # given
    wid = _at_finance(api)
    assert "farah" in _finance()
    mail_send()  # the task mails
    mail.outbox.clear()

    # when: bob writes to farah
    _comment(api("bob"), wid, "@farah the bill is attached now.", "c-2")
    mail_send()

    # then: farah is told she was mentioned, the others of a comment, bob of nothing
    rows = _comment_rows(wid)
    assert rows["farah"] == "mentioned"
    assert rows["alice"] == "comment"
    assert "bob" not in rows
    summary = Workflow.objects.get(pk=wid).summary
    assert summary.startswith("Hotel in Pune, ")
    [to_farah] = [m for m in mail.outbox if m.to == [User.objects.get(username="farah").email]]
    assert to_farah.subject == f"Bob mentioned you: {summary}"
    assert f"Bob mentioned you on {summary} from Alice" in to_farah.body
    assert '"@farah the bill is attached now."' in to_farah.body
    [to_alice] = [m for m in mail.outbox if m.to == [User.objects.get(username="alice").email]]
    assert to_alice.subject == f"Bob commented: {summary}"


def test_a_mention_of_someone_outside_the_participants_who_may_read_mails_them(acme, api):
    # given: olga (an organisation admin) reads every request but takes no part in this one
    started = start_expense(api("alice"), RS_45_000, description="Hotel in Pune")
    wid = str(started.json()["workflowId"])

    # when
    _comment(api("bob"), wid, "@olga is this a duplicate?", "c-3")

    # then: olga is mentioned, alice (the submitter) told of the comment
    assert _comment_rows(wid) == {"olga": "mentioned", "alice": "comment"}


def test_a_comment_waits_for_the_digest_of_someone_who_chose_it(acme, api):
    # given
    NotificationPreference.objects.create(user=User.objects.get(username="alice"), mode="digest")
    wid = _at_finance(api)

    # when
    _comment(api("bob"), wid, "Approved on my side.", "c-4")

    # then
    to_alice = MailMessage.objects.get(workflow_id=wid, kind="comment", recipient__username="alice")
    assert to_alice.digest is True
    others = MailMessage.objects.filter(workflow_id=wid, kind="comment").exclude(
        recipient__username="alice"
    )
    assert others and not any(m.digest for m in others)


def test_a_repeated_comment_request_writes_no_second_mail(acme, api):
    wid = _at_finance(api)
    _comment(api("alice"), wid, "Any news?", "c-5")
    count = MailMessage.objects.filter(workflow_id=wid).count()

    again = _comment(api("alice"), wid, "Any news?", "c-5")

    assert again.json()["duplicate"] is True
    assert MailMessage.objects.filter(workflow_id=wid).count() == count


def test_a_withdrawal_tells_the_steps_holders_why(acme, api):
    # given: the finance group holds alice's request
    wid = _at_finance(api)

    # when: alice withdraws it
    cancelled = api("alice").post(
        f"/api/workflows/{wid}/cancel",
        {"requestId": "w-1", "reason": "Booked twice by mistake"},
        format="json",
    )

    # then: each holder is told who withdrew it and why; alice herself is not
    assert cancelled.status_code == 200, cancelled.content
    rows = MailMessage.objects.filter(workflow_id=wid, kind="withdrawn")
    assert {r.recipient.username for r in rows} == _finance()
    summary = Workflow.objects.get(pk=wid).summary
    for row in rows:
        assert row.subject == f"Alice withdrew {summary}"
        assert row.context["comment"] == "Booked twice by mistake"
    assert not MailMessage.objects.filter(workflow_id=wid, recipient__username="alice").filter(
        kind__in=("withdrawn", "outcome_cancelled")
    )
