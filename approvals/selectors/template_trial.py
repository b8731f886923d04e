""" "Try it": what a workflow template version would do with some sample data and a
submitter, run in the engine's in-memory driver against the organisation's real
directory (managers, groups, out-of-office delegations) and a fake clock. Nothing is
written: no workflow, event, task or timer row.

The trial assumes no one acts until a step's last timer (reminders, deadline,
escalation) has fired; then everyone still asked approves, signals arrive at once and
automated steps succeed at their first attempt. So the time line shows the latest each
step can move on without someone being chased, and who would be chased.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from templates_engine import CommandRejected, Definition
from templates_engine import events as ev
from templates_engine.steps import ApprovalStep, SignalStep
from templates_engine.testing import FakeClock, InMemoryEngine

from .. import clock
from ..models import User
from ..runtime.directory import TenantDirectory
from .rates import conversion_now

_TRIAL = "trial"
_MAX_MOVES = 200  # a send-back loop cannot run forever


@dataclass(frozen=True)
class TrialEntry:
    at: float  # seconds after the start
    step: str  # step id; "" for the workflow itself
    kind: str  # started | skipped | asked | excluded | reminder | escalated | approved
    #            | activity | waiting | signal | completed | failed | finished
    people: tuple[str, ...] = ()
    note: str = ""
    # for "asked": the approver entry (its index in the step's ``approvers``) each of
    # ``people`` stands on, so the words can say which a condition chose
    slots: tuple[int, ...] = ()
    # for "asked": each of ``people`` as a user name, and whom they stand in for ("")
    users: tuple[str, ...] = ()
    behalf: tuple[str, ...] = ()


@dataclass
class Trial:
    status: str = ""
    entries: list[TrialEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # the base currency and rates the start would record (selectors.rates), and the
    # refusal in words of a currency without a rate of the week
    conversion: dict[str, Any] | None = None
    no_rate: str = ""


def _entry(event: ev.Event, at: float) -> TrialEntry | None:  # noqa: PLR0911 - one per event
    step = str(getattr(event, "step", "") or "")
    if isinstance(event, ev.WorkflowStarted):
        return TrialEntry(at, "", "started", (event.submitter or "",))
    if isinstance(event, ev.StepSkipped):
        return TrialEntry(at, step, "skipped")
    if isinstance(event, ev.ApproversExcluded):
        return TrialEntry(
            at,
            step,
            "excluded",
            tuple(u for u, _ in event.excluded),
            "; ".join(f"{u}: {why}" for u, why in event.excluded),
        )
    if isinstance(event, ev.ApprovalRequested):
        people = tuple(
            f"{a.user} (for {a.on_behalf_of})" if a.on_behalf_of else a.user
            for a in event.assignments
        )
        slots = tuple(a.slot for a in event.assignments)
        users = tuple(a.user for a in event.assignments)
        behalf = tuple(a.on_behalf_of or "" for a in event.assignments)
        return TrialEntry(at, step, "asked", people, event.mode, slots, users, behalf)
    if isinstance(event, ev.ReminderSent):
        return TrialEntry(at, step, "reminder", event.users)
    if isinstance(event, ev.Escalated):
        return TrialEntry(at, step, "escalated", tuple(a.user for a in event.assignments))
    if isinstance(event, ev.DecisionRecorded):
        return TrialEntry(at, step, "approved", (event.actor,))
    if isinstance(event, ev.ActivityScheduled) and not event.undo:
        return TrialEntry(at, step, "activity", (), event.activity)
    if isinstance(event, ev.WaitStarted):
        return TrialEntry(at, step, "waiting")
    if isinstance(event, ev.SignalAwaited):
        return TrialEntry(at, step, "signal", (), event.name)
    if isinstance(event, ev.StepFailed):
        return TrialEntry(at, step, "failed", (), event.message or event.error)
    if isinstance(event, ev.WorkflowCompleted | ev.WorkflowRejected | ev.WorkflowRolledBack):
        return TrialEntry(at, "", "finished", (), event.type)
    return None


class _Recorder:
    def __init__(self, engine: InMemoryEngine, fake: FakeClock, trial: Trial) -> None:
        self.engine, self.clock, self.trial = engine, fake, trial
        self.start = fake.now()
        self.seen = 0

    def record(self) -> None:
        events = self.engine.events(_TRIAL)
        for event in events[self.seen :]:
            entry = _entry(event, self.clock.now() - self.start)
            if entry is not None:
                self.trial.entries.append(entry)
        self.seen = len(events)


def workflow_template_try(
    *,
    tenant_id: int,
    definition: Mapping[str, Any],
    data: Mapping[str, Any],
    submitter: User,
    prompt: bool = False,
) -> Trial:
    """Run ``definition`` (a published version or a draft that validates) on ``data``
    for ``submitter`` in memory, in the directory of the organisation ``tenant_id``;
    see the module's docstring for what the people in it are assumed to do. With
    ``prompt`` everyone asked approves at once instead (the route a request takes when
    nobody is chased: the new-request form's preview)."""
    trial = Trial()
    parsed = Definition.parse(definition)
    trial.problems = parsed.data_errors(dict(data))
    if trial.problems:
        return trial
    try:
        trial.conversion = conversion_now(
            tenant_id=tenant_id, data=data, schema=parsed.schema, now=clock.now()
        )
    except CommandRejected as exc:
        trial.no_rate = exc.message
        trial.problems.append(exc.message)
        return trial
    fake = FakeClock(clock.now().timestamp())
    engine = InMemoryEngine(
        parsed,
        {name: (lambda key, data: None) for name in parsed.activities()},
        fake,
        random.Random(0),
        TenantDirectory(tenant_id),
    )
    recorder = _Recorder(engine, fake, trial)
    engine.start(_TRIAL, dict(data), submitter.username, conversion=trial.conversion)
    recorder.record()
    for move in range(_MAX_MOVES):
        engine.run(_TRIAL)
        recorder.record()
        if engine.state(_TRIAL).terminal:
            break
        try:
            _move_on(engine, parsed, fake, move, prompt)
        except CommandRejected as exc:
            trial.problems.append(exc.message)
            break
        recorder.record()
    trial.status = engine.status(_TRIAL)
    return trial


def _move_on(
    engine: InMemoryEngine, definition: Definition, fake: FakeClock, move: int, prompt: bool
) -> None:
    """Do what the people or systems would: see the module's docstring."""
    state = engine.state(_TRIAL)
    step = definition.step(state.step) if state.step else None
    if isinstance(step, SignalStep):
        engine.signal(_TRIAL, step.signal, {}, request_id=f"try-signal-{move}")
        return
    wake = engine.next_run_at(_TRIAL)
    at_once = prompt and isinstance(step, ApprovalStep)
    if wake is not None and wake > fake.now() and not at_once:
        fake.advance(wake - fake.now())
        return
    if isinstance(step, ApprovalStep):
        for n, holder in enumerate(dict.fromkeys(a.user for a in state.outstanding())):
            if engine.state(_TRIAL).step != step.id:
                break
            engine.decide(_TRIAL, holder, "approve", request_id=f"try-{move}-{n}")
        return
    raise CommandRejected("STUCK", f"the workflow stops at {state.step or 'the start'}")
