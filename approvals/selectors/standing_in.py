"""Standing in for someone who is out of office: whose tasks a person may decide right
now (the principals whose absence names them), and the notes the hand-overs of a
person's tasks carried."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import Q

from .. import clock
from ..models import Delegation, User, WorkflowEvent


def principals_of(user: User) -> dict[int, str]:
    """id -> username of the people whose absence, on now, names ``user`` as the
    colleague who decides for them (usually none or one)."""
    now = clock.now()
    rows = Delegation.objects.filter(
        tenant_id=user.member_tenant_id, delegate_id=user.pk, starts_at__lte=now, ends_at__gt=now
    ).values_list("user_id", "user__username")
    return dict(rows)


def inbox_holders(user: User) -> list[int]:
    """Whose open tasks ``user``'s inbox lists: their own, and those of the people they
    stand in for now (marked "for Bob" there, and decided on their behalf)."""
    return [user.pk, *sorted(principals_of(user))]


def handover_notes(
    *, user: User, workflow_ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, tuple[str, str]]:
    """workflow id -> (who handed it, their note) for the latest hand-over of a task to
    ``user`` on each of ``workflow_ids`` that carried a note, or an admin's addition of
    ``user`` (or of someone ``user`` holds the task for) as an approver (the admin,
    their reason); one query."""
    ids = list(workflow_ids)
    if not ids:
        return {}
    rows = (
        WorkflowEvent.objects.filter(tenant_id=user.member_tenant_id, workflow_id__in=ids)
        .filter(
            Q(type="TaskReassigned", payload__to_user=user.username)
            | Q(type="ApproverAdded", payload__user=user.username)
            # a stand-in holding the task of the person added
            | Q(type="ApproverAdded", payload__assignments__contains=[{"user": user.username}])
        )
        .order_by("workflow_id", "seq")
        .values_list("workflow_id", "type", "payload")
    )
    notes: dict[uuid.UUID, tuple[str, str]] = {}
    for wid, kind, payload in rows:
        added = kind == "ApproverAdded"
        note = str(payload.get("reason" if added else "comment") or "")
        if note:
            notes[wid] = (str(payload.get("actor" if added else "from_user") or ""), note)
        else:
            notes.pop(wid, None)
    return notes


def stands_in_for(user: User, holders: Iterable[str]) -> str:
    """The first of ``holders`` (usernames holding a task) whom ``user`` stands in for
    now; "" when none."""
    principals = set(principals_of(user).values())
    return next((h for h in holders if h in principals), "")
