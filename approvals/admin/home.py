"""The admin home by role: what each person came for, above the list of tables. A
finance admin finds the workflow templates; an organisation admin what needs attention
(one row per request) and offboarding; an auditor the verification and the export."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse

from .. import access
from ..access import Role
from ..selectors import attention
from ..selectors.templates import workflow_templates_latest
from ..words import zones
from .operation_pages import attention_row

# Rows of "What needs attention" on the home; the whole list is one link away.
ATTENTION_ON_HOME = 8
# The pseudo-apps site.py adds to the app list that the home's sections replace.
LEADS = frozenset({"people", "audit"})
# Tables of the engine's machinery: for those who act on them (organisation admins
# re-arm timers and retry steps), not on an auditor's home.
ENGINE_TABLES = frozenset({"Timer", "ActivityAttempt"})


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""
    links: list[tuple[str, str]] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    empty: str = ""


def shows_engine_tables(user: Any) -> bool:
    return bool(user.is_superuser or access.has_role(user, Role.ORG_ADMIN))


def home_sections(user: Any) -> list[Section]:
    """The sections at the top of ``user``'s admin home, most wanted first."""
    sections: list[Section] = []
    if access.admin_may(user, "change", "workflowtemplate") and access.is_member(user):
        sections.append(_templates(user))
    if access.is_member(user) and (user.is_superuser or access.has_role(user, Role.ORG_ADMIN)):
        sections.append(_attention(user))
    if access.may_deactivate_people(user):
        sections.append(
            Section(
                "offboarding",
                "Offboarding",
                "When someone leaves: see each task they hold and where it goes, change "
                "any of them, and confirm with a reason.",
                [("Offboard someone who leaves", reverse("admin:approvals_user_offboard"))],
            )
        )
    if access.may_set_retention(user):
        sections.append(
            Section(
                "retention",
                "Retention and archive",
                "How long the organisation keeps a request's history, and how long it "
                "stays live before it moves to the archive.",
                [("Set retention and the live window", reverse("admin:retention"))],
            )
        )
    if access.may_audit(user):
        links = [("Verify the audit trail", reverse("audit-verify"))]
        if access.admin_may(user, "view", "workflowevent"):
            links.append(
                ("Export the audit trail", reverse("admin:approvals_workflow_audit_export"))
            )
        sections.append(
            Section(
                "audit",
                "Audit",
                "Check that no event was changed after it was written, for the whole "
                "organisation, a workflow template or one request; download the history "
                "to check it on your own machine.",
                links,
            )
        )
    return sections


def _templates(user: Any) -> Section:
    rows = [
        {
            "cells": [
                template.title or template.key,
                f"version {template.version}",
                zones.moment_offset(template.published_at) if template.published_at else "",
            ],
            "url": reverse("admin:approvals_workflowtemplate_change", args=[template.pk]),
        }
        for template in workflow_templates_latest(tenant_id=user.tenant_id)
    ]
    links = []
    if access.admin_may(user, "add", "workflowtemplate"):
        links.append(("Add a workflow template", reverse("admin:approvals_workflowtemplate_add")))
    return Section(
        "templates",
        "Workflow templates",
        "The forms people fill and the steps their requests go through. Open one to change "
        "its rules, try it, compare versions or retire it.",
        links,
        ["Workflow template", "Newest version", "Published"],
        rows,
        "Your organisation has no workflow template yet.",
    )


def _attention(user: Any) -> Section:
    items = attention.attention_by_request(user=user)
    rows = []
    for item in items[:ATTENTION_ON_HOME]:
        row = attention_row(item, user)
        since = zones.moment_offset(item.since)
        rows.append(
            {"cells": [row["request"], row["kind"], row["what"], since], "url": row["workflow"]}
        )
    more = f"All that needs attention ({len(items)})" if items else "What needs attention"
    return Section(
        "attention",
        "What needs attention",
        "Requests that wait for a person, the longest-waiting first; one row per request.",
        [(more, reverse("admin:approvals_workflow_attention"))],
        ["Request", "What", "Details", "Since"],
        rows,
        "Nothing needs attention.",
    )


def home_app_list(app_list: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The list of tables under the sections: without the entries a section leads to."""
    return [app for app in app_list if app.get("app_label") not in LEADS]
