"""The admin site: open to superusers and to the roles access.may_use_admin names
(finance admins, auditors), whatever their ``is_staff``."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.contrib.admin import AdminSite
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.response import TemplateResponse

# PostgreSQL's text refuses NUL: a filter, search or page number holding one would reach
# the database as a 500. Refused before any admin view runs.
NUL_IN_QUERY = (
    "The address holds a NUL character (%00), which no filter, search or page number "
    "can hold: remove it and try again."
)


_View = TypeVar("_View", bound=Callable[..., Any])


def _holds_nul(request: HttpRequest) -> bool:
    return any("\x00" in k or any("\x00" in v for v in vs) for k, vs in request.GET.lists())


class ApprovalsAdminSite(AdminSite):
    site_header = "Approvals administration"
    site_title = "Approvals"
    index_template = "admin/approvals/index.html"

    def admin_view(self, view: _View, cacheable: bool = False) -> _View:
        """Every admin view, refusing a query string with a NUL in a name or a value
        (a 400 page in words) before the view reads it."""
        guarded = super().admin_view(view, cacheable)

        @wraps(guarded)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            if _holds_nul(request):
                return render(request, "400.html", {"reason": NUL_IN_QUERY}, status=400)
            return guarded(request, *args, **kwargs)

        return cast(_View, checked)

    def index(self, request: HttpRequest, extra_context: Any = None) -> TemplateResponse:
        """The home by role (home.py): what the person came for, then the tables."""
        # Imported here: INSTALLED_APPS loads this module before the models are ready.
        from .home import home_app_list, home_sections

        extra = {
            "home": home_sections(request.user),
            "app_list": home_app_list(self.get_app_list(request)),
            **(extra_context or {}),
        }
        return super().index(request, extra)

    def get_urls(self) -> list[Any]:
        """The admin's pages, and "Retention and archive" (retention.py)."""
        from django.urls import path

        from .retention import retention_view

        def retention(request: HttpRequest) -> HttpResponse:
            return retention_view(request, self)

        page = path("retention/", self.admin_view(retention), name="retention")
        return [page, *super().get_urls()]

    def login(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        # Imported here: INSTALLED_APPS loads this module before the models are ready.
        from .login import RoleAuthenticationForm

        self.login_form = RoleAuthenticationForm
        return super().login(request, extra_context)

    def has_permission(self, request: HttpRequest) -> bool:
        # Imported here: INSTALLED_APPS loads this module before the models are ready.
        from .. import access

        return access.may_use_admin(request.user)

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[Any]:
        """The admin home's apps, and for those who audit an "Audit" entry leading to
        the Verify page and the export."""
        # Imported here: INSTALLED_APPS loads this module before the models are ready.
        from django.urls import reverse

        from .. import access
        from .home import ENGINE_TABLES, shows_engine_tables

        apps = super().get_app_list(request, app_label)
        user: Any = request.user
        if not shows_engine_tables(user):
            apps = [
                {
                    **app,
                    "models": [m for m in app["models"] if m["object_name"] not in ENGINE_TABLES],
                }
                for app in apps
            ]
        if app_label is None and access.may_deactivate_people(user):
            url = reverse("admin:approvals_user_offboard")
            people = {"name": "Offboard someone who leaves", "object_name": "Offboard"}
            entry: dict[str, Any] = {**people, "admin_url": url, "add_url": None, "perms": {}}
            apps = [
                {"name": "People", "app_label": "people", "app_url": url, "models": [entry]},
                *apps,
            ]
        if app_label is not None or not access.may_audit(request.user):
            return apps
        links = [("Verify the audit trail", reverse("audit-verify"))]
        if access.admin_may(request.user, "view", "workflowevent"):
            url = reverse("admin:approvals_workflow_audit_export")
            links.append(("Export the audit trail", url))
        models: list[dict[str, Any]] = [
            {"name": name, "object_name": name, "admin_url": url, "add_url": None, "perms": {}}
            for name, url in links
        ]
        audit = {"name": "Audit", "app_label": "audit", "app_url": links[0][1], "models": models}
        return [audit, *apps]
