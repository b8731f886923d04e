"""The permission matrix: every API endpoint, page and admin page, tried as each kind
of person, with the answer each must get. A URL the matrix has no row for fails the
suite (``test_every_url_has_a_row``), so a new endpoint cannot ship without its rules.

Each cell runs on a world of its own: alice has submitted an expense that waits for
her manager bob, and ivan stands in for bob (an out-of-office delegation set after the
task was assigned). Expected answers are status codes; a trailing ``!`` means the
workflow's history grew (the command was recorded), a trailing ``+`` / ``-`` on a
search that the workflow is / is not in the results.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from approvals import clock
from approvals.models import Delegation, Tenant, User, WorkflowEvent, WorkflowTemplate
from approvals.notifications.bodies import mail_bodies
from approvals.notifications.models import MailMessage
from approvals.pages.absence import ABSENCE_SET_UP_BY
from approvals.services.attachments import attachment_add, attachments_check
from approvals.services.drafts import draft_files_add, draft_save
from approvals.services.templates import workflow_template_publish
from approvals.services.tokens import token_issue

from ..files import pdf_bytes
from ..helpers import EXPENSE, start_expense

pytestmark = pytest.mark.django_db

PERSONAS = {
    "submitter": "alice",
    "assignee": "bob",
    "delegate": "ivan",
    "employee": "victor",
    "finance_admin": "fiona",
    "auditor": "audrey",
    "org_admin": "olga",
    "integration": "erp",
    "other_tenant": "gina",
    "superuser": "admin",
    "anonymous": None,
}
P = list(PERSONAS)


def answers(*codes: str) -> dict[str, str]:
    assert len(codes) == len(P)
    return dict(zip(P, codes, strict=True))


@dataclasses.dataclass(frozen=True)
class World:
    workflow_id: str
    template_pk: int
    draft_id: str = ""  # alice's draft, complete: only she sees, changes or submits it
    file_sha: str = ""  # a receipt alice attached to the request, and kept with her draft
    absence_id: int = 0  # bob's absence, on now, with ivan standing in


Call = Callable[[Any, World, str], Any]


@dataclasses.dataclass(frozen=True)
class Row:
    name: str  # the URL name it covers
    call: Call
    expect: dict[str, str]
    api: bool = True  # a bearer-token client; else a browser session


def _decide(c: Any, w: World, persona: str) -> Any:
    body: dict[str, Any] = {"decision": "approve", "requestId": f"m-{persona}"}
    if persona == "delegate":
        body["onBehalfOf"] = "bob"
    return c.post(f"/api/workflows/{w.workflow_id}/decisions", body, format="json")


def _page_decide(c: Any, w: World, persona: str) -> Any:
    body = {"decision": "approve", "request_id": f"p-{persona}"}
    return c.post(f"/workflows/{w.workflow_id}/decide", body)


def _victor_away(delegate: str) -> dict[str, Any]:
    """The admin's form for an out-of-office of victor's, ``delegate`` standing in."""
    now = clock.now()
    return {
        "tenant": Tenant.objects.get(slug="acme").pk,  # a superuser's form asks for it
        "user": User.objects.get(username="victor").pk,
        "delegate": User.objects.get(username=delegate).pk,
        "starts_at_0": now.strftime("%Y-%m-%d"),
        "starts_at_1": "00:00:00",
        "ends_at_0": (now + dt.timedelta(days=30)).strftime("%Y-%m-%d"),
        "ends_at_1": "00:00:00",
        "reason": "leave",
    }


def _bobs_absence_naming(c: Any, w: World, delegate: str) -> Any:
    """The admin's change of bob's absence (ivan standing in) to ``delegate``."""
    form = _victor_away(delegate) | {"user": User.objects.get(username="bob").pk}
    answer = c.post(f"/admin/approvals/delegation/{w.absence_id}/change/", form)
    if delegate != "farah":
        assert Delegation.objects.get(pk=w.absence_id).delegate.username == "ivan"
    return answer


def _bobs_link(w: World) -> str:
    """The Approve link of the mail bob got for the task."""
    row = MailMessage.objects.get(workflow_id=w.workflow_id, recipient__username="bob")
    return re.search(r"^Approve: https?://[^/]+(/\S+)$", mail_bodies(row)[0], re.M).group(1)  # type: ignore[union-attr]


# A PDF as small as the attachment checks take (tests/approvals/api/test_attachments.py).
_PDF = pdf_bytes(pages=1)  # one page pdftoppm draws: the receipt gets a preview


def _pdf() -> Any:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("receipt.pdf", _PDF, content_type="application/pdf")


ROWS = [
    # -- the API ---------------------------------------------------------------------------
    Row(
        "api-workflows",
        lambda c, w, p: start_expense(c, 4_500_000, subject=f"M-{p}"),
        #       sub    asg    dlg    emp    fin    aud    org    int    oth    su     anon
        answers("201", "201", "201", "201", "201", "403", "201", "201", "422", "201", "401"),
    ),
    Row(
        "api-workflows",
        lambda c, w, p: c.get("/api/workflows"),
        # The search lists what the read rule lets one open: ivan, standing in for bob
        # now, finds the request he may read.
        answers(
            "200+", "200+", "200+", "200-", "200-", "200+", "200+", "200-", "200-", "200+", "401"
        ),
    ),
    Row(
        "api-workflow",
        lambda c, w, p: c.get(f"/api/workflows/{w.workflow_id}"),
        answers("200", "200", "200", "404", "404", "200", "200", "404", "404", "200", "401"),
    ),
    Row(
        "api-held",
        lambda c, w, p: c.get(f"/api/workflows/{w.workflow_id}/held/h-{p}"),
        answers("404", "404", "404", "404", "404", "404", "404", "404", "404", "404", "401"),
    ),
    Row(
        "api-decisions",
        _decide,
        # The submitter holds no task on her own request: not her step (409), asked
        # before segregation of duties.
        answers("409", "200!", "200!", "404", "404", "403", "409", "404", "404", "409", "401"),
    ),
    Row(
        "api-signal",
        lambda c, w, p: c.post(
            f"/api/workflows/{w.workflow_id}/signals/contract_signed",
            {"requestId": f"s-{p}"},
            format="json",
        ),
        # The expense workflow declares no such signal: its senders are refused (409)
        # and nothing is stored (test_who_may_act has a signal delivered).
        answers("403", "403", "403", "404", "404", "403", "409", "409", "404", "409", "401"),
    ),
    Row(
        "api-cancel",
        lambda c, w, p: c.post(
            f"/api/workflows/{w.workflow_id}/cancel", {"requestId": f"c-{p}"}, format="json"
        ),
        answers("200!", "403", "403", "404", "404", "403", "200!", "404", "404", "200!", "401"),
    ),
    Row(
        "api-reassign",
        lambda c, w, p: c.post(
            f"/api/workflows/{w.workflow_id}/reassign",
            {"requestId": f"r-{p}", "fromUser": "bob", "toUser": "victor"},
            format="json",
        ),
        answers("403", "403", "403", "404", "404", "403", "200!", "404", "404", "200!", "401"),
    ),
    Row(
        "api-add-approver",
        lambda c, w, p: c.post(
            f"/api/workflows/{w.workflow_id}/approvers",
            {"requestId": f"a-{p}", "person": "victor", "step": "manager", "reason": "Bob left"},
            format="json",
        ),
        answers("403", "403", "403", "404", "404", "403", "200!", "404", "404", "200!", "401"),
    ),
    Row(
        "api-deactivate",
        lambda c, w, p: c.post("/api/users/bob/deactivate", {"reason": "left"}, format="json"),
        # Permission is asked before the person is looked up: nobody learns who exists.
        answers("403", "403", "403", "403", "403", "403", "200!", "403", "403", "200!", "401"),
    ),
    Row(
        "api-deactivate",
        lambda c, w, p: c.post("/api/users/admin/deactivate", {"reason": "x"}, format="json"),
        # Nobody but a superuser deactivates a superuser; the superuser not themselves.
        answers("403", "403", "403", "403", "403", "403", "403", "403", "403", "403", "401"),
    ),
    Row(
        "api-drafts",
        lambda c, w, p: c.post("/api/drafts", {"template": EXPENSE, "data": {}}, format="json"),
        # Anyone who may start the workflow template may keep a draft of it; gina's
        # organisation has no such template.
        answers("201", "201", "201", "201", "201", "403", "201", "201", "422", "201", "401"),
    ),
    Row(
        "api-drafts",
        lambda c, w, p: c.get("/api/drafts"),
        answers(*["200"] * (len(P) - 1), "401"),
    ),
    Row(
        "api-draft",
        lambda c, w, p: c.get(f"/api/drafts/{w.draft_id}"),
        # A draft is its author's alone: not an auditor's, an admin's or a superuser's.
        answers("200", "404", "404", "404", "404", "404", "404", "404", "404", "404", "401"),
    ),
    Row(
        "api-draft",
        lambda c, w, p: c.put(
            f"/api/drafts/{w.draft_id}", {"template": EXPENSE, "data": {}}, format="json"
        ),
        answers("200", "404", "404", "404", "404", "404", "404", "404", "404", "404", "401"),
    ),
    Row(
        "api-draft",
        lambda c, w, p: c.delete(f"/api/drafts/{w.draft_id}"),
        answers("204", "404", "404", "404", "404", "404", "404", "404", "404", "404", "401"),
    ),
    Row(
        "api-draft-submit",
        lambda c, w, p: c.post(f"/api/drafts/{w.draft_id}/submit"),
        answers("201", "404", "404", "404", "404", "404", "404", "404", "404", "404", "401"),
    ),
    Row(
        "api-my-tasks",
        lambda c, w, p: c.get("/api/me/tasks"),
        answers("200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "401"),
    ),
    Row(
        "api-audit-events",
        lambda c, w, p: c.get("/api/audit/events"),
        answers("403", "403", "403", "403", "403", "200", "200", "403", "403", "200", "401"),
    ),
    Row(
        "api-audit-export",
        lambda c, w, p: c.get("/api/audit/export?format=jsonl"),
        answers("403", "403", "403", "403", "403", "200", "200", "403", "403", "200", "401"),
    ),
    Row(
        "api-logout",
        lambda c, w, p: c.post("/api/auth/logout"),
        answers("204", "204", "204", "204", "204", "204", "204", "204", "204", "204", "401"),
    ),
    Row(
        "api-token",
        lambda c, w, p: c.post(
            "/api/auth/token", {"username": "alice", "password": "wrong"}, format="json"
        ),
        answers(*["401"] * len(P)),
    ),
    Row(
        "schema",
        lambda c, w, p: c.get("/api/schema/"),
        answers(*["200"] * len(P)),
    ),
    Row(
        "api-not-found",
        lambda c, w, p: c.get("/api/no/such/thing"),
        answers(*["404"] * len(P)),
    ),
    Row(
        "api-docs",
        lambda c, w, p: c.get("/api/docs/"),
        answers(*["200"] * len(P)),
    ),
    # -- pages -----------------------------------------------------------------------------
    Row(
        "inbox",
        lambda c, w, p: c.get("/"),
        answers(*["200"] * (len(P) - 1), "302"),
        api=False,
    ),
    Row(
        "api-templates",
        lambda c, w, p: c.get("/api/templates"),
        answers("200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "401"),
    ),
    Row(
        "my-workflows",
        lambda c, w, p: c.get("/workflows/"),
        answers(*["200"] * (len(P) - 1), "302"),
        api=False,
    ),
    Row(
        "workflow-new",
        lambda c, w, p: c.get("/workflows/new"),
        # The auditor may submit nothing: a 403 page that says so, not an empty form.
        answers("200", "200", "200", "200", "200", "403", "200", "200", "200", "200", "302"),
        api=False,
    ),
    Row(
        "workflow",
        lambda c, w, p: c.get(f"/workflows/{w.workflow_id}"),
        answers("200", "200", "200", "404", "404", "200", "200", "404", "404", "200", "302"),
        api=False,
    ),
    Row(
        "workflow-decide",
        _page_decide,
        # The page decides in the person's own name: ivan is told the step is bob's.
        answers("302", "302!", "302", "404", "404", "302", "302", "404", "404", "302", "302"),
        api=False,
    ),
    Row(
        "workflow-resubmit",
        # Nothing waits for a resubmission: whoever may read it is told so, the others
        # that it does not exist; nothing is recorded.
        lambda c, w, p: c.post(f"/workflows/{w.workflow_id}/resubmit", {"amountPaise": "1"}),
        answers("409", "409", "409", "404", "404", "409", "409", "404", "404", "409", "302"),
        api=False,
    ),
    Row(
        "workflow-resubmit",
        # A withdrawal (a rejection) through this form, by the assignee too, records
        # nothing while the request was not sent back.
        lambda c, w, p: c.post(
            f"/workflows/{w.workflow_id}/resubmit", {"decision": "reject", "request_id": "w-1"}
        ),
        answers("409", "409", "409", "404", "404", "409", "409", "404", "404", "409", "302"),
        api=False,
    ),
    Row(
        "draft-submit",
        lambda c, w, p: c.post(f"/drafts/{w.draft_id}/submit"),
        answers("302", "404", "404", "404", "404", "404", "404", "404", "404", "404", "302"),
        api=False,
    ),
    Row(
        "draft-delete",
        lambda c, w, p: c.get(f"/drafts/{w.draft_id}/delete"),
        answers("200", "404", "404", "404", "404", "404", "404", "404", "404", "404", "302"),
        api=False,
    ),
    Row(
        "draft-delete",
        lambda c, w, p: c.post(f"/drafts/{w.draft_id}/delete"),
        answers("302", "404", "404", "404", "404", "404", "404", "404", "404", "404", "302"),
        api=False,
    ),
    Row(
        "draft-file",
        lambda c, w, p: c.get(f"/drafts/{w.draft_id}/files/{w.file_sha}"),
        answers("200", "404", "404", "404", "404", "404", "404", "404", "404", "404", "302"),
        api=False,
    ),
    Row(
        "search",
        lambda c, w, p: c.get("/search", {"subjectId": "E-1"}),
        answers(*["200"] * (len(P) - 1), "302"),
        api=False,
    ),
    Row(
        "search-export",
        # The CSV of a search: only what each may read, as the search itself.
        lambda c, w, p: c.get("/search/export.csv", {"subjectId": "E-1"}),
        answers(*["200"] * (len(P) - 1), "302"),
        api=False,
    ),
    Row(
        "workflow-route",
        # The route preview of the new-request form: for those who may start the kind.
        lambda c, w, p: c.get(
            "/workflows/new/route",
            {"template": "expense-approval", "amountPaise": "45000", "currency": "INR"},
        ),
        answers("200", "200", "200", "200", "200", "404", "200", "404", "404", "200", "302"),
        api=False,
    ),
    Row(
        "analytics",
        lambda c, w, p: c.get("/analytics"),
        answers("403", "403", "403", "403", "200", "200", "200", "403", "403", "200", "302"),
        api=False,
    ),
    Row(
        "people",
        # Colleagues by name, for the out-of-office and hand-over fields: every member
        # asks within their own organisation.
        lambda c, w, p: c.get("/people", {"q": "b"}),
        answers(*["200"] * (len(P) - 1), "302"),
        api=False,
    ),
    Row(
        "out-of-office",
        lambda c, w, p: c.get("/account/out-of-office"),
        answers(*["200"] * (len(P) - 1), "302"),
        api=False,
    ),
    Row(
        "out-of-office",
        # Naming oneself is refused with a form error by everyone; nothing is stored.
        lambda c, w, p: c.post(
            "/account/out-of-office",
            {
                "delegate": p and PERSONAS[p] or "",
                "first_day": "2026-12-01",
                "last_day": "2026-12-05",
            },
        ),
        answers(*["400"] * (len(P) - 1), "302"),
        api=False,
    ),
    # An absence is its owner's alone: anyone else's id is a page that does not exist.
    Row(
        "out-of-office-end",
        lambda c, w, p: c.post(f"/account/out-of-office/{w.absence_id}/end"),
        answers("404", "302", "404", "404", "404", "404", "404", "404", "404", "404", "302"),
        api=False,
    ),
    Row(
        "out-of-office-change",
        lambda c, w, p: c.get(f"/account/out-of-office/{w.absence_id}/change"),
        answers("404", "200", "404", "404", "404", "404", "404", "404", "404", "404", "302"),
        api=False,
    ),
    Row(
        "out-of-office-change",
        lambda c, w, p: c.post(
            f"/account/out-of-office/{w.absence_id}/change",
            {"delegate": "victor", "first_day": "2026-12-01", "last_day": "2026-12-05"},
        ),
        answers("404", "302", "404", "404", "404", "404", "404", "404", "404", "404", "302"),
        api=False,
    ),
    Row(
        "out-of-office-delete",
        # bob's has begun: he is told to end it instead (a message, back to the page)
        lambda c, w, p: c.post(f"/account/out-of-office/{w.absence_id}/delete"),
        answers("404", "302", "404", "404", "404", "404", "404", "404", "404", "404", "302"),
        api=False,
    ),
    Row(
        "mail-link",
        lambda c, w, p: c.get(_bobs_link(w)),
        # The link's person (bob) and anyone not signed in get the confirmation page; a
        # different signed-in person is told the link is someone else's.
        answers("403", "200", "403", "403", "403", "403", "403", "403", "403", "403", "200"),
        api=False,
    ),
    Row(
        "mail-link",
        lambda c, w, p: c.post(_bobs_link(w), {"comment": f"from {p}"}),
        answers("403", "200!", "403", "403", "403", "403", "403", "403", "403", "403", "200!"),
        api=False,
    ),
    Row(
        "notification-settings",
        lambda c, w, p: c.get("/account/notifications"),
        answers(*["200"] * (len(P) - 1), "302"),
        api=False,
    ),
    Row(
        "login",
        lambda c, w, p: c.get("/accounts/login/"),
        answers(*["200"] * len(P)),
        api=False,
    ),
    Row(
        "logout",
        lambda c, w, p: c.post("/accounts/logout/"),
        answers(*["302"] * len(P)),
        api=False,
    ),
    Row(
        "healthz",
        lambda c, w, p: c.get("/healthz"),
        answers(*["200"] * len(P)),
        api=False,
    ),
    Row(
        "metrics",
        lambda c, w, p: c.get("/metrics", REMOTE_ADDR="203.0.113.9"),
        answers(*["403"] * len(P)),
        api=False,
    ),
    # -- the admin -------------------------------------------------------------------------
    Row(
        "admin:index",
        lambda c, w, p: c.get("/admin/"),
        answers("302", "302", "302", "302", "200", "200", "200", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_add",
        lambda c, w, p: c.get("/admin/approvals/workflowtemplate/add/"),
        answers("302", "302", "302", "302", "200", "403", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_change",
        lambda c, w, p: c.get(f"/admin/approvals/workflowtemplate/{w.template_pk}/change/"),
        answers("302", "302", "302", "302", "200", "200", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_roles",
        lambda c, w, p: c.get(f"/admin/approvals/workflowtemplate/{w.template_pk}/roles/"),
        # Who may start, edit and see its requests: read by whoever reads the template
        # in the admin, changed by its editors (the row below).
        answers("302", "302", "302", "302", "200", "200", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_roles",
        lambda c, w, p: c.post(
            f"/admin/approvals/workflowtemplate/{w.template_pk}/roles/",
            {"role": "start_workflowtemplate", "person": "victor"},
        ),
        # Naming victor as a starter: the demo's finance admins edit its templates.
        answers("302", "302", "302", "302", "302", "403", "403", "302", "302", "302", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_roles_find",
        lambda c, w, p: c.get("/admin/approvals/workflowtemplate/roles/find/?q=fin&kind=group"),
        answers("302", "302", "302", "302", "200", "200", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_diff",
        lambda c, w, p: c.get(f"/admin/approvals/workflowtemplate/{w.template_pk}/diff/"),
        answers("302", "302", "302", "302", "200", "200", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_try",
        lambda c, w, p: c.post(
            f"/admin/approvals/workflowtemplate/{w.template_pk}/try/",
            {"try_submitter": "alice", "try_data": "{}"},
        ),
        answers("302", "302", "302", "302", "200", "200", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_retire",
        lambda c, w, p: c.post(
            f"/admin/approvals/workflowtemplate/{w.template_pk}/retire/", {"confirmed": "yes"}
        ),
        answers("302", "302", "302", "302", "302", "403", "403", "302", "302", "302", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflowtemplate_rollback",
        lambda c, w, p: c.post(
            f"/admin/approvals/workflowtemplate/{w.template_pk}/rollback/", {"confirmed": "yes"}
        ),
        answers("302", "302", "302", "302", "302", "403", "403", "302", "302", "302", "302"),
        api=False,
    ),
    Row(
        "admin:auth_user_password_change",
        lambda c, w, p: c.get(
            f"/admin/approvals/user/{User.objects.get(username='bob').pk}/password/"
        ),
        answers("302", "302", "302", "302", "403", "403", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_delegation_add",
        lambda c, w, p: c.get("/admin/approvals/delegation/add/"),
        answers("302", "302", "302", "302", "200", "403", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_delegation_add",
        # Victor's out-of-office naming whoever saves it: nobody may give themselves
        # another's tasks (the form again, 200, for those who may open it).
        lambda c, w, p: c.post(
            "/admin/approvals/delegation/add/", _victor_away(PERSONAS[p] or "farah")
        ),
        answers("302", "302", "302", "302", "200", "403", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_delegation_add",
        # Victor's out-of-office naming a third person: saved (302) by those who may.
        lambda c, w, p: c.post("/admin/approvals/delegation/add/", _victor_away("farah")),
        answers("302", "302", "302", "302", "302", "403", "403", "302", "302", "302", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_delegation_change",
        # Bob's absence changed to name whoever saves it: refused as the add is (the
        # form again, 200, for those who may open it), and ivan still stands in.
        lambda c, w, p: _bobs_absence_naming(c, w, PERSONAS[p] or "farah"),
        answers("302", "302", "302", "302", "200", "403", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_startschedule_add",
        lambda c, w, p: c.get("/admin/approvals/startschedule/add/"),
        answers("302", "302", "302", "302", "200", "403", "403", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflow_audit_export",
        lambda c, w, p: c.get("/admin/approvals/workflow/audit-export/"),
        answers("302", "302", "302", "302", "403", "200", "200", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflow_operations",
        lambda c, w, p: c.get(f"/admin/approvals/workflow/{w.workflow_id}/operations/"),
        answers("302", "302", "302", "302", "403", "403", "200", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflow_operations",
        lambda c, w, p: c.post(
            f"/admin/approvals/workflow/{w.workflow_id}/operations/",
            {
                "operation": "reassign",
                "reassign-request_id": f"op-{p}",
                "reassign-from_user": "bob",
                "reassign-to_user": "victor",
                "reassign-reason": "on leave",
            },
        ),
        answers("302", "302", "302", "302", "403", "403", "302!", "302", "302", "302!", "302"),
        api=False,
    ),
    # Retention and archive: organisation and finance admins of their own organisation.
    Row(
        "admin:retention",
        lambda c, w, p: c.get("/admin/retention/"),
        answers("302", "302", "302", "302", "200", "403", "200", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:retention",
        lambda c, w, p: c.post("/admin/retention/", {"years": "8", "live_months": "10"}),
        answers("302", "302", "302", "302", "302", "403", "302", "302", "302", "302", "302"),
        api=False,
    ),
    # Offboarding: organisation admins alone; anyone else signed in is refused outright.
    Row(
        "admin:approvals_user_offboard",
        lambda c, w, p: c.get("/admin/approvals/user/offboard/", {"person": "bob"}),
        answers("403", "403", "403", "403", "403", "403", "200", "403", "403", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_user_offboard",
        lambda c, w, p: c.post(
            "/admin/approvals/user/offboard/",
            {"person": "bob", "reason": "left", "confirm": "1", "confirmed": "yes"},
        ),
        answers("403", "403", "403", "403", "403", "403", "302!", "403", "403", "302!", "302"),
        api=False,
    ),
    Row(
        "api-comments",
        lambda c, w, p: c.post(
            f"/api/workflows/{w.workflow_id}/comments",
            {"text": "Which trip is this for?", "requestId": f"k-{p}"},
            format="json",
        ),
        answers("200!", "200!", "200!", "404", "404", "403", "200!", "404", "404", "200!", "401"),
    ),
    Row(
        "api-attachments",
        lambda c, w, p: c.post(
            f"/api/workflows/{w.workflow_id}/attachments",
            {"file": _pdf(), "requestId": f"a-{p}"},
            format="multipart",
        ),
        answers("200!", "200!", "200!", "404", "404", "403", "200!", "404", "404", "200!", "401"),
    ),
    Row(
        "api-attachment",
        lambda c, w, p: c.get(f"/api/workflows/{w.workflow_id}/attachments/{w.file_sha}"),
        answers("200", "200", "200", "404", "404", "200", "200", "404", "404", "200", "401"),
    ),
    Row(
        "workflow-attach",
        lambda c, w, p: c.post(
            f"/workflows/{w.workflow_id}/files", {"file": _pdf(), "request_id": f"pa-{p}"}
        ),
        # An auditor reads but changes nothing: sent back to the page with a message.
        answers("302!", "302!", "302!", "404", "404", "302", "302!", "404", "404", "302!", "302"),
        api=False,
    ),
    Row(
        "workflow-file",
        lambda c, w, p: c.get(f"/workflows/{w.workflow_id}/files/{w.file_sha}"),
        answers("200", "200", "200", "404", "404", "200", "200", "404", "404", "200", "302"),
        api=False,
    ),
    Row(
        "workflow-file-preview",
        lambda c, w, p: c.get(f"/workflows/{w.workflow_id}/files/{w.file_sha}/preview"),
        answers("200", "200", "200", "404", "404", "200", "200", "404", "404", "200", "302"),
        api=False,
    ),
    Row(
        "workflow-comment",
        lambda c, w, p: c.post(
            f"/workflows/{w.workflow_id}/comments",
            {"text": "Which trip is this for?", "request_id": f"pk-{p}"},
        ),
        answers("302!", "302!", "302!", "404", "404", "403", "302!", "404", "404", "302!", "302"),
        api=False,
    ),
    Row(
        "workflow-withdraw",
        lambda c, w, p: c.post(
            f"/workflows/{w.workflow_id}/withdraw",
            {"reason": "Booked by mistake", "request_id": f"pw-{p}", "confirmed": "yes"},
        ),
        # Only the submitter withdraws; whoever else may read it is told so.
        answers("302!", "409", "409", "404", "404", "409", "409", "404", "404", "409", "302"),
        api=False,
    ),
    Row(
        "held-undo",
        lambda c, w, p: c.post(f"/workflows/{w.workflow_id}/held/h-{p}/undo"),
        # Nobody holds a decision here: everyone is sent back with "Nothing is held", the
        # same answer whether or not they may read the request; nothing is recorded.
        answers("302", "302", "302", "302", "302", "302", "302", "302", "302", "302", "302"),
        api=False,
    ),
    Row(
        "held-release",
        lambda c, w, p: c.post(f"/workflows/{w.workflow_id}/held/h-{p}/release"),
        answers("302", "302", "302", "302", "302", "302", "302", "302", "302", "302", "302"),
        api=False,
    ),
    Row(
        "audit-export",
        lambda c, w, p: c.get("/audit/export"),
        answers("403", "403", "403", "403", "403", "200", "200", "403", "403", "200", "302"),
        api=False,
    ),
    Row(
        "workflow-history-export",
        lambda c, w, p: c.get(f"/workflows/{w.workflow_id}/history.csv"),
        # auditors, organisation admins and superusers export a request's history
        answers("403", "403", "403", "403", "403", "200", "200", "403", "403", "200", "302"),
        api=False,
    ),
    Row(
        "audit-verify",
        lambda c, w, p: c.get("/audit/verify"),
        answers("403", "403", "403", "403", "403", "200", "200", "403", "403", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflow_attention",
        lambda c, w, p: c.get("/admin/approvals/workflow/attention/"),
        answers("302", "302", "302", "302", "403", "200", "200", "302", "302", "200", "302"),
        api=False,
    ),
    Row(
        "admin:approvals_workflow_change",
        lambda c, w, p: c.get(f"/admin/approvals/workflow/{w.workflow_id}/change/"),
        answers("302", "302", "302", "302", "403", "200", "200", "302", "302", "200", "302"),
        api=False,
    ),
]

# Every model registered in the admin, and who may open its list.
ADMIN_LISTS = {
    "approvals.workflowtemplate": ("200", "200", "403"),  # (finance admin, auditor, org admin)
    "approvals.delegation": ("200", "200", "403"),
    "approvals.startschedule": ("200", "200", "403"),
    "approvals.exchangerate": ("200", "200", "403"),
    "approvals.department": ("200", "200", "200"),  # kept by finance and org admins
    "approvals.workflow": ("403", "200", "200"),
    "approvals.pendingtask": ("403", "200", "200"),
    "approvals.timer": ("403", "200", "200"),
    "approvals.activityattempt": ("403", "200", "200"),
    "approvals.tenant": ("403", "403", "200"),  # the org admin: her own, for its outbound hosts
    "approvals.user": ("403", "403", "403"),
    "approvals.orggroup": ("403", "403", "403"),
    "approvals.apitoken": ("403", "403", "403"),
    "auth.group": ("403", "403", "403"),
    "axes.accessattempt": ("403", "403", "403"),
    "axes.accesslog": ("403", "403", "403"),
    "axes.accessfailurelog": ("403", "403", "403"),
}
for _label, (_fin, _aud, _org) in ADMIN_LISTS.items():
    _app, _model = _label.split(".")
    ROWS.append(
        Row(
            f"admin:{_app}_{_model}_changelist",
            (lambda url: lambda c, w, p: c.get(url))(f"/admin/{_app}/{_model}/"),
            answers("302", "302", "302", "302", _fin, _aud, _org, "302", "302", "200", "302"),
            api=False,
        )
    )

# Django's own admin pages that need no rule of ours: sign-in and the shared routes.
_FRAMEWORK = {
    "admin:login",
    "admin:logout",
    "admin:password_change",
    "admin:password_change_done",
    "admin:jsi18n",
    "admin:view_on_site",
    "admin:app_list",
    "admin:autocomplete",
}


@pytest.fixture
def world(acme: Any, files_root: Any) -> World:
    globex = Tenant.objects.create(slug="globex", name="Globex")
    User.objects.create_user("gina", password="pw", tenant=globex)
    client = APIClient()
    client.force_authenticate(User.objects.get(username="alice"))
    started = start_expense(client, 4_500_000)
    assert started.status_code == 201, started.content
    now = clock.now()
    absence = Delegation.objects.create(
        tenant=acme,
        user=User.objects.get(username="bob"),
        delegate=User.objects.get(username="ivan"),
        starts_at=now.replace(year=now.year - 1),
        ends_at=now.replace(year=now.year + 1),
    )
    template = WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).first()
    assert template is not None
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "vendor-onboarding",
            "steps": [{"id": "contract", "kind": "signal", "signal": "contract_signed"}],
        },
    )
    draft = draft_save(
        author=User.objects.get(username="alice"),
        template_key=EXPENSE,
        subject_type="expense",
        subject_id="M-draft",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    draft_files_add(
        author=User.objects.get(username="alice"),
        draft_id=draft.pk,
        files=attachments_check(uploads=[_pdf()]),
    )
    receipt = attachment_add(
        user=User.objects.get(username="alice"),
        workflow_id=started.json()["workflowId"],
        upload=_pdf(),
        request_id="f-alice",
    )
    return World(
        started.json()["workflowId"], template.pk, str(draft.pk), receipt.sha256, absence.pk
    )


def _client(persona: str, api: bool) -> Any:
    username = PERSONAS[persona]
    if username is None:
        return APIClient() if api else Client()
    user = User.objects.get(username=username)
    if not api:
        client = Client()
        client.force_login(user)
        return client
    client = APIClient()
    if persona == "integration":
        _, secret = token_issue(
            user=user, name="erp", may_start=[EXPENSE], may_signal=["contract_signed"]
        )
    else:
        _, secret = token_issue(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


CELLS = [
    pytest.param(row, persona, id=f"{row.name}-{i}-{persona}")
    for i, row in enumerate(ROWS)
    for persona in P
]


@pytest.mark.parametrize(("row", "persona"), CELLS)
def test_matrix(world: World, row: Row, persona: str) -> None:
    expected = row.expect[persona]

    status, mark = int(expected[:3]), expected[3:]
    before = WorkflowEvent.objects.filter(workflow_id=world.workflow_id).count()

    response = row.call(_client(persona, row.api), world, persona)

    assert response.status_code == status, (
        row.name,
        persona,
        response.status_code,
        response.content[:300],
    )
    after = WorkflowEvent.objects.filter(workflow_id=world.workflow_id).count()
    if row.name != "api-workflows":
        assert (after > before) == (mark == "!"), (row.name, persona, "history changed?")
    if mark in ("+", "-"):
        ids = [w["workflowId"] for w in response.json()["workflows"]]
        assert (world.workflow_id in ids) == (mark == "+")
    if row.api and status >= 400:
        assert set(response.json()) == {"error"}


def _url_names(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _url_names(
                p.url_patterns, f"{prefix}{p.namespace}:" if p.namespace else prefix
            )
        elif isinstance(p, URLPattern):
            yield f"{prefix}{p.name}" if p.name else f"{prefix}<unnamed {p.pattern}>"


def test_every_url_has_a_row() -> None:
    covered = {row.name for row in ROWS}
    # The generated views of a ModelAdmin (add, change, delete, history, guardian's
    # permission pages) follow the rules its changelist row and the rows above show.
    model_prefixes = tuple(f"admin:{label.replace('.', '_')}_" for label in ADMIN_LISTS)
    missing = []
    for name in _url_names(get_resolver().url_patterns):
        if name in covered or name in _FRAMEWORK:
            continue
        if name.startswith(model_prefixes) or name.startswith("admin:<unnamed"):
            continue  # unnamed admin routes only redirect to named ones
        missing.append(name)
    assert missing == [], f"add a row to the permission matrix for: {missing}"


def test_every_admin_model_has_a_row() -> None:
    registered = {f"{m._meta.app_label}.{m._meta.model_name}" for m in admin.site._registry}
    assert registered == set(ADMIN_LISTS)


def test_an_admins_delegation_for_someone_else_names_its_maker_to_the_person(world: World) -> None:
    fiona, victor = (_client(p, api=False) for p in ("finance_admin", "employee"))
    # given fiona sets up victor's absence, farah standing in
    assert fiona.post("/admin/approvals/delegation/add/", _victor_away("farah")).status_code == 302
    made = Delegation.objects.get(user__username="victor")
    # then it is recorded as hers, and victor's out-of-office page says so
    assert made.created_by is not None and made.created_by.username == "fiona"
    said = ABSENCE_SET_UP_BY.format(name=made.created_by.get_full_name() or "fiona")
    assert said in victor.get("/account/out-of-office").content.decode()
    # an absence the person sets up themselves names no one
    own = {"delegate": "farah", "first_day": "2030-01-07", "last_day": "2030-01-09"}
    assert victor.post("/account/out-of-office", own).status_code == 302
    mine = Delegation.objects.filter(user__username="victor").exclude(pk=made.pk).get()
    assert mine.created_by is not None and mine.created_by.username == "victor"
    assert victor.get("/account/out-of-office").content.decode().count("Set up for you by") == 1
    # and an admin's change of someone's absence makes it hers as it stands
    bob = _client("assignee", api=False)
    changed = _victor_away("farah") | {"user": User.objects.get(username="bob").pk}
    answer = fiona.post(f"/admin/approvals/delegation/{world.absence_id}/change/", changed)
    assert answer.status_code == 302
    assert Delegation.objects.get(pk=world.absence_id).created_by == made.created_by
    assert said in bob.get("/account/out-of-office").content.decode()
