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

from . import links


def mail_context(facts: dict[str, Any]) -> dict[str, Any]:
    """The template context of a mail: its facts, with the links they grant minted and
    the page addresses added. Facts kept before the links were minted here already
    carry them (``actions``, ``workflow_url``) and are used as they are."""
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
    if "due" not in ctx:
        ctx["due"] = _due(ctx.get("due_at"), ctx.get("zone") or "")
    return ctx


def _due(due_at: float | None, zone: str) -> str:
    """The task's due time in the recipient's chosen zone (UTC when they chose none:
    a mail has no browser to ask)."""
    if not due_at:
        return ""
    at = dt.datetime.fromtimestamp(due_at, tz=dt.UTC)
    return zones.moment(at, zones.zone_named(zone or None) or dt.UTC)


def mail_bodies(row: Any) -> tuple[str, str]:
    """The text and HTML bodies of an outbox row: those sent, or rendered now from the
    facts it keeps."""
    if row.text_body:
        return row.text_body, row.html_body
    ctx = mail_context(row.context)
    text = render_to_string("approvals/mail/message.txt", ctx)
    html = render_to_string("approvals/mail/message.html", ctx)
    return text, html
