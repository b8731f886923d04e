"""Questions to a person: comments that named them (``@alice``) on a request they may
read, which they have not answered yet. An answer is any comment or decision of theirs
on that request after the question. Their inbox and My requests list them."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from django.db.models import Max, QuerySet

from .. import access
from ..models import User, WorkflowEvent

# A person's open questions the lists show, newest first.
LIMIT = 20


@dataclass(frozen=True)
class Question:
    workflow_id: uuid.UUID
    seq: int
    asker: str  # username
    text: str
    at: dt.datetime


def asked_of(user: User) -> QuerySet[WorkflowEvent]:
    """The comments of ``user``'s organisation that named them, not their own, newest
    first: its comments walked along the index ``event_comments`` (migration 0220),
    whose leakproof columns PostgreSQL may use under the organisation's policy."""
    return (
        WorkflowEvent.objects.filter(
            tenant_id=user.member_tenant_id,
            type="CommentAdded",
            payload__mentions__contains=[user.username],
        )
        .exclude(payload__actor=user.username)
        .order_by("-created_at", "-seq")
    )


def questions_for(*, user: User, limit: int = LIMIT) -> list[Question]:
    """``user``'s unanswered questions, the newest first, one per request (its latest)."""
    mine = WorkflowEvent.objects.filter(tenant_id=user.member_tenant_id)
    asked = asked_of(user).values_list(
        "workflow_id", "seq", "payload__actor", "payload__comment", "created_at"
    )
    latest: dict[uuid.UUID, Question] = {}
    for wid, seq, asker, text, at in asked[: limit * 5]:
        if wid not in latest:
            latest[wid] = Question(wid, seq, str(asker or ""), str(text or ""), at)
    if not latest:
        return []
    answered = dict(
        mine.filter(
            workflow_id__in=list(latest),
            type__in=["CommentAdded", "DecisionRecorded"],
            payload__actor=user.username,
        )
        .order_by()
        .values_list("workflow_id")
        .annotate(last=Max("seq"))
        .values_list("workflow_id", "last")
    )
    readable = set(
        access.workflows_readable(user).filter(pk__in=list(latest)).values_list("pk", flat=True)
    )
    open_ = [q for wid, q in latest.items() if q.seq > (answered.get(wid) or 0) and wid in readable]
    return open_[:limit]
