"""One status machine (templates_engine.status): the engine's ``evolve``, the model's
django-fsm transitions and the command path's plain-SQL write allow the same moves,
enumerated over every status, and the command path refuses a move the table lacks
before it writes anything."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from django_fsm import TransitionNotAllowed

from approvals import clock
from approvals.models import Workflow, WorkflowEvent
from approvals.models.workflows import WorkflowStatus
from approvals.runtime.commands import SYSTEM, _append
from approvals.runtime.directory import TenantDirectory
from templates_engine import State, evolve
from templates_engine import events as ev
from templates_engine.state import replace
from templates_engine.status import (
    STATUS_TRANSITIONS,
    STATUSES,
    TERMINAL,
    StatusMoveRefused,
    allowed_moves,
    move_check,
    recorded_move_check,
    status_of_public,
)

from .helpers import start_expense

# An event of each type that moves the status, as a command records it.
SAMPLES: dict[type[ev.Event], ev.Event] = {
    ev.WorkflowStarted: ev.WorkflowStarted("expense", 1, {}, "alice"),
    ev.WorkflowCompleted: ev.WorkflowCompleted(),
    ev.CompensationStarted: ev.CompensationStarted("ROLLED_BACK", "it failed"),
    ev.WorkflowRolledBack: ev.WorkflowRolledBack(),
    ev.WorkflowRejected: ev.WorkflowRejected(),
    ev.CompensationFailed: ev.CompensationFailed("pay"),
    ev.WorkflowCancelled: ev.WorkflowCancelled("alice", "typo"),
}


def _engine_moves() -> set[tuple[str, str]]:
    """Every (source, target) ``evolve`` takes a workflow through, tried from every
    status with every recorded moving event."""
    moves = set()
    for source, event in itertools.product(STATUSES, SAMPLES.values()):
        try:
            after = evolve(State(status=source), event)
        except StatusMoveRefused:
            continue
        moves.add((source, after.status))
    return moves


def _model_moves() -> set[tuple[str, str]]:
    """Every (source, target) the model's django-fsm methods take, tried from every
    status (not read from the table)."""
    field: Any = Workflow._meta.get_field("status")
    names = {t.name for t in field.get_all_transitions(Workflow)}
    moves = set()
    for source, name in itertools.product(STATUSES, names):
        wf = Workflow()
        wf.__dict__["status"] = source  # the field is protected: set as a row load does
        try:
            getattr(wf, name)()
        except TransitionNotAllowed:
            continue
        moves.add((source, wf.status))
    return moves


def test_the_engine_and_the_model_allow_the_same_moves() -> None:
    engine, model = _engine_moves(), _model_moves()
    assert engine == model == allowed_moves()
    # every status is the model's, and each but NEW is reached by some move
    assert [value for value, _ in WorkflowStatus.choices] == list(STATUSES)
    assert {target for _, target in engine} == set(STATUSES) - {"NEW"}
    # a finished workflow stays finished
    assert not {source for source, _ in engine} & TERMINAL
    # one method per move, each named once
    assert len({t.name for t in STATUS_TRANSITIONS}) == len(STATUS_TRANSITIONS)


def test_evolve_refuses_a_move_the_table_lacks() -> None:
    with pytest.raises(StatusMoveRefused, match="from COMPLETED to CANCELLED"):
        evolve(State(status="COMPLETED"), ev.WorkflowCancelled("alice"))
    # an event that is no move cannot change the status either
    with pytest.raises(StatusMoveRefused, match="cannot change the status"):
        move_check(ev.StepSkipped("manager"), "RUNNING", "COMPLETED")
    assert recorded_move_check(ev.CommentAdded, "RUNNING") == "RUNNING"
    # an old history's reopening still replays; no command may record one
    move_check(ev.StepRetried("olga", "again", "pay", "pay"), "ROLLED_BACK", "RUNNING")
    with pytest.raises(StatusMoveRefused, match="replayed, never recorded"):
        recorded_move_check(ev.StepRetried, "ROLLED_BACK")


def test_each_public_status_reads_one_status() -> None:
    assert status_of_public("PENDING_SUBMITTER") == "RUNNING"
    assert status_of_public("PENDING_MANAGER") == "RUNNING"
    assert status_of_public("APPROVED") == "COMPLETED"
    assert status_of_public("WITHDRAWN") == "CANCELLED"
    for status in STATUSES:
        assert status_of_public(status) == status
    with pytest.raises(ValueError, match="not a workflow status"):
        status_of_public("APPROVED_LATER")


@pytest.mark.django_db
def test_the_command_path_refuses_an_impossible_move_before_writing(acme: Any, api: Any) -> None:
    # given a finished workflow (a small expense is approved at its start)
    reply = start_expense(api("alice"), 100)
    assert reply.status_code == 201, reply.content
    wid = reply.json()["workflowId"]
    wf = Workflow.objects.get(pk=wid)
    assert wf.status == "COMPLETED"
    before = (wf.version, wf.last_hash, WorkflowEvent.objects.filter(workflow_id=wid).count())
    state = replace(State(), status="RUNNING")  # a state that disagrees with the row

    # when the hot path is asked to record a cancellation of it
    with pytest.raises(StatusMoveRefused, match="cannot take a workflow from COMPLETED"):
        _append(
            wf,
            [ev.WorkflowCancelled("alice", "typo")],
            ["CANCELLED"],
            replace(state, status="CANCELLED"),
            SYSTEM,
            None,
            "",
            clock.now(),
            TenantDirectory(acme.pk),
        )

    # then nothing was written
    row = Workflow.objects.get(pk=wid)
    after = (row.version, row.last_hash, WorkflowEvent.objects.filter(workflow_id=wid).count())
    assert (row.status, after) == ("COMPLETED", before)


@pytest.mark.django_db
def test_the_command_path_refuses_to_end_where_the_state_does_not(acme: Any, api: Any) -> None:
    reply = start_expense(api("alice"), 4_500_000)  # waits for bob
    wf = Workflow.objects.get(pk=reply.json()["workflowId"])
    assert wf.status == "RUNNING"
    # a completion recorded while the state says the workflow still runs
    with pytest.raises(StatusMoveRefused, match="its state says RUNNING"):
        _append(
            wf,
            [ev.WorkflowCompleted()],
            ["APPROVED"],
            State(status="RUNNING"),
            SYSTEM,
            None,
            "",
            clock.now(),
            TenantDirectory(acme.pk),
        )
    assert Workflow.objects.get(pk=wf.pk).status == "RUNNING"
