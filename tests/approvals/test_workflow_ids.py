"""A workflow's id is time-ordered (UUID version 7, migration 0260): each new workflow's
rows land at the right-hand end of the indexes keyed by it."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from approvals.models import Workflow

from .helpers import start_expense

pytestmark = pytest.mark.django_db


def _millisecond(workflow_id: uuid.UUID) -> int:
    return workflow_id.int >> 80


def test_started_workflows_have_version_7_ids_in_the_order_of_their_starts(
    acme: Any, api: Any
) -> None:
    alice = api("alice")
    before = int(time.time() * 1000)
    ids = []
    for amount in (1_000, 2_000, 3_000):
        answer = start_expense(alice, amount)
        assert answer.status_code == 201, answer.content
        ids.append(uuid.UUID(answer.json()["workflowId"]))
    after = int(time.time() * 1000)
    assert [i.version for i in ids] == [7, 7, 7]
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert all(before <= _millisecond(i) <= after for i in ids)
    assert set(Workflow.objects.filter(pk__in=ids).values_list("pk", flat=True)) == set(ids)
