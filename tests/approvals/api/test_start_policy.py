"""Start policies by subject, one start after another: what each policy answers, what
the database holds, and that a refused start changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.api.serializers import ErrorBody
from approvals.models import StartRequest, Workflow, WorkflowEvent
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import WORKFLOW_ALREADY_FINISHED, WORKFLOW_ALREADY_RUNNING

pytestmark = pytest.mark.django_db

TEMPLATE = "vendor-check"


def publish(tenant: Any, **policy: str) -> None:
    """A one-step template whose start policy is ``policy`` (omitted: the default)."""
    definition: dict[str, Any] = {
        "key": TEMPLATE,
        "steps": [{"id": "finance", "kind": "approval", "approvers": [{"user": "fiona"}]}],
    }
    if policy:
        definition["start_policy"] = policy
    workflow_template_publish(tenant=tenant, definition=definition)


def start(client: Any, subject: str = "V-1", **headers: str) -> Any:
    body = {"template": TEMPLATE, "subject": {"type": "vendor", "id": subject}, "data": {}}
    return client.post("/api/workflows", body, format="json", **headers)


def approve(client: Any, wid: str) -> None:
    body = {"decision": "approve", "requestId": f"approve-{wid}"}
    response = client.post(f"/api/workflows/{wid}/decisions", body, format="json")
    assert response.status_code == 200, response.content


def test_by_default_a_second_start_while_one_runs_is_409_naming_the_running_one(acme, api):
    # given
    publish(acme)
    alice = api("alice")
    first = start(alice).json()["workflowId"]
    events = WorkflowEvent.objects.count()

    # when
    response = start(alice)

    # then
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "WORKFLOW_ALREADY_RUNNING"
    assert error["workflowId"] == first
    assert error["message"] == WORKFLOW_ALREADY_RUNNING.format(
        template=TEMPLATE, subject_type="vendor", subject_id="V-1", workflow_id=first
    )
    assert Workflow.objects.count() == 1
    assert WorkflowEvent.objects.count() == events


def test_another_subject_and_another_template_are_not_held(acme, api):
    publish(acme)
    alice = api("alice")
    assert start(alice, "V-1").status_code == 201
    assert start(alice, "V-2").status_code == 201
    # the same subject id under another subject type is another subject
    body = {"template": TEMPLATE, "subject": {"type": "supplier", "id": "V-1"}, "data": {}}
    assert alice.post("/api/workflows", body, format="json").status_code == 201
    assert Workflow.objects.filter(subject_exclusive=True).count() == 3


def test_after_the_running_one_finishes_the_default_allows_a_new_one(acme, api):
    publish(acme)
    first = start(api("alice")).json()["workflowId"]
    approve(api("fiona"), first)
    assert Workflow.objects.get(pk=first).status == "COMPLETED"

    response = start(api("alice"))

    assert response.status_code == 201
    assert response.json()["workflowId"] != first
    assert Workflow.objects.count() == 2


def test_use_existing_answers_200_with_the_running_workflow(acme, api):
    publish(acme, while_running="use_existing")
    alice = api("alice")
    created = start(alice)
    assert created.status_code == 201 and created.json()["existing"] is False

    response = start(alice)

    assert response.status_code == 200
    body = response.json()
    assert body["workflowId"] == created.json()["workflowId"]
    assert body["existing"] is True
    assert body["status"] == "PENDING_FINANCE"
    assert response["Location"] == f"/api/workflows/{body['workflowId']}"
    assert Workflow.objects.count() == 1


def test_use_existing_with_an_idempotency_key_replays_the_same_answer(acme, api):
    publish(acme, while_running="use_existing")
    alice = api("alice")
    first = start(alice).json()["workflowId"]

    answers = [start(alice, HTTP_IDEMPOTENCY_KEY="k-1") for _ in range(2)]

    assert [a.status_code for a in answers] == [200, 200]
    assert {a.json()["workflowId"] for a in answers} == {first}
    assert answers[1]["Idempotent-Replayed"] == "true"
    assert str(StartRequest.objects.get(key="k-1").workflow_id) == first


def test_allow_starts_another_while_one_runs(acme, api):
    publish(acme, while_running="allow")
    alice = api("alice")
    ids = {start(alice).json()["workflowId"] for _ in range(3)}
    assert len(ids) == 3
    assert not Workflow.objects.filter(subject_exclusive=True).exists()


def test_after_finished_reject_refuses_a_start_once_one_has_finished(acme, api):
    publish(acme, after_finished="reject")
    first = start(api("alice")).json()["workflowId"]
    approve(api("fiona"), first)

    response = start(api("alice"))

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "WORKFLOW_ALREADY_FINISHED"
    assert error["workflowId"] == first
    assert error["message"] == WORKFLOW_ALREADY_FINISHED.format(
        template=TEMPLATE, subject_type="vendor", subject_id="V-1", workflow_id=first
    )
    assert Workflow.objects.count() == 1


def test_a_cancelled_workflow_frees_its_subject(acme, api):
    publish(acme)
    alice = api("alice")
    first = start(alice).json()["workflowId"]
    body = {"requestId": "cancel-1", "reason": "wrong vendor"}
    assert alice.post(f"/api/workflows/{first}/cancel", body, format="json").status_code == 200

    assert start(alice).status_code == 201


def test_a_refused_start_with_an_idempotency_key_keeps_no_key(acme, api):
    publish(acme)
    alice = api("alice")
    start(alice)
    assert start(alice, HTTP_IDEMPOTENCY_KEY="k-2").status_code == 409
    assert not StartRequest.objects.filter(key="k-2").exists()


def test_the_database_refuses_a_second_running_workflow_for_one_subject(acme, api):
    """The partial unique index holds even when the service's query is bypassed."""
    from django.db import IntegrityError, transaction

    publish(acme)
    first = Workflow.objects.get(pk=start(api("alice")).json()["workflowId"])
    with pytest.raises(IntegrityError, match="workflow_subject_running"), transaction.atomic():
        Workflow.objects.create(
            tenant=first.tenant,
            template=first.template,
            template_key=first.template_key,
            template_version=first.template_version,
            subject_type=first.subject_type,
            subject_id=first.subject_id,
            subject_exclusive=True,
        )


def test_the_schema_documents_the_start_policy_answers(acme, api):
    schema = api("alice").get("/api/schema/", HTTP_ACCEPT="application/json").json()
    post = schema["paths"]["/api/workflows"]["post"]
    assert "WORKFLOW_ALREADY_RUNNING" in post["responses"]["409"]["description"]
    assert "WORKFLOW_ALREADY_FINISHED" in post["responses"]["409"]["description"]
    assert "200" in post["responses"] and "201" in post["responses"]
    error = schema["components"]["schemas"]["ErrorResponse"]["properties"]["error"]
    assert set(error["properties"]) == set(ErrorBody().fields)
    assert "workflowId" not in error["required"]
    assert "existing" in schema["components"]["schemas"]["StartResponse"]["properties"]
