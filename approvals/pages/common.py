"""What the page modules share: the signed-in member, first names, a template's
schema, a workflow's subject and decision words, and the messages they all show."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    JsonResponse,
)

from templates_engine.steps.approval import REASON_REQUIRED, TURNING_BACK

from ..definitions import definition_for, raw_definition_for
from ..models import User, Workflow, WorkflowTemplate

NO_SUCH_COLLEAGUE = "Choose a colleague from your organisation."


BUSY = "The workflow is busy; please try again."


# How long the server holds a decision sent from a page, with an Undo, before it is
# recorded (services.held_decisions reads the setting at each hold).
UNDO_SECONDS: int = settings.APPROVALS_UNDO_SECONDS


REASON_TEXTS = {d: REASON_REQUIRED.format(decision=words) for d, words in TURNING_BACK.items()}


def _member(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User) or user.tenant_id is None:
        raise Http404
    return user


def _names(user: User, usernames: Iterable[str | None]) -> dict[str, str]:
    """Usernames -> first names (the username when none), in one query."""
    wanted = {u for u in usernames if u}
    if not wanted:
        return {}
    rows = User.objects.filter(tenant_id=user.member_tenant_id, username__in=wanted).values_list(
        "username", "first_name"
    )
    return {u: first or u for u, first in rows}


def _raw(template: WorkflowTemplate) -> Mapping[str, Any]:
    return template.definition if isinstance(template.definition, Mapping) else {}


def _cached_schema(template_id: int) -> Mapping[str, Any] | None:
    schema = raw_definition_for(template_id).get("schema")
    return schema if isinstance(schema, Mapping) else None


def _schema(template: WorkflowTemplate) -> Mapping[str, Any] | None:
    schema = _raw(template).get("schema")
    return schema if isinstance(schema, Mapping) else None


def _subject(wf: Workflow) -> str:
    return f"{wf.template.title} {wf.subject_id}"


def _reason_required(wf: Workflow, step: str | None) -> bool:
    """Whether ``step`` asks a reason to reject or send back (the engine refuses the
    decision without one; the page says so before it is sent)."""
    definition = definition_for(wf.template_id)
    if not step or step not in {s.id for s in definition.steps}:
        return True
    return bool(getattr(definition.step(step), "reason_required", True))


def _query_without(request: HttpRequest, *names: str) -> str:
    """The page's query string without ``names``, for links that keep the rest."""
    params = request.GET.copy()
    for name in names:
        params.pop(name, None)
    return params.urlencode()


def _awaits_changes_from(user: User, wf: Workflow) -> bool:
    """The workflow was sent back and waits for ``user``, its submitter, alone. (The
    snapshot keeps ``resubmit_step`` after a resubmission: who is asked is what says.)
    A row read without its snapshot carries those two keys as ``resubmit_step`` and
    ``asked`` (web.search)."""
    if wf.submitter_id != user.pk or wf.status != "RUNNING":
        return False
    if hasattr(wf, "asked"):
        step, assignments = getattr(wf, "resubmit_step", None), wf.asked
    else:
        step, assignments = wf.snapshot.get("resubmit_step"), wf.snapshot.get("assignments")
    if not step:
        return False
    asked = [a.get("user") for a in assignments or [] if isinstance(a, Mapping)]
    return asked == [user.username]


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _answer(
    request: HttpRequest,
    back: str,
    *,
    ok: bool,
    message: str,
    code: int,
    status: str = "",
    **more: object,
) -> HttpResponse:
    """For the pages' script a JSON answer; for a plain form post a message and a
    redirect."""
    if _wants_json(request):
        body = {"ok": ok, "message": message, "status": status, **more}
        return JsonResponse(body, status=code)
    (messages.success if ok else messages.error)(request, message)
    return HttpResponseRedirect(back)


def _requester(wf: Any) -> str:
    """The submitter's first name (or user name), as the decision buttons name them."""
    submitter = wf.submitter
    return (submitter.first_name or submitter.username) if submitter else ""
