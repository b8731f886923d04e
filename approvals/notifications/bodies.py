"""A mail's bodies, rendered from the facts its outbox row keeps (``messages.facts``).

The facts are plain JSON written in the command's transaction; what costs (signing the
one-click links, reversing URLs) is done here, by the sender, outside it. A link is
minted when its mail is rendered, so its age counts from the mail that carries it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.urls import reverse

from approvals import zones
from approvals.decisions import DECISION_LABELS
from approvals.models import Tenant, WorkflowEvent

from . import links


def mail_context(facts: dict[str, Any], org_zone: str = "") -> dict[str, Any]:
    """The template context of a mail: its facts, with the links they grant minted and
    the page addresses added. Facts kept before the links were minted here already
    carry them (``actions``, ``workflow_url``) and are used as they are. Times are shown
    in the recipient's zone, else ``org_zone`` (the organisation's), else UTC."""
    ctx = dict(facts)
    base = settings.APPROVALS_BASE_URL
    if "workflow" in ctx:
        ctx["workflow_url"] = base + reverse("workflow", args=[ctx["workflow"]])
    if "settings_url" not in ctx:
        ctx["settings_url"] = base + reverse("notification-settings")
    ctx.setdefault("link_days", settings.APPROVALS_LINK_MAX_AGE_SECONDS // 86400)
    grant = ctx.get("link")
    if grant:
        ctx["actions"] = [
            {
                "caption": DECISION_LABELS[decision],
                "url": links.link_url(
                    links.link_token(
                        workflow_id=ctx["workflow"],
                        step=grant["step"],
                        round=grant["round"],
                        user_id=grant["user"],
                        decision=decision,
                    )
                ),
            }
            for decision in links.DECISIONS
        ]
    ctx.setdefault("actions", [])
    zone = zones.zone_named(ctx.get("zone") or None) or zones.zone_named(org_zone or None)
    if "due" not in ctx:
        ctx["due"] = _moment(ctx.get("due_at"), zone)
    if not ctx.get("since_at") and ctx.get("since_before") and "workflow" in ctx:
        ctx["since_at"] = _asked_at(
            ctx["workflow"], ctx.get("since_step") or "", ctx["since_before"]
        )
    ctx["since"] = _moment(ctx.get("since_at"), zone)
    ctx.setdefault("summary", ctx.get("title", ""))
    ctx.setdefault("comment_label", "Comment")
    return ctx


def _asked_at(workflow_id: str, step: str, before_seq: int) -> float | None:
    """When the step a reminder or an escalation is about last asked for a decision
    before it: read when the mail is rendered, so the timer's command reads no history."""
    asked = WorkflowEvent.objects.filter(
        workflow_id=workflow_id, type="ApprovalRequested", seq__lt=before_seq
    )
    if step:
        asked = asked.filter(payload__step=step)
    at = asked.order_by("-seq").values_list("created_at", flat=True).first()
    return at.timestamp() if at else None


def _moment(at: float | None, zone: dt.tzinfo | None) -> str:
    """An instant kept in a mail's facts, in ``zone`` (UTC, named, when there is none:
    a mail has no browser to ask)."""
    if not at:
        return ""
    moment = dt.datetime.fromtimestamp(at, tz=dt.UTC)
    return zones.moment(moment, zone or dt.UTC)


def mail_bodies(row: Any) -> tuple[str, str]:
    """The text and HTML bodies of an outbox row: those sent, or rendered now from the
    facts it keeps (times in the recipient's zone, else their organisation's)."""
    if row.text_body:
        return row.text_body, row.html_body
    facts = row.context or {}
    org_zone = "" if facts.get("zone") else organisation_zone(row.tenant_id)
    ctx = mail_context(facts, org_zone=org_zone)
    text = render_to_string("approvals/mail/message.txt", ctx)
    html = render_to_string("approvals/mail/message.html", ctx)
    return text, html


def organisation_zone(tenant_id: int | None) -> str:
    """The zone an organisation's admin chose for its mails; "" when none."""
    if tenant_id is None:
        return ""
    zone = Tenant.objects.filter(pk=tenant_id).values_list("time_zone", flat=True).first()
    return zone or ""
