"""The admin site: open to superusers and to the roles access.may_use_admin names
(finance admins, auditors), whatever their ``is_staff``."""

from __future__ import annotations

from typing import Any

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest, HttpResponse


class ApprovalsAdminSite(AdminSite):
    site_header = "Approvals administration"
    site_title = "Approvals"

    def login(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        # Imported here: INSTALLED_APPS loads this module before the models are ready.
        from .admin_login import RoleAuthenticationForm

        self.login_form = RoleAuthenticationForm
        return super().login(request, extra_context)

    def has_permission(self, request: HttpRequest) -> bool:
        # Imported here: INSTALLED_APPS loads this module before the models are ready.
        from . import access

        return access.may_use_admin(request.user)


class ApprovalsAdminConfig(AdminConfig):
    default_site = "approvals.admin_site.ApprovalsAdminSite"
