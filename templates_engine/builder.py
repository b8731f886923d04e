"""The decider's working state while it handles one command: the events emitted so
far, and the state they lead to. Steps call back into it to move the workflow on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import errors
from . import events as ev
from .context import Context
from .errors import CommandRejected
from .expressions import ConditionError, DataNotEvaluable
from .money import NoRate, condition_data
from .state import CANCELLED, COMPENSATING, REJECTED, State, evolve

if TYPE_CHECKING:
    from .definition import Definition


class Builder:
    __slots__ = ("definition", "state", "ctx", "events")

    def __init__(self, definition: Definition, state: State, ctx: Context) -> None:
        self.definition = definition
        self.state = state
        self.ctx = ctx
        self.events: list[ev.Event] = []

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        self.state = evolve(self.state, event)

    def timer(self, step: str, kind: str, delay: float, index: int = 0) -> ev.Timer:
        """A timer for the step being entered; keys never repeat within a workflow."""
        key = f"{step}#{self.state.entries + 1}:{kind}:{index}"
        return ev.Timer(key, kind, step, self.ctx.now + delay)

    def advance(self, index: int) -> None:
        """Enter the first step from ``index`` on whose condition holds, or complete."""
        steps = self.definition.steps
        submitter = self.state.submitter
        names = None  # the data in CEL's types, converted for the first condition
        for step in steps[index:]:
            if step.when is not None:
                try:
                    if names is None:
                        names = step.when.activation(self.condition_data(), submitter)
                    go = step.when.evaluate_in(names)
                except DataNotEvaluable as exc:
                    # the input's fault, not the definition's: refuse the command whole
                    raise CommandRejected(errors.INVALID_DATA, str(exc)) from exc
                except ConditionError as exc:
                    self.emit(ev.StepFailed(step.id, "ConditionError", str(exc)))
                    self.turn_back(ROLLED_BACK_OUTCOME, f"{step.id}: ConditionError")
                    return
                if not go:
                    self.emit(ev.StepSkipped(step.id))
                    continue
            step.enter(self)
            return
        self.emit(ev.WorkflowCompleted())

    def condition_data(self) -> Mapping[str, Any]:
        """The data conditions see: amounts in the base currency at the recorded rate
        (templates_engine.money). A currency without one refuses the command."""
        try:
            return condition_data(self.state.data, self.definition.schema, self.state.conversion)
        except NoRate as exc:
            raise CommandRejected(errors.NO_EXCHANGE_RATE, str(exc)) from exc

    def advance_after(self, step_id: str) -> None:
        self.advance(self.definition.index(step_id) + 1)

    def fail_step(self, step_id: str, error: str, message: str = "") -> None:
        self.emit(ev.StepFailed(step_id, error, message))
        self.turn_back(ROLLED_BACK_OUTCOME, f"{step_id} failed: {error}")

    def turn_back(self, outcome: str, reason: str) -> None:
        """Start compensating; the workflow ends in ``outcome`` once every undo ran."""
        self.emit(ev.CompensationStarted(outcome, reason))
        self.compensate_next()

    def cancel(self, actor: str | None, reason: str) -> None:
        """Cancel: undo every completed step first, then end CANCELLED."""
        if self.state.status == COMPENSATING:
            raise CommandRejected(
                errors.ALREADY_TURNING_BACK,
                "the workflow is already undoing its steps and will end on its own",
            )
        if self.state.compensations:
            self.turn_back(CANCELLED, ev.cancelled_by_reason(actor, reason))
        else:
            self.emit(ev.WorkflowCancelled(actor, reason))

    def compensate_next(self) -> None:
        """Schedule the undo of the most recently completed step, or finish."""
        if self.state.compensations:
            step_id, round_ = self.state.compensations[-1]
            undo = self.definition.action(step_id).compensate
            assert undo is not None, f"{step_id} was recorded as compensable"
            self.emit(undo.scheduled(step_id, 1, self.ctx.now, undo=True, round=round_))
        elif self.state.outcome == REJECTED:
            self.emit(ev.WorkflowRejected())
        elif self.state.outcome == CANCELLED:
            self.emit(ev.WorkflowCancelled(None, "cancelled; every completed step was undone"))
        else:
            self.emit(ev.WorkflowRolledBack())


ROLLED_BACK_OUTCOME = "ROLLED_BACK"
