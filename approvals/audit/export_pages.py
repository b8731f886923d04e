"""The auditor's export outside the admin: the Export page of her menu (the admin's
filters, in the pages' look) and a request's own history from its page. Auditors,
organisation admins and superusers (``access.may_audit``), for their own organisation."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import render

from .. import access
from ..models import User
from ..selectors.workflows import workflow_get
from .admin import ExportForm
from .api import audit_response
from .export import ExportFilter


def _auditor(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User) or not access.may_audit(user):
        raise PermissionDenied
    return user


@login_required
def export_page(request: HttpRequest) -> HttpResponseBase:
    """The filters, then the file as it is written."""
    user = _auditor(request)
    form = ExportForm(
        request.GET if "format" in request.GET else None, tenant_id=user.member_tenant_id
    )
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        return audit_response(
            tenant_id=user.member_tenant_id,
            tenant_slug=user.tenant.slug if user.tenant else "",
            filters=ExportFilter(
                template=data["template"] or None,
                status=data["status"] or None,
                since=data["since"],
                until=data["until"],
                subject=data["subject"] or None,
                person=data["person"] or None,
            ),
            fmt=data["format"],
        )
    status = 400 if form.is_bound else 200
    context: dict[str, Any] = {"form": form, "organisation": user.tenant}
    return render(request, "approvals/audit_export.html", context, status=status)


@login_required
def workflow_history_export(request: HttpRequest, workflow_id: str) -> HttpResponseBase:
    """One request's whole history as CSV, each event with its sentence."""
    user = _auditor(request)
    wf = workflow_get(user=user, workflow_id=workflow_id)
    if wf is None:
        raise Http404
    return audit_response(
        tenant_id=user.member_tenant_id,
        tenant_slug=user.tenant.slug if user.tenant else "",
        filters=ExportFilter(workflow_ids=[wf.pk]),
        fmt="csv",
    )
