"""Decisions held by the server for their undo window: recorded once after it, nothing
when undone inside it, a late undo refused in words, a decision that would be refused
refused at once (nothing kept), and two holders of a task racing hold one decision.
Time is moved with the app's clock, not slept."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

from approvals import clock
from approvals.models import HeldDecision, User, WorkflowEvent
from approvals.runtime.commands import RequestIdReused, WorkflowNotFound
from approvals.services import held_decisions as held
from approvals.services.workflows import workflow_decide
from templates_engine import CommandRejected
from templates_engine.errors import REASON_REQUIRED
from tests.approvals.concurrency.support import race
from tests.approvals.pages.support import expense_started

pytestmark = pytest.mark.django_db

PAST_THE_WINDOW = dt.timedelta(seconds=held.undo_seconds() + 1)


def _user(name: str) -> User:
    return User.objects.get(username=name)


def _decisions(wid: str) -> list[tuple[str, str, str]]:
    events = WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded")
    rows = events.select_related("actor").order_by("seq")
    return [(e.actor.username, e.payload["decision"], e.request_id) for e in rows]


def _hold(who: str, wid: str, decision: str = "approve", **more: Any) -> HeldDecision:
    rid = more.pop("request_id", uuid.uuid4().hex)
    return held.decision_hold(
        user=_user(who), workflow_id=wid, decision=decision, request_id=rid, **more
    )


def test_a_held_decision_is_recorded_once_after_its_window(acme: Any) -> None:
    wid = expense_started("E-held")
    hold = _hold("bob", wid, comment="Fine")

    assert _decisions(wid) == []
    assert held.held_release_due() == 0  # still inside the window
    with clock.shifted(PAST_THE_WINDOW):
        assert held.held_release_due() == 1
        assert held.held_release_due() == 0

    assert _decisions(wid) == [("bob", "approve", hold.request_id)]
    hold.refresh_from_db()
    assert held.held_state(hold) == "recorded"


def test_undo_within_the_window_records_nothing(acme: Any) -> None:
    wid = expense_started("E-undone")
    hold = _hold("bob", wid)

    undone = held.decision_undo(user=_user("bob"), workflow_id=wid, request_id=hold.request_id)
    again = held.decision_undo(user=_user("bob"), workflow_id=wid, request_id=hold.request_id)
    with clock.shifted(PAST_THE_WINDOW):
        assert held.held_release_due() == 0

    with pytest.raises(held.HoldRefused) as resent:
        _hold("bob", wid, request_id=hold.request_id)

    assert held.held_state(undone) == held.held_state(again) == "undone"
    assert (resent.value.code, resent.value.message) == (held.UNDONE, held.UNDONE_TEXT)
    assert _decisions(wid) == []
    # and the task can be decided again, by a new hold
    _hold("bob", wid)
    assert HeldDecision.objects.filter(workflow_id=wid).count() == 2


def test_an_undo_after_it_was_recorded_is_refused_in_words(acme: Any) -> None:
    wid = expense_started("E-late")
    hold = _hold("bob", wid)
    bob = _user("bob")

    with clock.shifted(PAST_THE_WINDOW):
        with pytest.raises(held.HoldRefused) as window:
            held.decision_undo(user=bob, workflow_id=wid, request_id=hold.request_id)
        held.held_release_due()
        with pytest.raises(held.HoldRefused) as recorded:
            held.decision_undo(user=bob, workflow_id=wid, request_id=hold.request_id)

    assert (window.value.code, window.value.message) == (held.TOO_LATE, held.TOO_LATE_WINDOW)
    assert recorded.value.message == held.TOO_LATE_RECORDED
    assert _decisions(wid) == [("bob", "approve", hold.request_id)]


def test_an_undo_of_nothing_held_or_of_someone_else_is_refused(acme: Any) -> None:
    wid = expense_started("E-nothing")
    hold = _hold("bob", wid)

    for who, rid in (("bob", "f" * 32), ("fiona", hold.request_id)):
        with pytest.raises(held.HoldRefused) as refused:
            held.decision_undo(user=_user(who), workflow_id=wid, request_id=rid)
        assert refused.value.message == held.NOTHING_HELD_TEXT
    hold.refresh_from_db()
    assert held.held_state(hold) == "held"


def test_a_decision_that_would_be_refused_is_refused_now_and_nothing_is_kept(
    acme: Any,
) -> None:
    wid = expense_started("E-refused")

    with pytest.raises(WorkflowNotFound):
        _hold("fiona", wid)  # finance comes after the manager: not hers to read yet
    with pytest.raises(CommandRejected) as no_reason:
        _hold("bob", wid, "reject")
    with pytest.raises(held.HoldRefused) as hand_over:
        _hold("bob", wid, "delegate")
    with pytest.raises(WorkflowNotFound):
        _hold("bob", "not-a-workflow")

    assert no_reason.value.code == REASON_REQUIRED
    assert hand_over.value.code == held.NOT_HOLDABLE
    assert not HeldDecision.objects.exists()
    assert _decisions(wid) == []


def test_a_repeated_hold_is_the_same_one_and_a_reused_request_id_is_refused(
    acme: Any,
) -> None:
    wid = expense_started("E-repeat")
    first = _hold("bob", wid, request_id="a" * 32)

    again = _hold("bob", wid, request_id="a" * 32)
    with pytest.raises(RequestIdReused):
        _hold("bob", wid, "send_back", request_id="a" * 32, comment="Receipt?")

    assert again.pk == first.pk
    assert HeldDecision.objects.count() == 1


def test_a_recorded_request_id_is_not_held_again(acme: Any) -> None:
    wid = expense_started("E-recorded")
    workflow_decide(user=_user("bob"), workflow_id=wid, decision="approve", request_id="b" * 32)

    with pytest.raises(held.HoldRefused) as refused:
        _hold("bob", wid, request_id="b" * 32)

    assert refused.value.code == held.ALREADY_RECORDED
    assert not HeldDecision.objects.exists()


def test_a_held_decision_the_workflow_no_longer_takes_is_refused_at_release(
    acme: Any,
) -> None:
    from approvals.services.workflows import workflow_cancel

    wid = expense_started("E-cancelled")
    hold = _hold("bob", wid)
    workflow_cancel(user=_user("alice"), workflow_id=wid, reason="Wrong trip", request_id="c" * 32)

    with clock.shifted(PAST_THE_WINDOW):
        assert held.held_release_due() == 1

    hold.refresh_from_db()
    assert held.held_state(hold) == "refused"
    assert hold.refused
    assert _decisions(wid) == []


@pytest.mark.django_db(transaction=True)
def test_two_holders_racing_hold_one_decision(acme: Any) -> None:
    wid = expense_started("E-race")
    workflow_decide(user=_user("bob"), workflow_id=wid, decision="approve", request_id="d" * 32)

    def attempt(who: str) -> Any:
        try:
            return _hold(who, wid)
        except held.HoldRefused as exc:
            return exc

    answers = race([lambda: attempt("fiona"), lambda: attempt("farah")])
    won = [a for a in answers if isinstance(a, HeldDecision)]
    lost = [a for a in answers if isinstance(a, held.HoldRefused)]

    assert len(won) == 1 and len(lost) == 1
    name = won[0].actor.first_name
    assert lost[0].code == held.BEING_DECIDED
    assert lost[0].message.startswith(f"{name} is deciding: approves in a few seconds.")
    with clock.shifted(PAST_THE_WINDOW):
        assert held.held_release_due() == 1
    assert [d[0] for d in _decisions(wid)] == ["bob", won[0].actor.username]
