"""Property-based API testing: schemathesis generates requests from the app's own
OpenAPI schema (served at /api/schema/), valid and invalid, and sends them to the WSGI
app; the app must never answer with a 5xx."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from config.wsgi import application

# The WSGI app opens and closes database connections per request as in production, so
# the data it reads must be committed: a transactional test.
pytestmark = pytest.mark.django_db(transaction=True)

SCHEMA_URL = "/api/schema/?format=json"
EXAMPLES_PER_OPERATION = 30  # per generation mode


@pytest.fixture
def seeded() -> dict[str, str]:
    """The demo organisation, alice's token and one workflow waiting on bob."""
    from approvals.demo import seed_demo
    from approvals.models import User
    from approvals.services.tokens import token_issue
    from approvals.services.workflows import workflow_start

    seed_demo()
    alice = User.objects.get(username="alice")
    _, secret = token_issue(user=alice, name="fuzz")
    running = workflow_start(
        submitter=alice,
        template_key="expense-approval",
        subject_type="expense",
        subject_id="FUZZ-1",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    return {"token": secret, "workflow_id": running.response["workflowId"]}


@pytest.fixture
def api_schema(seeded: dict[str, str]) -> Any:
    return schemathesis.openapi.from_wsgi(SCHEMA_URL, application)


def _fuzz(operation: Any, mode: schemathesis.GenerationMode, seeded: dict[str, str]) -> None:
    headers = {"Authorization": f"Bearer {seeded['token']}"}

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        case.call_and_validate(headers=headers, checks=[not_a_server_error])
        if "workflow_id" in (case.path_parameters or {}):
            # a generated id is almost never a workflow: send the same request to a real one
            case.path_parameters = {**case.path_parameters, "workflow_id": seeded["workflow_id"]}
            case.call_and_validate(headers=headers, checks=[not_a_server_error])

    run()


def test_no_operation_answers_with_a_server_error(api_schema, seeded):
    failures = []
    for result in api_schema.get_all_operations():
        operation = result.ok()
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            try:
                _fuzz(operation, mode, seeded)
            except Exception as exc:  # collect all operations' failures, then report
                failures.append(f"{operation.label} ({mode.value}): {exc}")

    assert not failures, "\n\n".join(failures)


def test_schema_covers_the_api(api_schema):
    operations = {
        (op.method.upper(), op.path)
        for op in (result.ok() for result in api_schema.get_all_operations())
    }

    assert {
        ("POST", "/api/auth/token"),
        ("POST", "/api/workflows"),
        ("GET", "/api/workflows"),
        ("GET", "/api/workflows/{workflow_id}"),
        ("POST", "/api/workflows/{workflow_id}/decisions"),
        ("POST", "/api/workflows/{workflow_id}/signals/{name}"),
        ("POST", "/api/workflows/{workflow_id}/cancel"),
        ("GET", "/api/me/tasks"),
    } <= operations
