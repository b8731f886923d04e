"""Signing in: Django's form, with the user name's length checked first; and in the
admin, where Django's form asks for ``is_staff``, ours asks access.may_use_admin, so
finance admins and auditors sign in without being staff."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator

from .. import access
from ..models import User

NOT_FOR_THE_ADMIN = (
    "This account has no role that uses the administration; sign in to the app instead."
)


USERNAME_TOO_LONG = "A user name has at most {limit} characters."
ACCOUNT_INACTIVE = (
    "This account is no longer active, so it cannot sign in. If you think it should be, "
    "ask your organisation's administrator."
)


class SignInForm(AuthenticationForm):
    """Django's sign-in form, refusing a user name longer than any account's before
    asking who it is: django-axes would record the attempt under it, and its column
    holds 255 characters (10,000 were a 500)."""

    account_inactive = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        limit = int(getattr(field, "max_length", None) or 150)
        field.validators.append(
            MaxLengthValidator(limit, message=USERNAME_TOO_LONG.format(limit=limit))
        )

    def clean(self) -> dict[str, Any]:
        """A deactivated person who gives their right password is told the account is
        no longer active, not that the password is wrong. The backends refuse an
        inactive account as they refuse a wrong password (so django-axes has counted
        the attempt as failed either way); only the right password earns the truth,
        so the message tells nobody else who has left."""
        try:
            return super().clean()
        except ValidationError as exc:
            if exc.code == "invalid_login" and self._inactive_with_right_password():
                self.account_inactive = ACCOUNT_INACTIVE  # the app's page shows it alone
                raise ValidationError(ACCOUNT_INACTIVE, code="inactive") from exc
            raise

    def _inactive_with_right_password(self) -> bool:
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if not username or not password:
            return False
        person = User.objects.filter(username=username, is_active=False).first()
        return person is not None and person.check_password(password)


class RoleAuthenticationForm(SignInForm):
    """Django's admin sign-in asks for ``is_staff``; ours asks access.may_use_admin."""

    error_messages = {**AuthenticationForm.error_messages, "no_admin_role": NOT_FOR_THE_ADMIN}

    def confirm_login_allowed(self, user: Any) -> None:
        super().confirm_login_allowed(user)
        if not access.may_use_admin(user):
            raise ValidationError(self.error_messages["no_admin_role"], code="no_admin_role")
