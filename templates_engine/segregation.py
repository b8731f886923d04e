"""Segregation of duties: who may not hold or decide a step of a workflow.

Two rules, applied when a step is assigned (so nobody excluded is ever given the task)
and again when someone decides, delegates or is handed a task (so nobody slips through
an out-of-office delegation, an escalation or a reassignment):

* the submitter never decides any step of their own workflow;
* under the definition's ``distinct_approvers`` (four eyes), a person who approved one
  step, in person or as the principal a delegate approved for, may not hold or decide
  another. The same step entered again after a send-back is still the same step, so they
  may decide it again. An approval counts for the workflow's whole life, even one a
  later send-back made the workflow ask for again: that person has seen and approved it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import errors
from .errors import CommandRejected
from .state import SUBMITTER_STEP, State

if TYPE_CHECKING:
    from .definition import Definition

SUBMITTER = "submitter"
ALREADY_APPROVED = "already approved {step}"

SUBMITTER_MAY_NOT_DECIDE = "The submitter of a workflow may not decide any of its steps."
SUBMITTER_MAY_NOT_HOLD = "The submitter of a workflow may not be given any of its steps."
ONE_STEP_EACH = (
    "{user} already approved {step} of this workflow, and one person may not approve "
    "two of its steps."
)


def exclusion(state: State, user: str, step: str | None, *, distinct: bool) -> str | None:
    """Why ``user`` may not hold or decide ``step`` of the workflow in ``state``:
    ``"submitter"``, ``"already approved <other step>"``, or None when they may."""
    if state.submitter is not None and user == state.submitter:
        return SUBMITTER
    if distinct:
        for approved_step, approver in state.step_approvals:
            if approver == user and approved_step != step:
                return ALREADY_APPROVED.format(step=approved_step)
    return None


def refusal_message(user: str, reason: str, *, deciding: bool) -> str:
    """The people-facing message of a SEGREGATION_OF_DUTIES refusal for ``reason``."""
    if reason == SUBMITTER:
        return SUBMITTER_MAY_NOT_DECIDE if deciding else SUBMITTER_MAY_NOT_HOLD
    return ONE_STEP_EACH.format(user=user, step=reason.removeprefix("already approved "))


def refuse_unless_eligible(
    definition: Definition, state: State, user: str, step: str, *, deciding: bool = False
) -> None:
    """Raise CommandRejected(SEGREGATION_OF_DUTIES) when ``user`` may not decide
    (``deciding``) or be handed ``step``."""
    reason = exclusion(state, user, step, distinct=definition.distinct_approvers)
    if reason is not None:
        raise CommandRejected(
            errors.SEGREGATION_OF_DUTIES, refusal_message(user, reason, deciding=deciding)
        )


def eligibility(
    definition: Definition, state: State, user: str, step: str | None = None
) -> str | None:
    """Could ``user`` hold or decide ``step`` (default: the current step) of the workflow
    in ``state``, as far as segregation of duties goes? Returns the reason they may not
    (``"submitter"`` or ``"already approved <step>"``, the reasons ApproversExcluded
    records) or None when they may.

    Pure: it emits no events and reads no directory. It does not say whether ``user`` is
    assigned to the step, only whether they could be; use it to refuse up front, for
    example an out-of-office delegation to the submitter of a workflow the delegating
    person has an open task on. With ``step`` None and no current step it answers for a
    step nobody has approved yet. On the step where the workflow waits for its submitter
    to resubmit, the submitter is the one who acts, so the answer is None.
    """
    step = step if step is not None else state.step
    if step == SUBMITTER_STEP:
        return None
    return exclusion(state, user, step, distinct=definition.distinct_approvers)
