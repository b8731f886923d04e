"""Timers fire exactly once: racing pollers, pollers killed mid-batch, an escalation
racing the approver, and time driven by the clock instead of sleeping.

Pollers run as separate processes (``poller.py``) with the clock moved past the
timers' fire time; the checks read the events each timer produced."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest
from django.db import connection
from django.db.models import Count
from django.db.models.fields.json import KeyTextTransform

from approvals import clock
from approvals.models import PendingTask, Timer, User, WorkflowEvent
from approvals.services.workflows import workflow_decide
from approvals.workers.timers import timer_fire_due
from templates_engine import CommandRejected
from templates_engine.errors import NOT_YOUR_STEP
from templates_engine.steps.approval import MAX_REMINDERS

from .conftest import Proc, Processes, wait_until
from .support import (
    assert_histories_intact,
    deadline_template,
    event_types,
    publish,
    reminders_template,
    start,
)

T = TypeVar("T")

# Timers in the race of two pollers, and in the test that kills pollers.
RACE_TIMERS = int(os.environ.get("DURABILITY_TIMERS", "10000"))
KILL_TIMERS = int(os.environ.get("DURABILITY_KILL_TIMERS", "2000"))
REMINDERS = MAX_REMINDERS  # timers per workflow (as many as a step may have), a minute apart
AN_HOUR = 3600.0  # every reminder is due an hour on
POLLER_LIMIT = 240.0  # seconds a poller may take before the test gives up


def workflows_with_due_timers(acme: Any, key: str, timers: int) -> list[str]:
    publish(acme, reminders_template(key, REMINDERS))
    ids = start(key, -(-timers // REMINDERS))
    assert Timer.objects.filter(fired_at__isnull=True).count() == len(ids) * REMINDERS
    return ids


def fired_by(proc: Proc) -> int:
    for line in reversed(proc.log.read_text(errors="replace").splitlines()):
        if line.startswith('{"fired"'):
            return int(json.loads(line)["fired"])
    raise AssertionError(f"poller {proc.pid} printed no result:\n{proc.tail()}")


def wait_for_exit(proc: Proc, timeout: float) -> None:
    wait_until(
        lambda: proc.popen.poll() is not None,
        timeout=timeout,
        interval=0.2,
        what=f"poller {proc.pid} to finish",
    )
    assert proc.popen.returncode == 0, proc.tail()


def assert_every_timer_fired_once(total: int) -> None:
    assert Timer.objects.count() == total
    assert Timer.objects.filter(fired_at__isnull=True).count() == 0
    reminders = WorkflowEvent.objects.filter(type="ReminderSent").annotate(
        timer=KeyTextTransform("timer", "payload")
    )
    assert reminders.count() == total
    doubled = list(
        reminders.values("workflow_id", "timer").annotate(n=Count("pk")).filter(n__gt=1)[:10]
    )
    assert doubled == [], "timers fired twice"
    assert reminders.values("workflow_id", "timer").distinct().count() == total
    assert_histories_intact()


@pytest.mark.topology
@pytest.mark.django_db(transaction=True)
def test_two_pollers_racing_over_due_timers_fire_each_once(
    acme: Any, processes: Processes, tmp_path: Path
) -> None:
    # given RACE_TIMERS timers, all due an hour on
    began = time.monotonic()
    workflows_with_due_timers(acme, "race-timers", RACE_TIMERS)
    total = Timer.objects.count()
    print(f"{total} timers set in {time.monotonic() - began:.1f}s")

    # when two poller processes start on them at the same moment
    go = tmp_path / "go"
    pollers = [processes.drain(AN_HOUR + 1, go_file=go) for _ in range(2)]
    wait_until(
        lambda: len(list(tmp_path.glob("go.ready.*"))) == 2,
        timeout=60,
        what="both pollers to be ready",
    )
    go.touch()
    began = time.monotonic()
    for poller in pollers:
        wait_for_exit(poller, POLLER_LIMIT)
    print(f"fired in {time.monotonic() - began:.1f}s")

    # then every timer fired once: one delivery, one ReminderSent
    fired = [fired_by(p) for p in pollers]
    print(f"pollers fired {fired} of {total} timers")
    assert sum(fired) == total
    assert_every_timer_fired_once(total)


@pytest.mark.topology
@pytest.mark.django_db(transaction=True)
def test_pollers_killed_mid_batch_lose_and_double_nothing(acme: Any, processes: Processes) -> None:
    # given KILL_TIMERS due timers
    workflows_with_due_timers(acme, "kill-poller", KILL_TIMERS)
    total = Timer.objects.count()
    seed = int(os.environ.get("DURABILITY_SEED", time.time_ns() % 100_000))
    rng = random.Random(seed)
    print(f"DURABILITY_SEED={seed}")

    def fired() -> int:
        return Timer.objects.filter(fired_at__isnull=False).count()

    # when pollers are killed at random moments; each new poller's clock runs two
    # minutes further, so the claims the dead ones left (60 s) have lapsed for it
    def kill_after(poller: Proc, target: int) -> bool:
        """Kill ``poller`` once ``target`` timers fired (and a random instant more);
        False if it finished first."""
        wait_until(
            lambda: fired() >= target or poller.popen.poll() is not None,
            timeout=POLLER_LIMIT,
            interval=0.02,
            what="the poller to fire some timers",
        )
        time.sleep(rng.uniform(0, 0.2))
        if poller.popen.poll() is not None:
            return False
        poller.kill()
        return True

    kills = 0
    for round_ in range(rng.randint(3, 5)):
        before = fired()
        poller = processes.drain(AN_HOUR + 1 + 120 * round_)
        if not kill_after(poller, before + rng.randint(1, max(1, (total - before) // 4))):
            break
        kills += 1
    assert kills >= 3, f"the pollers finished before they could be killed ({kills} kills)"
    assert fired() < total, "nothing was left for the final poller"

    # and a last poller runs to the end
    last = processes.drain(AN_HOUR + 1 + 120 * 10)
    wait_for_exit(last, POLLER_LIMIT)

    # then nothing was lost and nothing doubled
    assert_every_timer_fired_once(total)


def in_thread(fn: Callable[[], T], barrier: threading.Barrier) -> Callable[[], T]:
    def run() -> T:
        try:
            barrier.wait(timeout=30)
            return fn()
        finally:
            connection.close()

    return run


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run each call in its own thread, released together; results in order."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def keep(i: int, fn: Callable[[], Any]) -> None:
        try:
            results[i] = fn()
        except BaseException as exc:  # reported by the assertion below
            results[i] = exc

    threads = [
        threading.Thread(target=keep, args=(i, in_thread(fn, barrier)))
        for i, fn in enumerate(calls)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a racing thread hung"
    return results


def approve(user: User, workflow_id: str, request_id: str) -> str:
    """``user`` approves; "decided", or the code the engine rejected it with."""
    time.sleep(random.uniform(0, 0.004))  # vary which of the two gets the lock first
    try:
        workflow_decide(
            user=user, workflow_id=workflow_id, decision="approve", request_id=request_id
        )
    except CommandRejected as exc:
        return exc.code
    return "decided"


@pytest.mark.django_db(transaction=True)
def test_an_escalation_racing_the_approvers_decision_lets_one_win(acme: Any) -> None:
    publish(acme, deadline_template("race-escalation", "P1D"))
    bob = User.objects.get(username="bob")
    winners: Counter[str] = Counter()
    for i in range(20):
        # given bob's task, its deadline passed
        [workflow_id] = start("race-escalation", 1, first=i)

        # when the poller fires the deadline while bob approves
        with clock.shifted(dt.timedelta(days=1, seconds=1)):
            fired, decided = race(timer_fire_due, partial(approve, bob, workflow_id, f"bob-{i}"))
        assert not isinstance(fired, BaseException), fired
        assert not isinstance(decided, BaseException), decided

        # then exactly one of them took effect, and the history says which
        types = event_types(workflow_id)
        tasks = set(
            PendingTask.objects.filter(workflow_id=workflow_id).values_list(
                "assignee__username", flat=True
            )
        )
        if decided == "decided":
            winners["decision"] += 1
            assert "DecisionRecorded" in types and "Escalated" not in types, types
            assert types[-1] == "WorkflowCompleted"
            assert tasks == set()
        else:
            winners["escalation"] += 1
            assert decided == NOT_YOUR_STEP
            assert "Escalated" in types and "DecisionRecorded" not in types, types
            assert tasks == {"victor"}
        assert types.count("Escalated") <= 1
        assert not Timer.objects.filter(workflow_id=workflow_id, fired_at__isnull=True).exists()
        assert_histories_intact([workflow_id])
    print(f"winners: {dict(winners)}")


@pytest.mark.django_db(transaction=True)
def test_a_two_day_deadline_fires_when_the_clock_says_two_days_passed(acme: Any) -> None:
    # given bob's task with a P2D deadline
    publish(acme, deadline_template("two-days", "P2D"))
    [workflow_id] = start("two-days", 1)

    # when the poller runs a second before the deadline
    with clock.shifted(dt.timedelta(days=2) - dt.timedelta(seconds=1)):
        early = timer_fire_due()

    # then nothing fires
    assert early == 0
    assert "Escalated" not in event_types(workflow_id)

    # when it runs a second after
    with clock.shifted(dt.timedelta(days=2, seconds=1)):
        late = timer_fire_due()

    # then the deadline fires, once, and escalates to bob's manager
    assert late == 1
    assert event_types(workflow_id).count("Escalated") == 1
    assert set(
        PendingTask.objects.filter(workflow_id=workflow_id).values_list(
            "assignee__username", flat=True
        )
    ) == {"victor"}
    with clock.shifted(dt.timedelta(days=2, seconds=2)):
        assert timer_fire_due() == 0
    assert_histories_intact([workflow_id])
