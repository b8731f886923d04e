"""Workflow events partitioned by the month their workflow started (PostgreSQL): a
workflow's history sits in one partition, the reads of one workflow prune to it (the
plans below), the append-only and uniqueness guarantees hold on the partitioned table,
and the periodic job creates the coming months' partitions."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import IntegrityError, ProgrammingError, connection, transaction

from approvals import clock
from approvals.models import Tenant, User, Workflow, WorkflowEvent, history_month
from approvals.runtime.commands import _RECORDED_SQL
from approvals.runtime.partitions import (
    TENANT_STATISTICS,
    history_default_rows,
    history_partitions,
    history_partitions_ensure,
    partition_name,
)
from approvals.services.workflows import workflow_decide, workflow_start

pytestmark = [
    pytest.mark.django_db,
]


def _expense(subject: str) -> Workflow:
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id=subject,
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    return Workflow.objects.get(pk=started.workflow_id)


def _plan(sql: str, params: list[Any]) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def _partitions_scanned(plan: str) -> set[str]:
    """The partitions a plan reads (those with loops; never-executed ones are pruned)."""
    scanned = set()
    for line in plan.splitlines():
        if " on approvals_workflowevent_" in line and "never executed" not in line:
            name = line.split(" on ", 1)[1].split()[0]
            scanned.add(name)
    return scanned


def test_a_workflows_events_are_in_the_partition_of_the_month_it_started(acme: Any) -> None:
    # a workflow started last month keeps writing into last month's partition
    with clock.shifted(-dt.timedelta(days=35)):
        history_partitions_ensure(months_ahead=0)
        old = _expense("R-old")
    new = _expense("R-new")
    workflow_decide(
        user=User.objects.get(username="bob"),
        workflow_id=old.pk,
        decision="approve",
        request_id="bob-old",
    )

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text, count(*) FROM approvals_workflowevent "
            "WHERE workflow_id = %s GROUP BY 1",
            [old.pk],
        )
        placed = cursor.fetchall()
    assert placed == [
        (partition_name(history_month(old.created_at)), Workflow.objects.get(pk=old.pk).version)
    ]
    assert history_month(old.created_at) != history_month(new.created_at)
    assert set(
        WorkflowEvent.objects.filter(workflow_id=old.pk).values_list("history_month", flat=True)
    ) == {history_month(old.created_at)}
    assert history_default_rows() == 0


def test_reading_one_workflow_prunes_to_its_partition(acme: Any) -> None:
    wf = _expense("R-1")
    month = history_month(wf.created_at)
    assert len(history_partitions()) > 3  # several months, and the default

    timeline = WorkflowEvent.objects.filter(workflow_id=wf.pk, history_month=month)
    sql, params = timeline.order_by("seq").query.sql_with_params()
    assert _partitions_scanned(_plan(sql, list(params))) == {partition_name(month)}

    # the command path's duplicate check reads the month from the workflow row as it
    # runs: the other partitions are pruned when the plan executes
    plan = _plan(_RECORDED_SQL, [wf.pk, "some-request", wf.pk])
    assert _partitions_scanned(plan) == {partition_name(month)}, plan


def test_events_stay_append_only_and_unique_on_the_partitioned_table(acme: Any) -> None:
    wf = _expense("R-2")
    first = WorkflowEvent.objects.filter(workflow_id=wf.pk).order_by("seq").first()
    assert first is not None
    for sql in (
        "UPDATE approvals_workflowevent SET type = 'Forged' WHERE id = %s",
        "DELETE FROM approvals_workflowevent WHERE id = %s",
        f"UPDATE {partition_name(first.history_month)} SET type = 'Forged' WHERE id = %s",
    ):
        with (
            pytest.raises(ProgrammingError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [first.pk])
    # a second event with the same (workflow, seq) is refused
    copy = {f.attname: getattr(first, f.attname) for f in WorkflowEvent._meta.concrete_fields}
    copy.pop("id")
    with pytest.raises(IntegrityError), transaction.atomic():
        WorkflowEvent.objects.create(**copy)


def test_the_periodic_job_creates_the_coming_months_partitions(acme: Any) -> None:
    later = dt.timedelta(days=400)
    far = clock.now() + later
    with clock.shifted(later):
        created = history_partitions_ensure(months_ahead=2)
        assert history_partitions_ensure(months_ahead=2) == []  # once
    month = history_month(far)
    assert partition_name(month) in created
    assert set(created) <= set(history_partitions())
    # a workflow started in that month lands in its own partition, not the default
    with clock.shifted(later):
        wf = _expense("R-far")
    assert set(
        WorkflowEvent.objects.filter(workflow_id=wf.pk).values_list("history_month", flat=True)
    ) == {month}
    assert history_default_rows() == 0


def _tenant_statistics() -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, a.attstattarget FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id'"
            " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')"
        )
        return dict(cursor.fetchall())


def test_every_tenant_column_is_sampled_for_every_organisations_share(acme: Any) -> None:
    """Migration 0041: each table's ``tenant_id`` at statistics target 1000, partitions
    made later included (a partition does not inherit its parent's target)."""
    later = dt.timedelta(days=800)
    with clock.shifted(later):
        created = history_partitions_ensure(months_ahead=1)
    assert created
    targets = _tenant_statistics()
    assert {"approvals_workflow", "approvals_workflowevent", *created} <= set(targets)
    assert {name: t for name, t in targets.items() if t != TENANT_STATISTICS} == {}


def test_the_tables_read_by_key_under_a_policy_are_analyzed_often(acme: Any) -> None:
    """Migration 0042: a new organisation's rows reach the statistics within hours, not
    after a tenth of the table has changed."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reloptions FROM pg_class WHERE relname = ANY(%s)",
            [["approvals_workflow", "approvals_pendingtask", "approvals_stepvisit"]],
        )
        options = dict(cursor.fetchall())
    assert set(options) == {"approvals_workflow", "approvals_pendingtask", "approvals_stepvisit"}
    for table, given in options.items():
        assert "autovacuum_analyze_scale_factor=0.002" in (given or []), table
        assert "autovacuum_analyze_threshold=20000" in (given or []), table


def test_a_repeated_seq_in_a_month_made_later_is_a_race_the_command_path_retries(
    acme: Any,
) -> None:
    """A partition the periodic job makes gets the events' unique keys under names of
    its own; the command path still reads a repeated seq there as a lost race (tried
    again), not as an error, and anything else as an error."""
    from approvals.runtime.commands import _lost_the_race

    later = dt.timedelta(days=400)
    with clock.shifted(later):
        history_partitions_ensure(months_ahead=1)
        wf = _expense("R-race")
    first = WorkflowEvent.objects.filter(workflow_id=wf.pk).order_by("seq").first()
    assert first is not None
    copy = {f.attname: getattr(first, f.attname) for f in WorkflowEvent._meta.concrete_fields}
    copy.pop("id")
    with pytest.raises(IntegrityError) as repeated, transaction.atomic():
        WorkflowEvent.objects.create(**copy)
    assert "event_seq" not in str(repeated.value)  # the partition's own name for the key
    assert _lost_the_race(repeated.value)
    with pytest.raises(IntegrityError) as other, transaction.atomic():
        Tenant.objects.create(slug=acme.slug, name="Acme again")
    assert not _lost_the_race(other.value)  # a repeated key of another table: an error
