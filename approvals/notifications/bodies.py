"""A mail's bodies, rendered from the facts its outbox row keeps (``messages.facts``).

The facts are plain JSON written in the command's transaction; what costs (signing the
one-click links, reversing URLs) is done here, by the sender, outside it. A link is
minted when its mail is rendered, so its age counts from the mail that carries it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.template.loader import get_template, render_to_string
from django.urls import reverse

from approvals.definitions import raw_definition_for
from approvals.models import Tenant, Workflow, WorkflowEvent
from approvals.words import zones
from approvals.words.decisions import outcome_at

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
        captions = ctx.get("link_captions") or _captions(ctx["workflow"], grant["step"])
        ctx["actions"] = [
            {
                "caption": captions[decision],
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


def link_captions(raw: Any, step: str, submitter: Any) -> dict[str, str]:
    """Each link's caption, named for what its decision does at ``step`` as the app's
    buttons are: "Send back to Alice" where the step sends a rejection back. Kept in the
    mail's facts when it is written, so rendering a batch reads nothing per mail."""
    return _captions_of(raw, step, _requester(submitter))


def _requester(submitter: Any) -> str:
    return (submitter.first_name or submitter.username) if submitter else ""


def _captions_of(raw: Any, step: str, requester: str) -> dict[str, str]:
    return {d: outcome_at(raw, step, d, requester=requester).label for d in links.DECISIONS}


def template_link_captions(template_id: int, step: str, submitter: Any) -> dict[str, str]:
    """``link_captions`` under the published workflow template ``template_id``
    (``raw_definition_for``): worked out once per template, step and requester, as the
    definition is read once per template."""
    return dict(_template_captions(template_id, step, _requester(submitter)))


@lru_cache(maxsize=4096)
def _template_captions(template_id: int, step: str, requester: str) -> tuple[tuple[str, str], ...]:
    return tuple(_captions_of(raw_definition_for(template_id), step, requester).items())


def _captions(workflow_id: str, step: str) -> dict[str, str]:
    """``link_captions`` for a mail whose facts were kept without them: read now."""
    wf = Workflow.objects.select_related("submitter").filter(pk=workflow_id).first()
    raw = raw_definition_for(wf.template_id) if wf is not None else None
    return link_captions(raw, step, wf.submitter if wf is not None else None)


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
    text = render_to_string(TEXT_TEMPLATE, ctx)
    html = render_to_string(HTML_TEMPLATE, ctx)
    return text, html


TEXT_TEMPLATE = "approvals/mail/message.txt"
HTML_TEMPLATE = "approvals/mail/message.html"


def batch_bodies(rows: Sequence[Any]) -> list[tuple[str, str] | Exception]:
    """The bodies of a sender's batch, each as ``mail_bodies`` renders it, in at most two
    queries whatever its size: the organisations' zones for the recipients who chose
    none, and since when each reminded or escalated task waits. A row whose bodies
    cannot be rendered gets the exception instead; the others are not affected."""
    to_render = [row for row in rows if not row.text_body]
    org_zones = _organisation_zones(
        {row.tenant_id for row in to_render if not (row.context or {}).get("zone")}
    )
    since = _asked_at_many([row.context or {} for row in to_render])
    text_template, html_template = get_template(TEXT_TEMPLATE), get_template(HTML_TEMPLATE)
    out: list[tuple[str, str] | Exception] = []
    for row in rows:
        if row.text_body:
            out.append((row.text_body, row.html_body))
            continue
        try:
            facts = row.context or {}
            key = _since_key(facts)
            if key is not None:
                facts = {**facts, "since_at": since.get(key)}
            ctx = mail_context(facts, org_zone=org_zones.get(row.tenant_id, ""))
            out.append((text_template.render(ctx), html_template.render(ctx)))
        except Exception as exc:
            out.append(exc)
    return out


def _organisation_zones(tenant_ids: set[int | None]) -> dict[int, str]:
    ids = {pk for pk in tenant_ids if pk is not None}
    if not ids:
        return {}
    found = Tenant.objects.filter(pk__in=ids).values_list("pk", "time_zone")
    return {pk: zone or "" for pk, zone in found}


def _since_key(facts: dict[str, Any]) -> tuple[str, str, int] | None:
    """What ``mail_context`` would look up for since when a task waits; None when the
    facts say it already or need nothing."""
    if facts.get("since_at") or not facts.get("since_before") or "workflow" not in facts:
        return None
    return str(facts["workflow"]), facts.get("since_step") or "", int(facts["since_before"])


def _asked_at_many(facts: Iterable[dict[str, Any]]) -> dict[tuple[str, str, int], float | None]:
    """``_asked_at`` for many mails in one query: the requests of each workflow and step
    before the latest seq any of its mails asks about, the answer picked here."""
    keys = {key for f in facts if (key := _since_key(f)) is not None}
    if not keys:
        return {}
    bounds: dict[tuple[str, str], int] = {}
    for wf, step, before in keys:
        bounds[(wf, step)] = max(before, bounds.get((wf, step), 0))
    of_keys = Q()
    for (wf, step), before in bounds.items():
        of_keys |= Q(workflow_id=wf, seq__lt=before, **({"payload__step": step} if step else {}))
    asked = WorkflowEvent.objects.filter(of_keys, type="ApprovalRequested").values_list(
        "workflow_id", "seq", "payload__step", "created_at"
    )
    by_workflow: dict[str, list[tuple[int, Any, dt.datetime]]] = {}
    for wf_id, seq, at_step, at in asked:
        by_workflow.setdefault(str(wf_id), []).append((seq, at_step, at))
    out: dict[tuple[str, str, int], float | None] = {}
    for wf, step, before in keys:
        seen = [
            (seq, at)
            for seq, at_step, at in by_workflow.get(wf, ())
            if seq < before and (not step or at_step == step)
        ]
        out[(wf, step, before)] = max(seen)[1].timestamp() if seen else None
    return out


def person_zone(user: Any) -> dt.tzinfo:
    """The zone times are shown in to ``user`` where no browser says one (a mail, a
    digest, a link page opened from a mail): theirs, else their organisation's, else UTC."""
    return (
        zones.zone_of(user)
        or zones.zone_named(organisation_zone(getattr(user, "tenant_id", None)) or None)
        or dt.UTC
    )


def organisation_zone(tenant_id: int | None) -> str:
    """The zone an organisation's admin chose for its mails; "" when none."""
    if tenant_id is None:
        return ""
    zone = Tenant.objects.filter(pk=tenant_id).values_list("time_zone", flat=True).first()
    return zone or ""
