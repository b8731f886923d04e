"""A workflow template whose approval step mixes the submitter's manager with a person
chosen by a rule on the data, published and run through the API: above the amount both
are asked at once and both must approve; below it only the manager is asked. The
workflow page says who was asked and why."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from approvals.models import User
from approvals.services.templates import DefinitionRefused, workflow_template_publish

from ..helpers import decide

pytestmark = pytest.mark.django_db

KEY = "purchase-signing"
ABOVE = 20_000_000  # ₹2,00,000.00, above the VP's ₹1,00,000.00
BELOW = 5_000_000
DEFINITION: dict[str, Any] = {
    "key": KEY,
    "title": "Purchase signing",
    "schema": {
        "type": "object",
        "required": ["amountPaise"],
        "properties": {
            "amountPaise": {"type": "integer", "title": "Amount", "x-money": {"currency": ""}},
        },
    },
    "steps": [
        {
            "id": "sign",
            "title": "Signing",
            "kind": "approval",
            "mode": "all",
            "approvers": [
                {"manager": "submitter"},
                {"user": "victor", "when": "data.amountPaise > 10000000"},
            ],
        }
    ],
}


def _start(api: Any, amount: int, subject: str) -> str:
    body = {"template": KEY, "subject": {"type": "purchase", "id": subject}, "data": {}}
    body["data"] = {"amountPaise": amount}
    response = api("alice").post("/api/workflows", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "PENDING_SIGN"
    return str(response.json()["workflowId"])


def _tasks(api: Any, username: str) -> list[str]:
    items = api(username).get("/api/me/tasks").json()["items"]
    return [item["workflowId"] for item in items]


def _status(api: Any, wid: str) -> str:
    return str(api("alice").get(f"/api/workflows/{wid}").json()["status"])


@pytest.mark.parametrize("first", ["victor", "bob"])
def test_above_the_amount_the_manager_and_the_rule_chosen_vp_decide_in_parallel(
    acme: Any, api: Any, first: str
) -> None:
    # given
    workflow_template_publish(tenant=acme, definition=DEFINITION)
    wid = _start(api, ABOVE, f"P-{first}")

    # then: both are asked at once
    assert _tasks(api, "bob") == [wid]
    assert _tasks(api, "victor") == [wid]

    # when: the first approves, the other still has the task
    second = "bob" if first == "victor" else "victor"
    assert decide(api(first), wid, "approve", f"{first}-1").status_code == 200
    assert _status(api, wid) == "PENDING_SIGN"
    assert _tasks(api, first) == []
    assert _tasks(api, second) == [wid]

    # then: the second completes the step
    answer = decide(api(second), wid, "approve", f"{second}-1")
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "APPROVED"


def test_below_the_amount_the_rule_chosen_vp_is_not_asked(acme: Any, api: Any) -> None:
    # given
    workflow_template_publish(tenant=acme, definition=DEFINITION)
    wid = _start(api, BELOW, "P-small")

    # then: he is no participant, so the workflow is not even his to see
    assert _tasks(api, "victor") == []
    assert decide(api("victor"), wid, "approve", "victor-1").status_code == 404
    assert [a["user"] for a in api("alice").get(f"/api/workflows/{wid}").json()["assignees"]] == [
        "bob"
    ]
    assert decide(api("bob"), wid, "approve", "bob-1").json()["status"] == "APPROVED"


def test_an_approver_condition_on_an_undeclared_field_is_refused_at_publishing(
    acme: Any,
) -> None:
    steps = [
        {
            **DEFINITION["steps"][0],
            "approvers": [{"manager": "submitter"}, {"user": "victor", "when": "data.amont > 1"}],
        }
    ]

    with pytest.raises(DefinitionRefused) as refused:
        workflow_template_publish(tenant=acme, definition={**DEFINITION, "steps": steps})

    assert [p.path for p in refused.value.problems] == ["$.steps[0].approvers[1].when"]


def test_the_workflow_page_says_who_is_asked_and_why(acme: Any, api: Any) -> None:
    # given
    workflow_template_publish(tenant=acme, definition=DEFINITION)
    wid = _start(api, ABOVE, "P-page")
    client = Client()
    client.force_login(User.objects.get(username="alice"))

    # when
    page = client.get(f"/workflows/{wid}").content.decode()

    # then: the time line, the status and the diagram in people's words
    assert (
        "The Signing step asked all of Bob and Victor (as the amount is above ₹1,00,000.00)" in page
    )
    assert "Waiting for Bob, Victor (Signing)" in page
    assert "Victor too, above ₹1,00,000.00" in page
    assert "victor" not in page.replace("Victor", "")
