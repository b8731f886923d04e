"""``action``: an automated activity run by a worker, retried by its policy and undone
by its ``compensate`` activity if the workflow later turns back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import commands as cmd
from .. import events as ev
from ..durations import parse_duration
from ..errors import DefinitionError
from ..retry import RetryPolicy
from .base import Step, check_fields, common, require_str

if TYPE_CHECKING:
    from ..builder import Builder

DEFAULT_QUEUE = "default"
DEFAULT_TIMEOUT = 300.0


@dataclass(frozen=True)
class Activity:
    activity: str
    queue: str
    retry: RetryPolicy
    timeout: float
    # Fixed arguments for the activity (a URL, a method), given beside the data.
    params: Mapping[str, Any] = field(default_factory=dict)

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
        return cls(
            activity=require_str(doc, "activity", path),
            queue=queue,
            retry=RetryPolicy.parse(doc.get("retry"), f"{path}.retry"),
            timeout=timeout,
            params=dict(params),
        )


@dataclass(frozen=True)
class ActionStep(Step):
    run: Activity
    compensate: Activity | None

    kind = "action"

    def enter(self, b: Builder) -> None:
        r = self.run
        b.emit(ev.ActivityScheduled(self.id, r.activity, r.queue, 1, b.ctx.now, r.timeout))

    def on_outcome(self, b: Builder, outcome: cmd.ActivityCompleted | cmd.ActivityFailed) -> None:
        """An attempt's outcome; the caller checked it is the attempt awaited."""
        undo = outcome.undo
        spec = self.compensate if undo else self.run
        assert spec is not None
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
            ev.ActivityScheduled(
                self.id,
                spec.activity,
                spec.queue,
                attempt + 1,
                b.ctx.now + delay,
                spec.timeout,
                undo,
            )
        )


def parse(doc: Mapping[str, Any], path: str) -> ActionStep:
    check_fields(doc, path, {"activity", "queue", "retry", "timeout", "compensate", "params"})
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
        unknown = sorted(set(undo_doc) - {"activity", "queue", "retry", "timeout", "params"})
        if unknown:
            raise DefinitionError(f"{undo_path}.{unknown[0]}", "is not a compensation field")
        compensate = Activity.parse(undo_doc, undo_path, run.queue)
    return ActionStep(id=step_id, when=when, run=run, compensate=compensate)
