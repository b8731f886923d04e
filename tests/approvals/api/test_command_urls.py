"""The commands on a workflow are one ViewSet's actions: each keeps its URL, its name
and its POST, and none is left without one."""

from __future__ import annotations

import uuid

import pytest
from django.urls import resolve, reverse

from approvals.api.views import WorkflowCommandViewSet

WID = str(uuid.UUID(int=7))
COMMANDS = [
    ("api-decisions", [WID], f"/api/workflows/{WID}/decisions", "decide"),
    ("api-signal", [WID, "paid"], f"/api/workflows/{WID}/signals/paid", "signal"),
    ("api-cancel", [WID], f"/api/workflows/{WID}/cancel", "cancel"),
    ("api-comments", [WID], f"/api/workflows/{WID}/comments", "comment"),
    ("api-reassign", [WID], f"/api/workflows/{WID}/reassign", "reassign"),
    ("api-add-approver", [WID], f"/api/workflows/{WID}/approvers", "add_approver"),
]


@pytest.mark.parametrize(("name", "args", "url", "action"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_each_command_keeps_its_url_and_posts_to_its_action(
    name: str, args: list[str], url: str, action: str
) -> None:
    match = resolve(url)

    assert reverse(name, args=args) == url
    assert match.url_name == name
    assert match.func.cls is WorkflowCommandViewSet  # type: ignore[attr-defined]
    assert match.func.actions == {"post": action}  # type: ignore[attr-defined]


def test_every_action_of_the_viewset_has_a_url() -> None:
    actions = {a.__name__ for a in WorkflowCommandViewSet.get_extra_actions()}

    assert actions == {c[3] for c in COMMANDS}
