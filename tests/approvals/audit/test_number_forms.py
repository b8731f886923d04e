"""One form for numbers in the hash and in storage: whatever JSON the API accepts for a
start's data, the chain verifies after PostgreSQL has stored it (jsonb writes ``1e+17``
back as ``100000000000000000`` and ``-0.0`` as ``0.0``; the hash must cover those)."""

from __future__ import annotations

import io
import json
import uuid
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals import clock, json_input
from approvals.audit import verify as verify_module
from approvals.audit.models import AuditOverride
from approvals.audit.override import override_verifies
from approvals.audit.seal import seal_key
from approvals.audit.verify import chain_verify
from approvals.management.commands import accept_number_forms as accept_command
from approvals.models import Tenant, User, Workflow
from approvals.services.templates import workflow_template_publish

from .support import triggers_off, verify

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


# -- chains broken before the rule: named, and accepted only by a recorded override ------


@pytest.fixture
def hashed_as_sent(alice: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """A workflow started as the code before the rule started it: its first event hashed
    over ``1e+17`` and ``-0.0`` as sent, stored as jsonb writes them; then decided by bob
    under the rule (its later events verify)."""
    import approvals.json_input
    import approvals.runtime.chain

    with monkeypatch.context() as m:
        m.setattr(approvals.json_input, "stored_form", lambda value: value)
        m.setattr(approvals.runtime.chain, "stored_form", lambda value: value)
        started = _start(alice, OPEN, '{"n": 1e17, "z": -0.0, "k": 100000000000000000}')
    assert started.status_code == 201, started.content
    wid = started.json()["workflowId"]
    assert chain_verify(workflow=Workflow.objects.get(pk=wid)) == 1
    decided = api("bob").post(
        f"/api/workflows/{wid}/decisions",
        {"decision": "approve", "requestId": "as-sent-1"},
        format="json",
    )
    assert decided.status_code == 200, decided.content
    return str(wid)


def test_an_event_hashed_as_sent_is_named_with_its_spelling(hashed_as_sent: str) -> None:
    output, ok = verify()

    assert not ok
    broken = [line for line in output.splitlines() if line.startswith("BROKEN")]
    assert broken == [
        f"BROKEN workflow {hashed_as_sent} seq 1: "
        + verify_module.SENT_SPELLING.format(
            words="data.n = 100000000000000000 as 1e+17, data.z = 0.0 as -0.0"
        )
    ]


def test_accepting_number_forms_is_recorded_and_the_verdict_says_so(
    hashed_as_sent: str,
) -> None:
    out = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("accept_number_forms", "--tenant", "acme", stdout=out)
    assert str(refused.value) == accept_command.REASON_NEEDED
    assert f"TO ACCEPT workflow {hashed_as_sent} seq 1: " in out.getvalue()
    assert not AuditOverride.objects.exists()

    out = io.StringIO()
    call_command("accept_number_forms", "--tenant", "acme", "--reason", "ticket 512", stdout=out)

    override = AuditOverride.objects.get()
    assert override.action == verify_module.ACCEPT_ACTION
    assert override.reason == "ticket 512"
    assert override_verifies(override, key=seal_key())
    assert [p.split(":")[0] for p in override.problems] == [f"workflow {hashed_as_sent} seq 1"]
    assert (
        accept_command.RECORDED.format(n=1, id=override.pk, operator=override.operator)
        in out.getvalue()
    )
    output, ok = verify()
    assert ok, output
    assert "BROKEN" not in output
    assert (
        verify_module.ACCEPTED.format(
            n=1, overrides=f"#{override.pk}", events=f"workflow {hashed_as_sent} seq 1"
        )
        in output
    )
    # the rebuild no longer refuses, and accepting again records nothing more
    call_command("rebuild_read_models", stdout=io.StringIO())
    out = io.StringIO()
    call_command("accept_number_forms", "--tenant", "acme", "--reason", "again", stdout=out)
    assert out.getvalue().strip() == accept_command.NOTHING_TO_ACCEPT.format(tenant="acme")
    assert AuditOverride.objects.count() == 1


def test_an_edited_event_is_never_accepted(hashed_as_sent: str, api: Any) -> None:
    other = _verifies(_start(api("alice"), OPEN, '{"n": 1}'))
    with triggers_off(), connection.cursor() as c:
        c.execute(
            "UPDATE approvals_workflowevent SET payload = jsonb_set(payload, '{data,n}', '2')"
            " WHERE workflow_id = %s AND seq = 1",
            [other.pk],
        )

    call_command("accept_number_forms", "--tenant", "acme", "--reason", "r", stdout=io.StringIO())

    (override,) = AuditOverride.objects.all()
    assert all(str(other.pk) not in p for p in override.problems)
    output, ok = verify()
    assert not ok
    assert f"BROKEN workflow {other.pk} seq 1: {verify_module.EDITED}" in output
    assert f"BROKEN workflow {hashed_as_sent}" not in output
    # the accepted event changed afterwards: its values are no longer what was hashed
    with triggers_off(), connection.cursor() as c:
        c.execute(
            "UPDATE approvals_workflowevent"
            " SET payload = jsonb_set(payload, '{data,n}', '100000000000000001')"
            " WHERE workflow_id = %s AND seq = 1",
            [hashed_as_sent],
        )
    output, ok = verify()
    assert f"BROKEN workflow {hashed_as_sent} seq 1: {verify_module.EDITED}" in output


def test_a_forged_override_accepts_nothing(hashed_as_sent: str) -> None:
    AuditOverride.objects.create(
        tenant=Tenant.objects.get(slug="acme"),
        at=clock.now(),
        action=verify_module.ACCEPT_ACTION,
        operator="mallory",
        reason="forged",
        problems=[f"workflow {hashed_as_sent} seq 1: accepted"],
        key_id="0" * 16,
        signature="0" * 64,
    )

    output, ok = verify()

    assert not ok
    assert f"BROKEN workflow {hashed_as_sent} seq 1: " in output


def test_the_verify_page_says_an_event_hashed_as_sent_was_not_changed() -> None:
    from approvals.audit.pages import _what_words

    words = _what_words(verify_module.SENT_SPELLING.format(words="data.n = 1 as 1e+17"))

    assert "the values are the same" in words
    assert "changed after it was written" not in words
