"""Signing in to the admin: Django's form asks for ``is_staff``; ours asks
access.may_use_admin, so finance admins and auditors sign in without being staff."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from . import access

NOT_FOR_THE_ADMIN = (
    "This account has no role that uses the administration; sign in to the app instead."
)


class RoleAuthenticationForm(AuthenticationForm):
    """Django's admin sign-in asks for ``is_staff``; ours asks access.may_use_admin."""

    error_messages = {**AuthenticationForm.error_messages, "no_admin_role": NOT_FOR_THE_ADMIN}

    def confirm_login_allowed(self, user: Any) -> None:
        super().confirm_login_allowed(user)
        if not access.may_use_admin(user):
            raise ValidationError(self.error_messages["no_admin_role"], code="no_admin_role")
