"""GET /api/me/tasks: a user's open tasks by due date then id, paged by an opaque
keyset cursor that stays correct while tasks come and go between pages."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import PendingTask
from approvals.selectors import tasks
from approvals.selectors.tasks import BAD_CURSOR

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db

PENDING_AMOUNT = 4_500_000  # bob (alice's manager) first


def _start_for_bob(api: Any, n: int, prefix: str = "E") -> list[str]:
    client = api("alice")
    ids = []
    for i in range(n):
        response = start_expense(client, PENDING_AMOUNT, subject=f"{prefix}-{i}")
        assert response.status_code == 201, response.content
        ids.append(response.json()["workflowId"])
    return ids


def _walk(client: Any, limit: int, between_pages: Any = None) -> list[list[dict[str, Any]]]:
    """Every page of the inbox; ``between_pages(n)`` runs after page n is read."""
    pages: list[list[dict[str, Any]]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        response = client.get("/api/me/tasks", params)
        assert response.status_code == 200, response.content
        body = response.json()
        pages.append(body["items"])
        cursor = body["nextCursor"]
        if cursor is None:
            return pages
        assert len(pages) < 50, "the cursor does not advance"
        if between_pages is not None:
            between_pages(len(pages))


def _key(task: dict[str, Any]) -> tuple[dt.datetime, int]:
    return dt.datetime.fromisoformat(task["dueAt"]), task["taskId"]


def test_inbox_lists_my_tasks_with_their_workflow(acme, api):
    (wid,) = _start_for_bob(api, 1)

    body = api("bob").get("/api/me/tasks").json()

    assert body["nextCursor"] is None
    (task,) = body["items"]
    assert task["workflowId"] == wid
    assert task["step"] == "manager"
    assert task["template"] == "expense-approval"
    assert task["subject"] == "Expense claim E-0, ₹45,000"
    assert task["subjectRef"] == {"type": "expense", "id": "E-0"}
    assert task["status"] == "PENDING_MANAGER"
    assert task["onBehalfOf"] is None
    due = dt.datetime.fromisoformat(task["dueAt"])
    assigned = dt.datetime.fromisoformat(task["assignedAt"])
    assert due - assigned == dt.timedelta(days=2)  # the manager step's deadline, P2D
    assert api("alice").get("/api/me/tasks").json()["items"] == []
    assert api("fiona").get("/api/me/tasks").json()["items"] == []


def test_the_inbox_reads_each_page_in_one_query_however_many_rows(acme, api):
    # The list reads only the columns it shows: a column left out and then read per
    # row would add a query for each task.
    client = api("bob")

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get("/api/me/tasks")
        assert response.status_code == 200
        return len(ctx.captured_queries)

    _start_for_bob(api, 1)
    queries()  # the first request of a token also notes when it was last used
    one = queries()
    _start_for_bob(api, 6, prefix="F")
    assert len(client.get("/api/me/tasks").json()["items"]) == 7
    assert queries() == one


def test_inbox_is_ordered_by_due_date_then_id(acme, api):
    # given seven tasks, some sharing a due date and some due out of start order
    ids = _start_for_bob(api, 7)
    tasks = {str(t.workflow_id): t for t in PendingTask.objects.filter(assignee__username="bob")}
    base = tasks[ids[0]].due_at
    for wid, offset_hours in zip(ids, [5, 1, 1, 0, 3, 1, 0], strict=True):
        PendingTask.objects.filter(pk=tasks[wid].pk).update(
            due_at=base + dt.timedelta(hours=offset_hours)
        )

    # when
    listed = api("bob").get("/api/me/tasks").json()["items"]

    # then
    assert len(listed) == 7
    assert [_key(t) for t in listed] == sorted(_key(t) for t in listed)
    expected = sorted(
        PendingTask.objects.filter(assignee__username="bob"), key=lambda t: (t.due_at, t.pk)
    )
    assert [t["taskId"] for t in listed] == [t.pk for t in expected]


def test_later_started_tasks_sort_later(acme, api):
    ids = _start_for_bob(api, 4)

    listed = api("bob").get("/api/me/tasks").json()["items"]

    assert [t["workflowId"] for t in listed] == ids


def test_pages_walk_every_task_once_in_order(acme, api):
    ids = _start_for_bob(api, 7)

    pages = _walk(api("bob"), limit=3)

    assert [len(p) for p in pages] == [3, 3, 1]
    seen = [t["workflowId"] for page in pages for t in page]
    assert seen == ids
    flat = [t for page in pages for t in page]
    assert [_key(t) for t in flat] == sorted(_key(t) for t in flat)


def test_an_exact_last_page_ends_without_an_empty_page(acme, api):
    _start_for_bob(api, 6)

    pages = _walk(api("bob"), limit=3)

    assert [len(p) for p in pages] == [3, 3]


def test_limit_larger_than_the_inbox_gives_one_page(acme, api):
    ids = _start_for_bob(api, 3)

    body = api("bob").get("/api/me/tasks", {"limit": 200}).json()

    assert [t["workflowId"] for t in body["items"]] == ids
    assert body["nextCursor"] is None


def test_cursor_stays_correct_while_tasks_come_and_go(acme, api):
    # given seven tasks for bob
    ids = _start_for_bob(api, 7)
    bob = api("bob")
    removed: list[str] = []
    added: list[str] = []

    def between_pages(n: int) -> None:
        if n == 1:
            # approve one task already seen and one not yet seen; start two more
            for wid in (ids[0], ids[4]):
                assert decide(bob, wid, "approve", f"bob-{wid}").status_code == 200
                removed.append(wid)
            added.extend(_start_for_bob(api, 2, prefix="NEW"))
        if n == 2:
            # approve the first of the new ones before it is reached; start one more
            assert decide(bob, added[0], "approve", "bob-new").status_code == 200
            removed.append(added[0])
            added.extend(_start_for_bob(api, 1, prefix="NEWER"))

    # when bob walks his inbox three at a time while it changes
    pages = _walk(bob, limit=3, between_pages=between_pages)

    # then
    seen = [t["workflowId"] for page in pages for t in page]
    assert len(seen) == len(set(seen)), "a task was listed twice"
    throughout = [w for w in ids if w not in removed]
    assert set(throughout) <= set(seen), "a task that existed throughout was skipped"
    assert ids[4] not in seen and added[0] not in seen  # gone before their page was read
    assert seen == [*ids[:4], ids[5], ids[6], added[1], added[2]]
    assert [len(p) for p in pages] == [3, 3, 2]
    flat = [t for page in pages for t in page]
    assert [_key(t) for t in flat] == sorted(_key(t) for t in flat)


def test_task_added_before_the_cursor_is_not_repeated_or_misplaced(acme, api):
    # given bob has read the first page
    ids = _start_for_bob(api, 5)
    bob = api("bob")
    first = bob.get("/api/me/tasks", {"limit": 2}).json()
    assert [t["workflowId"] for t in first["items"]] == ids[:2]

    # when a task due before the cursor appears (a due date earlier than any seen)
    (early,) = _start_for_bob(api, 1, prefix="EARLY")
    earliest = PendingTask.objects.order_by("due_at").first()
    assert earliest is not None
    PendingTask.objects.filter(workflow_id=early).update(
        due_at=earliest.due_at - dt.timedelta(hours=1)
    )
    rest = bob.get("/api/me/tasks", {"limit": 10, "cursor": first["nextCursor"]}).json()

    # then the walk goes on from where it was; the early task is on a fresh first page
    assert [t["workflowId"] for t in rest["items"]] == ids[2:]
    assert bob.get("/api/me/tasks").json()["items"][0]["workflowId"] == early


def test_cursor_is_opaque_and_tamper_evident(acme, api):
    _start_for_bob(api, 3)
    bob = api("bob")
    cursor = bob.get("/api/me/tasks", {"limit": 1}).json()["nextCursor"]
    task = PendingTask.objects.order_by("due_at", "pk").first()
    assert task is not None
    assert task.due_at.isoformat() not in cursor  # opaque: not the raw position

    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    response = bob.get("/api/me/tasks", {"cursor": tampered})

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "BAD_CURSOR"
    assert response.json()["error"]["message"] == BAD_CURSOR


def test_a_listed_row_names_the_columns_the_list_selects_in_their_order():
    # ListedTask is built positionally from the plain SQL's row: a column added to or
    # moved in the list must move in the tuple too.
    assert tasks.ListedTask._fields == (
        "pk",
        *tasks._TASK_FIELDS[1:],
        "workflow",
        "step_name",
        "subject",
    )
    assert tasks._TASK_FIELDS[0] == "id"
    assert tasks.ListedWorkflow._fields == tasks._WORKFLOW_FIELDS
