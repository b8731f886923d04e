"""The indexes of the tables every command writes, and the reads that need them.

Each index of these tables is written on every insert of a row it holds (a decision
writes about 70 entries), so the set is pinned here: an index added or changed is a
decision, made with the read that needs it. The partial indexes of the events
(migration 0230) hold only the rows that name what they index; the lookups that need
them (a repeated request id, a person's deletion refused for the events that name them)
still take them, and the keys still hold. The tables without an index led by the tenant
(timers, mails since migration 0231 and notifications 0008) still read an organisation's
timers by an index."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError

from approvals.models import User, WorkflowEvent
from approvals.runtime import commands
from approvals.services.workflows import workflow_decide

from .helpers import start_expense

pytestmark = pytest.mark.django_db

ACTIVE = (
    "(((status)::text = ANY ((ARRAY['NEW'::character varying, 'RUNNING'::character varying,"
    " 'COMPENSATING'::character varying])::text[])) AND subject_exclusive)"
)
INDEXES = {
    "approvals_workflow": {
        "approvals_w_tenant__570449_idx": "btree (tenant_id, status, created_at DESC)",
        "approvals_w_tenant__8d9062_idx": "btree (tenant_id, submitter_id, created_at DESC)",
        "approvals_w_tenant__e69967_idx": "btree (tenant_id, template_key, created_at DESC)",
        "approvals_workflow_pkey": "UNIQUE btree (id)",
        "approvals_workflow_submitter_id_8cd1822b": "btree (submitter_id)",
        "workflow_newest": "btree (tenant_id, created_at DESC)",
        "workflow_search_words": "gin (search_words)",
        "workflow_subject": "btree (tenant_id, subject_type, subject_id, template_key, created_at)",
        "workflow_subject_running": "UNIQUE btree (tenant_id, template_key, subject_type,"
        f" subject_id) WHERE {ACTIVE}",
        "workflow_tenant_id": "btree (tenant_id, id)",
    },
    "approvals_workflowevent": {
        "approvals_workflowevent_pkey": "UNIQUE btree (id, history_month)",
        "approvals_workflowevent_tenant_id_08665c97": "btree (tenant_id)",
        "event_actor": "btree (actor_id) WHERE (actor_id IS NOT NULL)",
        "event_comments": "btree (tenant_id, created_at DESC)"
        " WHERE ((type)::text = 'CommentAdded'::text)",
        "event_on_behalf_of": "btree (on_behalf_of_id) WHERE (on_behalf_of_id IS NOT NULL)",
        "event_request_id": "UNIQUE btree (workflow_id, request_id, history_month, tenant_id)"
        " WHERE (request_id IS NOT NULL)",
        "event_seq": "UNIQUE btree (workflow_id, seq, history_month, tenant_id)",
    },
    "approvals_pendingtask": {
        "approvals_pendingtask_pkey": "UNIQUE btree (id)",
        "task_inbox": "btree (tenant_id, assignee_id, due_at, id)",
        "task_inbox_amount": "btree (tenant_id, assignee_id, amount_minor DESC NULLS LAST,"
        " due_at, id)",
        "task_inbox_kind": "btree (tenant_id, assignee_id, template_key, due_at, id)",
        "task_inbox_requester": "btree (tenant_id, assignee_id, requester_key, due_at, id)",
        "task_inbox_waiting": "btree (tenant_id, assignee_id, created_at, id)",
        "task_unique": "UNIQUE btree (workflow_id, step, assignee_id, tenant_id)",
        "task_workflow": "btree (tenant_id, workflow_id, assignee_id)",
    },
    "approvals_stepvisit": {
        "approvals_stepvisit_pkey": "UNIQUE btree (id)",
        "visit_open": "btree (tenant_id, entered_at) WHERE (left_at IS NULL)",
        "visit_period": "btree (tenant_id, template_key, entered_at)",
        "visit_tenant_id": "btree (tenant_id, id)",
        "visit_tenant_period": "btree (tenant_id, entered_at)",
        "visit_uncounted": "btree (tenant_id, entered_at) WHERE (NOT counted)",
        "visit_unique": "UNIQUE btree (tenant_id, workflow_id, entry)",
    },
    "approvals_workflowparticipant": {
        "approvals_workflowparticipant_pkey": "UNIQUE btree (id)",
        "approvals_workflowparticipant_user_id_c870cb30": "btree (user_id)",
        "participant_unique": "UNIQUE btree (workflow_id, user_id, tenant_id)",
        "participant_user": "btree (tenant_id, user_id, workflow_id)",
    },
    "approvals_timer": {
        "approvals_timer_pkey": "UNIQUE btree (id)",
        "timer_due": "btree (fire_at) WHERE (fired_at IS NULL)",
        "timer_key": "UNIQUE btree (workflow_id, key, tenant_id)",
    },
    "notifications_mailmessage": {
        "mail_digest_due": "btree (recipient_id, created_at)"
        " WHERE (digest AND ((status)::text = 'pending'::text))",
        "mail_due": "btree (next_attempt_at)"
        " WHERE ((NOT digest) AND ((status)::text = 'pending'::text))",
        "mail_event_recipient": "UNIQUE btree (workflow_id, event_seq, recipient_id)",
        "mail_message_id": "UNIQUE btree (message_id)",
        "notifications_mailmessage_pkey": "UNIQUE btree (id)",
        "notifications_mailmessage_recipient_id_0add38e0": "btree (recipient_id)",
    },
}


def _rows(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return list(cursor.fetchall()) if cursor.description else []


def _indexes(table: str) -> dict[str, str]:
    return dict(
        _rows(
            "SELECT i.indexrelid::regclass::text,"
            " CASE WHEN i.indisunique THEN 'UNIQUE ' ELSE '' END"
            " || regexp_replace(pg_get_indexdef(i.indexrelid), '^.* USING ', '')"
            " FROM pg_index i WHERE i.indrelid = %s::regclass",
            [table],
        )
    )


@pytest.mark.parametrize("table", sorted(INDEXES))
def test_the_tables_a_command_writes_have_exactly_these_indexes(table: str) -> None:
    assert _indexes(table) == INDEXES[table]


def test_every_event_partition_has_the_parents_indexes_and_no_other() -> None:
    parents = _rows(
        "SELECT indexrelid::regclass::text FROM pg_index"
        " WHERE indrelid = 'approvals_workflowevent'::regclass"
    )
    partitions = _rows(
        "SELECT inhrelid::regclass::text FROM pg_inherits"
        " WHERE inhparent = 'approvals_workflowevent'::regclass"
    )
    assert partitions
    for (partition,) in partitions:
        attached = {
            parent
            for (parent,) in _rows(
                "SELECT h.inhparent::regclass::text FROM pg_index i"
                " JOIN pg_inherits h ON h.inhrelid = i.indexrelid"
                " WHERE i.indrelid = %s::regclass",
                [partition],
            )
        }
        assert attached == {p for (p,) in parents}
        assert len(_indexes(partition)) == len(parents)


def _scans(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if "Index Name" in node or node["Node Type"] == "Seq Scan":
        yield node
    for child in node.get("Plans", []):
        yield from _scans(child)


def _indexes_taken(sql: str, params: list[Any]) -> set[str]:
    """The indexes a plan of ``sql`` reads (of the parent, for a partition's), with
    sequential scans off: whether an index serves it at all, whatever the tables' size
    in a test. A sequential scan left in the plan is named ``Seq Scan``."""
    parents = dict(
        _rows(
            "SELECT inhrelid::regclass::text, inhparent::regclass::text FROM pg_inherits"
            " JOIN pg_class c ON c.oid = inhrelid WHERE c.relkind = 'i'"
        )
    )
    with transaction.atomic():
        _rows("SET LOCAL enable_seqscan = off")
        ((plan,),) = _rows("EXPLAIN (FORMAT JSON) " + sql, params)
    return {
        parents.get(n["Index Name"], n["Index Name"]) if "Index Name" in n else "Seq Scan"
        for n in _scans(plan[0]["Plan"])
    }


def _generic(sql: str) -> str:
    """``sql`` as a foreign key's check runs it: a generic plan, the value a parameter."""
    return sql.replace("%s", "$1")


@pytest.fixture
def decided(acme: Any, api: Any) -> dict[str, Any]:
    """A decision with a request id, and an event naming a person on whose behalf it was
    written (a copy of the decision's, as a delegate's would be)."""
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    bob = User.objects.get(username="bob")
    workflow_decide(user=bob, workflow_id=wid, decision="approve", request_id="r-1")
    carol = User.objects.create_user("carol-principal", password="pw", tenant=acme)
    _rows(
        "INSERT INTO approvals_workflowevent (tenant_id, workflow_id, seq, type,"
        " schema_version, payload, actor_id, role, on_behalf_of_id, created_at, prev_hash,"
        " hash, history_month)"
        " SELECT tenant_id, workflow_id, seq + 1000, type, schema_version, payload, actor_id,"
        " role, %s, created_at, prev_hash, hash, history_month FROM approvals_workflowevent"
        " WHERE workflow_id = %s AND request_id = 'r-1'",
        [carol.pk, wid],
    )
    return {"workflow_id": wid, "bob": bob, "carol": carol}


def test_the_repeated_request_check_reads_the_request_ids_index(decided: dict[str, Any]):
    """The command path's check (``commands._RECORDED_SQL``) and the API's lookup of a
    repeated decision's events."""
    wid = decided["workflow_id"]
    assert len(_rows(commands._RECORDED_SQL, [wid, "r-1", wid])) == 1
    found = WorkflowEvent.objects.filter(workflow_id=wid, request_id="r-1").order_by()
    sql, params = found.query.sql_with_params()

    assert _indexes_taken(commands._RECORDED_SQL, [wid, "r-1", wid]) == {
        "event_request_id",
        "approvals_workflow_pkey",
    }
    assert _indexes_taken(sql, list(params)) == {"event_request_id"}


def test_a_request_id_is_still_unique_in_its_workflow(decided: dict[str, Any]):
    wid = decided["workflow_id"]
    copy = (
        "INSERT INTO approvals_workflowevent (tenant_id, workflow_id, seq, type,"
        " schema_version, payload, request_id, role, created_at, prev_hash, hash,"
        " history_month) SELECT tenant_id, workflow_id, seq + 2000, type, schema_version,"
        " payload, %s, role, created_at, prev_hash, hash, history_month"
        " FROM approvals_workflowevent WHERE workflow_id = %s AND request_id = 'r-1'"
    )
    # events without a request id are many in a workflow
    _rows(copy, [None, wid])
    assert WorkflowEvent.objects.filter(workflow_id=wid, request_id__isnull=True).count() > 1
    with pytest.raises(IntegrityError), transaction.atomic():
        _rows(copy, ["r-1", wid])


@pytest.mark.parametrize("column", ["actor_id", "on_behalf_of_id"])
def test_a_persons_events_are_found_by_an_index(decided: dict[str, Any], column: str):
    """What deleting a person asks of the events (Django's ``PROTECT`` and the foreign
    key's check), as a generic plan: the partial index serves ``column = $1``."""
    sql = _generic(f"SELECT 1 FROM approvals_workflowevent WHERE {column} = %s")
    with transaction.atomic():
        _rows("SET LOCAL plan_cache_mode = force_generic_plan")
        _rows(f"PREPARE person_events(bigint) AS {sql}")
        try:
            taken = _indexes_taken("EXECUTE person_events(%s)", [decided["carol"].pk])
        finally:
            _rows("DEALLOCATE person_events")
    name = {"actor_id": "event_actor", "on_behalf_of_id": "event_on_behalf_of"}[column]

    assert taken == {name}


@pytest.mark.parametrize("person", ["bob", "carol"])
def test_a_person_an_event_names_cannot_be_deleted(decided: dict[str, Any], person: str):
    """bob decided (the actor), carol is named by an event written on her behalf."""
    user = decided[person]
    with pytest.raises(ProtectedError), transaction.atomic():
        User.objects.get(pk=user.pk).delete()
    assert User.objects.filter(pk=user.pk).exists()


def test_the_foreign_key_refuses_to_delete_a_person_an_event_names(decided: dict[str, Any]):
    """Past Django: carol, named by one event only, by the foreign key's own check."""
    carol = decided["carol"]
    with pytest.raises(IntegrityError, match="approvals_workflowevent"), transaction.atomic():
        _rows("SET CONSTRAINTS ALL IMMEDIATE")
        _rows("DELETE FROM approvals_user WHERE id = %s", [carol.pk])
    assert User.objects.filter(pk=carol.pk).exists()


def test_an_organisations_parked_timers_are_read_in_the_timers_still_to_fire(acme: Any):
    """The attention page's timers that failed too often, of one organisation: with no
    index led by the tenant, the index of the timers still to fire. On a test's handful
    of rows the planner may as well walk the unique key (workflow, key, tenant) and filter
    by the tenant, which at any size reads every timer's entry, so the key is set aside
    inside this test's transaction (rolled back)."""
    _rows("ALTER TABLE approvals_timer DROP CONSTRAINT timer_key")
    sql = (
        "SELECT id FROM approvals_timer WHERE tenant_id = %s AND dead_at IS NOT NULL"
        " AND fired_at IS NULL ORDER BY dead_at LIMIT 20"
    )
    assert _indexes_taken(sql, [acme.pk]) == {"timer_due"}


def test_the_command_paths_timer_statements_read_the_timers_key(acme: Any):
    """The key serves them. On a test's handful of rows the planner may as well walk the
    index of the timers still to fire (``timer_due``), whose rows these statements also
    want, so that index is set aside inside this test's transaction (rolled back)."""
    _rows("DROP INDEX timer_due")
    for sql in (
        "UPDATE approvals_timer SET fired_at = now() WHERE workflow_id = %s"
        " AND fired_at IS NULL AND key IN ('a', 'b') AND tenant_id = %s",
        "DELETE FROM approvals_timer WHERE workflow_id = %s AND fired_at IS NULL"
        " AND tenant_id = %s",
    ):
        taken = _indexes_taken(sql, ["00000000-0000-0000-0000-000000000001", acme.pk])
        assert taken == {"timer_key"}


def test_a_persons_open_tasks_are_read_by_an_index_on_the_tenant_and_the_person(
    acme: Any, api: Any
):
    """With no index on the assignee alone (migration 0232), the reads of a person's
    tasks name the tenant, and an index led by the tenant takes the person as an index
    condition (on a filled table the inbox's, which go on with the person): a leaver's
    hand-over (``directory._open_tasks_of``) and a delegation's check."""
    from approvals.models import PendingTask

    start_expense(api("alice"), 4_500_000)
    bob = User.objects.get(username="bob")
    alice = User.objects.get(username="alice")
    leaver = PendingTask.objects.filter(tenant_id=bob.tenant_id, assignee=bob).order_by(
        "workflow_id"
    )
    delegation = PendingTask.objects.filter(
        tenant_id=bob.tenant_id, assignee=bob, workflow__submitter=alice
    )
    assert leaver.exists()
    assert delegation.exists()
    for qs in (leaver, delegation):
        sql, params = qs.query.sql_with_params()
        with transaction.atomic():
            _rows("SET LOCAL enable_seqscan = off")
            ((plan,),) = _rows("EXPLAIN (FORMAT JSON) " + sql, list(params))
        tasks = [
            n for n in _scans(plan[0]["Plan"]) if n.get("Relation Name") == "approvals_pendingtask"
        ]
        assert tasks
        for node in tasks:
            assert node["Node Type"] != "Seq Scan", node
            assert "tenant_id = " in node["Index Cond"], node
            assert "assignee_id = " in node["Index Cond"], node
