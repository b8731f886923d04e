"""Workflow templates that would hold the server are refused where a finance admin saves
them, and data that would is refused where an employee starts one (and in "try it")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from approvals.models import Tenant, User, Workflow, WorkflowTemplate
from approvals.selectors.template_trial import workflow_template_try
from approvals.services.templates import DefinitionRefused, workflow_template_publish
from templates_engine import data_schema, retry
from templates_engine import expression_limits as limits
from templates_engine.durations import DURATION_TOO_LONG

pytestmark = pytest.mark.django_db

ADD = "/admin/approvals/workflowtemplate/add/?as=json"


def _as(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _doc(*, schema: dict[str, Any] | None = None, **step: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "key": "limits",
        "steps": [{"id": "w", "kind": "wait", "duration": "PT1H", **step}],
    }
    if schema is not None:
        doc["schema"] = schema
    return doc


def _save(doc: dict[str, Any], **extra: str) -> Any:
    return _as("fiona").post(
        ADD, {"definition": json.dumps(doc), "try_submitter": "alice", "try_data": "{}", **extra}
    )


def _html(text: str) -> str:
    return text.replace("'", "&#x27;")


@pytest.mark.parametrize(
    ("doc", "sentence"),
    [
        (
            _doc(when="(" * 200 + "true" + ")" * 200),
            f"Step 1, W: the condition {limits.TOO_NESTED}",
        ),
        (
            _doc(when="[1,2].all(a, [1].all(b, [1].all(c, a > b + c)))"),
            f"Step 1, W: the condition {limits.TOO_MANY_COMPREHENSIONS}",
        ),
        (_doc(duration="P3000000D"), f"Step 1, W: the wait {DURATION_TOO_LONG}"),
        (
            _doc(schema={"type": "object", "properties": {"v": {"$ref": "http://10.0.0.1/s"}}}),
            "Data field V: " + data_schema.REMOTE_REF.format(ref="http://10.0.0.1/s"),
        ),
        (
            _doc(schema={"type": "object", "properties": {"v": {"pattern": "(?=a)"}}}),
            "Data field V: &#x27;(?=a)&#x27; cannot be used",
        ),
    ],
    ids=["parentheses", "comprehensions", "duration", "remote-ref", "not-re2"],
)
@pytest.mark.parametrize("button", ["_save", "_preview"])
def test_the_admin_refuses_a_costly_workflow_template_with_the_reason(acme, doc, sentence, button):
    before = WorkflowTemplate.objects.count()

    response = _save(doc, **{button: "1"})

    assert response.status_code == 200
    assert _html(sentence) in response.content.decode()
    assert WorkflowTemplate.objects.count() == before


CATASTROPHIC = "^(a+)+$"


def _publish_pattern(acme: Tenant) -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": CATASTROPHIC}},
    }
    workflow_template_publish(tenant=acme, definition=_doc(schema=schema))


def test_a_start_with_a_hostile_value_for_a_catastrophic_pattern_is_refused(acme, api):
    _publish_pattern(acme)
    before = Workflow.objects.count()

    response = api("alice").post(
        "/api/workflows",
        {
            "template": "limits",
            "subject": {"type": "t", "id": "1"},
            "data": {"code": "a" * 30 + "!"},
        },
        format="json",
    )

    assert response.status_code in (400, 422), response.content
    assert f"does not match {CATASTROPHIC!r}" in json.dumps(response.json())
    assert Workflow.objects.count() == before


def test_a_start_with_too_much_data_for_a_nested_rule_is_refused(acme, api):
    rule = "data.xs.all(x, data.xs.all(y, x + y >= 0))"
    workflow_template_publish(
        tenant=acme, definition={**_doc(when=rule), "allow_undeclared_fields": True}
    )
    before = Workflow.objects.count()

    response = api("alice").post(
        "/api/workflows",
        {
            "template": "limits",
            "subject": {"type": "t", "id": "2"},
            "data": {"xs": list(range(500))},
        },
        format="json",
    )

    assert response.status_code in (400, 422), response.content
    assert limits.TOO_COSTLY.format(largest=500, source=rule) in json.dumps(response.json())
    assert Workflow.objects.count() == before


def test_try_it_applies_the_same_limits(acme):
    rule = "data.xs.all(x, data.xs.all(y, x + y >= 0))"

    trial = workflow_template_try(
        tenant_id=acme.pk,
        definition={**_doc(when=rule), "allow_undeclared_fields": True},
        data={"xs": list(range(500))},
        submitter=User.objects.get(username="alice"),
    )

    assert trial.entries == []
    assert trial.problems == ["$: " + limits.TOO_COSTLY.format(largest=500, source=rule)]


def _action(**fields: Any) -> dict[str, Any]:
    step = {"id": "tell", "kind": "action", "activity": "notify_erp", **fields}
    return {"key": "limits", "steps": [step]}


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        (_action(retry={"initial_interval": 0, "max_attempts": 100}), "$.steps[0].retry"),
        (_action(retry={"initial_interval": "PT0.5S"}), "$.steps[0].retry"),
        (
            _action(compensate={"activity": "notify_erp", "retry": {"initial_interval": 0}}),
            "$.steps[0].compensate.retry",
        ),
    ],
    ids=["zero", "half-a-second", "compensation"],
)
def test_a_retry_sooner_than_a_second_is_refused_at_publish_in_words(acme, doc, path):
    before = WorkflowTemplate.objects.count()

    with pytest.raises(DefinitionRefused) as refused:
        workflow_template_publish(tenant=acme, definition=doc)

    assert (refused.value.path, refused.value.problem) == (
        f"{path}.initial_interval",
        retry.INTERVAL_TOO_SHORT,
    )
    assert "at least 1 second" in retry.INTERVAL_TOO_SHORT
    assert WorkflowTemplate.objects.count() == before


def test_a_retry_a_second_apart_publishes(acme):
    published = workflow_template_publish(
        tenant=acme, definition=_action(retry={"initial_interval": "PT1S", "max_attempts": 100})
    )

    assert published.version == 1


def test_a_start_whose_data_takes_too_many_checks_is_refused_in_words(acme, api):
    # Fifty branches each failing for every line: a hundred checks a line.
    branches = [{"type": "string", "minLength": 2 + i} for i in range(50)]
    schema = {
        "type": "object",
        "properties": {"lines": {"type": "array", "items": {"anyOf": branches}}},
    }
    workflow_template_publish(tenant=acme, definition=_doc(schema=schema))
    before = Workflow.objects.count()

    response = api("alice").post(
        "/api/workflows",
        {
            "template": "limits",
            "subject": {"type": "t", "id": "3"},
            "data": {"lines": ["x"] * 1500},
        },
        format="json",
    )

    assert response.status_code in (400, 422), response.content
    assert data_schema.CHECK_TOO_COSTLY in json.dumps(response.json())
    assert Workflow.objects.count() == before
