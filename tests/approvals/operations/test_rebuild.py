"""``rebuild_read_models``: after a mixed run of starts, decisions, delegations,
escalations, activity failures, cancellations and admin operations, the read models
the events call for equal the live ones, and rebuilding them from nothing gives the
same rows (surrogate ids aside)."""

from __future__ import annotations

import datetime as dt
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from approvals import clock
from approvals.models import (
    ActivityAttempt,
    Delegation,
    PendingTask,
    StepVisit,
    Timer,
    User,
    Workflow,
    WorkflowParticipant,
)
from approvals.runtime.rebuild import read_models_check, read_models_of
from approvals.services.admin_operations import timer_rearm, workflow_restart
from approvals.services.directory import user_deactivate
from approvals.services.workflows import workflow_cancel, workflow_decide, workflow_reassign
from approvals.workers.timers import timer_drain

from ..helpers import start_expense
from .test_admin_operations import DOWN, run_attempts, start

pytestmark = pytest.mark.django_db


def user(name: str) -> User:
    return User.objects.get(username=name)


def decide(who: str, wid: str, decision: str, **extra: Any) -> None:
    workflow_decide(
        user=user(who), workflow_id=wid, decision=decision, request_id=f"{who}-{wid}", **extra
    )


@pytest.fixture
def mixed_run(acme: Any, api: Any) -> list[str]:
    alice = api("alice")
    wids = []

    def expense(n: int) -> str:
        reply = start_expense(alice, 4_500_000, subject=f"E-{n}")
        assert reply.status_code == 201, reply.content
        wids.append(reply.json()["workflowId"])
        return wids[-1]

    expense(1)  # waits for bob, escalated below
    decide("bob", expense(2), "approve")  # on to finance (fiona and farah)
    decide("bob", expense(3), "delegate", delegate_to="victor")
    workflow_cancel(user=user("alice"), workflow_id=expense(4), reason="typo", request_id="c4")
    workflow_reassign(
        user=user("olga"),
        workflow_id=expense(5),
        from_user="bob",
        to_user="victor",
        request_id="r5",
        comment="bob is away",
    )
    now = clock.now()
    Delegation.objects.create(
        tenant=acme,
        user=user("fiona"),
        delegate=user("ivan"),
        starts_at=now - dt.timedelta(days=1),
        ends_at=now + dt.timedelta(days=9),
    )
    decide("bob", expense(6), "approve")  # finance: farah, and ivan for fiona
    decide("ivan", wids[-1], "approve")  # holds it for fiona
    # escalation: a manager step two days overdue goes to bob's manager
    overdue = expense(7)
    with clock.shifted(dt.timedelta(days=3)):
        timer_drain()
    assert set(
        PendingTask.objects.filter(workflow_id=overdue).values_list("assignee__username", flat=True)
    ) == {"victor"}
    # activities: rolled back and started again, a failed roll-back, a retry pending
    DOWN.add("ops_book")
    rolled = start(acme, 1)
    assert run_attempts(rolled) == "ROLLED_BACK"
    DOWN.clear()
    again = workflow_restart(user=user("olga"), workflow_id=rolled, reason="back", request_id="rs")
    run_attempts(str(again.workflow_id))
    DOWN.update({"ops_book", "ops_release"})
    assert run_attempts(start(acme, 2)) == "COMPENSATION_FAILED"
    DOWN.discard("ops_release")
    pending = start(acme, 3)
    first = ActivityAttempt.objects.get(workflow_id=pending, step="reserve")
    from approvals.workers.activities import attempt_run

    attempt_run(attempt_id=first.pk)
    attempt_run(attempt_id=ActivityAttempt.objects.get(workflow_id=pending, step="book").pk)
    DOWN.clear()
    assert ActivityAttempt.objects.filter(
        workflow_id=pending, finished_at__isnull=True, attempt=2
    ).exists()
    # a parked timer re-armed, and someone leaving
    timer = Timer.objects.filter(workflow_id=expense(8), fired_at__isnull=True).first()
    assert timer is not None
    Timer.objects.filter(pk=timer.pk).update(dead_at=clock.now(), failures=10)
    timer_rearm(user=user("olga"), timer_id=timer.pk, reason="db back", request_id="ra")
    user_deactivate(user=user("farah"), by=user("olga"))
    wids.extend([rolled, pending])
    return wids


def _wipe() -> None:
    PendingTask.objects.all().delete()
    Timer.objects.filter(fired_at__isnull=True).delete()
    ActivityAttempt.objects.filter(finished_at__isnull=True).delete()
    WorkflowParticipant.objects.all().delete()
    StepVisit.objects.all().delete()
    # version and last_hash stay: they are the chain heads verify_audit checks, and a
    # rebuild over heads that do not verify is refused (tests/approvals/audit/test_tamper.py)
    Workflow.objects.update(
        public_status="X", current_step="x", snapshot={}, data={}, summary="", amount_display=""
    )


def test_the_live_read_models_are_what_the_events_call_for(acme, mixed_run):
    assert read_models_check(tenant_id=acme.pk) == []
    models = read_models_of(tenant_id=acme.pk)
    assert {name: bool(rows) for name, rows in models.items()} == {
        "tasks": True,
        "timers": True,
        "attempts": True,
        "participants": True,
        "workflow": True,
        "visits": True,
    }


def test_rebuilt_from_nothing_the_tables_equal_the_live_ones(acme, mixed_run):
    live = read_models_of(tenant_id=acme.pk)
    _wipe()
    assert read_models_of(tenant_id=acme.pk) != live

    out = StringIO()
    call_command("rebuild_read_models", "--tenant", "acme", stdout=out)

    assert read_models_of(tenant_id=acme.pk) == live
    assert "put right: tasks of" in out.getvalue()
    call_command("rebuild_read_models", "--check", stdout=StringIO())


def test_check_names_what_is_out_of_line_and_a_rebuild_puts_it_right(acme, mixed_run):
    task = PendingTask.objects.order_by("pk").first()
    assert task is not None
    # audrey (an auditor) is never asked: her holding a task is out of line
    PendingTask.objects.filter(pk=task.pk).update(assignee=user("audrey"))
    Timer.objects.filter(fired_at__isnull=True).order_by("pk").first().delete()  # type: ignore[union-attr]

    with pytest.raises(CommandError, match="out of line"):
        call_command("rebuild_read_models", "--check", stdout=StringIO())
    found = read_models_check(tenant_id=acme.pk)
    assert (task.workflow_id, "tasks") in found and any(n == "timers" for _, n in found)

    call_command("rebuild_read_models", stdout=StringIO())
    assert read_models_check(tenant_id=acme.pk) == []


def test_an_unknown_organisation_is_refused(acme):
    with pytest.raises(CommandError, match="No organisation"):
        call_command("rebuild_read_models", "--tenant", "nope")


@pytest.mark.parametrize(
    ("column", "sql", "said"),
    [
        (
            "created_at",
            "created_at = created_at - interval '40 days'",
            "column created_at says",
        ),
        ("template_version", "template_version = template_version + 1", "column template_version"),
        ("subject_id", "subject_id = 'E-other'", "column subject_id says 'E-other'"),
    ],
)
def test_the_rebuild_refuses_over_a_workflow_column_it_reads_that_disagrees_with_the_events(
    acme: Any, api: Any, column: str, sql: str, said: str
) -> None:
    # given an approved expense and another one beside it (so the chain check reads
    # this month's events in the same batch), then one column of the first's row
    # changed by the superuser
    from django.db import connection

    wid = start_expense(api("alice"), 4_500_000, subject="E-1").json()["workflowId"]
    assert start_expense(api("alice"), 4_500_000, subject="E-2").status_code == 201
    decide("bob", wid, "approve")
    decide("fiona", wid, "approve")
    before = Workflow.objects.get(pk=wid)
    with connection.cursor() as c:
        c.execute(f"UPDATE approvals_workflow SET {sql} WHERE id = %s", [wid])
    out = StringIO()

    with pytest.raises(CommandError, match="disagrees with"):
        call_command("rebuild_read_models", stdout=out)

    assert f"BROKEN workflow {wid}: {said}" in out.getvalue()
    after = Workflow.objects.get(pk=wid)  # and nothing was rebuilt
    assert (after.status, after.version, after.data) == (before.status, before.version, before.data)
