"""Out of office's "also hand over what I hold now", as the pages say it: the tasks
handed to the stand-in, and any that stay with the person, each with why."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest

from ..models import PendingTask, User, Workflow
from ..selectors.standing_in import handover_notes, principals_of
from ..services.delegations import DelegationRefused, delegation_hand_over

HANDED = (
    "{count} handed to {name}, who decides {them} for you; {they} with {name} when you are back."
)
NOTHING_HELD = "You held no tasks to hand over."
KEPT = "{subject} stays with you: {why}"


def _tasks(count: int) -> str:
    return f"{count} task" if count == 1 else f"{count} tasks"


def hand_over_said(request: HttpRequest, user: User, delegation_id: int, delegate: User) -> None:
    """Hand over what ``user`` holds to the stand-in of ``delegation_id`` and say what
    happened in the page's messages."""
    try:
        done = delegation_hand_over(user=user, delegation_id=delegation_id)
    except DelegationRefused as exc:
        messages.error(request, str(exc))
        return
    name = delegate.first_name or delegate.username
    if not done.handed and not done.kept:
        messages.info(request, NOTHING_HELD)
    if done.handed:
        one = len(done.handed) == 1
        messages.success(
            request,
            HANDED.format(
                count=_tasks(len(done.handed)).capitalize(),
                name=name,
                them="it" if one else "them",
                they="it stays" if one else "they stay",
            ),
        )
    if done.kept:
        titles = {
            wf.pk: f"{wf.template.title} {wf.subject_id}"
            for wf in Workflow.objects.filter(
                tenant_id=user.member_tenant_id, pk__in=[w for w, _ in done.kept]
            ).select_related("template")
        }
        for wid, why in done.kept:
            messages.warning(request, KEPT.format(subject=titles.get(wid, "A request"), why=why))


NOTE = "{name}'s note: {note}"


def _first_names(tenant_id: int, usernames: Iterable[str]) -> dict[str, str]:
    wanted = {u for u in usernames if u}
    if not wanted:
        return {}
    rows = User.objects.filter(tenant_id=tenant_id, username__in=wanted)
    return {u.username: u.first_name or u.username for u in rows}


def standing_in_marks(user: User, tasks: Iterable[PendingTask]) -> dict[int, dict[str, Any]]:
    """task id -> what the inbox row adds: for a task of someone ``user`` stands in for
    now, ``behalf`` (their name, the row's "for Bob") and ``for_user`` (whom the
    decision is on behalf of); for a task handed to ``user`` with a note, ``note``
    ("Bob's note: ..."). Two queries at most, whatever the page's length."""
    tasks = list(tasks)
    principals = principals_of(user) if any(t.assignee_id != user.pk for t in tasks) else {}
    notes = handover_notes(
        user=user, workflow_ids={t.workflow_id for t in tasks if t.assignee_id == user.pk}
    )
    names = _first_names(
        user.member_tenant_id, [*principals.values(), *(frm for frm, _ in notes.values())]
    )
    out: dict[int, dict[str, Any]] = {}
    for t in tasks:
        if t.assignee_id != user.pk and t.assignee_id in principals:
            held_by = principals[t.assignee_id]
            out[t.pk] = {"behalf": names.get(held_by, held_by), "for_user": held_by}
        elif t.workflow_id in notes:
            frm, note = notes[t.workflow_id]
            out[t.pk] = {"note": NOTE.format(name=names.get(frm, frm), note=note)}
    return out
