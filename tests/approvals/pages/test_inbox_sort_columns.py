"""What the inbox sorts and filters on sits on the task rows (migration 0032): the command
path writes it with the row, a rebuild derives the same and puts a wrong value right,
the page's sorts and search read those columns, and a first page walks one index."""

from __future__ import annotations

import datetime as dt
import importlib
import re
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.models import PendingTask, User
from approvals.runtime.projections import TASK_FACTS
from approvals.runtime.rebuild import read_models_check
from approvals.selectors.inbox_lists import InboxFilter, inbox_listing

from .support import expense_started

pytestmark = pytest.mark.django_db


def _listed(who: str, **filters: Any) -> list[str]:
    page = inbox_listing(
        user=User.objects.get(username=who), filters=InboxFilter(**filters), now=timezone.now()
    )
    return [t.workflow.subject_id for t in page.tasks]


def test_the_command_path_writes_the_sort_columns_with_the_task(acme: Any) -> None:
    User.objects.filter(username="alice").update(first_name="Alice", last_name="Zed")
    expense_started("COL-1", amount=4_500_000)

    task = PendingTask.objects.get(workflow__subject_id="COL-1")
    assert task.template_key == "expense-approval"
    assert task.amount_minor == 4_500_000
    assert task.requester_key == "alice"
    assert task.search_text == task.search_text.lower()
    for words in ("col-1", "alice", "zed", task.workflow.summary.lower()):
        assert words in task.search_text


def test_a_rebuild_derives_the_same_columns_and_puts_wrong_ones_right(acme: Any) -> None:
    expense_started("COL-2", amount=700_000)
    expense_started("COL-3", amount=80_000)
    assert read_models_check(tenant_id=acme.pk) == []  # live == derived, new columns too
    task = PendingTask.objects.get(workflow__subject_id="COL-2")
    PendingTask.objects.filter(pk=task.pk).update(
        amount_minor=1, requester_key="zz", search_text="nothing", template_key="x"
    )
    assert read_models_check(tenant_id=acme.pk) == [(task.workflow_id, "tasks")]

    call_command("rebuild_read_models", stdout=StringIO())

    fixed = PendingTask.objects.get(workflow__subject_id="COL-2")
    assert (fixed.amount_minor, fixed.requester_key, fixed.template_key) == (
        700_000,
        "alice",
        "expense-approval",
    )
    assert "col-2" in fixed.search_text
    assert read_models_check(tenant_id=acme.pk) == []


def test_the_sorts_and_the_search_read_the_task_rows_columns(acme: Any) -> None:
    for subject, amount in (("S-1", 300_000), ("S-2", 9_000_000), ("S-3", 200_000)):
        expense_started(subject, amount=amount)
    # the columns, not the workflows, decide: change one row's amount and text only
    PendingTask.objects.filter(workflow__subject_id="S-3").update(
        amount_minor=99_000_000, search_text="hotel in pune"
    )
    assert _listed("bob", sort="amount") == ["S-3", "S-2", "S-1"]
    assert _listed("bob", text="HOTEL") == ["S-3"]
    assert _listed("bob", text="s-2") == ["S-2"]
    assert _listed("bob", kind="expense-approval", sort="amount") == ["S-3", "S-2", "S-1"]
    assert _listed("bob", text="100%") == []  # the pattern's marks are matched as text


def test_a_page_costs_the_same_queries_for_3_and_30_tasks(acme: Any) -> None:
    bob = User.objects.get(username="bob")

    def queries(sort: str) -> int:
        with CaptureQueriesContext(connection) as q:
            inbox_listing(user=bob, filters=InboxFilter(sort=sort), now=timezone.now())
        return len(q.captured_queries)

    for i in range(3):
        expense_started(f"Q-{i}")
    few = {sort: queries(sort) for sort in ("due", "amount", "waiting", "requester")}
    for i in range(3, 30):
        expense_started(f"Q-{i}")
    assert {sort: queries(sort) for sort in few} == few
    assert max(few.values()) <= 5


# Copies of a person's tasks, each under a step name of its own.
MORE_TASKS = """
INSERT INTO approvals_pendingtask (step, on_behalf_of, due_at, created_at, assignee_id,
    tenant_id, workflow_id, handed_on_from, template_key, amount_minor, requester_key,
    search_text)
SELECT t.step || '-' || n, t.on_behalf_of, t.due_at + n * interval '1 minute',
    t.created_at + n * interval '1 second', t.assignee_id, t.tenant_id, t.workflow_id,
    t.handed_on_from, t.template_key, t.amount_minor + n, t.requester_key || n, t.search_text
FROM approvals_pendingtask t, generate_series(1, 2000) n
WHERE t.assignee_id = %s
"""


@pytest.mark.parametrize("sort", ["amount", "waiting", "requester"])
def test_a_first_page_walks_the_sorts_index_without_sorting_the_persons_tasks(
    acme: Any, sort: str
) -> None:
    for i in range(5):
        expense_started(f"P-{i}")
    bob = User.objects.get(username="bob")
    with CaptureQueriesContext(connection) as q:
        inbox_listing(user=bob, filters=InboxFilter(sort=sort), now=timezone.now())
    (listing,) = [x["sql"] for x in q.captured_queries if "LIMIT" in x["sql"]]
    with connection.cursor() as cur:
        # bob's tasks as at scale (2,000 copies of each, never committed) and the
        # planner's figures taken of them: not those of whatever this database held at
        # its last autovacuum, against indexes swollen by the rows other tests rolled
        # back (under xdist each worker's database has its own of both)
        cur.execute(MORE_TASKS, [bob.pk])
        for table in sorted(set(re.findall(r'(?:FROM|JOIN) "(\w+)"', listing))):
            cur.execute(f'ANALYZE "{table}"')
        cur.execute("EXPLAIN " + listing)
        plan = "\n".join(row[0] for row in cur.fetchall())
    assert f"task_inbox_{sort}" in plan, plan
    assert "Sort" not in plan, plan


def test_an_overdue_filter_and_a_later_page_still_count_every_match(acme: Any) -> None:
    for i in range(4):
        expense_started(f"O-{i}")
    PendingTask.objects.filter(workflow__subject_id__in=["O-1", "O-2"]).update(
        due_at=timezone.now() - dt.timedelta(days=1)
    )
    bob = User.objects.get(username="bob")
    late = inbox_listing(
        user=bob, filters=InboxFilter(sort="amount", overdue=True), now=timezone.now(), per_page=1
    )
    assert (late.total, late.pages) == (2, 2)
    last = inbox_listing(
        user=bob,
        filters=InboxFilter(sort="waiting", overdue=True),
        now=timezone.now(),
        page=9,
        per_page=1,
    )
    assert (last.page, len(last.tasks)) == (2, 1)


def test_the_migrations_backfill_gives_what_the_command_path_writes(acme: Any) -> None:
    from django.apps import apps

    migration = importlib.import_module("approvals.migrations.0032_inbox_sort")
    User.objects.filter(username="alice").update(first_name="Alice", last_name="Zed")
    for subject, amount in (("B-1", 4_500_000), ("B-2", 250_000)):
        expense_started(subject, amount=amount)
    written = set(PendingTask.objects.values_list("pk", *TASK_FACTS))
    PendingTask.objects.update(template_key="", amount_minor=None, requester_key="", search_text="")

    with connection.schema_editor(atomic=False) as editor:
        migration.fill(apps, editor)

    assert set(PendingTask.objects.values_list("pk", *TASK_FACTS)) == written
    assert {row[2] for row in written} == {4_500_000, 250_000}
