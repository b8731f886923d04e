"""The audit API's pages (``GET /api/audit/events``) on PostgreSQL with archived history:
the archived requests' events are read from the archive store in their place by event
id, so every page is the same before and after its month goes to the archive (apart from
``archived``), a cursor goes on across the live and archived events, before and after
archiving and restoring, and what the pages cannot answer is refused in words."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.core.management import call_command

from approvals import clock
from approvals.audit.archive import month_archive
from approvals.audit.export import INDEX_STALE, PERSON_NOT_PAGED, _decode, _encode
from approvals.audit.models import ArchivedWorkflow
from approvals.audit.retention import retention_set
from approvals.audit.seal import seal_all
from approvals.models import Tenant, User, Workflow, WorkflowEvent, history_month
from approvals.runtime.partitions import history_partitions_ensure, month_add
from approvals.services.workflows import workflow_cancel, workflow_decide, workflow_start
from tests.approvals.audit.test_archive import archive_root  # noqa: F401

pytestmark: list[pytest.MarkDecorator] = []


def _user(name: str) -> User:
    return User.objects.get(username=name)


def _start(subject: str) -> Workflow:
    started = workflow_start(
        submitter=_user("alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id=subject,
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    return Workflow.objects.get(pk=started.workflow_id)


def _at(moment: dt.datetime) -> Any:
    return clock.shifted(moment - clock.now())


def _interleaved() -> tuple[dt.date, list[Workflow], list[Workflow]]:
    """Two requests started on the last day of a month fifteen months back (archived
    later) and two started the next month (kept live), their events written in turn, so
    the archived and the live events' ids interleave."""
    this_month = clock.now().date().replace(day=1)
    month = month_add(this_month, -15)
    after = month_add(month, 1)
    last_day = dt.datetime.combine(after, dt.time(12), dt.UTC) - dt.timedelta(days=1)
    with _at(last_day):
        history_partitions_ensure(months_ahead=1)
        old = [_start("OLD-1"), _start("OLD-2")]
    live: list[Workflow] = []
    with _at(dt.datetime.combine(after, dt.time(9), dt.UTC) + dt.timedelta(days=2)):
        for n, wf in enumerate(old, start=1):
            live.append(_start(f"NEW-{n}"))
            workflow_decide(
                user=_user("bob"), workflow_id=wf.pk, decision="approve", request_id=f"b-{n}"
            )
            workflow_decide(
                user=_user("bob"),
                workflow_id=live[-1].pk,
                decision="approve",
                request_id=f"bn-{n}",
            )
            workflow_cancel(
                user=_user("alice"), workflow_id=wf.pk, reason="withdrawn", request_id=f"c-{n}"
            )
    assert history_month(old[0].created_at) == month
    assert history_month(live[0].created_at) == after
    return month, old, live


def _pages(client: Any, limit: int, cursor: str | None = None, **filters: str) -> list[Any]:
    """Every page from ``cursor`` on: [(events, nextCursor), ...]."""
    pages = []
    while True:
        query = {"limit": str(limit), **filters, **({"cursor": cursor} if cursor else {})}
        response = client.get(f"/api/audit/events?{urlencode(query)}")
        assert response.status_code == 200, response.content
        body = response.json()
        pages.append((body["events"], body["nextCursor"]))
        cursor = body["nextCursor"]
        if cursor is None:
            return pages


def _plain(pages: list[Any]) -> list[Any]:
    """The pages without the ``archived`` field, each cursor as the event id it names
    (a cursor is signed with its time)."""
    return [
        (
            [{k: v for k, v in e.items() if k != "archived"} for e in events],
            _decode(cursor) if cursor else None,
        )
        for events, cursor in pages
    ]


def _flags(pages: list[Any]) -> list[bool]:
    return [e["archived"] for events, _ in pages for e in events]


@pytest.mark.django_db
def test_the_pages_are_the_same_before_and_after_archiving_and_restoring(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    api: Any,
) -> None:
    # given archived-to-be and live requests whose events interleave by id
    retention_set(tenant=acme, years=1, by="olga")
    month, old, live = _interleaved()
    seal_all()
    audrey = api("audrey")
    queries: list[dict[str, str]] = [
        {},
        {"template": "expense-approval"},
        {"subject": "OLD-1"},
        {"subject": "expense:NEW-2"},
        {"status": old[0].public_status},
        {"since": f"{month_add(month, 1)}"},
        {"until": f"{month_add(month, 2)}"},
    ]
    before = {(i, n): _pages(audrey, n, **q) for i, q in enumerate(queries) for n in (1, 2, 3, 50)}
    assert all(not any(_flags(p)) for p in before.values())
    old_ids = {str(w.pk) for w in old}
    every = [e for events, _ in before[(0, 50)] for e in events]
    # the archived-to-be events are not all before the live ones: they interleave
    owners = [e["workflow_id"] in old_ids for e in every]
    first_live_after = owners.index(False, owners.index(True))
    assert True in owners[first_live_after:]
    # a cursor taken mid-way, before the month goes
    mid = before[(0, 2)][len(before[(0, 2)]) // 2 - 1][1]
    rest_before = _pages(audrey, 2, cursor=mid)

    # when the month goes to the archive
    assert month_archive(month).dropped
    assert not WorkflowEvent.objects.filter(history_month=month).exists()

    # then every page is the one it was, apart from ``archived``, true on the archived
    after = {key: _pages(audrey, key[1], **queries[key[0]]) for key in before}
    for key, pages in before.items():
        assert _plain(after[key]) == _plain(pages), queries[key[0]]
    flags = _flags(after[(0, 1)])
    events = [e for events, _ in after[(0, 1)] for e in events]
    assert [e["workflow_id"] in old_ids for e in events] == flags
    assert sum(flags) == sum(owners) > 0
    # ... the pager crosses from archived to live and back within one page
    two = [tuple(e["archived"] for e in evs) for evs, _ in after[(0, 2)]]
    assert (True, False) in two and (False, True) in two
    # ... and the cursor taken while all was live goes on the same
    assert _plain(_pages(audrey, 2, cursor=mid)) == _plain(rest_before)
    mid_archived = after[(0, 3)][len(after[(0, 3)]) // 2 - 1][1]
    rest_archived = _pages(audrey, 3, cursor=mid_archived)
    assert _plain(rest_archived) == _plain(_pages(audrey, 3)[len(after[(0, 3)]) // 2 :])

    # when the month comes back, a cursor taken while archived goes on the same
    call_command("restore_archive", "--month", f"{month:%Y-%m}")
    restored = _pages(audrey, 3, cursor=mid_archived)
    assert _plain(restored) == _plain(rest_archived) and not any(_flags(restored))
    assert _plain(_pages(audrey, 1)) == _plain(before[(0, 1)])


@pytest.mark.django_db
def test_what_the_pages_cannot_answer_is_refused_in_words(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    api: Any,
) -> None:
    retention_set(tenant=acme, years=1, by="olga")
    month, old, live = _interleaved()
    seal_all()
    audrey = api("audrey")
    # a person filter pages while the history is live
    by_bob = _pages(audrey, 2, person="bob")
    assert by_bob[0][0]
    month_archive(month)

    # once there is archived history, it is refused in words, not answered in part
    response = audrey.get("/api/audit/events?person=bob")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "FILTER_NOT_PAGED" and error["message"] == PERSON_NOT_PAGED
    assert "export" in error["message"]
    # ... past the archived events it pages again (nothing archived after the cursor)
    last_ids = ArchivedWorkflow.objects.filter(tenant=acme).values_list("last_event_id", flat=True)
    last_archived = max(i for i in last_ids if i is not None)
    late = _start("LATE")  # alice's, after every archived event
    pages = _pages(audrey, 100, cursor=_encode(last_archived), person="alice")
    tail = [e for evs, _ in pages for e in evs]
    assert tail and {e["workflow_id"] for e in tail} == {str(late.pk)}
    assert not any(_flags(pages))

    # an index written before it kept the events' ids: refused in words until reindexed
    ArchivedWorkflow.objects.filter(tenant=acme).update(first_event_id=None, last_event_id=None)
    response = audrey.get("/api/audit/events")
    assert response.status_code == 503
    assert response.json()["error"]["message"] == INDEX_STALE
    call_command("index_archived")
    assert audrey.get("/api/audit/events").status_code == 200
    assert not ArchivedWorkflow.objects.filter(tenant=acme, first_event_id=None).exists()
