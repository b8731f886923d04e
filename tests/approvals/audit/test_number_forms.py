"""One form for numbers in the hash and in storage: whatever JSON the API accepts for a
start's data, the chain verifies after PostgreSQL has stored it (jsonb writes ``1e+17``
back as ``100000000000000000`` and ``-0.0`` as ``0.0``; the hash must cover those)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals import json_input
from approvals.audit.verify import chain_verify
from approvals.models import Tenant, User, Workflow
from approvals.services.templates import workflow_template_publish

pytestmark = pytest.mark.django_db

OPEN = "open-data"  # a template that takes any object for its data


@pytest.fixture
def alice(acme: Any, api: Any) -> Any:
    workflow_template_publish(
        tenant=Tenant.objects.get(slug="acme"),
        definition={
            "key": OPEN,
            "steps": [
                {"id": "manager", "kind": "approval", "approvers": [{"manager": "submitter"}]}
            ],
        },
    )
    return api("alice")


def _start(client: Any, template: str, data_text: str) -> Any:
    body = (
        f'{{"template": "{template}", "subject": {{"type": "t", "id": "{uuid.uuid4().hex}"}},'
        f' "data": {data_text}}}'
    )
    return client.post("/api/workflows", body, content_type="application/json")


def _verifies(response: Any) -> Workflow:
    assert response.status_code == 201, response.content
    wf = Workflow.objects.get(pk=response.json()["workflowId"])
    assert chain_verify(workflow=wf) is None
    assert User.objects.filter(username="alice").exists()
    return wf


def test_an_integral_float_amount_keeps_the_purchase_chain_verifiable(alice: Any) -> None:
    data = '{"amountPaise": 1e17, "currency": "INR", "category": "SOFTWARE", "item": "x"}'

    wf = _verifies(_start(alice, "purchase-request", data))

    assert wf.data["amountPaise"] == 10**17
    assert type(wf.data["amountPaise"]) is int


@pytest.mark.parametrize(
    "data_text",
    [
        '{"n": 1e17}',
        '{"n": 1E+17}',
        '{"n": -1e16}',
        '{"n": 1.5e16}',
        '{"n": 9.2e18}',
        '{"n": 4.923964651532707e+16}',
        '{"n": -9.2e18}',
        '{"n": 10000000000000000.0}',
        '{"n": -0.0}',
        '{"n": -0}',
        '{"n": 0.0}',
        '{"n": 1.0}',
        '{"n": 1e-7}',
        '{"n": 1.5e-07}',
        '{"n": 0.1}',
        '{"n": 123456789.123456789}',
        '{"n": 2.5e-5}',
        '{"n": [1e17, {"m": 1.0e16}, [-0.0]]}',
        '{"1e17": 1e17}',
    ],
)
def test_a_number_in_any_form_keeps_the_chain_verifiable(alice: Any, data_text: str) -> None:
    _verifies(_start(alice, OPEN, data_text))


def test_the_door_gives_numbers_the_form_postgresql_stores() -> None:
    assert json_input.loads('{"a": 1e17, "b": -0.0, "c": 1.0, "d": 1.5e-7}') == {
        "a": 10**17,
        "b": 0.0,
        "c": 1.0,
        "d": 1.5e-7,
    }
    value = json_input.loads("[1e17, -0.0]")
    assert type(value[0]) is int
    assert str(value[1]) == "0.0"


# Any JSON value within the door's limits: every float (integral or not, tiny or as large
# as the int64 range allows), int64 integers, text and nesting.
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=json_input.INT64_MIN, max_value=json_input.INT64_MAX)
    | st.floats(allow_nan=False, allow_infinity=False, min_value=-9.2e18, max_value=9.2e18)
    | st.text(max_size=20)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.dictionaries(st.text(max_size=8), _JSON, max_size=5))
def test_any_start_data_the_api_accepts_verifies_after_storage(
    alice: Any, data: dict[str, Any]
) -> None:
    response = _start(alice, OPEN, json.dumps(data))
    if response.status_code != 201:  # refused at the door (a NUL, a lone surrogate…)
        assert response.status_code == 400, response.content
        return
    _verifies(response)


@settings(max_examples=300, deadline=None)
@given(value=_JSON)
def test_the_stored_form_is_what_postgresql_gives_back(value: Any) -> None:
    text = json.dumps(value)
    if "\\u0000" in text or json_input.nesting_depth_exceeds(text):
        return
    try:
        json_input.check_value(value)
    except json_input.JsonInputError:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::jsonb::text", [text])
        (back,) = cursor.fetchone()

    def canonical(v: Any) -> str:
        return json.dumps(v, sort_keys=True, separators=(",", ":"))

    assert canonical(json_input.stored_form(value)) == canonical(json.loads(back))
    assert canonical(json_input.loads(text)) == canonical(json.loads(back))
