"""Out of office's "also hand over what I hold now": the tasks a person holds go to the
stand-in once, as a delegation recorded on their behalf; ending the absence leaves them
with the stand-in; a stand-in who cannot act, or a hand-over note that is too long,
changes nothing."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

from approvals import clock
from approvals.models import Delegation, PendingTask, User, WorkflowEvent
from approvals.services.delegations import (
    DelegationRefused,
    delegation_end,
    delegation_hand_over,
    delegation_set,
)
from approvals.services.workflows import workflow_decide
from templates_engine import CommandRejected
from templates_engine import errors as engine_errors
from templates_engine.steps.approval import HANDOVER_NOTE_MAX

from ..pages.support import expense_started

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)


def _user(name: str) -> User:
    return User.objects.get(username=name)


def _holders(wid: str) -> list[tuple[str, str]]:
    return sorted(
        PendingTask.objects.filter(workflow_id=wid).values_list(
            "assignee__username", "on_behalf_of"
        )
    )


def _away(who: str, stand_in: str, **kw: Any) -> Delegation:
    now = clock.now()
    return delegation_set(
        user=_user(who),
        delegate=_user(stand_in),
        starts_at=kw.get("starts", now - DAY),
        ends_at=kw.get("ends", now + 5 * DAY),
        reason=kw.get("reason", ""),
    )


def test_held_tasks_go_to_the_stand_in_once_on_behalf_and_stay_after_the_absence(acme):
    # given two of alice's requests wait for bob, and bob goes away with ivan standing in
    first, second = expense_started("HO-1"), expense_started("HO-2")
    absence = _away("bob", "ivan", reason="Family visit")

    # when bob hands over what he holds, twice (a double click, a retry)
    done = delegation_hand_over(user=_user("bob"), delegation_id=absence.pk)
    again = delegation_hand_over(user=_user("bob"), delegation_id=absence.pk)

    # then ivan holds both for bob, the history has one hand-over each, with the note
    assert sorted(map(str, done.handed)) == sorted([first, second]) and not done.kept
    assert again.handed == [] and again.kept == []
    for wid in (first, second):
        assert _holders(wid) == [("ivan", "bob")]
        moves = WorkflowEvent.objects.filter(workflow_id=wid, type="TaskReassigned")
        assert [(e.payload["actor"], e.payload["to_user"], e.payload["reason"]) for e in moves] == [
            ("bob", "ivan", "delegated")
        ]
        assert moves.get().payload["comment"] == "Family visit"

    # and ivan's approval is recorded on behalf of bob
    workflow_decide(
        user=_user("ivan"), workflow_id=first, decision="approve", request_id=uuid.uuid4().hex
    )
    decided = WorkflowEvent.objects.get(workflow_id=first, type="DecisionRecorded")
    assert (decided.payload["actor"], decided.payload["on_behalf_of"]) == ("ivan", "bob")

    # when the absence ends, the handed tasks stay with ivan (by design: he may be
    # part-way through them; he hands any back with "Hand to a colleague")
    delegation_end(user=_user("bob"), delegation_id=absence.pk)
    assert _holders(second) == [("ivan", "bob")]


def test_the_note_without_a_reason_names_the_last_day(acme):
    wid = expense_started("HO-3")
    absence = _away("bob", "ivan")
    delegation_hand_over(user=_user("bob"), delegation_id=absence.pk)
    moved = WorkflowEvent.objects.get(workflow_id=wid, type="TaskReassigned")
    assert moved.payload["comment"].startswith("Out of office until ")


def test_a_stand_in_who_cannot_act_is_refused_and_nothing_moves(acme):
    # given bob holds a task and his absence names ivan
    wid = expense_started("HO-4")
    absence = _away("bob", "ivan")
    # when ivan's account is deactivated before bob hands over
    User.objects.filter(username="ivan").update(is_active=False)
    with pytest.raises(DelegationRefused):
        delegation_hand_over(user=_user("bob"), delegation_id=absence.pk)
    # then bob still holds it and no event was added
    assert _holders(wid) == [("bob", "")]
    assert not WorkflowEvent.objects.filter(workflow_id=wid, type="TaskReassigned").exists()


def test_an_auditor_cannot_be_the_stand_in(acme):
    expense_started("HO-5")
    with pytest.raises(DelegationRefused):
        _away("bob", "audrey")
    assert not Delegation.objects.filter(user__username="bob").exists()


def test_an_ended_absence_hands_nothing_over(acme):
    wid = expense_started("HO-6")
    absence = _away("bob", "ivan")
    delegation_end(user=_user("bob"), delegation_id=absence.pk)
    with pytest.raises(DelegationRefused):
        delegation_hand_over(user=_user("bob"), delegation_id=absence.pk)
    assert _holders(wid) == [("bob", "")]


def test_a_hand_over_note_too_long_is_refused_and_records_nothing(acme):
    wid = expense_started("HO-7")
    before = WorkflowEvent.objects.filter(workflow_id=wid).count()
    with pytest.raises(CommandRejected) as refused:
        workflow_decide(
            user=_user("bob"),
            workflow_id=wid,
            decision="delegate",
            delegate_to="ivan",
            comment="x" * (HANDOVER_NOTE_MAX + 1),
            request_id=uuid.uuid4().hex,
        )
    assert refused.value.code == engine_errors.INVALID_COMMENT
    assert f"{HANDOVER_NOTE_MAX:,} characters" in refused.value.message
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == before
    assert _holders(wid) == [("bob", "")]


def test_a_hand_over_note_is_recorded_in_the_event(acme):
    wid = expense_started("HO-8")
    workflow_decide(
        user=_user("bob"),
        workflow_id=wid,
        decision="delegate",
        delegate_to="ivan",
        comment="Please check the hotel bill",
        request_id=uuid.uuid4().hex,
    )
    moved = WorkflowEvent.objects.get(workflow_id=wid, type="TaskReassigned")
    assert moved.payload["comment"] == "Please check the hotel bill"
