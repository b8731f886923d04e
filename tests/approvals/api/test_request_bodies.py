"""approvals.api.serializers.RequestBody: request shapes bind shallow copies of their
declared fields, and validate exactly as DRF's deep copies do."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from rest_framework import serializers

from approvals.api import serializers as s

BODIES: dict[type[s.RequestBody], list[Any]] = {
    s.DecisionRequest: [
        {"decision": "approve", "requestId": "r-1"},
        {"decision": "approve", "requestId": "r-1", "comment": "fine", "onBehalfOf": "bob"},
        {"decision": "delegate", "requestId": "r-2", "delegateTo": "cora", "data": {"a": 1}},
        {"decision": "maybe", "requestId": "r-1"},
        {"decision": "approve"},
        {"decision": "approve", "requestId": 7},
        {"decision": "approve", "requestId": "has space"},
        {"decision": "approve", "requestId": "r", "comment": "x" * 4001},
        {"decision": "approve", "requestId": "r", "comment": "nul\x00"},
        {"decision": "approve", "requestId": "r", "data": [1]},
        {"decision": "approve", "requestId": "r", "onBehalfOf": ""},
        [],
        "approve",
        None,
    ],
    s.StartRequestBody: [
        {"template": "expense-approval", "subject": {"type": "expense", "id": "E-1"}},
        {"template": "expense", "subject": {"type": "e", "id": "1"}, "data": {"amount": 1}},
        {"template": "Expense", "subject": {"type": "e", "id": "1"}},
        {"template": "expense", "subject": {"type": "bad type", "id": ""}},
        {"template": "expense", "subject": "E-1"},
        {"template": "expense", "subject": {"type": "e", "id": 5}, "data": "x"},
        {},
    ],
    s.TaskListQuery: [{}, {"limit": "5"}, {"limit": "0"}, {"limit": "201"}, {"cursor": "x"}],
}


def _twin(body: type[s.RequestBody]) -> type[serializers.Serializer]:
    """The same declarations on DRF's plain Serializer (deep copies per instance)."""
    attrs = {
        name: _twin(type(f))() if isinstance(f, s.RequestBody) else f
        for name, f in body._declared_fields.items()
    }
    return type(f"Plain{body.__name__}", (serializers.Serializer,), attrs)


def _outcome(serializer: serializers.Serializer) -> tuple[bool, Any]:
    valid = serializer.is_valid()
    return valid, (dict(serializer.validated_data) if valid else _plain(serializer.errors))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return (str(value), getattr(value, "code", None))


@pytest.mark.parametrize(
    ("body", "data"), [(b, d) for b, datas in BODIES.items() for d in datas], ids=repr
)
def test_a_body_validates_as_drfs_own_serializer_validates_it(body, data):
    assert _outcome(body(data=copy.deepcopy(data))) == _outcome(
        _twin(body)(data=copy.deepcopy(data))
    )


def test_each_instance_binds_fields_of_its_own():
    first, second = s.StartRequestBody(), s.StartRequestBody()
    for name in first.fields:
        assert first.fields[name] is not second.fields[name]
        assert first.fields[name].parent is first
        assert second.fields[name].parent is second
    nested = first.fields["subject"]
    assert nested.fields["type"].parent is nested
    assert nested.fields["type"] is not second.fields["subject"].fields["type"]


def test_the_declared_fields_are_never_bound():
    s.DecisionRequest(data={"decision": "approve", "requestId": "r"}).is_valid()
    s.StartRequestBody(data={"template": "t", "subject": {"type": "e", "id": "1"}}).is_valid()
    for body in (s.DecisionRequest, s.StartRequestBody, s.Subject):
        for field in body._declared_fields.values():
            assert field.field_name is None
            assert field.parent is None
            assert "fields" not in field.__dict__


def test_one_instance_refusing_leaves_the_next_one_clean():
    bad = s.DecisionRequest(data={"decision": "maybe", "requestId": "r"})
    assert not bad.is_valid()
    good = s.DecisionRequest(data={"decision": "approve", "requestId": "r"})
    assert good.is_valid(), good.errors
    assert good.validated_data == {
        "decision": "approve",
        "requestId": "r",
        "comment": "",
        "hold": False,
    }
