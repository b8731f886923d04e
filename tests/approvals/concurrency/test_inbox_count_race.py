"""The inbox's counters (``approvals_inboxversion``) when a command counts its own task
writes in the statement that writes them (approvals/runtime/store.py, ``inbox_counted``)
and the task triggers skip its transaction: the counts stay equal to a count of the
tasks, each person's version moves with their tasks, and commands racing on the same
people's counters neither deadlock nor lose a count. Real threads, real PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, transaction

from approvals.models import PendingTask, User, Workflow
from approvals.services.workflows import workflow_decide, workflow_start

from ..helpers import inbox_counters, open_tasks_counted
from .support import in_thread, race

pytestmark = pytest.mark.django_db(transaction=True)

TASK_TRIGGERS = (
    "approvals_inbox_task_insert",
    "approvals_inbox_task_update",
    "approvals_inbox_task_delete",
    "approvals_inbox_task_flush",
)


def _versions() -> dict[str, int]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT u.username, v.version FROM approvals_inboxversion v"
            " JOIN approvals_user u ON u.id = v.person_id"
        )
        return dict(cur.fetchall())


def _start(subject: str) -> str:
    return str(
        workflow_start(
            submitter=User.objects.get(username="alice"),
            template_key="expense-approval",
            subject_type="expense",
            subject_id=subject,
            data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
        ).workflow_id
    )


def _decide(who: str, wid: str, decision: str, rid: str, **extra: Any) -> None:
    workflow_decide(
        user=User.objects.get(username=who),
        workflow_id=wid,
        decision=decision,
        request_id=rid,
        **extra,
    )


@contextlib.contextmanager
def _task_triggers_off() -> Iterator[None]:
    """The task triggers disabled (the table's owner may): only what the command
    writes itself counts."""
    with connection.cursor() as cur:
        for name in TASK_TRIGGERS:
            cur.execute(f"ALTER TABLE approvals_pendingtask DISABLE TRIGGER {name}")
    try:
        yield
    finally:
        with connection.cursor() as cur:
            for name in TASK_TRIGGERS:
                cur.execute(f"ALTER TABLE approvals_pendingtask ENABLE TRIGGER {name}")


def test_a_command_counts_its_tasks_itself_and_the_triggers_skip_it(acme: Any) -> None:
    first = _start("OWN-1")
    versions = _versions()
    with _task_triggers_off():
        second = _start("OWN-2")  # bob gains a task: counted with no trigger
        assert inbox_counters() == open_tasks_counted() and open_tasks_counted()["bob"] == 2
        assert _versions()["bob"] == versions["bob"] + 1
        _decide("bob", second, "approve", "own-a")  # bob's goes, finance's come
        assert inbox_counters() == open_tasks_counted() and open_tasks_counted()["bob"] == 1
        _decide("bob", first, "send_back", "own-s", comment="Add the bill")
        assert inbox_counters() == open_tasks_counted() and open_tasks_counted()["alice"] == 1
        seen = _versions()
        assert seen["bob"] == versions["bob"] + 3 and seen["alice"] > versions.get("alice", 0)

        # Another writer (a use-case grouping commands in its own transaction) is the
        # triggers' to count: with them off, its change is not counted.
        with transaction.atomic():
            _start("OWN-3")
        assert inbox_counters().get("bob", 0) == open_tasks_counted()["bob"] - 1
    with connection.cursor() as cur:
        cur.execute("SELECT approvals_inbox_recount()")
    # With the triggers on, a command is counted once, not by both.
    _decide("bob", _start("OWN-4"), "approve", "own-b")
    assert inbox_counters() == open_tasks_counted()


def test_a_hand_over_moves_one_count_and_both_versions(acme: Any) -> None:
    """A delegation in one statement: bob's task deleted and ivan's inserted, each
    person's count and version moved once."""
    wid = _start("ONE-1")
    before = _versions()
    _decide("bob", wid, "delegate", "one-d", delegate_to="ivan")
    assert inbox_counters() == open_tasks_counted() and open_tasks_counted() == {"ivan": 1}
    after = _versions()
    assert after["bob"] == before["bob"] + 1 and after["ivan"] == before.get("ivan", 0) + 1


RACERS = 8
ROUNDS = 6


def test_commands_racing_on_the_same_peoples_counters_neither_deadlock_nor_lose_a_count(
    acme: Any,
) -> None:
    """Each thread starts expenses (bob gains a task) and has bob approve them (bob
    loses one, the finance team gains theirs) or send them back (alice gains one), in
    different orders, so the commands lock the same counters at the same moments."""
    subjects = [[f"RACE-{t}-{r}" for r in range(ROUNDS)] for t in range(RACERS)]
    for share in subjects:
        for subject in share:
            _start(subject)
    ids = {
        s: str(w)
        for s, w in PendingTask.objects.filter(workflow__subject_id__startswith="RACE-")
        .values_list("workflow__subject_id", "workflow_id")
        .distinct()
    }

    def work(t: int) -> int:
        done = 0
        for r, subject in enumerate(subjects[t]):
            if (t + r) % 2:
                _decide("bob", ids[subject], "approve", f"race-a-{subject}")
            else:
                _decide("bob", ids[subject], "send_back", f"race-s-{subject}", comment="Fix")
            _start(f"{subject}-again")
            done += 1
        return done

    versions = _versions()
    results = race([in_thread(lambda t=t: work(t)) for t in range(RACERS)])
    assert results == [ROUNDS] * RACERS
    assert inbox_counters() == open_tasks_counted()
    # bob's inbox changed twice a round in every thread; each change moved his version.
    assert _versions()["bob"] == versions["bob"] + 2 * RACERS * ROUNDS


def test_a_task_deleted_and_written_again_in_the_one_statement_keeps_its_count(
    acme: Any,
) -> None:
    """The deletes are read before the inserts: a task deleted and inserted again under
    the same key (workflow, step, assignee) in one gathered statement does not break the
    key, and its assignee's count is unchanged and version moved."""
    from approvals.runtime import store
    from approvals.runtime.tenant_scope import acting_for

    wid = _start("KEY-1")
    task = PendingTask.objects.get(workflow_id=wid)
    names = ("tenant", "assignee", "workflow", "step", "on_behalf_of", "due_at", "created_at")
    row = [getattr(task, f.attname) for f in map(PendingTask._meta.get_field, names)]
    before = _versions()
    with store.pipelined(count_inbox=True), acting_for(task.tenant_id), store.gathered_writes():
        assert store.inbox_counted()
        store.task_write(
            PendingTask,
            f"DELETE FROM {store.table(PendingTask)} WHERE workflow_id = %s",
            [store.uuid_param(Workflow, task.workflow_id)],
            -1,
        )
        store.insert(PendingTask, names, [row], inbox_change=1)
    again = PendingTask.objects.get(workflow_id=wid)
    assert again.pk != task.pk and again.assignee_id == task.assignee_id
    assert inbox_counters() == open_tasks_counted() and open_tasks_counted() == {"bob": 1}
    assert _versions()["bob"] == before["bob"] + 1
