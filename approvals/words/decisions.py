"""What people read for each decision the engine knows (``templates_engine.commands
.DECISIONS``), named for what it will do: a rejection that the workflow template sends
back reads "Send back to Alice", one that ends the request "Reject (ends the request)".

``outcome`` is the one place these words are made: the buttons of the request page,
the inbox and the mail, the question asked first, the undo bar, the message once it is
recorded and the history's sentence all come from it. Delegating has its own form, so
it has no button here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .steps import humanise, step_titles, title_in

# Where a decision leads (``Outcome.target``): the request ends, back to its submitter,
# or else back to the step of that id; an approval leads on ("").
END = "end"
SUBMITTER = "submitter"
ON = ""

DECISIONS = ("approve", "reject", "send_back")


@dataclass(frozen=True)
class Outcome:
    """One decision's words at one step."""

    decision: str
    target: str  # END, SUBMITTER, a step id, or ON for an approval
    label: str  # the button: "Send back to Alice"
    done: str  # once recorded, with ``{what}`` for the request: "Sent {what} back to Alice"
    past: str  # the history's verb phrase: "sent the request back to Alice"
    question: str  # asked first, with ``{what}``: "Send {what} back to Alice?"

    @property
    def ends(self) -> bool:
        return self.target == END

    @property
    def sends_back(self) -> bool:
        return self.target not in (END, ON)

    def done_words(self, what: str) -> str:
        return self.done.replace("{what}", what)

    def question_words(self, what: str) -> str:
        return self.question.replace("{what}", what)


def target_of(step: Mapping[str, Any] | None, decision: str) -> str:
    """Where ``decision`` at the approval step ``step`` (its definition as the workflow
    template has it) leads, by the engine's defaults (``steps.approval``)."""
    step = step or {}
    if decision == "reject":
        target = step.get("on_reject", END)
    elif decision == "send_back":
        target = step.get("send_back_to", SUBMITTER)
    else:
        return ON
    return target if isinstance(target, str) and target else END


def outcome(
    decision: str, target: str, *, requester: str, step_title: str, target_title: str = ""
) -> Outcome:
    """The words of ``decision`` at the step titled ``step_title``, leading to
    ``target``; ``requester`` is the submitter's name, ``target_title`` the title of the
    step it goes back to."""
    at = f" at the {step_title} step" if step_title else ""
    if target == ON:
        return Outcome(
            decision,
            ON,
            "Approve",
            "Approved {what}",
            f"approved the {step_title} step" if step_title else "approved",
            "Approve {what}?",
        )
    if target == END:
        return Outcome(
            decision,
            END,
            "Reject (ends the request)",
            "Rejected {what}; the request ends",
            f"rejected the request{at}, which ends it",
            "Reject {what}? This ends the request.",
        )
    if target == SUBMITTER:
        whom = requester or "the requester"
    else:
        whom = f"the {target_title or humanise(target)} step"
    return Outcome(
        decision,
        target,
        f"Send back to {whom}",
        f"Sent {{what}} back to {whom}",
        f"sent the request back to {whom}" + (f" from the {step_title} step" if step_title else ""),
        f"Send {{what}} back to {whom}?",
    )


def step_outcomes(
    raw_definition: Mapping[str, Any] | None, step_id: str | None, *, requester: str
) -> list[Outcome]:
    """The decisions offered at the approval step ``step_id``, each named for what the
    workflow template will record; a rejection that leads where a send-back does is
    offered once, as the send-back."""
    steps = [s for s in (raw_definition or {}).get("steps") or [] if isinstance(s, Mapping)]
    step = next((s for s in steps if s.get("id") == step_id), None)
    titles = step_titles(raw_definition)
    here = title_in(titles, step_id)
    out: list[Outcome] = []
    for decision in DECISIONS:
        target = target_of(step, decision)
        if decision == "reject" and target == target_of(step, "send_back"):
            continue
        out.append(
            outcome(
                decision,
                target,
                requester=requester,
                step_title=here,
                target_title=titles.get(target, ""),
            )
        )
    return out


# The submitter's own step, after a send-back: approving resubmits, rejecting
# withdraws (``templates_engine.decider``).
_SUBMITTERS = {
    "approve": Outcome(
        "approve",
        ON,
        "Resubmit",
        "Resubmitted {what}",
        "resubmitted the request",
        "Resubmit {what}?",
    ),
    "reject": Outcome(
        "reject",
        END,
        "Withdraw",
        "Withdrew {what}",
        "withdrew the request",
        "Withdraw {what}? It stops for good and cannot be resubmitted.",
    ),
}


def outcome_at(
    raw_definition: Mapping[str, Any] | None, step_id: str | None, decision: str, *, requester: str
) -> Outcome:
    """The words of ``decision`` at ``step_id``, offered or not (a rejection folded into
    the send-back still reads as where it leads); at the submitter's own step, a
    resubmission or a withdrawal."""
    if step_id == SUBMITTER and decision in _SUBMITTERS:
        return _SUBMITTERS[decision]
    steps = [s for s in (raw_definition or {}).get("steps") or [] if isinstance(s, Mapping)]
    step = next((s for s in steps if s.get("id") == step_id), None)
    target = target_of(step, decision)
    titles = step_titles(raw_definition)
    return outcome(
        decision,
        target,
        requester=requester,
        step_title=title_in(titles, step_id),
        target_title=titles.get(target, ""),
    )
