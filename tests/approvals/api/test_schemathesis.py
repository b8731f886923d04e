"""The API keeps the contract its OpenAPI schema states.

Schemathesis reads the app's own schema (/api/schema/) and runs, against the WSGI app,
its examples, coverage, fuzzing and stateful phases with every check it has: no server
error, no undocumented status code or content type, every answer matching its schema,
invalid input refused, valid input accepted, and the stateful checks (a created
workflow can be read). It runs once per kind of user: alice (an employee who submits),
bob (her manager, an approver) and audrey (an auditor)."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from django.core.cache import cache
from rest_framework.test import APIClient
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events
from schemathesis.specs.openapi.checks import positive_data_acceptance

from config.wsgi import application

# The server runs in its own thread with its own database connections, so the data it
# reads must be committed: a transactional test.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SCHEMA_URL = "/api/schema/?format=json"
USERS = ("alice", "bob", "audrey")
MAX_EXAMPLES = 12  # per operation and phase; enough to meet every field, quick in CI
STATEFUL_STEPS = 6


@schemathesis.check
def valid_input_accepted(ctx: Any, response: Any, case: Any) -> bool | None:
    """The built-in ``positive_data_acceptance`` (2xx, 401, 403, 404, 409, 429), with
    two refusals only the server can make, both of which the schema documents:

    - 422: the request is well-formed, but the workflow template or its rules refuse
      it (an unknown template key, data failing that template's own JSON Schema, a
      delegation to nobody). Each tenant publishes its own templates, so no OpenAPI
      schema can say which keys and data exist.
    - 400 BAD_CURSOR: an inbox cursor is a signed token. The schema gives its shape,
      but only the server can tell one it issued from a forged one.
    Any other 400, a malformed or out-of-limit body the schema allows, still fails."""
    if response.status_code == 422:
        return None
    if response.status_code == 400 and _error_code(response) == "BAD_CURSOR":
        return None
    return positive_data_acceptance(ctx, response, case)


def _error_code(response: Any) -> str | None:
    try:
        return response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None


def _config(token: str) -> SchemathesisConfig:
    return SchemathesisConfig.from_dict(
        {
            "seed": 7,
            "cache": {"enabled": False},  # no state left in the worktree between runs
            "headers": {"Authorization": f"Bearer {token}"},
            # OpenAPI 3.0 has no propertyNames: the schema cannot say that keys of free-form
            # objects hold no NUL, which the server refuses (test_bad_input covers it).
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "allow-x00": False,
            },
            "checks": {"positive_data_acceptance": {"enabled": False}},
            "phases": {
                "examples": {"enabled": True},
                "coverage": {"enabled": True},
                "fuzzing": {"enabled": True},
                "stateful": {"enabled": True, "max-steps": STATEFUL_STEPS},
            },
        }
    )


@pytest.fixture
def seeded(acme: Any) -> dict[str, str]:
    """The demo organisation, a token for each user, one workflow waiting on bob."""
    from approvals.services.workflows import workflow_start

    # an earlier run's fuzzing of POST /api/auth/token may have spent its rate limit
    cache.clear()
    tokens = {}
    for username in USERS:
        answer = APIClient().post(
            "/api/auth/token", {"username": username, "password": "demo"}, format="json"
        )
        assert answer.status_code == 200, answer.content
        tokens[username] = answer.json()["token"]
    from approvals.models import User

    workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id="FUZZ-1",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    return tokens


def _failures(base_url: str, token: str) -> tuple[list[str], int]:
    """Every failure found (each once), and how many cases were sent."""
    # Over HTTP, as a client outside would: the engine's in-process WSGI transport
    # mishandles the engine's own request options.
    schema = schemathesis.openapi.from_url(f"{base_url}{SCHEMA_URL}", config=_config(token))
    found: list[str] = []
    cases = 0
    for event in schemathesis.engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            cases += len(event.recorder.cases)
            for checks in event.recorder.checks.values():
                for check in checks:
                    if check.failure_info is not None:
                        failure = check.failure_info.failure
                        found.append(
                            f"{event.recorder.label} [{check.name}] {failure.title}: "
                            f"{failure.message}\n{check.failure_info.code_sample}"
                        )
        elif isinstance(event, events.NonFatalError | events.FatalError):
            error = getattr(event, "value", None) or getattr(event, "exception", None)
            found.append(f"error in {getattr(event, 'label', '')}: {error!r}")
    return sorted(set(found)), cases


@pytest.mark.parametrize("username", USERS)
def test_the_api_keeps_its_schema(seeded, live_server, username):
    failures, cases = _failures(live_server.url, seeded[username])

    print(f"schemathesis as {username}: {cases} cases, {len(failures)} failures")
    assert cases > 0
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures[:20])


def test_schema_covers_the_api(seeded):
    schema = schemathesis.openapi.from_wsgi(SCHEMA_URL, application)
    operations = {
        (op.method.upper(), op.path) for op in (r.ok() for r in schema.get_all_operations())
    }

    assert {
        ("POST", "/api/auth/token"),
        ("POST", "/api/workflows"),
        ("GET", "/api/workflows"),
        ("GET", "/api/workflows/{workflow_id}"),
        ("POST", "/api/workflows/{workflow_id}/decisions"),
        ("GET", "/api/workflows/{workflow_id}/held/{request_id}"),
        ("DELETE", "/api/workflows/{workflow_id}/held/{request_id}"),
        ("POST", "/api/workflows/{workflow_id}/signals/{name}"),
        ("POST", "/api/workflows/{workflow_id}/cancel"),
        ("POST", "/api/workflows/{workflow_id}/comments"),
        ("POST", "/api/workflows/{workflow_id}/approvers"),
        ("POST", "/api/workflows/{workflow_id}/attachments"),
        ("GET", "/api/workflows/{workflow_id}/attachments/{sha256}"),
        ("GET", "/api/me/tasks"),
        ("POST", "/api/drafts"),
        ("GET", "/api/drafts"),
        ("GET", "/api/drafts/{draft_id}"),
        ("PUT", "/api/drafts/{draft_id}"),
        ("DELETE", "/api/drafts/{draft_id}"),
        ("POST", "/api/drafts/{draft_id}/submit"),
    } <= operations
