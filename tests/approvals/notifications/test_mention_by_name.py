"""A comment mentions a colleague as people write their name (@Farah, whatever the
capitals); the comment box says how in people's words, with no user name; someone
nobody is called is still refused and nothing is recorded."""

from __future__ import annotations

import re
from typing import Any

import pytest

from approvals.models import WorkflowEvent
from approvals.notifications.models import MailMessage

from ..pages.support import signed_in
from .test_comment_mails import _at_finance

pytestmark = pytest.mark.django_db


def _post(api: Any, wid: str, text: str, request_id: str) -> Any:
    body = {"text": text, "requestId": request_id}
    return api("bob").post(f"/api/workflows/{wid}/comments", body, format="json")


def test_a_name_with_capitals_mentions_that_person(acme, api):
    wid = _at_finance(api)

    response = _post(api, wid, "@Farah, the bill is attached now. Thanks @BOB", "c-1")

    assert response.status_code == 200, response.content
    [added] = WorkflowEvent.objects.filter(workflow_id=wid, type="CommentAdded")
    assert added.payload["mentions"] == ["farah"]  # the author is not told of his own
    mentioned = MailMessage.objects.filter(workflow_id=wid, kind="mentioned")
    assert list(mentioned.values_list("recipient__username", flat=True)) == ["farah"]


def test_a_name_nobody_has_is_refused_and_nothing_is_recorded(acme, api):
    wid = _at_finance(api)
    before = WorkflowEvent.objects.filter(workflow_id=wid).count()

    response = _post(api, wid, "@Zelda can you look?", "c-2")

    assert response.status_code >= 400
    assert "No one in your organisation is called @Zelda" in response.content.decode()
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == before


def test_the_comment_box_says_how_to_mention_without_a_user_name(acme, api):
    wid = _at_finance(api)

    page = signed_in("alice").get(f"/workflows/{wid}").content.decode()

    box = r'<textarea id="comment-text".*?<p class="hint muted">(.*?)</p>'
    [hint] = re.findall(box, page, re.S)
    assert "type @ and their name" in hint
    assert not re.search(r"@[a-z]", hint), hint  # no user name such as @farah
    assert "user name" not in hint
