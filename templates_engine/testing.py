"""An in-memory driver for workflow template authors and tests.

It runs one definition against plain Python callables and a fake clock, in the shape
of the classic saga runner::

    clock = FakeClock()
    engine = InMemoryEngine(definition, {"reserve": reserve, "release": release},
                            clock, random.Random(7))
    engine.start("wf-1", {"amountPaise": 4500000}, submitter="alice")
    engine.run("wf-1")            # performs every attempt due now; returns the status
    clock.advance(engine.next_run_at("wf-1") - clock.now())
    engine.run("wf-1")
    engine.history("wf-1")        # ["reserve:error:1", "reserve:ok:2", ...]

Contract:

* An activity is a callable ``fn(key: str, data: dict)``. ``key`` is the stable
  idempotency key of that step of that workflow (``"<workflow id>/<step>"``, and
  ``"<workflow id>/undo:<step>"`` for its compensation), the same on every attempt,
  so the systems it calls can drop repeats. Its return value, if not None, is kept in
  the workflow data under ``results.<step>``.
* Raising is a failed attempt whose error name is the exception's class name. A name
  in the step's ``non_retryable`` list, or an exception with ``retryable = False``,
  fails the step for good; otherwise the retry policy decides the next attempt and
  its back-off.
* ``run`` never sleeps and never performs an attempt before its wake-up time: it
  performs what is due at ``clock.now()``, in order, and returns the status.
* Statuses: ``RUNNING``, ``COMPENSATING``, ``COMPLETED``, ``REJECTED``,
  ``ROLLED_BACK``, ``COMPENSATION_FAILED``, ``CANCELLED``.
* ``history`` has one entry ``step:outcome:n`` per attempt (``ok`` or ``error``;
  ``undo:<step>`` for compensation attempts).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import commands as cmd
from . import events as ev
from .context import Context, Directory, StaticDirectory
from .decider import attempt_history, decide
from .definition import Definition
from .keys import activity_key
from .state import State, evolve

ActivityFn = Callable[[str, dict[str, Any]], Any]


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock does not go back")
        self._now += seconds


@dataclass
class _Run:
    state: State = field(default_factory=State)
    events: list[ev.Event] = field(default_factory=list)
    request_ids: set[str] = field(default_factory=set)


class InMemoryEngine:
    def __init__(
        self,
        definition: Definition,
        activities: Mapping[str, ActivityFn],
        clock: FakeClock,
        rng: random.Random,
        directory: Directory | None = None,
    ) -> None:
        missing = definition.activities() - set(activities)
        if missing:
            raise ValueError(f"activities not provided: {', '.join(sorted(missing))}")
        self.definition = definition
        self.activities = dict(activities)
        self.clock = clock
        self.rng = rng
        self.directory: Directory = directory or StaticDirectory()
        self._runs: dict[str, _Run] = {}

    # -- commands ---------------------------------------------------------------

    def start(self, workflow_id: str, data: Mapping[str, Any], submitter: str | None = None) -> str:
        if workflow_id in self._runs:
            raise ValueError(f"workflow {workflow_id!r} exists")
        run = _Run()
        self._apply(run, cmd.Start(dict(data), submitter))
        self._runs[workflow_id] = run
        return run.state.status

    def run(self, workflow_id: str) -> str:
        run = self._runs[workflow_id]
        while not run.state.terminal:
            now = self.clock.now()
            pending = run.state.activity
            due_timers = sorted(
                (t for t in run.state.timers if t.fire_at <= now), key=lambda t: t.fire_at
            )
            if (
                pending is not None
                and pending.not_before <= now
                and (not due_timers or pending.not_before <= due_timers[0].fire_at)
            ):
                self._apply(run, self._perform(workflow_id, run.state))
            elif due_timers:
                self._apply(run, cmd.TimerFired(due_timers[0].key))
            else:
                break
        return run.state.status

    def decide(
        self,
        workflow_id: str,
        actor: str,
        decision: str,
        request_id: str,
        comment: str = "",
        **extra: Any,
    ) -> str:
        run = self._runs[workflow_id]
        if request_id not in run.request_ids:
            self._apply(run, cmd.Decide(actor, decision, comment, **extra))
            run.request_ids.add(request_id)
        return run.state.status

    def signal(
        self,
        workflow_id: str,
        name: str,
        payload: Mapping[str, Any] | None = None,
        request_id: str | None = None,
    ) -> str:
        run = self._runs[workflow_id]
        if request_id is None or request_id not in run.request_ids:
            self._apply(run, cmd.Signal(name, dict(payload or {})))
            if request_id is not None:
                run.request_ids.add(request_id)
        return run.state.status

    def cancel(self, workflow_id: str, actor: str | None, reason: str = "") -> str:
        """Cancel: completed steps are undone by ``run``, then the status is CANCELLED."""
        self._apply(self._runs[workflow_id], cmd.Cancel(actor, reason))
        return self._runs[workflow_id].state.status

    # -- queries ----------------------------------------------------------------

    def status(self, workflow_id: str) -> str:
        return self._runs[workflow_id].state.status

    def state(self, workflow_id: str) -> State:
        return self._runs[workflow_id].state

    def events(self, workflow_id: str) -> list[ev.Event]:
        return list(self._runs[workflow_id].events)

    def history(self, workflow_id: str) -> list[str]:
        return attempt_history(self._runs[workflow_id].events)

    def next_run_at(self, workflow_id: str) -> float | None:
        state = self._runs[workflow_id].state
        return None if state.terminal else state.next_wake_at

    # -- internals --------------------------------------------------------------

    def _apply(self, run: _Run, command: cmd.Command) -> None:
        ctx = Context(now=self.clock.now(), rng=self.rng, directory=self.directory)
        for event in decide(self.definition, run.state, command, ctx):
            run.events.append(event)
            run.state = evolve(run.state, event)

    def _perform(self, workflow_id: str, state: State) -> cmd.Command:
        pending = state.activity
        assert pending is not None
        fn = self.activities[pending.activity]
        key = activity_key(workflow_id, pending.step, pending.undo)
        try:
            result = fn(key, dict(state.data))
        except Exception as exc:  # an activity's failure is data, not a crash
            return cmd.ActivityFailed(
                pending.step,
                pending.attempt,
                type(exc).__name__,
                str(exc),
                pending.undo,
                retryable=getattr(exc, "retryable", True) is not False,
            )
        return cmd.ActivityCompleted(pending.step, pending.attempt, pending.undo, result)
