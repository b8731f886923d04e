"""Every bad input gets a clear 4xx in the one error envelope and changes nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from approvals import json_input
from approvals.api import errors as api_errors
from approvals.api import views as api_views
from approvals.demo import definitions
from approvals.http.middleware import BODY_TOO_LARGE
from approvals.models import (
    OrgGroup,
    PendingTask,
    StartRequest,
    Tenant,
    User,
    Workflow,
    WorkflowEvent,
)
from approvals.selectors.tasks import BAD_CURSOR, CURSOR_SALT
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import (
    IDEMPOTENCY_KEY_INVALID,
    IDEMPOTENCY_KEY_REUSED,
    TEMPLATE_NOT_FOUND,
)

from ..helpers import EXPENSE, decide, start_expense

pytestmark = pytest.mark.django_db

PENDING_AMOUNT = 4_500_000  # manager (bob), then finance
INSTANT_AMOUNT = 99_999  # approved at once


# -- helpers ------------------------------------------------------------------------------


def _state(workflow_id: str | None) -> tuple[Any, ...]:
    counts = tuple(m.objects.count() for m in (Workflow, WorkflowEvent, PendingTask, StartRequest))
    if workflow_id is None:
        return counts
    wf = Workflow.objects.get(pk=workflow_id)
    return (*counts, wf.version, wf.status, wf.public_status)


@contextmanager
def changes_nothing(*workflow_ids: str) -> Iterator[None]:
    before = [_state(None), *(_state(w) for w in workflow_ids)]
    yield
    assert [_state(None), *(_state(w) for w in workflow_ids)] == before


def assert_error(
    response: Any, status: int, code: str, message: str | None = None
) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"]
    error = body["error"]
    assert {"code", "message", "requestId"} <= set(error)
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["requestId"], str) and error["requestId"]
    if message is not None:
        assert error["message"] == message
    return error


def _decisions_url(workflow_id: str) -> str:
    return f"/api/workflows/{workflow_id}/decisions"


def _start_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "template": EXPENSE,
        "subject": {"type": "expense", "id": "E-1"},
        "data": {"amountPaise": PENDING_AMOUNT, "currency": "INR", "department": "eng"},
    }
    body.update(overrides)
    return body


@pytest.fixture
def pending(acme: Any, api: Any) -> str:
    """A workflow of alice's waiting on bob (the manager step)."""
    response = start_expense(api("alice"), PENDING_AMOUNT)
    assert response.status_code == 201
    return response.json()["workflowId"]


@pytest.fixture
def globex(acme: Any, api: Any) -> dict[str, Any]:
    """A second tenant, with its own people, templates and a running workflow."""
    tenant = Tenant.objects.create(slug="globex", name="Globex")
    gina = User.objects.create_user("gina", password="pw", tenant=tenant)
    User.objects.create_user("greg", password="pw", tenant=tenant, manager=gina)
    for key in ("finance", "it-admins"):
        OrgGroup.objects.create(tenant=tenant, key=key, name=key).members.add(gina)
    for doc in definitions():
        # Globex's own people where the demo names Acme's (publishing checks them).
        text = json.dumps(doc).replace('"victor"', '"gina"').replace('"cora"', '"gina"')
        workflow_template_publish(tenant=tenant, definition=json.loads(text))
    started = start_expense(api("greg"), PENDING_AMOUNT)
    assert started.status_code == 201, started.content
    return {"tenant": tenant, "workflow_id": started.json()["workflowId"]}


# -- the body is not JSON, or not a JSON object ---------------------------------------------


@pytest.mark.parametrize("raw", ['{"decision": ', "{not json}", '{"a": 1}}', "{'a': 1}"])
def test_malformed_json_decision_is_400(pending, api, raw):
    with changes_nothing(pending):
        response = api("bob").post(_decisions_url(pending), raw, content_type="application/json")

    assert_error(response, 400, "MALFORMED_JSON")


def test_malformed_json_start_is_400(pending, api):
    with changes_nothing(pending):
        response = api("alice").post(
            "/api/workflows", '{"template": "expense-appr', content_type="application/json"
        )

    assert_error(response, 400, "MALFORMED_JSON")


@pytest.mark.parametrize("raw", ["[]", '["approve"]', '"approve"', "42", "null", "true"])
@pytest.mark.parametrize("endpoint", ["start", "decision"])
def test_non_object_json_body_is_400(pending, api, raw, endpoint):
    url = "/api/workflows" if endpoint == "start" else _decisions_url(pending)
    user = "alice" if endpoint == "start" else "bob"

    with changes_nothing(pending):
        response = api(user).post(url, raw, content_type="application/json")

    assert_error(response, 400, "VALIDATION_ERROR")


def test_form_encoded_body_is_415(pending, api):
    with changes_nothing(pending):
        response = api("bob").post(
            _decisions_url(pending),
            "decision=approve&requestId=r1",
            content_type="application/x-www-form-urlencoded",
        )

    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE")


# -- decisions that do not validate ---------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"decision": "approve"}, "requestId", id="missing-requestId"),
        pytest.param({"requestId": "r1"}, "decision", id="missing-decision"),
        pytest.param({"decision": "maybe", "requestId": "r1"}, "decision", id="unknown-decision"),
        pytest.param(
            {"decision": "approve", "requestId": "r" * 129}, "requestId", id="requestId-too-long"
        ),
        pytest.param(
            {"decision": "approve", "requestId": "has spaces"},
            "requestId",
            id="requestId-with-spaces",
        ),
        pytest.param({"decision": "approve", "requestId": ""}, "requestId", id="requestId-empty"),
        pytest.param(
            {"decision": "approve", "requestId": "r1", "comment": "x" * 4001},
            "comment",
            id="comment-too-long",
        ),
        pytest.param(
            {"decision": "approve", "requestId": "r1", "data": [1, 2]},
            "data",
            id="data-not-an-object",
        ),
    ],
)
def test_invalid_decision_body_is_400_naming_the_field(pending, api, body, field):
    with changes_nothing(pending):
        response = api("bob").post(_decisions_url(pending), body, format="json")

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith(f"{field}:")


def test_decision_error_carries_the_body_request_id(pending, api):
    with changes_nothing(pending):
        response = decide(api("bob"), pending, "maybe", "bob-try-1")

    assert assert_error(response, 400, "VALIDATION_ERROR")["requestId"] == "bob-try-1"


def test_error_without_body_request_id_carries_the_correlation_id(pending, api):
    client = api("bob")

    response = client.post(
        _decisions_url(pending),
        {"decision": "approve"},
        format="json",
        HTTP_X_REQUEST_ID="trace-123",
    )

    assert assert_error(response, 400, "VALIDATION_ERROR")["requestId"] == "trace-123"
    assert response["X-Request-Id"] == "trace-123"


def test_delegate_without_delegate_to_is_422(pending, api):
    with changes_nothing(pending):
        response = decide(api("bob"), pending, "delegate", "bob-d1")

    assert_error(response, 422, "INVALID_DECISION")


@pytest.mark.parametrize("target", ["nobody-at-all", "gina"])
def test_delegate_to_unknown_user_is_422(pending, globex, api, target):
    # gina exists, but in another tenant: to Acme she is nobody
    with changes_nothing(pending):
        response = decide(api("bob"), pending, "delegate", "bob-d2", delegateTo=target)

    error = assert_error(response, 422, "UNKNOWN_USER")
    assert target in error["message"]


def test_decision_on_the_wrong_step_is_409(pending, api):
    with changes_nothing(pending):
        response = decide(api("olga"), pending, "approve", "olga-early")

    assert_error(response, 409, "NOT_YOUR_STEP")


def test_decision_by_someone_who_may_not_read_the_workflow_is_404(pending, api):
    # fiona is on a later step, so the workflow is nothing of hers yet: not a hint of it
    with changes_nothing(pending):
        response = decide(api("fiona"), pending, "approve", "fiona-early")

    assert_error(response, 404, "NOT_FOUND")


def test_decision_on_a_finished_workflow_is_409(acme, api):
    started = start_expense(api("alice"), INSTANT_AMOUNT).json()
    assert started["status"] == "APPROVED"
    wid = started["workflowId"]

    with changes_nothing(wid):
        response = decide(api("olga"), wid, "approve", "too-late")

    assert_error(response, 409, "WORKFLOW_FINISHED")


def test_wrong_method_on_decisions_is_405_in_the_envelope(pending, api):
    with changes_nothing(pending):
        response = api("bob").get(_decisions_url(pending))

    assert_error(response, 405, "METHOD_NOT_ALLOWED")


# -- starting a workflow with bad input -------------------------------------------------------


def test_unknown_template_is_422(acme, api):
    with changes_nothing():
        response = api("alice").post(
            "/api/workflows", _start_body(template="no-such-template"), format="json"
        )

    assert_error(
        response, 422, "UNKNOWN_TEMPLATE", TEMPLATE_NOT_FOUND.format(key="no-such-template")
    )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        pytest.param(
            {"amountPaise": "4500000", "currency": "INR", "department": "eng"},
            "amountPaise",
            id="amount-a-string",
        ),
        pytest.param(
            {"amountPaise": -5, "currency": "INR", "department": "eng"},
            "amountPaise",
            id="amount-negative",
        ),
        pytest.param(
            {"amountPaise": 0, "currency": "INR", "department": "eng"},
            "amountPaise",
            id="amount-zero",
        ),
        pytest.param(
            {"amountPaise": 12.5, "currency": "INR", "department": "eng"},
            "amountPaise",
            id="amount-fractional",
        ),
        pytest.param(
            {"amountPaise": 4_500_000, "department": "eng"}, "currency", id="currency-missing"
        ),
        pytest.param(
            {"amountPaise": 4_500_000, "currency": "inr", "department": "eng"},
            "currency",
            id="currency-lowercase",
        ),
        pytest.param(
            {"amountPaise": 4_500_000, "currency": "INR", "department": ""},
            "department",
            id="department-empty",
        ),
    ],
)
def test_data_failing_the_template_schema_is_422_naming_the_field(acme, api, data, field):
    with changes_nothing():
        response = api("alice").post(
            "/api/workflows",
            _start_body(data=data),
            format="json",
            HTTP_IDEMPOTENCY_KEY=f"bad-{field}",
        )

    error = assert_error(response, 422, "INVALID_DATA")
    assert field in error["message"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        pytest.param({"data": [1, 2, 3]}, "data", id="data-a-list"),
        pytest.param({"data": "amountPaise=5"}, "data", id="data-a-string"),
        pytest.param({"template": "Expense Approval"}, "template", id="template-bad-key"),
        pytest.param({"template": None}, "template", id="template-null"),
        pytest.param({"subject": "E-1"}, "subject", id="subject-not-an-object"),
        pytest.param({"subject": {"type": "expense"}}, "subject.id", id="subject-without-id"),
    ],
)
def test_invalid_start_body_is_400_naming_the_field(acme, api, overrides, field):
    with changes_nothing():
        response = api("alice").post("/api/workflows", _start_body(**overrides), format="json")

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith(f"{field}")


def test_missing_template_is_400(acme, api):
    body = _start_body()
    del body["template"]

    with changes_nothing():
        response = api("alice").post("/api/workflows", body, format="json")

    assert_error(response, 400, "VALIDATION_ERROR")


@pytest.mark.parametrize("key", ["k" * 256, "tab\there"])
def test_unprintable_or_long_idempotency_key_is_400(acme, api, key):
    with changes_nothing():
        response = api("alice").post(
            "/api/workflows", _start_body(), format="json", HTTP_IDEMPOTENCY_KEY=key
        )

    assert_error(response, 400, "BAD_IDEMPOTENCY_KEY", api_views.IDEMPOTENCY_KEY_INVALID)


# -- idempotent starts -----------------------------------------------------------------------


def test_idempotency_key_reused_with_a_different_body_is_422(acme, api):
    client = api("alice")
    first = start_expense(client, PENDING_AMOUNT, key="expense-42")
    assert first.status_code == 201

    with changes_nothing(first.json()["workflowId"]):
        again = start_expense(client, PENDING_AMOUNT + 1, key="expense-42")

    assert_error(again, 422, "IDEMPOTENCY_KEY_REUSED", IDEMPOTENCY_KEY_REUSED)
    assert Workflow.objects.count() == 1


def test_same_idempotency_key_and_body_gives_the_same_answer_once(acme, api):
    client = api("alice")
    first = start_expense(client, PENDING_AMOUNT, key="expense-43")

    with changes_nothing(first.json()["workflowId"]):
        again = start_expense(client, PENDING_AMOUNT, key="expense-43")

    assert again.status_code == first.status_code == 201
    assert again.json() == first.json()
    assert again["Location"] == first["Location"]
    assert again["Idempotent-Replayed"] == "true"
    assert Workflow.objects.count() == StartRequest.objects.count() == 1


def test_idempotency_keys_are_per_user(acme, api):
    # the same key from someone else is a different request, not a reuse
    first = start_expense(api("alice"), PENDING_AMOUNT, key="shared-key")
    other = start_expense(api("fiona"), PENDING_AMOUNT + 1, key="shared-key", subject="E-fiona")

    assert first.status_code == other.status_code == 201
    assert first.json()["workflowId"] != other.json()["workflowId"]


# -- another tenant's workflows -----------------------------------------------------------------


def _without_request_id(response: Any) -> dict[str, Any]:
    error = dict(response.json()["error"])
    error.pop("requestId")
    return {"status": response.status_code, **error}


def test_another_tenants_workflow_is_indistinguishable_from_none(globex, api):
    client = api("alice")
    theirs = client.get(f"/api/workflows/{globex['workflow_id']}")
    random_uuid = client.get(f"/api/workflows/{uuid.uuid4()}")
    not_a_uuid = client.get("/api/workflows/not-a-uuid")

    assert_error(theirs, 404, "NOT_FOUND", api_errors.NOT_FOUND)
    assert (
        _without_request_id(theirs)
        == _without_request_id(random_uuid)
        == _without_request_id(not_a_uuid)
    )
    assert theirs.json()["error"].keys() == random_uuid.json()["error"].keys()


@pytest.mark.parametrize("username", ["alice", "bob", "audrey", "admin"])
def test_get_of_another_tenants_workflow_is_404_even_for_auditors(globex, api, username):
    response = api(username).get(f"/api/workflows/{globex['workflow_id']}")

    assert_error(response, 404, "NOT_FOUND", api_errors.NOT_FOUND)


@pytest.mark.parametrize("username", ["bob", "admin"])
def test_decision_on_another_tenants_workflow_is_404_and_changes_nothing(globex, api, username):
    wid = globex["workflow_id"]

    with changes_nothing(wid):
        response = decide(api(username), wid, "approve", f"{username}-x")
        random_uuid = decide(api(username), str(uuid.uuid4()), "approve", f"{username}-y")
        not_a_uuid = decide(api(username), "not-a-uuid", "approve", f"{username}-z")

    assert_error(response, 404, "NOT_FOUND", api_errors.NOT_FOUND)
    assert (
        _without_request_id(response)
        == _without_request_id(random_uuid)
        == _without_request_id(not_a_uuid)
    )


def test_another_tenants_workflow_is_not_in_search_or_inbox(globex, api):
    wid = globex["workflow_id"]

    found = api("audrey").get("/api/workflows").json()["workflows"]
    tasks = api("bob").get("/api/me/tasks").json()["items"]

    assert wid not in {w["workflowId"] for w in found}
    assert wid not in {t["workflowId"] for t in tasks}


# -- size, authentication, URLs ----------------------------------------------------------------


def test_oversized_body_is_413(pending, api):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = json.dumps({"decision": "approve", "requestId": "big", "comment": "x" * (limit + 1)})

    with changes_nothing(pending):
        response = api("bob").post(_decisions_url(pending), body, content_type="application/json")

    assert_error(response, 413, "BODY_TOO_LARGE", BODY_TOO_LARGE.format(limit=limit))


def test_oversized_start_is_413(acme, api):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    body = _start_body()
    body["data"]["description"] = "x" * (limit + 1)

    with changes_nothing():
        response = api("alice").post("/api/workflows", body, format="json")

    assert_error(response, 413, "BODY_TOO_LARGE", BODY_TOO_LARGE.format(limit=limit))


@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param(None, id="no-token"),
        pytest.param("Bearer 0123456789abcdef0123456789abcdef01234567", id="wrong-token"),
        pytest.param("Bearer", id="empty-token"),
        pytest.param("Bearer two words", id="token-with-spaces"),
        pytest.param("Basic YWxpY2U6ZGVtbw==", id="basic-auth"),
    ],
)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/me/tasks"),
        ("get", "/api/workflows"),
        ("post", "/api/workflows"),
        ("post", "decisions"),
    ],
)
def test_without_a_valid_token_is_401(pending, authorization, method, path):
    client = APIClient()
    if authorization:
        client.credentials(HTTP_AUTHORIZATION=authorization)
    url = _decisions_url(pending) if path == "decisions" else path
    body = {"decision": "approve", "requestId": "r1"} if path == "decisions" else _start_body()

    with changes_nothing(pending):
        response = (
            getattr(client, method)(url, body, format="json")
            if method == "post"
            else client.get(url)
        )

    assert_error(response, 401, "UNAUTHENTICATED")


@pytest.mark.parametrize(
    ("username", "password"),
    [
        ("alice", "wrong"),
        ("alice", "demo "),
        ("nobody-here", "demo"),
    ],
)
def test_token_with_wrong_credentials_is_401(acme, username, password):
    response = APIClient().post(
        "/api/auth/token", {"username": username, "password": password}, format="json"
    )

    assert_error(response, 401, "INVALID_CREDENTIALS", api_views.INVALID_CREDENTIALS)


def test_token_with_right_credentials_works(acme):
    response = APIClient().post(
        "/api/auth/token", {"username": "alice", "password": "demo"}, format="json"
    )

    assert response.status_code == 200
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {response.json()['token']}")
    assert client.get("/api/me/tasks").status_code == 200


def test_token_without_password_is_400(acme):
    response = APIClient().post("/api/auth/token", {"username": "alice"}, format="json")

    assert_error(response, 400, "VALIDATION_ERROR")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/me/tasks"),
        ("get", "/api/workflows"),
        ("post", "/api/workflows"),
    ],
)
def test_user_without_a_tenant_is_403(acme, api, method, path):
    User.objects.create_user("operator", password="pw")  # no tenant

    with changes_nothing():
        client = api("operator")
        response = (
            client.post(path, _start_body(), format="json")
            if method == "post"
            else client.get(path)
        )

    assert_error(response, 403, "FORBIDDEN")


@pytest.mark.parametrize("path", ["/api/nope", "/api/workflows/x/y/z", "/api/me/tasks/1"])
def test_unknown_api_url_is_404_json(acme, api, path):
    response = api("alice").get(path)

    assert_error(response, 404, "NOT_FOUND", api_errors.NOT_FOUND)


# -- the inbox's query ---------------------------------------------------------------------------


@pytest.mark.parametrize("cursor", ["garbage", "x" * 100, "eyJhIjoxfQ:abc:def"])
def test_bad_cursor_is_400(pending, api, cursor):
    response = api("bob").get("/api/me/tasks", {"cursor": cursor})

    assert_error(response, 400, "BAD_CURSOR", BAD_CURSOR)


def test_cursor_of_another_kind_is_a_bad_cursor(pending, api):
    from django.core import signing

    forged = signing.dumps(["2020-01-01T00:00:00+00:00", 1], salt="some.other.salt", compress=True)

    response = api("bob").get("/api/me/tasks", {"cursor": forged})

    assert_error(response, 400, "BAD_CURSOR", BAD_CURSOR)


@pytest.mark.parametrize("limit", ["0", "-1", "1000", "201", "abc", "1.5"])
def test_bad_limit_is_400(pending, api, limit):
    response = api("bob").get("/api/me/tasks", {"limit": limit})

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith("limit:")


# -- JSON past the limits: refused by the parser, before any service ---------------------------

INT64_MAX = 2**63 - 1


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"x": value}
    return value


@pytest.mark.parametrize("amount", [2**63, -(2**63) - 1, 2**64, 10**400])
def test_integer_beyond_64_bits_in_data_is_400_naming_the_path(acme, api, amount):
    raw = json.dumps(_start_body()).replace(str(PENDING_AMOUNT), str(amount))

    with changes_nothing():
        response = api("alice").post("/api/workflows", raw, content_type="application/json")

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"] == f"data.amountPaise: {json_input.INT_OUT_OF_RANGE}"


def test_largest_64_bit_integer_is_accepted_where_the_template_allows_it(acme, api):
    body = _start_body(
        template="purchase-request",
        data={"amountPaise": INT64_MAX, "currency": "INR", "category": "SOFTWARE", "item": "x"},
    )

    response = api("alice").post("/api/workflows", body, format="json")

    assert response.status_code == 201, response.content
    wf = Workflow.objects.get(pk=response.json()["workflowId"])
    assert wf.data["amountPaise"] == INT64_MAX


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_number_is_400(acme, api, raw):
    body = json.dumps(_start_body()).replace(str(PENDING_AMOUNT), raw)

    with changes_nothing():
        response = api("alice").post("/api/workflows", body, content_type="application/json")

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith("data.amountPaise: ")


@pytest.mark.parametrize("depth", [33, 5000, 100_000])
def test_nesting_past_the_limit_is_400_before_parsing(pending, api, depth):
    raw = '{"decision": "approve", "requestId": "deep", "data": ' + "[" * depth + "]" * depth + "}"

    with changes_nothing(pending):
        response = api("bob").post(_decisions_url(pending), raw, content_type="application/json")

    assert_error(response, 400, "VALIDATION_ERROR", json_input.TOO_DEEP)


def test_nesting_within_the_limit_reaches_validation(acme, api):
    body = _start_body()
    body["data"]["extra"] = _nested(json_input.MAX_DEPTH - 3)  # body, data and extra: 3 levels

    with changes_nothing():
        response = api("alice").post("/api/workflows", body, format="json")

    error = assert_error(response, 422, "INVALID_DATA")  # past the parser: an undeclared field
    assert "extra" in error["message"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [("/api/workflows", 401), ("/api/auth/token", 400)],
)
def test_deep_nesting_is_refused_before_login(acme, url, expected):
    raw = "[" * 50_000 + "]" * 50_000

    with changes_nothing():
        response = APIClient().post(url, raw, content_type="application/json")

    assert response.status_code == expected
    assert response.json()["error"]["code"] in {"UNAUTHENTICATED", "VALIDATION_ERROR"}


@pytest.mark.parametrize(
    ("raw_data", "path", "problem"),
    [
        pytest.param('{"department": "en\\u0000g"}', "data.department", "NUL", id="nul-in-value"),
        pytest.param('{"dep\\u0000t": "eng"}', "data", "NUL", id="nul-in-key"),
        pytest.param('{"department": "\\ud800"}', "data.department", "surrogate", id="surrogate"),
        pytest.param('{"\\udfff": 1}', "data", "surrogate", id="surrogate-in-key"),
        pytest.param('{"items": ["ok", {"x": "\\u0000"}]}', "data.items[1].x", "NUL", id="deep"),
    ],
)
def test_nul_and_lone_surrogates_are_400_naming_the_path(acme, api, raw_data, path, problem):
    raw = '{"template": "expense-approval", "subject": {"type": "expense", "id": "E-1"}, '
    raw += f'"data": {raw_data}}}'

    with changes_nothing():
        response = api("alice").post("/api/workflows", raw, content_type="application/json")

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith(f"{path}: ")
    assert problem in error["message"]


@pytest.mark.parametrize("field", ["comment", "requestId"])
@pytest.mark.parametrize("escape", ["\\u0000", "\\ud800"])
def test_nul_or_surrogate_in_a_decision_is_400(pending, api, field, escape):
    fields = {"decision": '"approve"', "requestId": '"r-nul"', "comment": '"fine"'}
    fields[field] = f'"a{escape}b"'
    raw = "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}"

    with changes_nothing(pending):
        response = api("bob").post(_decisions_url(pending), raw, content_type="application/json")

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith(f"{field}: ")


# -- over-long fields ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        pytest.param(
            {"subject": {"type": "expense", "id": "i" * 129}}, "subject.id", id="subject-id"
        ),
        pytest.param(
            {"subject": {"type": "t" * 65, "id": "E-1"}}, "subject.type", id="subject-type"
        ),
        pytest.param({"template": "t" * 65}, "template", id="template-key"),
        pytest.param({"template": 7}, "template", id="template-a-number"),
        pytest.param({"subject": {"type": "expense", "id": 12}}, "subject.id", id="id-a-number"),
    ],
)
def test_over_long_or_mistyped_start_field_is_400(acme, api, overrides, field):
    with changes_nothing():
        response = api("alice").post("/api/workflows", _start_body(**overrides), format="json")

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith(f"{field}: ")


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        pytest.param({"onBehalfOf": "u" * 151}, "onBehalfOf", id="onBehalfOf"),
        pytest.param({"delegateTo": "u" * 151}, "delegateTo", id="delegateTo"),
        pytest.param({"comment": 42}, "comment", id="comment-a-number"),
    ],
)
def test_over_long_decision_field_is_400(pending, api, extra, field):
    with changes_nothing(pending):
        response = decide(api("bob"), pending, "delegate", "bob-long", **extra)

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith(f"{field}: ")


def test_over_long_cancel_reason_is_400(pending, api):
    with changes_nothing(pending):
        response = api("alice").post(
            f"/api/workflows/{pending}/cancel",
            {"requestId": "c-long", "reason": "r" * 1001},
            format="json",
        )

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith("reason: ")


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        pytest.param({"subject": {"type": "expense\n", "id": "E-1"}}, "subject", id="subject"),
        pytest.param({"template": "expense-approval\n"}, "template", id="template-key"),
    ],
)
def test_a_trailing_newline_in_a_start_is_400(acme, api, overrides, field):
    body = {
        "template": "expense-approval",
        "subject": {"type": "expense", "id": "E-1"},
        "data": {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
        **overrides,
    }
    with changes_nothing():
        response = api("alice").post("/api/workflows", body, format="json")

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith(field)


def _signed_in(username: str) -> Any:
    from django.test import Client

    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def test_a_trailing_newline_in_a_request_id_is_400(pending, api):
    with changes_nothing(pending):
        response = decide(api("bob"), pending, "approve", "r-1\n")
        page = _signed_in("bob").post(
            f"/workflows/{pending}/decide",
            {"decision": "approve", "request_id": "r-1\n"},
            HTTP_ACCEPT="application/json",
        )

    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["message"].startswith("requestId")
    assert page.status_code == 400


def test_a_trailing_newline_in_a_signal_name_is_400(pending, api):
    with changes_nothing(pending):
        response = api("alice").post(
            f"/api/workflows/{pending}/signals/contract_signed%0A",
            {"requestId": "s-1"},
            format="json",
        )

    assert_error(response, 400, "VALIDATION_ERROR", api_views.SIGNAL_NAME_INVALID)


@pytest.mark.parametrize("name", ["s" * 65, "has space", "semi;colon"])
def test_bad_signal_name_is_400(pending, api, name):
    with changes_nothing(pending):
        response = api("alice").post(
            f"/api/workflows/{pending}/signals/{name}", {"requestId": "s-1"}, format="json"
        )

    assert_error(response, 400, "VALIDATION_ERROR", api_views.SIGNAL_NAME_INVALID)


@pytest.mark.parametrize("key", ["k" * 256, "with space", "é-accent"])
def test_idempotency_key_outside_visible_ascii_is_400(acme, api, key):
    with changes_nothing():
        response = api("alice").post(
            "/api/workflows", _start_body(), format="json", HTTP_IDEMPOTENCY_KEY=key
        )

    assert_error(response, 400, "BAD_IDEMPOTENCY_KEY", IDEMPOTENCY_KEY_INVALID)


@pytest.mark.parametrize("param", ["text", "status", "subjectId", "assignee"])
def test_empty_or_over_long_search_parameter_is_400(acme, api, param):
    client = api("audrey")

    empty = client.get("/api/workflows", {param: ""})
    long = client.get("/api/workflows", {param: "q" * 201})

    assert assert_error(empty, 400, "VALIDATION_ERROR")["message"].startswith(f"{param}: ")
    assert assert_error(long, 400, "VALIDATION_ERROR")["message"].startswith(f"{param}: ")


# -- forged cursors -------------------------------------------------------------------------------


def _signed_cursor(due: Any, pk: Any) -> str:
    from django.core import signing

    return signing.dumps([due, pk], salt=CURSOR_SALT, compress=True)


@pytest.mark.parametrize(
    "cursor",
    [
        pytest.param("0", id="zero"),
        pytest.param("", id="empty"),
        pytest.param("-1", id="negative-text"),
        pytest.param(_signed_cursor("2020-01-01T00:00:00+00:00", 2**70), id="huge-id"),
        pytest.param(_signed_cursor("2020-01-01T00:00:00+00:00", -5), id="negative-id"),
        pytest.param(_signed_cursor("2020-01-01T00:00:00+00:00", 0), id="id-zero"),
        pytest.param(_signed_cursor("2020-01-01T00:00:00", 5), id="naive-time"),
        pytest.param(_signed_cursor("99999-01-01", 5), id="bad-time"),
        pytest.param(_signed_cursor(None, "5"), id="wrong-types"),
    ],
)
def test_forged_or_out_of_range_cursor_is_400(pending, api, cursor):
    with changes_nothing(pending):
        response = api("bob").get("/api/me/tasks", {"cursor": cursor})

    assert_error(response, 400, "BAD_CURSOR", BAD_CURSOR)


def test_a_cursor_the_server_gave_still_works(acme, api):
    client = api("alice")
    for n in range(3):
        assert start_expense(client, PENDING_AMOUNT, subject=f"E-{n}").status_code == 201

    first = api("bob").get("/api/me/tasks", {"limit": 1}).json()
    second = api("bob").get("/api/me/tasks", {"limit": 1, "cursor": first["nextCursor"]})

    assert second.status_code == 200
    assert second.json()["items"][0]["taskId"] != first["items"][0]["taskId"]


# -- workflow ids that name nothing --------------------------------------------------------------


@pytest.mark.parametrize(
    "workflow_id", ["null,null", "not-a-uuid", "1", "2f1c6b5e-8d3a-4c7e-9b21-6a0d4e5f7c89"]
)
@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("get", "", None),
        ("post", "/decisions", {"decision": "approve", "requestId": "r-404"}),
        ("post", "/signals/contract_signed", {"requestId": "r-404"}),
        ("post", "/cancel", {"requestId": "r-404"}),
    ],
)
def test_unknown_or_malformed_workflow_id_is_the_json_404(
    pending, api, workflow_id, method, suffix, body
):
    client = api("admin")
    url = f"/api/workflows/{workflow_id}{suffix}"

    with changes_nothing(pending):
        response = client.post(url, body, format="json") if body else client.get(url)

    assert_error(response, 404, "NOT_FOUND", api_errors.NOT_FOUND)


# -- workflow data schemas are closed by default ------------------------------------------------


def test_undeclared_data_field_is_422_naming_it(acme, api):
    body = _start_body()
    body["data"]["amountPiase"] = 5  # a typo of amountPaise

    with changes_nothing():
        response = api("alice").post("/api/workflows", body, format="json")

    error = assert_error(response, 422, "INVALID_DATA")
    assert "amountPiase" in error["message"]


def test_a_definition_may_allow_undeclared_fields(acme, api):
    doc = next(d for d in definitions() if d["key"] == EXPENSE)
    workflow_template_publish(tenant=acme, definition={**doc, "allow_undeclared_fields": True})
    body = _start_body()
    body["data"]["costCentre"] = "CC-7"

    response = api("alice").post("/api/workflows", body, format="json")

    assert response.status_code == 201, response.content
    assert Workflow.objects.get(pk=response.json()["workflowId"]).data["costCentre"] == "CC-7"
