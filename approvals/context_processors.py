"""What every page's template may ask: the navigation's choices by role."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from . import access


def navigation(request: HttpRequest) -> dict[str, Any]:
    """For every page: whether its navigation offers Inbox and Out of office, My
    requests and New request, Administration, Verify and Export, and Analytics (asked
    only when a page shows the navigation, so a page without it costs no role lookup;
    the roles are read once per request)."""
    user = getattr(request, "user", None)
    return {
        "may_audit": lambda: access.may_audit(user),
        "may_submit": lambda: access.may_submit(user),
        "may_hold_tasks": lambda: access.may_hold_tasks(user),
        "may_administer": lambda: access.may_administer(user),
        "may_analyse": lambda: access.may_analyse(user),
    }
