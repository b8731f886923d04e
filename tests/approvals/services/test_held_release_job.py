"""The release job of held decisions (workers.tasks.release_held_decisions), run as the
scheduler runs it: a held decision refused at release because its task was given to
someone else or its request withdrawn meanwhile mails its person, in words, that it was
not recorded and why; and the job prunes the held rows closed longer ago than
``APPROVALS_HELD_KEEP_DAYS`` (recorded, undone or refused), never an open one. Time is
moved with the app's clock."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.core import mail

from approvals import clock
from approvals.models import HeldDecision, User
from approvals.notifications.models import MailKind, MailMessage
from approvals.notifications.sender import mail_send
from approvals.services import held_decisions as held
from approvals.services.workflows import workflow_cancel, workflow_reassign
from approvals.workers.tasks import release_held_decisions
from tests.approvals.pages.support import expense_started

pytestmark = pytest.mark.django_db

PAST_THE_WINDOW = dt.timedelta(seconds=held.undo_seconds() + 1)


def _user(name: str) -> User:
    return User.objects.get(username=name)


def _hold(who: str, wid: str, decision: str = "approve") -> HeldDecision:
    return held.decision_hold(
        user=_user(who), workflow_id=wid, decision=decision, request_id=uuid.uuid4().hex
    )


def _sent_to(username: str) -> Any:
    row = MailMessage.objects.get(recipient__username=username, kind=MailKind.HELD_NOT_RECORDED)
    mail.outbox.clear()
    assert mail_send(ids=[row.pk])["sent"] == 1
    (message,) = mail.outbox
    return row, message


def test_a_held_decision_refused_because_the_task_was_reassigned_mails_its_person(
    acme: Any, settings: Any
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    wid = expense_started("E-moved")
    hold = _hold("bob", wid)
    workflow_reassign(
        user=_user("olga"),
        workflow_id=wid,
        from_user="bob",
        to_user="victor",
        request_id=uuid.uuid4().hex,
        comment="Bob is away",
    )

    with clock.shifted(PAST_THE_WINDOW):
        assert release_held_decisions() == 1
        row, message = _sent_to("bob")  # the sender, once the refusal is committed

    hold.refresh_from_db()
    assert held.held_state(hold) == "refused"
    assert message.to == ["bob@acme.example"]
    assert message.subject.startswith("Not recorded: your decision on")
    body = message.body
    assert "Your approval of" in body and "was not recorded." in body
    assert f"Why: {hold.refused.rstrip('.')}." in body
    assert "Nothing was recorded in your name" in body
    assert f"/workflows/{wid}" in body
    assert not MailMessage.objects.filter(
        kind=MailKind.HELD_NOT_RECORDED, recipient__username="victor"
    ).exists()


def test_a_held_rejection_of_a_request_withdrawn_meanwhile_mails_why(
    acme: Any, settings: Any
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    wid = expense_started("E-gone")
    held.decision_hold(
        user=_user("bob"),
        workflow_id=wid,
        decision="reject",
        request_id=uuid.uuid4().hex,
        comment="Not a business trip",
    )
    workflow_cancel(user=_user("alice"), workflow_id=wid, reason="Wrong trip", request_id="w" * 32)

    with clock.shifted(PAST_THE_WINDOW):
        assert release_held_decisions() == 1
        _, message = _sent_to("bob")

    assert "Your rejection of" in message.body and "was not recorded" in message.body


def test_a_recorded_held_decision_mails_nothing_of_the_kind(acme: Any) -> None:
    wid = expense_started("E-fine")
    _hold("bob", wid)

    with clock.shifted(PAST_THE_WINDOW):
        assert release_held_decisions() == 1

    assert not MailMessage.objects.filter(kind=MailKind.HELD_NOT_RECORDED).exists()


def test_the_release_job_prunes_closed_held_rows_past_keeping_and_never_an_open_one(
    acme: Any, settings: Any
) -> None:
    settings.APPROVALS_HELD_KEEP_DAYS = 30
    recorded = _hold("bob", expense_started("E-old-recorded"))
    undone = _hold("bob", expense_started("E-old-undone"))
    held.decision_undo(
        user=_user("bob"), workflow_id=undone.workflow_id, request_id=undone.request_id
    )
    refused_wid = expense_started("E-old-refused")
    refused = _hold("bob", refused_wid)
    workflow_cancel(
        user=_user("alice"), workflow_id=refused_wid, reason="Wrong", request_id="x" * 32
    )
    with clock.shifted(PAST_THE_WINDOW):
        assert release_held_decisions() == 2  # recorded and refused; the undone stays
    closed = {recorded.pk, undone.pk, refused.pk}
    assert HeldDecision.objects.filter(pk__in=closed).count() == 3

    with clock.shifted(dt.timedelta(days=29)):
        late = _hold("bob", expense_started("E-still-held"))  # open: its window runs
        release_held_decisions()
    assert HeldDecision.objects.filter(pk__in=closed).count() == 3  # kept 29 days

    with clock.shifted(dt.timedelta(days=31)):
        release_held_decisions()

    assert not HeldDecision.objects.filter(pk__in=closed).exists()
    late.refresh_from_db()
    assert held.held_state(late) in ("held", "recorded")
