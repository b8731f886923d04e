"""A start through the API with its receipts: multipart, the JSON in ``body`` and the
files in ``file`` parts; a refused file starts nothing."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from approvals.models import Workflow, WorkflowEvent
from approvals.services.attachments import TOO_MANY_AT_ONCE, not_accepted_message

from ..files import HTML, pdf_bytes, png_bytes, upload
from ..helpers import EXPENSE

pytestmark = pytest.mark.django_db


def _body(subject: str) -> str:
    return json.dumps(
        {
            "template": EXPENSE,
            "subject": {"type": "expense", "id": subject},
            "data": {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
        }
    )


def _start(client: Any, parts: dict[str, Any], key: str | None = None) -> Any:
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post("/api/workflows", parts, format="multipart", **headers)


def test_a_start_with_files_records_them_on_the_new_request(
    acme: Any,
    api: Any,
    files_root: Path,
) -> None:
    key = uuid.uuid4().hex
    parts = {
        "body": _body("E-api-files-1"),
        "file": [
            upload("receipt.pdf", pdf_bytes()),
            upload("taxi.png", png_bytes()),
        ],
    }

    started = _start(api("alice"), parts, key)

    assert started.status_code == 201, started.content
    answer = started.json()
    assert [(f["name"], f["contentType"]) for f in answer["files"]] == [
        ("receipt.pdf", "application/pdf"),
        ("taxi.png", "image/png"),
    ]
    names = WorkflowEvent.objects.filter(
        workflow_id=answer["workflowId"], type="FileAttached"
    ).values_list("payload__name", flat=True)
    assert sorted(names) == ["receipt.pdf", "taxi.png"]
    got = api("bob").get(
        f"/api/workflows/{answer['workflowId']}/attachments/{answer['files'][1]['sha256']}"
    )
    assert got.status_code == 200


def test_a_refused_file_starts_nothing(
    acme: Any,
    api: Any,
    files_root: Path,
) -> None:
    parts = {"body": _body("E-api-files-2"), "file": [upload("r.pdf", HTML)]}

    refused = _start(api("alice"), parts)

    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "FILE_TYPE_NOT_ACCEPTED"
    assert refused.json()["error"]["message"] == not_accepted_message()
    assert not Workflow.objects.filter(subject_id="E-api-files-2").exists()


def test_too_many_files_and_a_missing_body_are_refused_in_words(
    acme: Any,
    api: Any,
    files_root: Path,
    settings: Any,
) -> None:
    settings.APPROVALS_FILES_PER_UPLOAD = 1
    two = [upload(f"{i}.png", png_bytes((9 + i, 9))) for i in range(2)]

    too_many = _start(api("alice"), {"body": _body("E-api-files-3"), "file": two})
    no_body = _start(api("alice"), {"file": [upload("a.png", png_bytes())]})

    assert too_many.status_code == 422
    assert too_many.json()["error"]["message"] == TOO_MANY_AT_ONCE.format(limit=1, count=2)
    assert no_body.status_code == 400
    assert "part named" in json.dumps(no_body.json())
    assert not Workflow.objects.filter(subject_id="E-api-files-3").exists()
