"""The command path finds a workflow, its step visits, pending tasks and timers by the
workflow's key for an organisation the planner's statistics have not seen (migration
0044).

An organisation that had no rows at the last ANALYZE is estimated at none: under its
policy (``tenant_id = <the organisation>``) an index that starts with the tenant looks
free, and a statement by workflow walked all of the organisation's rows in one, keeping
those of the workflow by a filter. Here the statistics are taken while the new
organisation is empty, then it is given thousands of requests without another ANALYZE,
and the statements a decision runs are explained as they run: acting for it.

The check for a repeated request id reads the workflow's events: the statement names
no tenant, but the policy's ``tenant_id = current_setting(...)`` was estimated with the
setting's value, so it met the same zero and walked the month partition's index on the
tenant alone, until the events' policy named the tenant through a subquery (migration
0045).

Not held here (SCALE.md): the lookups by workflow and person (a task by assignee, a
participant by user), which an index on the person alone can still win for a person the
statistics have not seen.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, transaction

from approvals.models import Tenant, User
from approvals.runtime import commands, tenant_scope
from approvals.runtime.commands import WorkflowNotFound
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_decide, workflow_start

from ..helpers import EXPENSE, REMINDING

pytestmark = [
    pytest.mark.django_db,
]

# A workflow's rows in the tables the command path writes; each copied with the workflow.
WORKFLOW_ROWS = (
    "approvals_workflow",
    "approvals_pendingtask",
    "approvals_workflowparticipant",
    "approvals_stepvisit",
    "approvals_timer",
    "approvals_workflowevent",
)
# The tables whose lookups must have the workflow's key as an index condition: the
# column, as the plan names it.
KEYS = {
    "approvals_workflow": re.compile(r"\bid = "),
    "approvals_stepvisit": re.compile(r"\bid = "),
    "approvals_pendingtask": re.compile(r"\bworkflow_id = "),
    "approvals_timer": re.compile(r"\bworkflow_id = "),
}
COPIES = 2_000


def _rows(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return list(cursor.fetchall()) if cursor.description else []


def _copy_workflow(workflow_id: Any, copies: int) -> None:
    """``copies`` more workflows like ``workflow_id``, each with its rows in every table
    of ``WORKFLOW_ROWS`` (new ids derived from the old and the copy's number)."""
    for table in WORKFLOW_ROWS:
        key = "id" if table == "approvals_workflow" else "workflow_id"
        columns = _rows(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
            " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
            " AND attgenerated = '' ORDER BY attnum",
            [table],
        )
        names, values = [], []
        for name, kind in columns:
            if name == "id" and kind != "uuid":
                continue  # a sequence's
            names.append(f'"{name}"')
            if kind == "uuid":
                values.append(f'md5("{name}"::text || n)::uuid')
            elif name == "subject_id":
                values.append("subject_id || '-' || n")
            else:
                values.append(f'"{name}"')
        _rows(
            f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(values)}"  # noqa: S608
            f" FROM {table}, generate_series(1, %s) n WHERE {key} = %s",
            [copies, workflow_id],
        )


def _analyze() -> None:
    for table in WORKFLOW_ROWS:
        _rows(f"ANALYZE {table}")


def _reminding(submitter: User, subject: str) -> Any:
    """A request of ``REMINDING``: a task for the submitter's manager, and its reminder."""
    key = str(REMINDING["key"])
    return workflow_start(
        submitter=submitter, template_key=key, subject_type="po", subject_id=subject, data={}
    )


@pytest.fixture
def grown(acme: Any) -> dict[str, Any]:
    """Acme with thousands of requests in the statistics; Newco, empty when they were
    taken, with as many requests since (its tasks, timers, participants)."""
    alice = User.objects.get(username="alice")
    data = {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"}
    seed = workflow_start(
        submitter=alice, template_key=EXPENSE, subject_type="expense", subject_id="R", data=data
    )
    _copy_workflow(seed.workflow_id, COPIES)
    newco = Tenant.objects.create(slug="newco", name="Newco")
    nate = User.objects.create_user("nate", password="pw", tenant=newco)
    nina = User.objects.create_user("nina", password="pw", tenant=newco, manager=nate)
    workflow_template_publish(tenant=newco, definition=REMINDING)  # nina's manager, reminded
    _analyze()
    _copy_workflow(_reminding(nina, "P").workflow_id, COPIES)
    return {"newco": newco, "nina": nina, "nate": nate}


INDEX_TABLES = "SELECT indexrelid::regclass::text, indrelid::regclass::text FROM pg_index"
SCANS = ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Index Scan")


def _scans(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if node["Node Type"] in SCANS:
        yield node
    for child in node.get("Plans", []):
        yield from _scans(child)


def _walks(sql: str, params: Any, tenant_id: int) -> list[str]:
    """The scans of the ``KEYS`` tables in the plan of ``sql`` acting for the tenant
    whose index conditions do not name the key (each as the plan says it)."""
    with transaction.atomic(), tenant_scope.acting_for(tenant_id):
        ((plan,),) = _rows("EXPLAIN (FORMAT JSON) " + sql, params)
    tables = dict(_rows(INDEX_TABLES))
    walks = []
    for node in _scans(plan[0]["Plan"]):
        table = node.get("Relation Name") or tables.get(node.get("Index Name", ""))
        if table not in KEYS:
            continue
        if not KEYS[table].search(node.get("Index Cond", "")):
            walks.append(
                f"{node['Node Type']} on {table} using {node.get('Index Name')}:"
                f" index cond {node.get('Index Cond')}, filter {node.get('Filter')}"
            )
    return walks


def test_a_decision_of_a_new_organisation_finds_its_rows_by_the_workflows_key(
    grown: dict[str, Any],
) -> None:
    newco, nina, nate = grown["newco"], grown["nina"], grown["nate"]
    # grown since the statistics were taken, which still take it for empty
    counts = dict(_rows("SELECT tenant_id, count(*) FROM approvals_pendingtask GROUP BY 1"))
    assert counts[newco.pk] > COPIES
    # (the policies name the tenant through a subquery since migration 0121, as the
    # events' did since 0045, so the statistics are asked with the tenant written out)
    ((plan,),) = _rows(
        "EXPLAIN (FORMAT JSON) SELECT * FROM approvals_pendingtask WHERE tenant_id = %s",
        [newco.pk],
    )
    assert plan[0]["Plan"]["Plan Rows"] <= 1
    started = _reminding(nina, "P-new")
    statements: list[tuple[str, Any]] = []

    def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        workflow_decide(
            user=nate, workflow_id=started.workflow_id, decision="approve", request_id="d1"
        )

    by_key = [
        (sql, params)
        for sql, params in statements
        if any(table in sql for table in KEYS) and not sql.lstrip().upper().startswith("INSERT")
    ]
    # the lock (with its question whether the actor stands in for an assignee), the
    # tasks of the step left, the reminder's timer, the visit closed
    assert any("FOR UPDATE" in s for s, _ in by_key)
    assert any(s.startswith("DELETE FROM") and "pendingtask" in s for s, _ in by_key)
    assert any(s.startswith("DELETE FROM") and "timer" in s for s, _ in by_key)
    assert any("UPDATE" in s and "approvals_stepvisit" in s for s, _ in by_key)
    walks = [(sql[:160], _walks(sql, params, newco.pk)) for sql, params in by_key]
    assert [(sql, found) for sql, found in walks if found] == []


def test_a_fired_timer_is_found_by_its_workflow_and_key(grown: dict[str, Any]) -> None:
    """The command path's other statement by workflow (runtime.projections): a timer
    marked fired."""
    newco, nina = grown["newco"], grown["nina"]
    started = _reminding(nina, "P-new")
    wid = str(started.workflow_id)
    ((key,),) = _rows("SELECT key FROM approvals_timer WHERE workflow_id = %s", [wid])
    fired = (
        "UPDATE approvals_timer SET fired_at = now() WHERE workflow_id = %s"
        " AND fired_at IS NULL AND key IN (%s)"
    )
    assert _walks(fired, [wid, key], newco.pk) == []


def test_a_repeated_request_id_is_looked_up_by_workflow_and_request_id(
    grown: dict[str, Any],
) -> None:
    """The check whether a command's request id was already recorded on the workflow,
    acting for an organisation the statistics take for empty: the month's partition is
    read by workflow and request id, not along the organisation's events."""
    newco, nina, nate = grown["newco"], grown["nina"], grown["nate"]
    started = _reminding(nina, "P-new")
    wid = str(started.workflow_id)
    workflow_decide(user=nate, workflow_id=wid, decision="approve", request_id="d1")
    # the organisation's events, none of them in the statistics
    mine = _rows("SELECT count(*) FROM approvals_workflowevent WHERE tenant_id = %s", [newco.pk])
    assert mine[0][0] > COPIES
    recorded = commands._RECORDED_SQL
    params = [wid, "d1", wid]
    ((partition,),) = _rows(
        "SELECT DISTINCT tableoid::regclass::text FROM approvals_workflowevent"
        " WHERE workflow_id = %s",
        [wid],
    )
    with transaction.atomic(), tenant_scope.acting_for(newco.pk):
        ((plan,),) = _rows("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + recorded, params)
        assert _rows(recorded, [wid, "d2", wid]) == []
    (scan,) = [n for n in _scans(plan[0]["Plan"]) if n.get("Relation Name") == partition]
    condition = scan.get("Index Cond", "")
    assert "workflow_id = " in condition and "request_id" in condition, scan
    assert scan["Actual Rows"] == 1
    assert scan["Actual Rows"] + scan.get("Rows Removed by Filter", 0) == 1


@pytest.mark.parametrize("row_level_security", [True, False])
def test_another_organisations_request_id_is_not_matched(
    grown: dict[str, Any], settings: Any, row_level_security: bool
) -> None:
    """The check names no tenant: the workflow does. Another organisation's member who
    repeats the request id on the workflow learns nothing of it and changes nothing,
    with the policies and without them (the lock asks for the tenant's workflow)."""
    newco, nina, nate = grown["newco"], grown["nina"], grown["nate"]
    wid = str(_reminding(nina, "P-new").workflow_id)
    workflow_decide(user=nate, workflow_id=wid, decision="approve", request_id="d1")
    settings.APPROVALS_ROW_LEVEL_SECURITY = row_level_security
    alice = User.objects.get(username="alice")
    acme = alice.tenant_id
    assert acme is not None and acme != newco.pk
    before = _rows("SELECT version FROM approvals_workflow WHERE id = %s", [wid])
    with pytest.raises(WorkflowNotFound):
        workflow_decide(user=alice, workflow_id=wid, decision="approve", request_id="d1")
    assert _rows("SELECT version FROM approvals_workflow WHERE id = %s", [wid]) == before
    recorded = commands._RECORDED_SQL
    with transaction.atomic(), tenant_scope.acting_for(acme):
        found = _rows(recorded, [wid, "d1", wid])
    # without the policies the event is there to read: the lock refused the command first
    assert len(found) == (0 if row_level_security else 1)
