"""Signed one-click Approve / Reject links.

A link is a ``TimestampSigner`` token (its own salt) over the workflow, the step, the
round (the seq of the event that gave the person the task), the person, the decision, a
link id and the request id the decision is recorded with. The signature is the
credential for that one decision and nothing else: the pages it opens show that task's
summary only. ``link_check`` says why a link may not be used; ``link_confirm``
(confirm.py) records the decision and the ``LinkUse`` row in one transaction, so a
link decides once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import signing
from django.urls import reverse

from approvals.models import PendingTask, User, Workflow, WorkflowEvent

from .models import LinkUse

SALT = "approvals.notifications.link"
DECISIONS = ("approve", "reject")

# Why a link is refused: (HTTP status, what the page says).
FORGED = (400, "This link is not valid: it was damaged or not made by us.")
EXPIRED = (410, "This link has expired. Open the request in the app to decide it.")
# A second use by the link's own person is a duplicate, not an error: their decision
# stands (the page says what was recorded and when).
USED = (200, "Your decision was already recorded; nothing more to do.")
MOVED_ON = (409, "This request has moved on since the e-mail was sent; nothing was recorded.")
NOT_ASSIGNED = (403, "This step is no longer yours to decide; nothing was recorded.")
GONE = (404, "This request no longer exists.")
WRONG_PERSON = (
    403,
    "This link was sent to someone else. Sign out to use it, or use the link in your own mail.",
)

# Events that give someone a task; a later one for the same step starts a new round.
_ROUND_EVENTS = ("ApprovalRequested", "SentBack")


@dataclass(frozen=True)
class Link:
    workflow_id: str
    step: str
    round: int
    user_id: int
    decision: str
    link_id: str
    request_id: str


class LinkRefused(Exception):
    def __init__(self, refusal: tuple[int, str], used: LinkUse | None = None) -> None:
        super().__init__(refusal[1])
        self.status, self.message = refusal
        self.used = used


def _signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=SALT)


def link_token(*, workflow_id: str, step: str, round: int, user_id: int, decision: str) -> str:
    """A fresh signed token; each carries its own link id and request id."""
    assert decision in DECISIONS
    link_id = secrets.token_urlsafe(12)
    doc = {
        "w": str(workflow_id),
        "s": step,
        "r": round,
        "u": user_id,
        "d": decision,
        "i": link_id,
        "q": f"mail-{link_id}",
    }
    return _signer().sign_object(doc, compress=True)


def link_url(token: str) -> str:
    return settings.APPROVALS_BASE_URL + reverse("mail-link", args=[token])


def link_read(token: str) -> Link:
    """The link a token carries; LinkRefused for a forged, tampered or expired one."""
    try:
        doc = _signer().unsign_object(token, max_age=settings.APPROVALS_LINK_MAX_AGE_SECONDS)
    except signing.SignatureExpired as exc:
        raise LinkRefused(EXPIRED) from exc
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise LinkRefused(FORGED) from exc
    try:
        link = Link(
            str(doc["w"]),
            str(doc["s"]),
            int(doc["r"]),
            int(doc["u"]),
            str(doc["d"]),
            str(doc["i"]),
            str(doc["q"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise LinkRefused(FORGED) from exc
    if link.decision not in DECISIONS:
        raise LinkRefused(FORGED)
    return link


@dataclass(frozen=True)
class LinkTarget:
    link: Link
    workflow: Workflow
    user: User


def link_check(*, token: str, viewer: Any = None) -> LinkTarget:
    """Everything a link needs to be usable now, or LinkRefused saying what is not.
    ``viewer`` is the signed-in user, if any: someone else's link is refused to them."""
    link = link_read(token)
    used = LinkUse.objects.select_related("user", "workflow").filter(link_id=link.link_id).first()
    if used is not None:
        signed_in = viewer is not None and getattr(viewer, "is_authenticated", False)
        if signed_in and viewer.pk != used.user_id:
            raise LinkRefused(WRONG_PERSON)
        raise LinkRefused(USED, used)
    user = User.objects.filter(pk=link.user_id, is_active=True).first()
    if user is None or user.tenant_id is None:
        raise LinkRefused(GONE)
    if viewer is not None and getattr(viewer, "is_authenticated", False) and viewer.pk != user.pk:
        raise LinkRefused(WRONG_PERSON)
    workflow = (
        Workflow.objects.select_related("template", "submitter")
        .filter(pk=link.workflow_id, tenant_id=user.tenant_id)
        .first()
    )
    if workflow is None:
        raise LinkRefused(GONE)
    later_round = WorkflowEvent.objects.filter(
        workflow_id=workflow.pk, seq__gt=link.round, type__in=_ROUND_EVENTS
    ).exists()
    if workflow.status != "RUNNING" or workflow.current_step != link.step or later_round:
        raise LinkRefused(MOVED_ON)
    holds = PendingTask.objects.filter(
        workflow_id=workflow.pk, assignee_id=user.pk, step=link.step
    ).exists()
    if not holds:
        raise LinkRefused(NOT_ASSIGNED)
    return LinkTarget(link, workflow, user)
