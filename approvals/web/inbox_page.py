"""What the inbox page's rows share, worked out once a request rather than once a row:
its links (reversed once, with each row's id put in), the CSRF field, the decision
buttons and the ISO times. A page of rows rendered each of these per row through
template tags, about a third of the page's template work."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Mapping
from functools import cache
from typing import Any

from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.defaultfilters import date as date_filter
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from ..words.decisions import DECISIONS

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
def decision_buttons(offered: tuple[tuple[str, bool], ...]) -> SafeString:
    """A row's decision buttons, as the request page has them: one for each decision
    (decision, whether it sends back) the row's step offers, its label and its words
    once recorded marked for the row's own (``RowForms``)."""
    return format_html_join(
        "\n",
        '<button type="submit" name="decision" value="{}" class="{}" data-done="{}">{}</button>',
        (
            (d, "send_back" if back else d, _marked(f"done_{d}"), _marked(f"label_{d}"))
            for d, back in offered
        ),
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
    }


# A row's values in its forms' template are marked by a character no value of a row
# carries (escape() keeps it), then put in, escaped, where the marks are.
_MARK = "\x1b"
_MARKED = re.compile(_MARK + r"(\w+)" + _MARK)
_VALUES = (
    *("url", "decide_url", "subject", "question", "amount_minor", "currency"),
    *("request_id", "for_user", "pk", "ask_first"),
    *(f"{words}_{d}" for d in DECISIONS for words in ("label", "done")),
)


def _marked(name: str) -> str:
    return _MARK + name + _MARK


def outcome_values(outcomes: list[Any]) -> dict[str, Any]:
    """A row's values for its decision buttons (``words.decisions.Outcome`` each): the
    label and the words once recorded of each decision its step offers."""
    values: dict[str, Any] = {f"{w}_{d}": "" for d in DECISIONS for w in ("label", "done")}
    for o in outcomes:
        values[f"label_{o.decision}"] = o.label
        values[f"done_{o.decision}"] = o.done
    values["offered"] = tuple((o.decision, o.sends_back) for o in outcomes)
    return values


class RowForms:
    """Each row's decision and hand-over forms (``_inbox_act.html``), rendered from
    their template once a page for each shape of row (sent back to its submitter or
    not, a reason asked or not, held for someone or not; one or two shapes on most
    pages), with the row's values put in: about half of a page's template work was
    these forms' two dozen values a row, rendered one template node at a time."""

    def __init__(self, context: Mapping[str, Any]) -> None:
        self.context = context
        self.shapes: dict[tuple[Any, ...], str] = {}

    def __call__(self, row: Mapping[str, Any]) -> SafeString:
        shape = (
            bool(row["resubmit"]),
            bool(row["reason_required"]),
            bool(row["for_user"]),
            row["offered"],
        )
        stamp = self.shapes.get(shape)
        if stamp is None:
            marked: dict[str, Any] = {name: _marked(name) for name in _VALUES}
            marked.update(resubmit=shape[0], reason_required=shape[1])
            marked["for_user"] = marked["for_user"] if shape[2] else ""
            context = {
                **self.context,
                "row": marked,
                "decision_buttons": decision_buttons(shape[3]),
            }
            stamp = render_to_string("approvals/_inbox_act.html", context)
            self.shapes[shape] = stamp
        values = {name: escape(str(row[name])) for name in _VALUES}
        return mark_safe(_MARKED.sub(lambda m: values[m.group(1)], stamp))  # noqa: S308
