"""The analytics rollup folded by the periodic job (``runtime.rollup.rollup_fold``): the
page's figures right after the commands equal those after the fold and those of a
recount from the visits; two folds racing count each visit once; a fold killed in the
middle of a batch counts nothing, and the next one counts each visit once."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.db import connection, transaction

from approvals import clock
from approvals.models import StepVisit, StepVisitRetraction, User, Workflow
from approvals.runtime import rollup
from approvals.selectors.analytics import AnalyticsFilter, step_figures, weekly_starts
from approvals.services.workflows import workflow_cancel
from approvals.workers import tasks
from approvals.workers.timers import timer_drain

from .support import act, later, travel_published, travel_started

INDIA = ZoneInfo("Asia/Kolkata")


@pytest.fixture
def travel(acme: Any) -> Any:
    travel_published(acme)
    return acme


def _period(tenant_id: int, **extra: Any) -> AnalyticsFilter:
    """Whole UTC days around now: the figures come from the rollup and what is pending."""
    today = clock.now().astimezone(dt.UTC).date()
    start = dt.datetime.combine(today - dt.timedelta(days=60), dt.time(), tzinfo=dt.UTC)
    return AnalyticsFilter(
        tenant_id=tenant_id, start=start, end=start + dt.timedelta(days=120), **extra
    )


def _figures(tenant_id: int) -> tuple[Any, ...]:
    """Everything the page shows that the rollup answers, for every filter."""
    now = clock.now()
    out: list[Any] = []
    for extra in ({}, {"template_key": "travel"}, {"field": "department", "value": "SALES"}):
        f = _period(tenant_id, **extra)
        out.append(step_figures(f, now=now))
        out.append(weekly_starts(f, zone=INDIA))
        out.append(weekly_starts(f, zone=dt.UTC))
    return tuple(out)


def _pending(tenant_id: int) -> tuple[int, int]:
    return (
        StepVisit.objects.filter(tenant_id=tenant_id, counted=False).count(),
        StepVisitRetraction.objects.filter(tenant_id=tenant_id).count(),
    )


def _histories() -> list[str]:
    """Workflows through approvals, a send-back, a rejection, an escalation and a cancel."""
    ids = [travel_started(department=d) for d in ("SALES", "IT_OPS", "SALES", "IT_OPS")]
    later(2)
    act(ids[0], "approve")
    act(ids[1], "reject")
    later(3)
    act(ids[0], "send_back")
    later(30)  # past the lead's deadline: the open visits escalate
    timer_drain()
    workflow_cancel(
        user=User.objects.get(username="olga"),
        workflow_id=ids[3],
        reason="not needed",
        request_id="fold-cancel",
    )
    return ids


@pytest.mark.django_db
def test_the_figures_right_after_commands_equal_those_after_the_fold(travel: Any) -> None:
    # given commands, with a fold between some of them (so counted visits change)
    ids = _histories()[:2]
    assert rollup.rollup_fold(tenant_id=travel.pk) > 0
    assert _pending(travel.pk) == (0, 0)
    later(1)
    act(ids[0], "approve")  # closes a counted visit, opens another
    ids.append(travel_started(department="IT_OPS"))

    # when the page reads before the fold
    assert _pending(travel.pk)[0] >= 2 and _pending(travel.pk)[1] >= 1
    before = _figures(travel.pk)
    assert any(r.visits for r in before[0]), "the histories made visits"

    # then the fold changes nothing the page shows, and neither does a recount
    assert tasks.fold_analytics() > 0
    assert _pending(travel.pk) == (0, 0)
    assert _figures(travel.pk) == before
    counted = rollup.rollup_rows(tenant_id=travel.pk)
    rollup.rollup_refresh(tenant_id=travel.pk)
    assert rollup.rollup_rows(tenant_id=travel.pk) == counted
    assert _figures(travel.pk) == before


@pytest.mark.django_db
def test_a_counted_visit_deleted_or_changed_is_taken_off(travel: Any) -> None:
    _histories()
    rollup.rollup_fold()
    total = sum(r.visits for r in step_figures(_period(travel.pk), now=clock.now()))
    assert total == StepVisit.objects.filter(tenant_id=travel.pk).count()

    # a counted visit deleted, another moved to another step: the page follows at once
    gone, moved = StepVisit.objects.filter(tenant_id=travel.pk).order_by("id")[:2]
    gone.delete()
    StepVisit.objects.filter(pk=moved.pk).update(step="travel_desk", escalated=True)
    assert _pending(travel.pk) == (1, 2)
    now_shown = _figures(travel.pk)
    rows = step_figures(_period(travel.pk), now=clock.now())
    assert sum(r.visits for r in rows) == total - 1

    assert rollup.rollup_fold(tenant_id=travel.pk) == 3
    assert _figures(travel.pk) == now_shown
    counted = rollup.rollup_rows(tenant_id=travel.pk)
    rollup.rollup_refresh(tenant_id=travel.pk)
    assert rollup.rollup_rows(tenant_id=travel.pk) == counted


@pytest.mark.django_db
def test_a_batch_below_one_is_refused_and_folds_nothing(travel: Any) -> None:
    travel_started()
    with pytest.raises(ValueError, match=rollup.FOLD_BATCH_ERROR):
        rollup.rollup_fold(batch=0)
    assert _pending(travel.pk) == (1, 0)


# -- races and kills: committed data, real connections --------------------------------------


def _many(tenant: Any, n: int) -> None:
    """``n`` workflows, each a counted visit then changed, and a new one uncounted."""
    ids = [travel_started(department=("SALES", "IT_OPS")[i % 2]) for i in range(n)]
    rollup.rollup_fold()
    later(1)
    for wid in ids[: n // 2]:
        act(wid, "approve")
    for _ in range(n // 4):
        travel_started()


def _exact(tenant_id: int, shown: tuple[Any, ...]) -> None:
    """Nothing pending, the page's figures unchanged, the rollup a recount's."""
    assert _pending(tenant_id) == (0, 0)
    assert _figures(tenant_id) == shown
    counted = rollup.rollup_rows(tenant_id=tenant_id)
    rollup.rollup_refresh(tenant_id=tenant_id)
    assert rollup.rollup_rows(tenant_id=tenant_id) == counted
    total = sum(r[5] for r in counted)
    assert total == StepVisit.objects.filter(tenant_id=tenant_id).count()


def _in_thread(work: Any, results: list[Any], start: threading.Barrier | None = None) -> Any:
    def run() -> None:
        try:
            if start is not None:
                start.wait(timeout=30)
            results.append(work())
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread
            results.append(e)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_two_folds_racing_count_each_visit_once(travel: Any) -> None:
    _many(travel, 24)
    pending = sum(_pending(travel.pk))
    shown = _figures(travel.pk)
    assert pending >= 24

    # when two folds run at once, in small batches
    results: list[Any] = []
    start = threading.Barrier(2)
    threads = [_in_thread(lambda: rollup.rollup_fold(batch=3), results, start) for _ in range(2)]
    for thread in threads:
        thread.join(timeout=120)

    # then between them they folded each row once
    assert not any(isinstance(r, BaseException) for r in results), results
    assert len(results) == 2 and sum(results) == pending
    _exact(travel.pk, shown)


@pytest.mark.django_db(transaction=True)
def test_a_fold_skips_the_rows_another_holds_and_waits_for_its_sums(travel: Any) -> None:
    _many(travel, 8)
    pending = sum(_pending(travel.pk))
    shown = _figures(travel.pk)

    # given a fold's batch open in this thread (its rows claimed, its sums not committed)
    results: list[Any] = []
    with transaction.atomic():
        held = sum(rollup.rollup_fold_batch(batch=4))
        assert held > 0
        # when another fold runs meanwhile
        other = _in_thread(lambda: rollup.rollup_fold(batch=2), results)
        time.sleep(0.5)
    other.join(timeout=60)

    # then it took the other rows only
    assert not any(isinstance(r, BaseException) for r in results), results
    assert held + results[0] == pending
    _exact(travel.pk, shown)


@pytest.mark.django_db(transaction=True)
def test_a_fold_aborted_mid_batch_counts_nothing_and_the_next_counts_once(travel: Any) -> None:
    _many(travel, 8)
    pending = _pending(travel.pk)
    shown = _figures(travel.pk)

    class Aborted(Exception):
        pass

    with pytest.raises(Aborted), transaction.atomic():
        assert sum(rollup.rollup_fold_batch(batch=100)) == sum(pending)
        raise Aborted

    assert _pending(travel.pk) == pending
    assert _figures(travel.pk) == shown
    assert rollup.rollup_fold() == sum(pending)
    _exact(travel.pk, shown)


_CHILD = """
import sys, time, psycopg
with psycopg.connect(sys.argv[1]) as conn:
    got = conn.execute(sys.stdin.read(), {"batch": int(sys.argv[2]), "tenant": None}).fetchone()
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    print(pid, got[0], got[1], flush=True)
    time.sleep(600)  # killed here, its transaction open
"""


def _conninfo() -> str:
    s = connection.settings_dict
    return (
        f"host={s['HOST'] or '127.0.0.1'} port={s['PORT'] or 5432} dbname={s['NAME']}"
        f" user={s['USER']}" + (f" password={s['PASSWORD']}" if s["PASSWORD"] else "")
    )


@pytest.mark.django_db(transaction=True)
def test_a_fold_killed_mid_batch_counts_nothing_and_the_next_counts_once(travel: Any) -> None:
    _many(travel, 8)
    pending = _pending(travel.pk)
    shown = _figures(travel.pk)

    # given a process that folded a batch and is SIGKILLed before its COMMIT
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, _conninfo(), "5"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(rollup._FOLD_ALL)
    child.stdin.close()
    pid, visits, retracted = (int(x) for x in child.stdout.readline().split())
    assert visits + retracted > 0
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    with connection.cursor() as cur:  # its backend sees the socket close and rolls back
        for _ in range(300):
            cur.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
            if cur.fetchone()[0] == 0:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the killed fold's backend did not end")

    # then nothing of its batch was counted, and the next fold counts each row once
    assert _pending(travel.pk) == pending
    assert _figures(travel.pk) == shown
    assert rollup.rollup_fold() == sum(pending)
    _exact(travel.pk, shown)


@pytest.mark.django_db
def test_the_command_path_writes_no_rollup_row(travel: Any) -> None:
    wid = travel_started()
    later(1)
    act(wid, "approve")
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM approvals_stepday WHERE tenant_id = %s", [travel.pk])
        assert cur.fetchone()[0] == 0
    assert Workflow.objects.get(pk=wid).status == "RUNNING"
    assert _pending(travel.pk) == (2, 0)
    rollup.rollup_fold()
    with connection.cursor() as cur:
        cur.execute("SELECT sum(visits) FROM approvals_stepday WHERE tenant_id = %s", [travel.pk])
        assert cur.fetchone()[0] == 2
