"""The question asked before an admin action that cannot be taken back, when the page's
script has not asked it (static/confirm.js asks in a dialog and sends
``confirmed=yes``): a page of its own says what will happen, with "Keep it" focused, and
sends the same form again with ``confirmed=yes``. A POST without it changes nothing."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.template.response import TemplateResponse

CONFIRMED_FIELD = "confirmed"
CONFIRMED = "yes"
# What the safe choice says: the person keeps things as they are.
KEEP = "Keep it: change nothing"


def confirmed(request: HttpRequest) -> bool:
    """Was this POST confirmed (by the dialog, or by the confirmation page)?"""
    return request.POST.get(CONFIRMED_FIELD) == CONFIRMED


def confirm_page(
    request: HttpRequest,
    *,
    admin_site: Any,
    opts: Any,
    title: str,
    question: str,
    action: str,
    back: str,
) -> TemplateResponse:
    """The confirmation page: ``question`` (what will happen, in words), a button named
    ``action`` that sends the POST's fields again confirmed, and "Keep it" (focused),
    a link back to ``back`` that changes nothing."""
    fields = [
        (name, value)
        for name, values in request.POST.lists()
        if name not in ("csrfmiddlewaretoken", CONFIRMED_FIELD)
        for value in values
    ]
    context = {
        **admin_site.each_context(request),
        "opts": opts,
        "title": title,
        "question": question,
        "action": action,
        "back": back,
        "keep": KEEP,
        "fields": fields,
        "confirmed_field": CONFIRMED_FIELD,
        "confirmed_value": CONFIRMED,
    }
    return TemplateResponse(request, "admin/approvals/confirm.html", context)
