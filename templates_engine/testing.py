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

* An activity is a callable ``fn(key: str, data: dict)``, or ``fn(ctx)`` taking one
  ``ActivityContext`` (told apart by the number of parameters without a default).
  ``key`` is the idempotency key of that round of that step of that workflow
  (``"<workflow id>/<step>"``, then ``"<workflow id>/<step>/2"`` for the second
  entry into the step, as after a send back; ``"<workflow id>/undo:<step>"`` and
  ``".../undo:<step>/2"`` for the compensation of each round), the same on every
  attempt of the round, so the systems it calls can drop repeats. Its return value,
  if not None, is kept in the workflow data under ``results.<step>``.
* The context gives ``key``, ``data``, ``step``, ``attempt``, ``round``, ``undo``,
  ``last_heartbeat_details`` (the details of the last heartbeat of the attempt before,
  so a long job resumes where it was), ``heartbeat(details=None)``, ``now()`` and
  ``sleep(seconds)``.
* Time: an attempt takes the time the fake clock moves while it runs. An activity
  says how long it works with ``ctx.sleep(seconds)`` (or by advancing the clock it
  shares with the test); one that does neither takes no time. An attempt that takes
  longer than its step's ``timeout`` is the failed attempt ``Timeout`` (whatever it
  returned), retried by the policy like any error, which may list it as
  ``non_retryable``.
* Heartbeats: ``ctx.heartbeat(details)`` is delivered as a ``Heartbeat`` command at
  the clock's time. In a step with ``heartbeat_timeout``, the start of the attempt
  counts as its first heartbeat, and an attempt that goes longer than
  ``heartbeat_timeout`` without one fails with ``HeartbeatTimeout`` when the engine's
  heartbeat timer fires (before the step's ``timeout``); heartbeats after that are
  lost, as a real worker's would be. The next attempt sees the last details.
* Raising is a failed attempt whose error name is the exception's class name. A name
  in the step's ``non_retryable`` list (or missing from its ``retry_on`` list), or an
  exception with ``retryable = False``, fails the step for good; otherwise the retry
  policy decides the next attempt and its back-off.
* ``run`` never sleeps and never performs an attempt before its wake-up time: it
  performs what is due at ``clock.now()``, in order, and returns the status.
* Statuses: ``RUNNING``, ``COMPENSATING``, ``COMPLETED``, ``REJECTED``,
  ``ROLLED_BACK``, ``COMPENSATION_FAILED``, ``CANCELLED``.
* ``history`` has one entry ``step:outcome:n`` per attempt (``ok`` or ``error``;
  ``undo:<step>`` for compensation attempts; ``step#r:...`` for rounds after the
  first).
"""

from __future__ import annotations

import inspect
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
from .retry import TIMEOUT
from .state import PendingActivity, State, evolve

ActivityFn = Callable[..., Any]
"""``fn(key, data)``, or ``fn(ctx)`` taking an ActivityContext."""


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
class ActivityContext:
    """What an activity attempt sees of the engine, in memory."""

    key: str
    data: dict[str, Any]
    step: str
    attempt: int
    round: int
    undo: bool
    last_heartbeat_details: Any
    clock: FakeClock
    beats: list[tuple[float, Any]] = field(default_factory=list)

    def heartbeat(self, details: Any = None) -> None:
        """Say the attempt is alive, now; ``details`` (progress) go to the next attempt
        if this one fails."""
        self.beats.append((self.clock.now(), details))
        if details is not None:
            self.last_heartbeat_details = details

    def now(self) -> float:
        return self.clock.now()

    def sleep(self, seconds: float) -> None:
        """Work for ``seconds``: the fake clock moves on."""
        self.clock.advance(seconds)


def _takes_context(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in positional and p.default is p.empty]
    return len(required) == 1


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

    def start(
        self,
        workflow_id: str,
        data: Mapping[str, Any],
        submitter: str | None = None,
        conversion: Mapping[str, Any] | None = None,
    ) -> str:
        if workflow_id in self._runs:
            raise ValueError(f"workflow {workflow_id!r} exists")
        run = _Run()
        self._apply(run, cmd.Start(dict(data), submitter, conversion=conversion))
        self._runs[workflow_id] = run
        return run.state.status

    def run(self, workflow_id: str) -> str:
        run = self._runs[workflow_id]
        # a finished workflow still runs an undo an admin retried on it
        while not run.state.terminal or run.state.activity is not None:
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
                self._perform(workflow_id, run)
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

    def operate(self, workflow_id: str, command: cmd.Command) -> str:
        """An admin's operation (``commands.OPERATIONS``): retry a step or an undo,
        settle a failed undo by hand, deliver a parked timer again."""
        self._apply(self._runs[workflow_id], command)
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
        return None if state.terminal and state.activity is None else state.next_wake_at

    # -- internals --------------------------------------------------------------

    def _apply(self, run: _Run, command: cmd.Command, at: float | None = None) -> None:
        now = self.clock.now() if at is None else at
        ctx = Context(now=now, rng=self.rng, directory=self.directory)
        for event in decide(self.definition, run.state, command, ctx):
            run.events.append(event)
            run.state = evolve(run.state, event)

    def _perform(self, workflow_id: str, run: _Run) -> None:
        """Run the attempt awaited, then deliver what happened during it in the order
        of the clock: its heartbeats, its heartbeat timer firing, its timeout, its
        outcome (whichever came first ends it)."""
        pending = run.state.activity
        assert pending is not None
        started = self.clock.now()
        if pending.heartbeat_timeout is not None:  # the start is the first heartbeat
            self._apply(run, self._beat(pending, None), started)
        lease = run.state.heartbeat
        ctx = ActivityContext(
            key=activity_key(workflow_id, pending.step, pending.undo, pending.round),
            data=dict(run.state.data),
            step=pending.step,
            attempt=pending.attempt,
            round=pending.round,
            undo=pending.undo,
            last_heartbeat_details=lease.details if lease else None,
            clock=self.clock,
        )
        fn = self.activities[pending.activity]
        outcome: cmd.Command
        try:
            result = fn(ctx) if _takes_context(fn) else fn(ctx.key, dict(ctx.data))
            outcome = cmd.ActivityCompleted(pending.step, pending.attempt, pending.undo, result)
        except Exception as exc:  # an activity's failure is data, not a crash
            outcome = cmd.ActivityFailed(
                pending.step,
                pending.attempt,
                type(exc).__name__,
                str(exc),
                pending.undo,
                retryable=getattr(exc, "retryable", True) is not False,
            )
        ended = self.clock.now()
        deadline = started + pending.timeout
        for at, details in ctx.beats:
            if self._heartbeat_lapsed(run, before=min(at, deadline)) or at > deadline:
                break
            self._apply(run, self._beat(pending, details), at)
        else:
            if self._heartbeat_lapsed(run, before=min(ended, deadline)):
                return
            if ended <= deadline:
                self._apply(run, outcome, ended)
                return
        if run.state.activity == pending and ended > deadline:
            message = f"the attempt took longer than {pending.timeout:g}s"
            timed_out = cmd.ActivityFailed(
                pending.step, pending.attempt, TIMEOUT, message, pending.undo
            )
            self._apply(run, timed_out, deadline)

    def _heartbeat_lapsed(self, run: _Run, before: float) -> bool:
        """Fire the running attempt's heartbeat timer if it is due before ``before``;
        True if it fired (the attempt failed with HeartbeatTimeout)."""
        lease = run.state.heartbeat
        timer = next((t for t in run.state.timers if lease and t.key == lease.timer), None)
        if timer is None or timer.fire_at >= before:
            return False
        self._apply(run, cmd.TimerFired(timer.key), timer.fire_at)
        return True

    @staticmethod
    def _beat(pending: PendingActivity, details: Any) -> cmd.Heartbeat:
        return cmd.Heartbeat(pending.step, pending.attempt, details, pending.undo, pending.round)
