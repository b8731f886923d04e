"""A mail's bodies, rendered from the facts its outbox row keeps (``messages.facts``)."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string


def mail_bodies(row: Any) -> tuple[str, str]:
    """The text and HTML bodies of an outbox row: those sent, or rendered now from the
    facts it keeps."""
    if row.text_body:
        return row.text_body, row.html_body
    text = render_to_string("approvals/mail/message.txt", row.context)
    html = render_to_string("approvals/mail/message.html", row.context)
    return text, html
