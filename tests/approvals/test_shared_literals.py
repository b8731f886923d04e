"""Literals that several parts of the app share come from one place."""

from __future__ import annotations

import hashlib
import json

from approvals.access import Role
from approvals.http.request_ids import request_id_valid
from approvals.models import WorkflowStatus
from approvals.models.directory import AUDITOR_ROLE, INTEGRATION_ROLE
from approvals.services.workflows import start_body_hash
from approvals.words.decisions import DECISIONS as WORDED
from templates_engine.commands import DECISIONS
from templates_engine.state import STATUSES


def test_the_models_statuses_are_the_engines() -> None:
    assert WorkflowStatus.values == list(STATUSES)
    assert dict(WorkflowStatus.choices)["ROLLED_BACK"] == "Rolled Back"


def test_every_worded_decision_is_an_engine_decision() -> None:
    assert set(WORDED) <= set(DECISIONS)
    assert set(DECISIONS) - set(WORDED) == {"delegate"}  # its own form, no button


def test_a_request_id_is_what_the_api_schema_allows() -> None:
    assert request_id_valid("btn:approve.42_x-1")
    assert not request_id_valid("#attempt:1")  # the app's own ids
    assert not request_id_valid("a b")
    assert not request_id_valid("x" * 129)


def test_the_start_body_hash_is_the_one_the_api_stored_before() -> None:
    # An Idempotency-Key recorded before the recipe moved must still replay.
    body = {"template": "expense", "subject": {"type": "expense", "id": "E-1"}, "data": {"a": 1}}
    before = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()

    assert (
        start_body_hash(
            template_key="expense", subject_type="expense", subject_id="E-1", data={"a": 1}
        )
        == before
    )
    assert (
        start_body_hash(
            template_key="expense", subject_type="expense", subject_id="E-2", data={"a": 1}
        )
        != before
    )


def test_the_directory_leaves_out_the_roles_that_never_hold_a_task() -> None:
    assert (INTEGRATION_ROLE, AUDITOR_ROLE) == (Role.INTEGRATION, Role.AUDITOR)
