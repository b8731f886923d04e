"""``action``: an automated activity run by a worker, retried by its policy and undone
by its ``compensate`` activity if the workflow later turns back.

Each entry into the step is a new round (a send back to an earlier step enters it
again): the round is in every ``ActivityScheduled`` and in the idempotency key
(``templates_engine.keys.activity_key``), and each completed round is undone once.

``timeout`` bounds each attempt (the driver that runs it reports ``Timeout``).
``heartbeat_timeout`` bounds the time between an attempt's heartbeats: each
``Heartbeat`` command moves the attempt's heartbeat timer to ``now +
heartbeat_timeout``, and the timer firing fails the attempt with ``HeartbeatTimeout``.
The last heartbeat's details go to the next attempt."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import commands as cmd
from .. import events as ev
from ..durations import parse_duration
from ..errors import DefinitionError
from ..retry import HEARTBEAT_TIMEOUT, RetryPolicy
from .base import Step, check_fields, common, require_str

if TYPE_CHECKING:
    from ..builder import Builder

DEFAULT_QUEUE = "default"
DEFAULT_TIMEOUT = 300.0
# the fields of an activity, the step's own and its compensation's
_ACTIVITY_FIELDS = {"queue", "retry", "timeout", "heartbeat_timeout", "params"}


@dataclass(frozen=True)
class Activity:
    activity: str
    queue: str
    retry: RetryPolicy
    timeout: float
    # Fixed arguments for the activity (a URL, a method), given beside the data.
    params: Mapping[str, Any] = field(default_factory=dict)
    heartbeat_timeout: float | None = None

    def scheduled(
        self,
        step: str,
        attempt: int,
        not_before: float,
        *,
        undo: bool,
        round: int,
        details: Any = None,
    ) -> ev.ActivityScheduled:
        """The event scheduling ``attempt`` of this activity for ``round`` of ``step``."""
        return ev.ActivityScheduled(
            step,
            self.activity,
            self.queue,
            attempt,
            not_before,
            self.timeout,
            undo,
            round,
            self.heartbeat_timeout,
            details,
        )

    @classmethod
    def parse(cls, doc: Mapping[str, Any], path: str, default_queue: str) -> Activity:
        queue = doc.get("queue", default_queue)
        if not isinstance(queue, str) or not queue:
            raise DefinitionError(f"{path}.queue", "must be a non-empty string")
        timeout = parse_duration(doc.get("timeout", DEFAULT_TIMEOUT), f"{path}.timeout")
        if timeout <= 0:
            raise DefinitionError(f"{path}.timeout", "must be more than zero")
        params = doc.get("params", {})
        if not isinstance(params, Mapping):
            raise DefinitionError(f"{path}.params", "must be an object")
        heartbeat_timeout = None
        if doc.get("heartbeat_timeout") is not None:
            hb_path = f"{path}.heartbeat_timeout"
            heartbeat_timeout = parse_duration(doc["heartbeat_timeout"], hb_path)
            if heartbeat_timeout <= 0:
                raise DefinitionError(hb_path, "must be more than zero")
            if heartbeat_timeout > timeout:
                raise DefinitionError(hb_path, "must not be more than the timeout")
        return cls(
            activity=require_str(doc, "activity", path),
            queue=queue,
            retry=RetryPolicy.parse(doc.get("retry"), f"{path}.retry"),
            timeout=timeout,
            params=dict(params),
            heartbeat_timeout=heartbeat_timeout,
        )


@dataclass(frozen=True)
class ActionStep(Step):
    run: Activity
    compensate: Activity | None

    kind = "action"

    def enter(self, b: Builder) -> None:
        round_ = b.state.round_of(self.id) + 1
        b.emit(self.run.scheduled(self.id, 1, b.ctx.now, undo=False, round=round_))

    def on_heartbeat(self, b: Builder, beat: cmd.Heartbeat) -> None:
        """A heartbeat of the attempt awaited (the caller checked): extend its lease."""
        pending = b.state.activity
        assert pending is not None
        timer = None
        if pending.heartbeat_timeout is not None:
            n = (b.state.heartbeat.beats if b.state.heartbeat else 0) + 1
            prefix = "undo:" if pending.undo else ""
            timer = ev.Timer(
                f"{prefix}{self.id}#{pending.round}:heartbeat:{pending.attempt}.{n}",
                "heartbeat",
                self.id,
                b.ctx.now + pending.heartbeat_timeout,
            )
        elif beat.details is None:
            return  # no lease to extend and nothing to keep: not worth an event
        b.emit(
            ev.ActivityHeartbeat(
                self.id, pending.attempt, b.ctx.now, timer, beat.details, pending.undo
            )
        )

    def on_timer(self, b: Builder, kind: str, key: str) -> None:
        """The heartbeat timer of the running attempt fired: it stopped beating."""
        pending, lease = b.state.activity, b.state.heartbeat
        if kind != "heartbeat" or pending is None or lease is None or lease.timer != key:
            return
        message = f"no heartbeat for {pending.heartbeat_timeout:g}s"
        self.on_outcome(
            b,
            cmd.ActivityFailed(self.id, pending.attempt, HEARTBEAT_TIMEOUT, message, pending.undo),
        )

    def on_outcome(self, b: Builder, outcome: cmd.ActivityCompleted | cmd.ActivityFailed) -> None:
        """An attempt's outcome; the caller checked it is the attempt awaited."""
        undo = outcome.undo
        spec = self.compensate if undo else self.run
        assert spec is not None
        pending = b.state.activity
        assert pending is not None
        carried = b.state.heartbeat.details if b.state.heartbeat else None
        if isinstance(outcome, cmd.ActivityCompleted):
            b.emit(ev.ActivitySucceeded(self.id, outcome.attempt, undo, outcome.result))
            if undo:
                b.compensate_next()
            else:
                b.emit(ev.StepCompleted(self.id, compensate=self.compensate is not None))
                b.advance_after(self.id)
            return
        attempt, error = outcome.attempt, outcome.error
        if not outcome.retryable or spec.retry.gives_up(attempt, error):
            b.emit(ev.ActivityFailed(self.id, attempt, error, outcome.message, undo))
            if undo:
                b.emit(ev.CompensationFailed(self.id))
            else:
                b.fail_step(self.id, error, outcome.message)
            return
        delay = spec.retry.delay(attempt, b.ctx.rng)
        b.emit(ev.ActivityFailed(self.id, attempt, error, outcome.message, undo, delay))
        b.emit(
            spec.scheduled(
                self.id,
                attempt + 1,
                b.ctx.now + delay,
                undo=undo,
                round=pending.round,
                details=carried,
            )
        )


def parse(doc: Mapping[str, Any], path: str) -> ActionStep:
    check_fields(doc, path, {*_ACTIVITY_FIELDS, "activity", "compensate"})
    step_id, when = common(doc, path)
    run = Activity.parse(doc, path, DEFAULT_QUEUE)
    undo_doc = doc.get("compensate")
    compensate = None
    if undo_doc is not None:
        undo_path = f"{path}.compensate"
        if isinstance(undo_doc, str):
            undo_doc = {"activity": undo_doc}
        if not isinstance(undo_doc, Mapping):
            raise DefinitionError(undo_path, "must be an activity name or an object")
        unknown = sorted(set(undo_doc) - {*_ACTIVITY_FIELDS, "activity"})
        if unknown:
            raise DefinitionError(f"{undo_path}.{unknown[0]}", "is not a compensation field")
        compensate = Activity.parse(undo_doc, undo_path, run.queue)
    return ActionStep(id=step_id, when=when, run=run, compensate=compensate)
