"""What the inbox page's rows share, worked out once a request rather than once a row:
its links (reversed once, with each row's id put in), the CSRF field, the decision
buttons and the ISO times. A page of rows rendered each of these per row through
template tags, about a third of the page's template work."""

from __future__ import annotations

import datetime as dt
import uuid
from functools import cache
from typing import Any

from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.defaultfilters import date as date_filter
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from ..decisions import DECISION_LABELS

_ZERO = uuid.UUID(int=0)


@cache
def _around(name: str) -> tuple[str, str]:
    """The path of the URL ``name`` before and after its one workflow id."""
    before, after = reverse(name, args=[_ZERO]).split(str(_ZERO))
    return before, after


def workflow_links(workflow_id: Any) -> tuple[str, str]:
    """(the request's page, where its decisions are posted) for one workflow id."""
    wid = str(workflow_id)
    page, decide = _around("workflow"), _around("workflow-decide")
    return page[0] + wid + page[1], decide[0] + wid + decide[1]


@cache
def decision_buttons() -> SafeString:
    """The row's decision buttons (one per decision, as the request page has them)."""
    return format_html_join(
        "\n",
        '<button type="submit" name="decision" value="{}" class="{}">{}</button>',
        ((value, value, label) for value, label in DECISION_LABELS.items()),
    )


def iso(moment: dt.datetime) -> str:
    """A time as a ``<time datetime>`` takes it, in the page's zone (``|date:'c'``)."""
    return str(date_filter(moment, "c"))


def page_constants(request: HttpRequest) -> dict[str, Any]:
    """The context every row of the page reads: links and the CSRF field."""
    return {
        "inbox_url": reverse("inbox"),
        "people_url": reverse("people"),
        "csrf_input": format_html(
            '<input type="hidden" name="csrfmiddlewaretoken" value="{}">', get_token(request)
        ),
        "decision_buttons": decision_buttons(),
    }
