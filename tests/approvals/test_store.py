"""The command path's plain SQL (approvals/runtime/store.py): the values it binds are the
values the fields would save, and the statements go through Django's cursor whenever
something watches them."""

from __future__ import annotations

import datetime as dt
import uuid
import zoneinfo

import pytest
from django.db import IntegrityError, connection
from django.db.models import Field, ProtectedError
from django.test.utils import CaptureQueriesContext

from approvals.models import (
    OrgGroup,
    PendingTask,
    Tenant,
    Timer,
    Workflow,
    WorkflowEvent,
    WorkflowParticipant,
    WorkflowTemplate,
)
from approvals.notifications.models import MailMessage
from approvals.runtime import store

from .helpers import start_expense

pytestmark = pytest.mark.django_db

AWARE = dt.datetime(2026, 3, 1, 9, 30, tzinfo=zoneinfo.ZoneInfo("Asia/Kolkata"))
NAIVE = dt.datetime(2026, 3, 1, 9, 30)


def field(model: type, name: str) -> Field:  # type: ignore[type-arg]
    return model._meta.get_field(name)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("model", "name", "value"),
    [
        (PendingTask, "due_at", AWARE),
        (PendingTask, "step", "manager"),
        (PendingTask, "step", 12),  # not a str: the field converts it
        (PendingTask, "assignee", 7),
        (PendingTask, "assignee", "7"),
        (Timer, "fired_at", None),
        (Timer, "key", "deadline:manager"),
        (WorkflowEvent, "seq", 3),
        (WorkflowEvent, "seq", True),  # a bool is not an int here
        (WorkflowEvent, "on_behalf_of", None),
        (WorkflowEvent, "request_id", None),
        (Workflow, "id", uuid.UUID(int=5)),
        (Workflow, "id", str(uuid.UUID(int=5))),
        (Workflow, "subject_exclusive", False),
        (MailMessage, "digest", True),
    ],
)
def test_a_value_is_bound_as_its_field_would_save_it(model, name, value) -> None:
    f = field(model, name)
    [bound] = store._prep(store._plan(model, (name,), False), [value], connection)
    saved = f.get_db_prep_save(value, connection)
    assert (type(bound), bound) == (type(saved), saved)


def test_a_naive_datetime_and_json_still_go_through_their_fields() -> None:
    due = store._plan(PendingTask, ("due_at",), False)
    payload = store._plan(WorkflowEvent, ("payload",), False)
    with pytest.warns(RuntimeWarning, match="naive datetime"):
        [naive] = store._prep(due, [NAIVE], connection)
    assert naive.tzinfo is not None  # made aware by the field, not passed raw
    [doc] = store._prep(payload, [{"a": 1}], connection)
    assert doc is not None and not isinstance(doc, dict)  # adapted for the JSON column


def test_statements_are_logged_when_django_watches_and_errors_are_djangos(acme, api) -> None:
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    sql = f"SELECT count(*) FROM {store.table(PendingTask)} WHERE workflow_id = %s"
    with CaptureQueriesContext(connection) as watched:
        assert store.fetch(sql, [uuid.UUID(wid)]) == [(1,)]
    assert [q["sql"] for q in watched.captured_queries if "count(*)" in q["sql"]]

    assert not connection.queries_logged
    assert store.fetch(sql, [uuid.UUID(wid)]) == [(1,)]  # psycopg's cursor, same answer
    task = PendingTask.objects.get(workflow_id=wid)
    with pytest.raises(IntegrityError):  # Django's, so the command path's retry sees it
        store.insert(
            PendingTask,
            ("tenant", "assignee", "workflow", "step", "on_behalf_of", "due_at", "created_at"),
            [(task.tenant_id, task.assignee_id, task.workflow_id, task.step, "", AWARE, AWARE)],
        )


# Tables every command writes, and the rows every command of a tenant shares.
COMMAND_TABLES = [
    Workflow,
    WorkflowEvent,
    PendingTask,
    Timer,
    MailMessage,
    WorkflowParticipant,
]


def test_no_row_a_command_writes_is_checked_against_a_shared_row() -> None:
    # A constraint's check locks the tenant's (or the template's) one row in every
    # command's transaction; see approvals.models.workflows.shared_row.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint"
            " WHERE contype = 'f' AND conrelid::regclass::text = ANY(%s)",
            [[m._meta.db_table for m in COMMAND_TABLES]],
        )
        references = {(table, target) for table, target in cursor.fetchall()}
    shared = {Tenant._meta.db_table, WorkflowTemplate._meta.db_table}
    assert not {(t, target) for t, target in references if target in shared}
    # The rest are still checked: the event's workflow and actor, the task's assignee.
    assert ("approvals_workflowevent", "approvals_workflow") in references
    assert ("approvals_workflowevent", "approvals_user") in references
    assert ("approvals_pendingtask", "approvals_user") in references


def test_django_still_refuses_to_delete_a_shared_row_in_use(acme, api) -> None:
    start_expense(api("alice"), 4_500_000)
    template = WorkflowTemplate.objects.get(tenant=acme, key="expense-approval")
    with pytest.raises(ProtectedError):
        template.delete()
    with pytest.raises(ProtectedError):
        Tenant.objects.get(pk=acme.pk).delete()
    assert Workflow.objects.filter(template=template).count() == 1


def test_a_statement_with_many_parameters_is_parsed_once() -> None:
    """psycopg keeps its parse of a statement's marks only up to a number of parameters;
    appending four events binds 56, so the store raises that number."""
    from psycopg import _queries

    marks = store.PSYCOPG_CACHED_PARAMS
    sql = "SELECT " + " + ".join(["%s"] * 60)
    with store.pipelined():
        assert store.fetch(sql, list(range(60))) == [(sum(range(60)),)]
    before = _queries._query2pg.cache_info()
    with store.pipelined():
        assert store.fetch(sql, [1] * 60) == [(60,)]
    after = _queries._query2pg.cache_info()
    assert after.hits > before.hits and after.misses == before.misses
    assert _queries.MAX_CACHED_STATEMENT_PARAMS >= marks > 56


@pytest.mark.django_db(transaction=True)
def test_a_command_after_the_server_dropped_the_connection_checks_it_and_reconnects(
    acme,
) -> None:
    """The direct path does what Django's cursor does first: a request's first statement
    checks a kept connection (CONN_HEALTH_CHECKS), so a connection the server dropped
    (a restart, an idle timeout) is replaced rather than failing the command."""
    assert connection.health_check_enabled  # CONN_HEALTH_CHECKS, on by default

    assert start("hc-before") == "PENDING_MANAGER"
    raw = connection.connection
    assert raw is not None
    terminate(raw.info.backend_pid)
    connection.health_check_done = False  # a new request, as close_old_connections leaves it
    assert start("hc-after") == "PENDING_MANAGER"
    assert connection.connection is not raw
    assert Workflow.objects.filter(subject_id__in=["hc-before", "hc-after"]).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_connection_lost_inside_a_command_is_replaced_for_the_next_one(acme) -> None:
    """The server drops the connection in the middle of a pipelined command: the command
    fails with Django's error, and the next one gets a new connection instead of meeting
    the dead one for ever (a scheduler loop did, after a PostgreSQL restart)."""
    from django.db import OperationalError

    assert start("lost-before") == "PENDING_MANAGER"
    raw = connection.connection
    assert raw is not None
    with pytest.raises(OperationalError), store.pipelined():
        terminate(raw.info.backend_pid)
        store.fetch("SELECT 1", [])
    assert not connection.in_atomic_block
    assert start("lost-after") == "PENDING_MANAGER"
    assert connection.connection is not raw
    assert Workflow.objects.filter(subject_id__startswith="lost-").count() == 2


def start(subject: str) -> str:
    """Alice's expense of ₹45,000 started in-process; its status."""
    from approvals.models import User
    from approvals.services.workflows import workflow_start

    return workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id=subject,
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    ).status


def terminate(backend_pid: int) -> None:
    """End a server process from a connection of its own, as a restart would."""
    import psycopg

    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"] or "127.0.0.1", port=s["PORT"] or 5432, user=s["USER"], dbname=s["NAME"]
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [backend_pid])


@pytest.mark.django_db(transaction=True)
def test_gathered_writes_wait_for_the_blocks_end_and_go_with_a_failure(acme) -> None:
    names = ("tenant", "key", "name")
    with store.pipelined(), store.gathered_writes():
        store.insert(OrgGroup, names, [(acme.pk, "g-1", "One")])
        store.insert(OrgGroup, names, [(acme.pk, "g-2", "Two")])
        # not yet sent: the block's own reads do not see them
        seen = f"SELECT count(*) FROM {store.table(OrgGroup)} WHERE key LIKE %s"
        assert store.fetch(seen, ["g-%"]) == [(0,)]
    assert set(OrgGroup.objects.filter(key__startswith="g-").values_list("name", flat=True)) == {
        "One",
        "Two",
    }

    with pytest.raises(RuntimeError), store.pipelined(), store.gathered_writes():
        store.insert(OrgGroup, names, [(acme.pk, "g-3", "Three")])
        raise RuntimeError("refused")
    assert not OrgGroup.objects.filter(key="g-3").exists()


@pytest.mark.django_db(transaction=True)
def test_gathered_updates_go_in_one_statement_each_row_its_own_values(acme) -> None:
    a, b = (OrgGroup.objects.create(tenant=acme, key=k, name=k) for k in ("u-1", "u-2"))
    with CaptureQueriesContext(connection) as sent, store.pipelined(), store.gathered_writes():
        store.update(OrgGroup, a.pk, {"name": "Finance", "key": "finance-2"})
        store.update(OrgGroup, b.pk, {"name": "Legal", "key": "legal-2"})
    updates = [q["sql"] for q in sent.captured_queries if q["sql"].startswith("UPDATE")]
    assert len(updates) == 1
    rows = OrgGroup.objects.filter(pk__in=[a.pk, b.pk]).order_by("pk")
    assert list(rows.values_list("key", "name")) == [("finance-2", "Finance"), ("legal-2", "Legal")]


def test_a_row_read_without_an_instance_is_converted_as_the_orm_converts_it(acme, api) -> None:
    # store.values: the JSON column is decoded (a converter on every backend), the
    # others come as the driver gives them, and both equal what the ORM reads.
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    names = ("id", "data", "created_at", "version")
    sql = (
        f"SELECT {store.columns(Workflow, 'w', names)} FROM {store.table(Workflow)} w WHERE id = %s"
    )
    [row] = store.fetch(sql, [store.uuid_param(Workflow, uuid.UUID(wid))])
    got = store.values(Workflow, row, names)
    wf = Workflow.objects.get(pk=wid)
    assert list(got) == [wf.pk, wf.data, wf.created_at, wf.version]
    assert isinstance(got[1], dict) and got[2].tzinfo is dt.UTC
    assert store.converter(Workflow, ("version",)) is store.converter(Workflow, ("version",))
    assert store.values(Workflow, (7,), ("version",)) == (7,)  # nothing to convert: as is
