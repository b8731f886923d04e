"""Which events tell whom what: one outbox row per event and recipient, with the amount
in currency units and the requester in the subject and the first line."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from django.core import mail

from approvals import clock
from approvals.models import Delegation, OrgGroup, User, Workflow, WorkflowTemplate
from approvals.notifications.bodies import mail_bodies
from approvals.notifications.digest import mail_digest_send
from approvals.notifications.format import money_format
from approvals.notifications.messages import mail_project
from approvals.notifications.models import MailMessage, NotificationPreference
from approvals.notifications.sender import mail_send
from approvals.services.templates import workflow_template_publish
from approvals.workers.timers import timer_drain
from templates_engine import State
from templates_engine.events import event_from_dict

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
TOKEN = re.compile(r"/mail/links/([^\s\"<]+)")


def rows(wid: str) -> list[tuple[int, str, str]]:
    return list(
        MailMessage.objects.filter(workflow_id=wid)
        .order_by("event_seq", "recipient__username")
        .values_list("event_seq", "recipient__username", "kind")
    )


def only(wid: str, kind: str) -> MailMessage:
    return MailMessage.objects.get(workflow_id=wid, kind=kind)


@pytest.mark.parametrize(
    ("minor", "currency", "shown"),
    [
        (4_500_000, "INR", "₹45,000.00"),
        (10_000_000, "INR", "₹1,00,000.00"),
        (1_234_567_890, "INR", "₹1,23,45,678.90"),
        (5, "INR", "₹0.05"),
        (123_456_789, "USD", "$1,234,567.89"),
        (1500, "JPY", "JPY 1,500"),
        (-250, "EUR", "-€2.50"),
    ],
)
def test_money_format(minor: int, currency: str, shown: str) -> None:
    assert money_format(minor=minor, currency=currency) == shown


def test_a_new_task_mails_the_assignee_with_amount_requester_and_links(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]

    [row] = MailMessage.objects.filter(workflow_id=wid)
    assert (row.recipient.username, row.kind, row.status) == ("bob", "task_assigned", "pending")
    assert row.to_address == "bob@acme.example"
    assert row.subject == "Please approve: Expense claim ₹45,000.00 from Alice"
    text, html = mail_bodies(row)
    first_line = text.splitlines()[0]
    assert "₹45,000.00" in first_line and "Alice" in first_line
    assert "₹45,000.00" in html and "Alice" in html
    assert text.count("/mail/links/") == 2
    # the manager's rejection sends the claim back to Alice, and its link says so
    assert "Approve: http" in text and "Send back to Alice: http" in text
    assert "Reject: http" not in text
    assert row.message_id == f"<wf-{wid}-{row.event_seq}-{row.recipient_id}@approvals.127.0.0.1>"


def test_each_step_and_the_outcome_tell_the_right_people_once(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    decide(api("bob"), wid, "approve", "b1")
    decide(api("fiona"), wid, "approve", "f1")

    kinds = [(who, kind) for _, who, kind in rows(wid)]
    assert kinds == [
        ("bob", "task_assigned"),
        ("farah", "task_assigned"),
        ("fiona", "task_assigned"),
        ("alice", "outcome_approved"),
    ]
    outcome = only(wid, "outcome_approved")
    assert outcome.subject == "Approved: your Expense claim ₹45,000.00"
    assert "/mail/links/" not in mail_bodies(outcome)[0]  # nothing to decide
    # one row per event and recipient, whatever the number of projections
    wf = Workflow.objects.get(pk=wid)
    from approvals.models import WorkflowEvent

    stored = WorkflowEvent.objects.filter(workflow_id=wid).order_by("seq")
    events = [event_from_dict(e.payload) for e in stored]
    mail_project(wf=wf, old=State(), events=events, first_seq=1, now=clock.now())
    assert MailMessage.objects.filter(workflow_id=wid).count() == 4


def test_reminder_and_escalation(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    with clock.shifted(DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 1
    reminder = only(wid, "reminder")
    assert reminder.recipient.username == "bob"
    assert reminder.subject.startswith("Reminder: Expense claim ₹45,000.00 from Alice")
    assert mail_bodies(reminder)[0].count("/mail/links/") == 2

    with clock.shifted(2 * DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 1
    to_victor = only(wid, "escalated")
    away = only(wid, "escalated_away")
    assert to_victor.recipient.username == "victor" and away.recipient.username == "bob"
    assert to_victor.event_seq == away.event_seq
    assert "now waits for you" in mail_bodies(to_victor)[0].splitlines()[0]
    assert "passed on to Victor" in mail_bodies(away)[0].splitlines()[0]
    assert "/mail/links/" not in mail_bodies(away)[0]


def test_send_back_reject_and_cancel_tell_the_submitter(acme, api):
    sent_back = start_expense(api("alice"), 4_500_000, subject="E-sb").json()["workflowId"]
    assert (
        decide(api("bob"), sent_back, "send_back", "sb", comment="Add receipts").status_code == 200
    )
    row = only(sent_back, "sent_back")
    assert row.recipient.username == "alice"
    assert row.subject == "Sent back by Bob: your Expense claim ₹45,000.00"
    assert "Bob sent your Expense claim ₹45,000.00 back" in mail_bodies(row)[0].splitlines()[0]
    assert 'What to change (Bob): "Add receipts"' in mail_bodies(row)[0]

    rejected = start_expense(api("alice"), 4_500_000, subject="E-rj").json()["workflowId"]
    decide(api("bob"), rejected, "approve", "rj-0")
    decide(api("fiona"), rejected, "reject", "rj")  # finance's rejection ends it
    assert only(rejected, "outcome_rejected").recipient.username == "alice"

    by_admin = start_expense(api("alice"), 4_500_000, subject="E-c1").json()["workflowId"]
    api("olga").post(f"/api/workflows/{by_admin}/cancel", {"requestId": "c1"}, format="json")
    assert only(by_admin, "outcome_cancelled").recipient.username == "alice"

    by_herself = start_expense(api("alice"), 4_500_000, subject="E-c2").json()["workflowId"]
    api("alice").post(f"/api/workflows/{by_herself}/cancel", {"requestId": "c2"}, format="json")
    assert Workflow.objects.get(pk=by_herself).public_status == "WITHDRAWN"
    assert not MailMessage.objects.filter(workflow_id=by_herself, kind="outcome_cancelled")


def test_a_workflow_that_fails_tells_the_submitter(acme, api):
    OrgGroup.objects.create(tenant=acme, key="ghosts", name="A group with no one in it")
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "nobody-approves",
            "title": "Nobody approves",
            "steps": [{"id": "ghost", "kind": "approval", "approvers": [{"group": "ghosts"}]}],
        },
    )
    body = {"template": "nobody-approves", "subject": {"type": "t", "id": "1"}, "data": {}}
    wid = api("alice").post("/api/workflows", body, format="json").json()["workflowId"]

    assert Workflow.objects.get(pk=wid).status == "ROLLED_BACK"
    row = only(wid, "outcome_failed")
    assert row.recipient.username == "alice"
    assert row.subject == "Could not be completed: your Nobody approves 1"
    assert "Why: Nobody could be found to decide the Ghost step." in mail_bodies(row)[0]


def test_a_delegate_gets_the_task_mail_not_the_person_away(acme, api):
    now = clock.now()
    Delegation.objects.create(
        tenant=acme,
        user=User.objects.get(username="bob"),
        delegate=User.objects.get(username="ivan"),
        starts_at=now - DAY,
        ends_at=now + DAY,
    )
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]

    assert [(who, kind) for _, who, kind in rows(wid)] == [("ivan", "task_assigned")]


def test_mail_send_sends_each_row_once_with_its_message_id(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    row = MailMessage.objects.get(workflow_id=wid)

    assert mail_send()["sent"] == 1
    assert mail_send()["sent"] == 0

    [sent] = mail.outbox
    assert sent.extra_headers["Message-ID"] == row.message_id
    assert sent.to == ["bob@acme.example"]
    assert sent.alternatives[0][1] == "text/html"
    row.refresh_from_db()
    assert (row.status, row.attempts) == ("sent", 1)
    assert row.sent_at is not None


def test_the_digest_collects_a_persons_rows_into_one_mail(acme, api):
    NotificationPreference.objects.create(user=User.objects.get(username="bob"), mode="digest")
    first = start_expense(api("alice"), 4_500_000, subject="E-d1").json()["workflowId"]
    second = start_expense(api("alice"), 20_000_000, subject="E-d2").json()["workflowId"]
    digest_rows = MailMessage.objects.filter(recipient__username="bob")
    assert digest_rows.count() == 2 and all(r.digest for r in digest_rows)

    assert mail_send()["sent"] == 0  # digest rows wait for the digest
    assert mail_digest_send() == {"sent": 0, "failed": 0}  # and for bob's hour of the day
    with clock.shifted(DAY):
        assert mail_digest_send() == {"sent": 1, "failed": 0}
        assert mail_digest_send() == {"sent": 0, "failed": 0}

    [digest] = mail.outbox
    assert digest.to == ["bob@acme.example"]
    assert digest.subject == "Your approvals digest: 2 waiting for you, 0 updates"
    assert "₹45,000.00" in digest.body and "₹2,00,000.00" in digest.body
    assert f"/workflows/{first}" in digest.body and f"/workflows/{second}" in digest.body
    assert set(digest_rows.values_list("status", flat=True)) == {"sent"}


def test_the_command_stores_the_facts_and_the_sender_keeps_the_bodies_it_sent(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    row = only(wid, "task_assigned")
    # Rendering waits for the sender: the command's transaction holds only the facts.
    assert (row.text_body, row.html_body) == ("", "")
    assert row.context["amount"] == "₹45,000.00" and row.context["requester"] == "Alice"
    # No link is signed in the transaction: the row keeps what the links grant.
    assert "/mail/links/" not in json.dumps(row.context)
    assert row.context["link"] == {
        "step": "manager",
        "round": row.event_seq,
        "user": row.recipient_id,
    }
    text, html = mail_bodies(row)
    assert text.count("/mail/links/") == 2

    mail.outbox.clear()
    assert mail_send(ids=[row.pk])["sent"] == 1

    [sent] = mail.outbox
    row.refresh_from_db()
    assert row.status == "sent"
    assert sent.body == row.text_body and sent.alternatives[0].content == row.html_body
    # The same mail, with links of its own (each rendering signs fresh ones).
    assert TOKEN.sub("T", sent.body) == TOKEN.sub("T", text)
    assert TOKEN.sub("T", row.html_body) == TOKEN.sub("T", html)
    assert TOKEN.findall(sent.body) != TOKEN.findall(text)
    assert mail_bodies(row) == (row.text_body, row.html_body)  # what was sent, not rendered again


def test_a_row_kept_before_links_were_signed_at_sending_renders_its_own(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    row = only(wid, "task_assigned")
    facts = dict(row.context)
    del facts["link"], facts["workflow"]
    facts |= {
        "actions": [{"caption": "Approve", "url": "https://approvals.example/mail/links/old/"}],
        "workflow_url": "https://approvals.example/workflows/old/",
    }
    row.context = facts
    text, _ = mail_bodies(row)
    assert "https://approvals.example/mail/links/old/" in text
    assert "https://approvals.example/workflows/old/" in text
    assert text.count("/mail/links/") == 1


def test_sending_given_rows_sends_those_still_due_and_no_other(acme, api):
    r1, r2, r3 = (
        only(
            start_expense(api("alice"), 4_500_000, subject=f"E-{i}").json()["workflowId"],
            "task_assigned",
        )
        for i in range(3)
    )
    MailMessage.objects.filter(pk=r2.pk).update(status="sent")
    mail.outbox.clear()

    done = mail_send(ids=[r2.pk, r3.pk])

    assert (done["sent"], [m.extra_headers["Message-ID"] for m in mail.outbox]) == (
        1,
        [r3.message_id],
    )
    assert MailMessage.objects.get(pk=r1.pk).status == "pending"  # not asked for
    assert MailMessage.objects.get(pk=r2.pk).attempts == 0  # already sent: not claimed


def test_a_line_break_in_a_title_or_a_name_is_folded_so_the_task_mail_goes_out(acme, api):
    # given a workflow template title and a submitter's name typed with line breaks
    expense = WorkflowTemplate.objects.filter(tenant=acme, key="expense-approval").latest("version")
    workflow_template_publish(
        tenant=acme, definition={**expense.definition, "title": "Expense\r\nclaim"}
    )
    User.objects.filter(username="alice").update(first_name="Alice\r\nBcc: eve@example.com")

    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    row = MailMessage.objects.get(workflow_id=wid)

    assert row.subject == "Please approve: Expense claim ₹45,000.00 from Alice Bcc: eve@example.com"
    assert mail_send()["sent"] == 1
    [sent] = mail.outbox
    assert "\n" not in sent.subject and "\r" not in sent.subject
    assert sent.recipients() == ["bob@acme.example"]
    row.refresh_from_db()
    assert row.status == "sent"


def test_a_mail_row_kept_with_a_line_break_in_its_subject_is_still_sent(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    MailMessage.objects.filter(workflow_id=wid).update(subject="Please approve:\r\nExpense")

    assert mail_send()["sent"] == 1
    [sent] = mail.outbox
    assert sent.subject == "Please approve: Expense"
