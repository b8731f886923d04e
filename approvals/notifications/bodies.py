"""A mail's bodies, rendered from the facts its outbox row keeps (``messages.facts``)."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string


def render_bodies(facts: dict[str, Any]) -> tuple[str, str]:
    """The text and HTML bodies of one mail."""
    text = render_to_string("approvals/mail/message.txt", facts)
    html = render_to_string("approvals/mail/message.html", facts)
    return text, html
