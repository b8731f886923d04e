"""The poller fires the timers of several workflows in one transaction
(``command_execute_many``). Each is decided as it would be alone; a group that fails as
a whole is delivered one timer at a time, so a broken workflow counts against itself
only; a workflow with two due timers gets them in two groups."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import clock
from approvals.models import Timer, Workflow, WorkflowEvent
from approvals.notifications.models import MailMessage
from approvals.runtime.commands import (
    CommandResult,
    WorkflowNotFound,
    command_execute_many,
)
from approvals.workers.timers import timer_drain
from templates_engine import commands as cmd
from templates_engine.snapshot import SNAPSHOT_VERSION

from ..helpers import start_expense

# Committed transactions: a group that fails rolls back its own transaction.
pytestmark = pytest.mark.django_db(transaction=True)

DAY = dt.timedelta(days=1)
REMINDER_DUE = DAY + dt.timedelta(seconds=1)


def _started(api, count: int) -> list[str]:
    return [start_expense(api("alice"), 4_500_000).json()["workflowId"] for _ in range(count)]


def _count(wid: str, kind: str) -> int:
    return WorkflowEvent.objects.filter(workflow_id=wid, type=kind).count()


def test_a_group_fires_every_workflows_reminder_once(acme, api):
    # given four workflows whose reminders come due together
    wids = _started(api, 4)

    # when the poller drains them in groups of three (a group of three, then one)
    with clock.shifted(REMINDER_DUE):
        assert timer_drain(group=3) == 4
        assert timer_drain(group=3) == 0

    # then each was reminded once, and each reminder row is marked fired
    for wid in wids:
        assert (_count(wid, "TimerFired"), _count(wid, "ReminderSent")) == (1, 1)
        reminder = Timer.objects.get(workflow_id=wid, kind="reminder")
        assert reminder.fired_at is not None and reminder.failures == 0
        assert Workflow.objects.get(pk=wid).version == 4  # started (2), fired, reminded


def test_a_broken_workflow_in_a_group_fails_alone(acme, api, caplog):
    # given three workflows due together, the middle one's state unreadable
    wids = _started(api, 3)
    broken = sorted(wids)[1]
    Workflow.objects.filter(pk=broken).update(
        snapshot={"snapshot_version": SNAPSHOT_VERSION, "broken": True}
    )

    # when the poller fires them as one group
    with clock.shifted(REMINDER_DUE):
        assert timer_drain(group=10) == 2
    assert "a group of 3 timers failed together" in caplog.text

    # then the healthy two were reminded once each, and the failure is the broken one's
    for wid in wids:
        reminder = Timer.objects.get(workflow_id=wid, kind="reminder")
        if wid == broken:
            assert (reminder.failures, reminder.fired_at) == (1, None)
            assert reminder.last_error.startswith("KeyError")
            assert _count(wid, "TimerFired") == 0
        else:
            assert (reminder.failures, _count(wid, "ReminderSent")) == (0, 1)
            assert reminder.fired_at is not None


def test_two_due_timers_of_one_workflow_fire_in_two_groups(acme, api):
    # given two workflows whose reminder and deadline are both due
    wids = _started(api, 2)

    # when the poller drains them with room for every timer in one group
    with clock.shifted(2 * DAY + dt.timedelta(seconds=1)):
        assert timer_drain(group=10) == 4

    # then each workflow fired both timers, each once, the reminder first
    for wid in wids:
        fired = WorkflowEvent.objects.filter(workflow_id=wid, type="TimerFired").order_by("seq")
        assert [e.payload["kind"] for e in fired] == ["reminder", "deadline"]
        assert _count(wid, "Escalated") == 1
        assert not Timer.objects.filter(
            workflow_id=wid, kind__in=["reminder", "deadline"], fired_at__isnull=True
        ).exists()


def test_a_stray_timer_in_a_group_is_settled_without_an_event(acme, api):
    # given two due reminders, and a row for a timer the second workflow never held
    real, other = _started(api, 2)
    stray = Timer.objects.create(
        tenant=acme,
        workflow_id=other,
        key="manager#9:reminder:0",
        step="manager",
        kind="reminder",
        fire_at=clock.now(),
    )

    # when they fire (the stray in a group with the first reminder, being due earlier
    # than its own workflow's reminder, which goes in the next group)
    with clock.shifted(REMINDER_DUE):
        assert timer_drain(group=10) == 3

    # then the stray row is done with and added nothing; both reminders fired once
    stray.refresh_from_db()
    assert stray.fired_at is not None
    for wid in (real, other):
        assert (_count(wid, "TimerFired"), _count(wid, "ReminderSent")) == (1, 1)
        assert Workflow.objects.get(pk=wid).version == 4


def test_execute_many_answers_each_item_and_refuses_a_workflow_twice(acme, api):
    (wid,) = _started(api, 1)
    key = Timer.objects.get(workflow_id=wid, kind="reminder").key
    missing = uuid.uuid4()

    # a workflow twice in one group is refused before anything is locked
    with pytest.raises(ValueError, match="more than once"):
        command_execute_many([(acme.pk, wid, cmd.TimerFired(key)), (acme.pk, wid, cmd.Cancel("x"))])
    assert Workflow.objects.get(pk=wid).version == 2

    # an unknown workflow, and one of another tenant, answer WorkflowNotFound alone
    with clock.shifted(REMINDER_DUE):
        results = command_execute_many(
            [
                (acme.pk, missing, cmd.TimerFired(key)),
                (acme.pk + 1, wid, cmd.TimerFired(key)),
            ]
        )
        assert [type(r) for r in results] == [WorkflowNotFound, WorkflowNotFound]
        assert Workflow.objects.get(pk=wid).version == 2

        (result,) = command_execute_many([(acme.pk, wid, cmd.TimerFired(key))])
    assert isinstance(result, CommandResult)
    assert (result.recorded, result.version) == (2, 4)
    assert _count(wid, "ReminderSent") == 1


def test_a_group_sends_each_tables_new_rows_in_one_insert(acme, api):
    # given three workflows whose reminders are due
    wids = _started(api, 3)
    items = [
        (t.tenant_id, t.workflow_id, cmd.TimerFired(t.key))
        for t in Timer.objects.filter(workflow_id__in=wids, kind="reminder")
    ]

    # when they fire as one group
    with clock.shifted(REMINDER_DUE), CaptureQueriesContext(connection) as sent:
        command_execute_many(items)

    # then six events (fired, reminded) and three reminder mails went in one INSERT each,
    sql = " ".join(q["sql"] for q in sent.captured_queries)
    for model in (WorkflowEvent, MailMessage):
        assert sql.count(f'INSERT INTO "{model._meta.db_table}"') == 1
    # and the three workflow rows in one UPDATE
    assert sql.count(f'UPDATE "{Workflow._meta.db_table}"') == 1
    assert WorkflowEvent.objects.filter(workflow_id__in=wids, seq__gt=2).count() == 6
    assert MailMessage.objects.filter(workflow_id__in=wids, kind="reminder").count() == 3
