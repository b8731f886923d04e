"""Held decisions survive their poller: a scheduler loop (a separate process, the one
``make run`` and deployments without beat run) killed with SIGKILL during the undo
window, or while it is recording a batch of them, leaves each decision to the next
one, which records it exactly once."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db.models import Count

from approvals.models import HeldDecision, User, WorkflowEvent
from approvals.services.held_decisions import decision_hold
from tests.approvals.pages.support import expense_started

from .conftest import Processes, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.topology]

WINDOW = 1  # seconds: the test waits for it in real time, as the poller does
MANY = 80
RECORDING_LIMIT = 120.0  # seconds a poller may take before the test gives up


def _held(subjects: list[str]) -> dict[str, str]:
    """A decision of bob's held on a new expense for each subject: workflow -> request id."""
    bob = User.objects.get(username="bob")
    ids = {}
    for subject in subjects:
        wid = expense_started(subject)
        rid = uuid.uuid4().hex
        decision_hold(user=bob, workflow_id=wid, decision="approve", request_id=rid)
        ids[wid] = rid
    return ids


def _recorded() -> int:
    return HeldDecision.objects.filter(recorded_at__isnull=False).count()


def _assert_each_recorded_once(ids: dict[str, str]) -> None:
    events = WorkflowEvent.objects.filter(workflow_id__in=list(ids), type="DecisionRecorded")
    assert {str(e.workflow_id): e.request_id for e in events} == ids
    counts = events.values("workflow_id").annotate(n=Count("seq")).values_list("n", flat=True)
    assert set(counts) == {1}
    assert not HeldDecision.objects.filter(recorded_at__isnull=True).exists()


def test_a_poller_killed_during_the_window_leaves_the_decision_to_the_next_one(
    acme: Any, processes: Processes, settings: Any
) -> None:
    settings.APPROVALS_UNDO_SECONDS = WINDOW * 5
    first = processes.scheduler(interval=0.2)
    ids = _held(["E-kill-window"])

    first.kill()  # inside the window: nothing was due yet
    assert _recorded() == 0
    processes.scheduler(interval=0.2)
    wait_until(lambda: _recorded() == 1, timeout=RECORDING_LIMIT, what="the release")

    _assert_each_recorded_once(ids)


def test_a_poller_killed_while_recording_records_each_decision_once(
    acme: Any, processes: Processes, settings: Any
) -> None:
    settings.APPROVALS_UNDO_SECONDS = WINDOW
    ids = _held([f"E-kill-{i}" for i in range(MANY)])
    assert _recorded() == 0

    first = processes.scheduler(interval=0.05)
    wait_until(lambda: _recorded() > 0, timeout=RECORDING_LIMIT, what="a first release")
    first.kill()  # part way through the batch
    part = _recorded()
    processes.scheduler(interval=0.05)
    wait_until(lambda: _recorded() == MANY, timeout=RECORDING_LIMIT, what="every release")

    assert part > 0
    _assert_each_recorded_once(ids)
