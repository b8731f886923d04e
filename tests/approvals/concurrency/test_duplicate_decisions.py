"""The same decision sent many times at once (one request id) is recorded once.

Every copy gets 200; exactly one is the original (``duplicate: false``) and the rest
are duplicates that repeat its status and version. Size by environment:
``CONCURRENCY_WORKFLOWS`` (default 200) workflows, ``CONCURRENCY_COPIES`` (default 20)
copies of the decision each, ``CONCURRENCY_COHORTS`` (default 2) groups of threads
racing on different workflows at the same time."""

from __future__ import annotations

import os
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest

from approvals.models import User, WorkflowEvent
from approvals.services.workflows import workflow_start

from .support import BARRIER_TIMEOUT, HttpClient, Reply, assert_history_intact, in_thread

pytestmark = pytest.mark.django_db(transaction=True)

WORKFLOWS = int(os.environ.get("CONCURRENCY_WORKFLOWS", "200"))
COPIES = int(os.environ.get("CONCURRENCY_COPIES", "20"))
COHORTS = int(os.environ.get("CONCURRENCY_COHORTS", "2"))


def _start_expenses(count: int) -> list[str]:
    alice = User.objects.get(username="alice")
    return [
        str(
            workflow_start(
                submitter=alice,
                template_key="expense-approval",
                subject_type="expense",
                subject_id=f"E-{n}",
                data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
            ).workflow_id
        )
        for n in range(count)
    ]


def _fire(bob: HttpClient, workflow_ids: list[str]) -> dict[str, list[Reply]]:
    """COPIES threads per cohort; cohort c takes every COHORTS-th workflow. At each
    workflow the cohort's threads meet at a barrier, then all send the same decision."""
    replies: dict[str, list[Reply]] = {wid: [] for wid in workflow_ids}
    lock = threading.Lock()

    def copy(share: list[str], barrier: threading.Barrier) -> None:
        for wid in share:
            barrier.wait(timeout=BARRIER_TIMEOUT)
            reply = bob.decide(wid, "approve", f"approve-{wid}")
            with lock:
                replies[wid].append(reply)

    with ThreadPoolExecutor(max_workers=COHORTS * COPIES) as pool:
        futures = []
        for c in range(COHORTS):
            share = workflow_ids[c::COHORTS]
            barrier = threading.Barrier(COPIES)
            futures += [
                pool.submit(in_thread(partial(copy, share, barrier))) for _ in range(COPIES)
            ]
        for f in futures:
            f.result()
    return replies


def test_copies_of_one_decision_are_recorded_once(http):
    # given
    workflow_ids = _start_expenses(WORKFLOWS)

    # when bob's approval arrives COPIES times at once on every workflow
    replies = _fire(http("bob"), workflow_ids)

    # then each workflow has one original and COPIES - 1 duplicates of it
    for wid, got in replies.items():
        assert len(got) == COPIES
        assert [r.status for r in got] == [200] * COPIES, (wid, got)
        originals = [r.body for r in got if r.body["duplicate"] is False]
        assert len(originals) == 1, (wid, got)
        original = originals[0]
        assert original["status"] == "PENDING_FINANCE"
        assert Counter((r.body["status"], r.body["version"], r.body["duplicate"]) for r in got) == {
            (original["status"], original["version"], False): 1,
            (original["status"], original["version"], True): COPIES - 1,
        }
    recorded = Counter(
        str(w)
        for w in WorkflowEvent.objects.filter(
            workflow_id__in=workflow_ids,
            type="DecisionRecorded",
        ).values_list("workflow_id", flat=True)
    )
    assert recorded == dict.fromkeys(workflow_ids, 1)
    for wid in workflow_ids:
        assert_history_intact(wid)
