"""Every mail kind leads with the request's summary line and says who and why: who
rejected, sent back or cancelled it and their words, which step failed and why in the
workflow template's words, since when a reminded task waits and when it is or was due;
times in the recipient's zone, else the organisation's, never an unnamed UTC."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.core import mail
from django.test import Client

from approvals import clock
from approvals.models import Tenant, User
from approvals.notifications.bodies import mail_bodies
from approvals.notifications.digest import mail_digest_send
from approvals.notifications.models import MailMessage, NotificationPreference
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_cancel, workflow_decide, workflow_start
from approvals.words.zones import ZONE_INVALID
from approvals.workers.timers import timer_drain

from ..helpers import decide, run_activities, start_expense

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
HOTEL = "Hotel for the Pune offsite"
LINE = f"{HOTEL}, ₹45,000.00"  # the expense template's summary: description, amount
# A budget request: the budget is reserved first, then the manager decides; a
# rejection undoes the reservation. Its reserve step says in its own words why it fails.
BUDGET: dict[str, Any] = {
    "key": "budget-request",
    "title": "Budget request",
    "summary": "{purpose}, {amountPaise}",
    "schema": {
        "type": "object",
        "properties": {
            "amountPaise": {
                "type": "integer",
                "title": "Amount",
                "x-money": {"currency": "currency"},
            },
            "currency": {"type": "string", "enum": ["INR", "USD"]},
            "purpose": {"type": "string", "title": "Purpose"},
        },
    },
    "steps": [
        {
            "id": "reserve_budget",
            "title": "Budget check",
            "kind": "action",
            "activity": "reserve_budget",
            "compensate": {"activity": "release_budget"},
            "retry": {"max_attempts": 1},
            "failure_text": "The department budget has no room for this request",
        },
        {
            "id": "manager",
            "kind": "approval",
            "approvers": [{"manager": "submitter"}],
            "on_reject": "end",
        },
    ],
}
# What no employee's mail may show: user names (people are named by first name, with a
# capital), step ids, workflow template keys, minor units, exception names.
ENGINE_WORDS = re.compile(
    r"\b(alice|bob|fiona|olga|victor|reserve_budget|budget-request|expense-approval)\b"
    r"|paise|Exceeded|Error|Exception|[0-9]{7,}"
)
LINK = re.compile(r"https?://\S+")


def only(wid: str, kind: str) -> MailMessage:
    return MailMessage.objects.get(workflow_id=wid, kind=kind)


def text_of(row: MailMessage) -> str:
    return mail_bodies(row)[0]


def assert_people_words(row: MailMessage) -> None:
    text, html = mail_bodies(row)
    for words in (row.subject, text.split("Open the request:")[0], html.split("<a href")[0]):
        # A link's signed token may hold any run of digits: only the words are checked.
        found = ENGINE_WORDS.search(LINK.sub("", words))
        assert found is None, (found, words)


def expense(api: Any, subject: str = "E-hotel") -> str:
    response = start_expense(api("alice"), 4_500_000, description=HOTEL, subject=subject)
    return str(response.json()["workflowId"])


def budget(acme: Any, amount: int, definition: dict[str, Any] = BUDGET) -> str:
    workflow_template_publish(tenant=acme, definition=definition)
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="budget-request",
        subject_type="budget",
        subject_id="B-small" if amount < 1_000_000_000 else "B-big",
        data={"amountPaise": amount, "currency": "INR", "purpose": "Team offsite"},
    )
    return str(started.workflow_id)


def test_a_task_mail_leads_with_the_summary_and_names_requester_step_and_due(acme, api):
    wid = expense(api)

    row = only(wid, "task_assigned")
    text = text_of(row)
    assert row.subject == f"Please approve: {LINE} from Alice"
    assert text.splitlines()[0] == f"{LINE} from Alice waits for you."
    assert f"What: {LINE}" in text and "Requested by: Alice" in text
    assert "Step: Manager" in text and "Due: " in text
    assert "expense-approval" not in text and "Expense claim" in text  # the kind, in words
    assert_people_words(row)


def test_times_are_in_the_recipients_zone_else_the_organisations_else_named_utc(acme, api):
    # given a task due 2 days after it was given, to bob
    wid = expense(api)
    row = only(wid, "task_assigned")
    due = dt.datetime.fromtimestamp(row.context["due_at"], tz=dt.UTC)

    # when neither bob nor acme chose a zone: UTC, named
    Tenant.objects.filter(pk=acme.pk).update(time_zone="")
    assert f"Due: {due.day} {due:%b}, {due:%H:%M} UTC" in text_of(row)

    # when acme chose Europe/Berlin and bob none: Berlin's time (CET in winter, +1 h)
    Tenant.objects.filter(pk=acme.pk).update(time_zone="Europe/Berlin")
    berlin = due.astimezone(dt.timezone(dt.timedelta(hours=1)))
    if due.month in (4, 5, 6, 7, 8, 9):  # CEST
        berlin = due.astimezone(dt.timezone(dt.timedelta(hours=2)))
    assert f"Due: {berlin.day} {berlin:%b}, {berlin:%H:%M} CE" in text_of(row)
    assert "UTC" not in text_of(row)

    # when bob chose Asia/Kolkata: his zone wins over acme's
    User.objects.filter(username="bob").update(time_zone="Asia/Kolkata")
    wid2 = expense(api, "E-zone-2")
    ist = due.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30)))
    text = text_of(only(wid2, "task_assigned"))
    assert f"Due: {ist.day} {ist:%b}, {ist:%H:%M} IST" in text
    assert "UTC" not in text and "CET" not in text


def test_a_reminder_says_since_when_it_waits_and_when_it_is_due(acme, api):
    User.objects.filter(username="bob").update(time_zone="Asia/Kolkata")
    wid = expense(api)
    assigned = only(wid, "task_assigned")
    with clock.shifted(DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 1

    row = only(wid, "reminder")
    text = text_of(row)
    assert row.subject == f"Reminder: {LINE} from Alice"
    assert text.splitlines()[0] == f"{LINE} from Alice still waits for you."
    since = assigned.created_at.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30)))
    assert f"Waiting since: {since.day} {since:%b}, {since:%H:%M} IST" in text
    assert "Due: " in text and "IST" in text
    assert_people_words(row)


def test_an_escalation_says_it_was_not_decided_in_time_and_when_it_was_due(acme, api):
    wid = expense(api)
    with clock.shifted(DAY + dt.timedelta(seconds=1)):
        timer_drain()
    with clock.shifted(2 * DAY + dt.timedelta(seconds=1)):
        timer_drain()

    to_victor, away = only(wid, "escalated"), only(wid, "escalated_away")
    assert text_of(to_victor).splitlines()[0] == (
        f"{LINE} from Alice was not decided in time and now waits for you."
    )
    assert "Was due: " in text_of(to_victor) and "Waiting since: " in text_of(to_victor)
    assert text_of(away).splitlines()[0] == (
        f"{LINE} from Alice was not decided in time and was passed on to Victor."
    )
    assert "Was due: " in text_of(away)
    for row in (to_victor, away):
        assert_people_words(row)


def test_a_send_back_names_who_and_what_to_change(acme, api):
    wid = expense(api)
    decide(api("bob"), wid, "send_back", "sb", comment="Add the hotel bill")

    row = only(wid, "sent_back")
    text = text_of(row)
    assert row.subject == f"Sent back by Bob: your {LINE}"
    assert text.splitlines()[0] == f"Bob sent your {LINE} back for changes."
    assert 'What to change (Bob): "Add the hotel bill"' in text
    assert_people_words(row)


def test_a_rejection_names_who_rejected_and_their_reason(acme, api):
    wid = expense(api)
    decide(api("bob"), wid, "approve", "b")
    decide(api("fiona"), wid, "reject", "f", comment="Not a business expense")

    row = only(wid, "outcome_rejected")
    text = text_of(row)
    assert row.subject == f"Rejected by Fiona: your {LINE}"
    assert text.splitlines()[0] == f"Fiona rejected your {LINE}."
    assert 'Reason (Fiona): "Not a business expense"' in text
    assert "Step: Finance" in text
    assert_people_words(row)


def test_a_rejection_ended_after_its_undo_still_names_who_and_why(acme):
    # given a budget request whose reservation must be undone after the manager rejects
    wid = budget(acme, 5_000_000)
    run_activities(wid)
    bob = User.objects.get(username="bob")
    workflow_decide(
        user=bob, workflow_id=wid, decision="reject", request_id="r", comment="Offsite is off"
    )
    assert not MailMessage.objects.filter(workflow_id=wid, kind="outcome_rejected")

    # when the undo runs, in a later command
    run_activities(wid)

    row = only(wid, "outcome_rejected")
    text = text_of(row)
    assert row.subject == "Rejected by Bob: your Team offsite, ₹50,000.00"
    assert 'Reason (Bob): "Offsite is off"' in text
    assert_people_words(row)


def test_a_cancellation_names_who_and_why(acme, api):
    wid = expense(api)
    workflow_cancel(
        user=User.objects.get(username="olga"),
        workflow_id=wid,
        request_id="c",
        reason="Booked twice",
    )

    row = only(wid, "outcome_cancelled")
    text = text_of(row)
    assert row.subject == f"Cancelled by Olga: your {LINE}"
    assert text.splitlines()[0] == f"Olga cancelled your {LINE}."
    assert 'Reason (Olga): "Booked twice"' in text
    assert_people_words(row)


def test_a_failure_says_the_steps_own_failure_text_never_the_error(acme):
    wid = budget(acme, 1_500_000_000)  # over what reserve_budget allows
    run_activities(wid)

    row = only(wid, "outcome_failed")
    text = text_of(row)
    assert row.subject == "Could not be completed: your Team offsite, ₹1,50,00,000.00"
    assert (
        "Why: The department budget has no room for this request. "
        "No step had been done yet, so there was nothing to undo." in text
    )
    assert "BudgetExceeded" not in text and "1500000000" not in text
    assert_people_words(row)


def test_a_failure_without_failure_text_names_the_step_in_words(acme):
    reserve, manager = BUDGET["steps"]
    plain = {
        **BUDGET,
        "steps": [{k: v for k, v in reserve.items() if k != "failure_text"}, manager],
    }
    wid = budget(acme, 1_500_000_000, plain)
    run_activities(wid)

    text = text_of(only(wid, "outcome_failed"))
    assert (
        "Why: The Budget check step did not pass: "
        "₹1,50,00,000.00 is more than the department's budget allows." in text
    )


def test_an_approval_mail_and_a_withdrawal_lead_with_the_summary(acme, api):
    approved = expense(api, "E-ok")
    decide(api("bob"), approved, "approve", "b")
    decide(api("fiona"), approved, "approve", "f")
    row = only(approved, "outcome_approved")
    assert row.subject == f"Approved: your {LINE}"
    assert_people_words(row)

    withdrawn = expense(api, "E-wd")
    api("alice").post(
        f"/api/workflows/{withdrawn}/cancel",
        {"requestId": "w", "reason": "Paid it myself"},
        format="json",
    )
    row = only(withdrawn, "withdrawn")
    assert row.subject == f"Alice withdrew {LINE}"
    assert 'Reason (Alice): "Paid it myself"' in text_of(row)


def test_an_organisation_admin_sets_the_organisations_zone_in_the_admin(acme):
    olga = Client()
    olga.force_login(User.objects.get(username="olga"))
    url = f"/admin/approvals/tenant/{acme.pk}/change/"
    assert 'name="time_zone"' in olga.get(url).content.decode()

    refused = olga.post(url, {"time_zone": "Mars/Olympus_Mons", "outbound_hosts": ""})
    assert refused.status_code == 200
    assert ZONE_INVALID in refused.content.decode()
    acme.refresh_from_db()
    assert acme.time_zone == "Asia/Kolkata"  # the demo organisation's, unchanged

    saved = olga.post(url, {"time_zone": "Asia/Tokyo", "outbound_hosts": ""})
    assert saved.status_code == 302
    acme.refresh_from_db()
    assert acme.time_zone == "Asia/Tokyo"


def test_the_digest_lists_each_request_by_its_summary_with_who_and_why(acme, api):
    NotificationPreference.objects.create(user=User.objects.get(username="alice"), mode="digest")
    wid = expense(api)
    decide(api("bob"), wid, "send_back", "sb", comment="Add the hotel bill")

    with clock.shifted(dt.timedelta(days=1)):  # her hour of the day has come
        assert mail_digest_send() == {"sent": 1, "failed": 0}

    [digest] = mail.outbox
    assert f"- Sent back by Bob: your {LINE}" in digest.body
    assert '  What to change (Bob): "Add the hotel bill"' in digest.body


def test_a_hand_over_names_who_handed_it_and_their_note(acme, api):
    wid = expense(api)
    workflow_decide(
        user=User.objects.get(username="bob"),
        workflow_id=wid,
        decision="delegate",
        delegate_to="victor",
        request_id="h",
        comment="I am on leave; Victor knows the offsite",
    )

    row = MailMessage.objects.get(
        workflow_id=wid, kind="task_assigned", recipient__username="victor"
    )
    text = text_of(row)
    assert text.splitlines()[0] == f"Bob handed you {LINE} from Alice."
    assert 'Note: "I am on leave; Victor knows the offsite"' in text
    assert "Approve: http" in text  # the task is his to decide from the mail
    assert_people_words(row)
