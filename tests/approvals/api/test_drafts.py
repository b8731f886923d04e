"""Drafts through the API: saved, listed for their author alone, changed, submitted
(once, whatever the number of submissions), deleted, and bad input refused."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import Draft, StartRequest, Tenant, User, Workflow, WorkflowEvent
from approvals.selectors.drafts import DRAFTS_PER_PERSON
from approvals.services.drafts import (
    DRAFT_SUBMITTED,
    DRAFT_TOO_LARGE_CODE,
    SUBJECT_MISSING,
    TOO_MANY_DRAFTS,
)

pytestmark = pytest.mark.django_db

EXPENSE = "expense-approval"


def _body(**data: Any) -> dict[str, Any]:
    return {
        "template": EXPENSE,
        "subject": {"type": "expense", "id": "E-DRAFT-1"},
        "data": data,
    }


def _save(client: Any, body: dict[str, Any] | None = None) -> Any:
    return client.post("/api/drafts", body or _body(amountPaise=4_500_000), format="json")


def _nothing_routed() -> None:
    assert not Workflow.objects.exists()
    assert not WorkflowEvent.objects.exists()


def test_a_saved_draft_is_not_routed(acme, api):
    response = _save(api("alice"), _body(description="taxi to the airport"))

    assert response.status_code == 201
    draft = response.json()
    assert response["Location"] == f"/api/drafts/{draft['draftId']}"
    assert draft["template"] == EXPENSE
    assert draft["subject"] == {"type": "expense", "id": "E-DRAFT-1"}
    assert draft["data"] == {"description": "taxi to the airport"}
    assert draft["workflowId"] is None
    assert draft["idempotencyKey"].startswith("draft-")
    _nothing_routed()


def test_the_list_holds_only_my_drafts(acme, api):
    mine = _save(api("alice")).json()["draftId"]
    _save(api("bob"))

    listed = api("alice").get("/api/drafts")

    assert listed.status_code == 200
    assert [d["draftId"] for d in listed.json()["drafts"]] == [mine]


def test_another_person_gets_404_for_my_draft_whatever_they_try(acme, api):
    draft = _save(api("alice")).json()["draftId"]
    # an auditor and an organisation admin read every workflow, but not a draft
    for who in ("bob", "audrey", "olga"):
        client = api(who)
        assert client.get(f"/api/drafts/{draft}").status_code == 404
        assert client.put(f"/api/drafts/{draft}", _body(), format="json").status_code == 404
        assert client.delete(f"/api/drafts/{draft}").status_code == 404
        refused = client.post(f"/api/drafts/{draft}/submit")
        assert refused.status_code == 404
        assert refused.json()["error"]["code"] == "NOT_FOUND"
    assert Draft.objects.get(pk=draft).data == {"amountPaise": 4_500_000}
    _nothing_routed()


def test_another_organisation_gets_404(acme, api):
    draft = _save(api("alice")).json()["draftId"]
    globex = Tenant.objects.create(slug="globex", name="Globex")
    User.objects.create_user("gina", password="pw", tenant=globex)

    assert api("gina").get(f"/api/drafts/{draft}").status_code == 404
    assert api("gina").delete(f"/api/drafts/{draft}").status_code == 404
    assert Draft.objects.filter(pk=draft).exists()


def test_a_draft_is_changed_by_its_author(acme, api):
    client = api("alice")
    draft = _save(client, _body(description="taxi")).json()["draftId"]

    changed = client.put(
        f"/api/drafts/{draft}", _body(amountPaise=4_500_000, currency="INR"), format="json"
    )

    assert changed.status_code == 200
    assert changed.json()["data"] == {"amountPaise": 4_500_000, "currency": "INR"}
    assert client.get(f"/api/drafts/{draft}").json()["data"] == changed.json()["data"]
    _nothing_routed()


def test_submitting_a_draft_starts_its_workflow_as_a_start_does(acme, api):
    client = api("alice")
    draft = _save(client, _body(amountPaise=4_500_000, currency="INR", department="eng")).json()

    submitted = client.post(f"/api/drafts/{draft['draftId']}/submit")

    assert submitted.status_code == 201
    body = submitted.json()
    assert body["status"] == "PENDING_MANAGER"
    assert submitted["Location"] == f"/api/workflows/{body['workflowId']}"
    wf = Workflow.objects.get(pk=body["workflowId"])
    assert (wf.submitter.username, wf.subject_id) == ("alice", "E-DRAFT-1")
    assert StartRequest.objects.get(workflow=wf).key == draft["idempotencyKey"]
    # the draft leaves the list, and names what it started
    assert client.get("/api/drafts").json()["drafts"] == []
    assert client.get(f"/api/drafts/{draft['draftId']}").json()["workflowId"] == str(wf.pk)


def test_submitting_twice_starts_one_workflow(acme, api):
    client = api("alice")
    draft = _save(client, _body(amountPaise=4_500_000, currency="INR", department="eng")).json()

    first = client.post(f"/api/drafts/{draft['draftId']}/submit")
    second = client.post(f"/api/drafts/{draft['draftId']}/submit")

    assert (first.status_code, second.status_code) == (201, 201)
    assert second.json() == first.json()
    assert second["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert Workflow.objects.count() == 1


def test_an_incomplete_draft_is_refused_at_submission_and_stays_a_draft(acme, api):
    client = api("alice")
    draft = _save(client, _body(description="taxi")).json()["draftId"]

    refused = client.post(f"/api/drafts/{draft}/submit")

    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "INVALID_DATA"
    assert "amountPaise" in refused.json()["error"]["message"]
    assert [d["draftId"] for d in client.get("/api/drafts").json()["drafts"]] == [draft]
    assert not StartRequest.objects.exists()
    _nothing_routed()


def test_a_draft_without_a_subject_cannot_be_submitted(acme, api):
    client = api("alice")
    body = {"template": EXPENSE, "data": {"amountPaise": 4_500_000, "currency": "INR"}}
    draft = _save(client, body).json()

    refused = client.post(f"/api/drafts/{draft['draftId']}/submit")

    assert draft["subject"] == {"type": "", "id": ""}
    assert refused.status_code == 422
    assert refused.json()["error"] == {
        "code": "SUBJECT_MISSING",
        "message": SUBJECT_MISSING,
        "requestId": refused.json()["error"]["requestId"],
    }
    _nothing_routed()


def test_a_submitted_draft_can_no_longer_be_changed_or_deleted(acme, api):
    client = api("alice")
    draft = _save(client, _body(amountPaise=4_500_000, currency="INR", department="eng")).json()
    did = draft["draftId"]
    client.post(f"/api/drafts/{did}/submit")

    changed = client.put(f"/api/drafts/{did}", _body(amountPaise=5), format="json")
    deleted = client.delete(f"/api/drafts/{did}")

    for refused in (changed, deleted):
        assert refused.status_code == 409
        assert refused.json()["error"]["message"] == DRAFT_SUBMITTED
    assert Draft.objects.get(pk=did).data["amountPaise"] == 4_500_000


def test_a_draft_is_deleted_by_its_author(acme, api):
    client = api("alice")
    draft = _save(client).json()["draftId"]

    deleted = client.delete(f"/api/drafts/{draft}")

    assert deleted.status_code == 204
    assert client.get(f"/api/drafts/{draft}").status_code == 404
    assert not Draft.objects.exists()


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        pytest.param(_body(description="a\x00b"), 400, "VALIDATION_ERROR", id="nul-in-data"),
        pytest.param(
            {**_body(), "subject": {"type": "expense", "id": "E\x001"}},
            400,
            "VALIDATION_ERROR",
            id="nul-in-subject",
        ),
        pytest.param(
            {**_body(), "subject": {"type": "expense", "id": "E" * 129}},
            400,
            "VALIDATION_ERROR",
            id="subject-too-long",
        ),
        pytest.param(_body(description="x" * 2001), 422, "INVALID_DATA", id="value-too-long"),
        pytest.param(_body(amountPaise="lots"), 422, "INVALID_DATA", id="wrong-type"),
        pytest.param(_body(colour="blue"), 422, "INVALID_DATA", id="undeclared-field"),
        pytest.param(
            {**_body(), "template": "no-such-template"}, 422, "UNKNOWN_TEMPLATE", id="unknown"
        ),
        pytest.param({"data": {}}, 400, "VALIDATION_ERROR", id="no-template"),
    ],
)
def test_bad_input_is_refused_with_a_sentence_and_saves_nothing(acme, api, body, status, code):
    client = api("alice")
    kept = _save(client, _body(description="kept")).json()["draftId"]

    saved = client.post("/api/drafts", body, format="json")
    replaced = client.put(f"/api/drafts/{kept}", body, format="json")

    for refused in (saved, replaced):
        assert refused.status_code == status, refused.content
        error = refused.json()["error"]
        assert error["code"] == code
        assert error["message"].endswith((".", ")")) or ":" in error["message"]
    assert Draft.objects.count() == 1
    assert Draft.objects.get(pk=kept).data == {"description": "kept"}


def test_a_draft_id_that_is_not_a_uuid_is_404(acme, api):
    for path in ("/api/drafts/not-a-uuid", "/api/drafts/not-a-uuid/submit"):
        answer = api("alice").post(path) if path.endswith("submit") else api("alice").get(path)
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "NOT_FOUND"


def test_data_too_large_for_a_draft_is_refused(acme, api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
    # the expense schema is closed: a template open to undeclared fields takes any size
    from approvals.services.templates import workflow_template_publish

    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "open-notes",
            "schema": {"type": "object", "additionalProperties": True},
            "steps": [{"id": "a", "kind": "approval", "approvers": [{"user": "bob"}]}],
        },
    )
    body = {"template": "open-notes", "data": {"notes": "x" * 70_000}}

    refused = api("alice").post("/api/drafts", body, format="json")

    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == DRAFT_TOO_LARGE_CODE
    assert not Draft.objects.exists()


def test_one_person_keeps_at_most_so_many_drafts(acme, api):
    alice = User.objects.get(username="alice")
    Draft.objects.bulk_create(
        Draft(
            tenant=acme,
            author=alice,
            template_key=EXPENSE,
            created_at="2026-01-01T00:00:00Z",
            updated_at="2026-01-01T00:00:00Z",
        )
        for _ in range(DRAFTS_PER_PERSON)
    )

    refused = _save(api("alice"))

    assert refused.status_code == 422
    assert refused.json()["error"]["message"] == TOO_MANY_DRAFTS
    assert Draft.objects.count() == DRAFTS_PER_PERSON


def test_an_auditor_saves_no_draft(acme, api):
    refused = _save(api("audrey"))

    assert refused.status_code == 403
    assert not Draft.objects.exists()
