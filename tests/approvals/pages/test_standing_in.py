"""Standing in from the pages: a stand-in sees the tasks an absent colleague holds, marked
"for Bob", and decides them on their behalf; out of office hands over what one holds
when asked, and refuses a stand-in who cannot act; a hand-over's note reaches its
receiver (inbox, mail, history) and one too long is refused."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

from approvals import clock
from approvals.models import Delegation, PendingTask, User, WorkflowEvent
from approvals.notifications.models import MailMessage
from templates_engine.steps.approval import HANDOVER_NOTE_MAX

from ..helpers import decide
from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)
PAGE = "/account/out-of-office"


def _away(who: str = "bob", stand_in: str = "ivan") -> Delegation:
    user = User.objects.get(username=who)
    now = clock.now()
    return Delegation.objects.create(
        tenant_id=user.member_tenant_id,
        user=user,
        delegate=User.objects.get(username=stand_in),
        starts_at=now - DAY,
        ends_at=now + 3 * DAY,
    )


def _form(**extra: str) -> dict[str, str]:
    today = clock.now().date()
    return {
        "delegate": "ivan",
        "first_day": (today - DAY).isoformat(),
        "last_day": (today + 3 * DAY).isoformat(),
        "reason": "",
        **extra,
    }


def test_the_stand_in_sees_and_decides_a_task_the_absent_colleague_still_holds(acme):
    # given bob holds alice's request, and then goes away without handing it over
    wid = expense_started("SI-1")
    _away()
    ivan = signed_in("ivan")

    # then ivan's inbox lists it for Bob, with the decision sent on bob's behalf
    inbox = ivan.get("/").content.decode()
    assert "Expense claim SI-1" in inbox and ">for Bob<" in inbox
    assert '<input type="hidden" name="on_behalf_of" value="bob">' in inbox
    # and the request page offers ivan the decision for Bob
    page = ivan.get(f"/workflows/{wid}").content.decode()
    assert "Your decision" in page and "for Bob" in page
    assert '<input type="hidden" name="on_behalf_of" value="bob">' in page

    # when ivan approves as the page sends it
    answer = ivan.post(
        f"/workflows/{wid}/decide",
        {"decision": "approve", "request_id": uuid.uuid4().hex, "on_behalf_of": "bob"},
        HTTP_ACCEPT="application/json",
    )

    # then it is recorded on behalf of bob
    assert answer.status_code == 200, answer.content
    decided = WorkflowEvent.objects.get(workflow_id=wid, type="DecisionRecorded")
    assert (decided.payload["actor"], decided.payload["on_behalf_of"]) == ("ivan", "bob")


def test_someone_not_standing_in_cannot_decide_on_behalf(acme):
    wid = expense_started("SI-2")
    answer = signed_in("ivan").post(
        f"/workflows/{wid}/decide",
        {"decision": "approve", "request_id": uuid.uuid4().hex, "on_behalf_of": "bob"},
        HTTP_ACCEPT="application/json",
    )
    assert answer.status_code in (404, 409)
    assert not WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").exists()


def test_setting_an_absence_with_hand_over_moves_what_one_holds(acme):
    wid = expense_started("SI-3")
    response = signed_in("bob").post(PAGE, _form(hand_over="on"), follow=True)
    assert "1 task handed to Ivan, who decides it for you" in response.content.decode()
    assert list(
        PendingTask.objects.filter(workflow_id=wid).values_list(
            "assignee__username", "on_behalf_of"
        )
    ) == [("ivan", "bob")]


def test_setting_an_absence_without_hand_over_leaves_the_tasks(acme):
    wid = expense_started("SI-4")
    signed_in("bob").post(PAGE, _form(), follow=True)
    assert PendingTask.objects.get(workflow_id=wid).assignee.username == "bob"


def test_a_stand_in_who_cannot_act_is_refused_with_words_and_nothing_changes(acme):
    wid = expense_started("SI-5")
    response = signed_in("bob").post(PAGE, _form(delegate="audrey", hand_over="on"))
    assert response.status_code == 400
    assert 'class="error"' in response.content.decode()
    assert not Delegation.objects.exists()
    assert PendingTask.objects.get(workflow_id=wid).assignee.username == "bob"
    assert not WorkflowEvent.objects.filter(workflow_id=wid, type="TaskReassigned").exists()


def _hand_to_ivan(wid: str, note: str) -> Any:
    """Bob hands his task to Ivan from the request page, with ``note``."""
    return signed_in("bob").post(
        f"/workflows/{wid}/decide",
        {
            "decision": "delegate",
            "delegate_to": "ivan",
            "comment": note,
            "request_id": uuid.uuid4().hex,
        },
        HTTP_ACCEPT="application/json",
    )


def test_a_hand_over_note_reaches_the_receiver_in_inbox_mail_and_history(acme):
    wid = expense_started("SI-6")
    answer = _hand_to_ivan(wid, "The hotel bill is on page 2")
    assert answer.status_code == 200, answer.content
    ivan = signed_in("ivan")
    assert "Bob&#x27;s note: The hotel bill is on page 2" in ivan.get("/").content.decode()
    mail = MailMessage.objects.get(workflow_id=wid, recipient__username="ivan")
    assert mail.context["comment"] == "The hotel bill is on page 2"
    history = ivan.get(f"/workflows/{wid}").content.decode()
    assert "Bob handed the Manager step to Ivan" in history
    assert "The hotel bill is on page 2" in history


def test_a_hand_over_note_too_long_is_refused_in_words(acme):
    wid = expense_started("SI-7")
    answer = _hand_to_ivan(wid, "x" * (HANDOVER_NOTE_MAX + 1))
    assert answer.status_code == 422
    assert "A hand-over note holds at most 1,000 characters" in answer.json()["message"]
    assert PendingTask.objects.get(workflow_id=wid).assignee.username == "bob"


def test_the_api_takes_the_stand_ins_decision_and_refuses_a_long_note(acme, api):
    # the stand-in decides bob's held task through the API, on bob's behalf
    wid = expense_started("SI-8")
    _away()
    assert decide(api("ivan"), wid, "approve", "si-8-a", onBehalfOf="bob").status_code == 200
    decided = WorkflowEvent.objects.get(workflow_id=wid, type="DecisionRecorded")
    assert decided.payload["on_behalf_of"] == "bob"
    # a hand-over through the API with a note too long is refused, and nothing moves
    other = expense_started("SI-9", who="ivan")  # waits for ivan's manager
    holder = PendingTask.objects.get(workflow_id=other).assignee.username
    long_note = "x" * (HANDOVER_NOTE_MAX + 1)
    refused = decide(
        api(holder), other, "delegate", "si-9-d", delegateTo="alice", comment=long_note
    )
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "INVALID_COMMENT"
    assert PendingTask.objects.get(workflow_id=other).assignee.username == holder


def test_changing_an_absence_can_hand_over_what_one_holds_to_the_new_stand_in(acme):
    # given bob holds alice's request and has a planned absence with victor standing in
    wid = expense_started("SI-10")
    user = User.objects.get(username="bob")
    now = clock.now()
    planned = Delegation.objects.create(
        tenant_id=user.member_tenant_id,
        user=user,
        delegate=User.objects.get(username="victor"),
        starts_at=now + 10 * DAY,
        ends_at=now + 12 * DAY,
    )
    # when he changes it to ivan, from now, and hands over what he holds
    response = signed_in("bob").post(
        f"{PAGE}/{planned.pk}/change", _form(delegate="ivan", hand_over="on"), follow=True
    )
    # then ivan holds it for bob
    assert "1 task handed to Ivan" in response.content.decode()
    task = PendingTask.objects.get(workflow_id=wid)
    assert (task.assignee.username, task.on_behalf_of) == ("ivan", "bob")
