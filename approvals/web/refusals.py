"""Why a decision was refused, in people's words. The engine's refusals name people by
user name and steps by id ("no user 'x'", "The submitter of a workflow may not be given
any of its steps"): fine for the API, not for a page. A hand-over refused for segregation
of duties names the colleague it was meant for, not the person who tried it."""

from __future__ import annotations

from templates_engine import CommandRejected
from templates_engine import errors as engine_errors
from templates_engine.segregation import SUBMITTER_MAY_NOT_DECIDE, SUBMITTER_MAY_NOT_HOLD

# NOT_YOUR_STEP reads as the engine words it: the step the request waits for, by title.
REJECTION_TEXT = {
    "ALREADY_DECIDED": "You have already approved this step.",
    "WORKFLOW_FINISHED": "This workflow has already finished.",
    "SEGREGATION_OF_DUTIES": "You submitted this request, so you cannot decide it.",
}
NO_SUCH_PERSON = (
    "There is nobody by that name in your organisation; choose a colleague from the list."
)
YOU_ALREADY_APPROVED = (
    "You already approved another step of this request, and each step needs a different "
    "person, so you cannot decide this one."
)
SUBMITTER_CANNOT_TAKE = (
    "{name} submitted this request, and nobody may approve their own request: "
    "hand it to someone else."
)
ALREADY_APPROVED_CANNOT_TAKE = (
    "{name} already approved another step of this request, and each step needs a "
    "different person: hand it to someone else."
)


def refusal_text(exc: CommandRejected, *, decision: str, colleague: str = "") -> str:
    """The sentence for the engine's refusal ``exc`` of ``decision`` (``colleague``:
    the name of the person a hand-over was for)."""
    if exc.code == engine_errors.UNKNOWN_USER:
        return NO_SUCH_PERSON
    if exc.code == engine_errors.SEGREGATION_OF_DUTIES:
        message = getattr(exc, "message", "") or str(exc)
        if decision == "delegate" and message != SUBMITTER_MAY_NOT_DECIDE:
            words = (
                SUBMITTER_CANNOT_TAKE
                if message == SUBMITTER_MAY_NOT_HOLD
                else (ALREADY_APPROVED_CANNOT_TAKE)
            )
            return words.format(name=colleague or "That colleague")
        if message != SUBMITTER_MAY_NOT_DECIDE:
            return YOU_ALREADY_APPROVED
    return REJECTION_TEXT.get(exc.code, getattr(exc, "message", "") or str(exc))
