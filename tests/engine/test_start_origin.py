"""A start filed in the submitter's name by something else (a schedule) records what
filed it, and who made that, in the WorkflowStarted event: the history, and so the
hash chain, keeps it. Histories written before read back with no origin."""

from __future__ import annotations

from templates_engine import Context, Definition, decide, replay
from templates_engine import commands as cmd
from templates_engine import events as ev

DEFINITION = Definition.parse(
    {"key": "t", "steps": [{"id": "it", "kind": "approval", "approvers": [{"user": "ivan"}]}]}
)
ORIGIN = {"schedule": 7, "name": "Quarterly access review", "made_by": "fiona"}


def test_a_start_records_what_filed_it_in_the_submitters_name() -> None:
    events = decide(
        DEFINITION, replay(DEFINITION, ()), cmd.Start({}, "fiona", ORIGIN), Context(now=0.0)
    )

    started = events[0]
    assert isinstance(started, ev.WorkflowStarted)
    assert started.origin == ORIGIN
    stored = started.to_dict()
    assert (stored["v"], stored["origin"]) == (3, ORIGIN)
    assert ev.event_from_dict(stored) == started


def test_a_start_in_person_records_no_origin() -> None:
    events = decide(DEFINITION, replay(DEFINITION, ()), cmd.Start({}, "alice"), Context(now=0.0))

    assert events[0].to_dict()["origin"] is None


def test_a_started_event_from_before_origins_reads_back_with_none() -> None:
    old = {
        "type": "WorkflowStarted",
        "v": 1,
        "workflow_type": "t",
        "definition_version": 1,
        "data": {},
        "submitter": "alice",
    }

    assert ev.event_from_dict(old) == ev.WorkflowStarted("t", 1, {}, "alice", None)
