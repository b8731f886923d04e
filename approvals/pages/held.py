"""Decisions held by the server for their undo window, as the pages send, show and
undo them (services.held_decisions): the holder sees an Undo until the window has
passed, and every other holder of the task sees it being decided."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from .. import clock
from ..models import HeldDecision, User, Workflow
from ..runtime.commands import WorkflowNotFound
from ..selectors.workflows import workflow_get
from ..services.held_decisions import (
    HoldRefused,
    decision_undo,
    held_release_next,
    held_state,
)
from ..web import present
from ..words.decisions import outcome_at
from ..words.held import deciding_words
from .common import _answer, _member, _names, _raw, _requester, _subject

HELD_WORDS = "{done}. It is recorded in {seconds} seconds."
UNDONE_WORDS = "Undone: nothing was recorded for {subject}."


def done_message(
    user: User,
    workflow_id: Any,
    decision: str,
    delegate_to: str | None,
    *,
    before: Workflow | None = None,
    step: str | None = None,
) -> str:
    """What a page says once a decision is recorded, in the words its button said
    (``before``: the workflow as it was, or ``step``: the step decided), and what comes
    next."""
    wf = workflow_get(user=user, workflow_id=workflow_id)
    what = _subject(wf) if wf is not None else "the request"
    if decision == "delegate":
        names = _names(user, [delegate_to])
        return f"{what} was handed to {present.person(delegate_to, names)}."
    message = _done(before or wf, before.current_step if before else step, decision, what) + "."
    if wf is not None:
        title = present.step_title(_raw(wf.template), wf.current_step)
        then = present.next_phrase(status=wf.status, step_title=title, step=wf.current_step)
        message += " " + then
    return message


def _done(wf: Workflow | None, step: str | None, decision: str, what: str) -> str:
    """``Sent Expense claim R-8 back to Alice``: the decision's outcome at ``step``."""
    if wf is None or step is None:  # an approval reads the same at every step
        return outcome_at(None, None, decision, requester="").done_words(what)
    return outcome_at(_raw(wf.template), step, decision, requester=_requester(wf)).done_words(what)


def _seconds_left(hold: HeldDecision) -> int:
    return max(0, int(-(-(hold.release_at - clock.now()).total_seconds() // 1)))


def _links(hold: HeldDecision) -> dict[str, str]:
    args = [hold.workflow_id, hold.request_id]
    return {
        "undo": reverse("held-undo", args=args),
        "release": reverse("held-release", args=args),
    }


def held_context(user: User, hold: HeldDecision | None, subject: str) -> dict[str, Any] | None:
    """How a page shows a held decision: to its holder, the words and the Undo; to
    anyone else, who is deciding."""
    if hold is None:
        return None
    if hold.actor_id != user.pk:
        name = hold.actor.first_name or hold.actor.username
        return {"mine": False, "words": deciding_words(name, hold.decision)}
    seconds = _seconds_left(hold)
    done = _done(hold.workflow, hold.step, hold.decision, subject)
    words = HELD_WORDS.format(done=done, seconds=seconds)
    return {
        "mine": True,
        "words": words,
        "seconds": seconds,
        "decision": hold.decision,
        "request_id": hold.request_id,
        **_links(hold),
    }


def held_answer(request: HttpRequest, hold: HeldDecision, back: str) -> HttpResponse:
    """The answer to a decision the server now holds."""
    subject = _subject(hold.workflow)
    seen = held_context(hold.actor, hold, subject)
    assert seen is not None
    return _answer(
        request,
        back,
        ok=True,
        message=seen["words"],
        code=202,
        held=True,
        seconds=seen["seconds"],
        undo=seen["undo"],
        release=seen["release"],
    )


def _own_hold(user: User, workflow_id: uuid.UUID, request_id: str) -> HeldDecision | None:
    return (
        HeldDecision.objects.filter(workflow_id=workflow_id, request_id=request_id, actor=user)
        .select_related("workflow__template")
        .first()
    )


@login_required
@require_http_methods(["POST"])
def held_undo(request: HttpRequest, workflow_id: uuid.UUID, request_id: str) -> HttpResponse:
    user = _member(request)
    back = reverse("workflow", args=[workflow_id])
    if request.POST.get("next") == "inbox":
        back = reverse("inbox")
    try:
        hold = decision_undo(user=user, workflow_id=workflow_id, request_id=request_id)
    except (HoldRefused, WorkflowNotFound) as exc:
        return _answer(request, back, ok=False, message=str(exc), code=409)
    words = UNDONE_WORDS.format(subject=_subject(hold.workflow))
    return _answer(request, back, ok=True, message=words, code=200, state="undone")


@login_required
@require_http_methods(["POST"])
def held_release(request: HttpRequest, workflow_id: uuid.UUID, request_id: str) -> HttpResponse:
    """The page asks, once its window has passed, whether its decision is recorded; a
    decision due and not yet taken by the periodic job is recorded now."""
    user = _member(request)
    back = reverse("workflow", args=[workflow_id])
    hold = _own_hold(user, workflow_id, request_id)
    if hold is None:
        return _answer(request, back, ok=False, message="Nothing is held.", code=404)
    if held_state(hold) == "held" and hold.release_at <= clock.now():
        held_release_next(
            tenant_id=user.member_tenant_id, workflow_id=workflow_id, request_id=request_id
        )
        hold.refresh_from_db()
    state = held_state(hold)
    if state == "recorded":
        message = done_message(user, workflow_id, hold.decision, None, step=hold.step)
    elif state == "refused":
        message = f"{_subject(hold.workflow)} was not recorded: {hold.refused}"
    else:
        seen = held_context(user, hold, _subject(hold.workflow)) or {}
        message = (
            UNDONE_WORDS.format(subject=_subject(hold.workflow))
            if state == "undone"
            else seen["words"]
        )
    ok = state in ("recorded", "held")
    return _answer(
        request, back, ok=ok, message=message, code=200, state=state, seconds=_seconds_left(hold)
    )
