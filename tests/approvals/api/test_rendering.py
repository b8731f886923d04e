"""approvals.api.rendering: an answer compiled from its serializer's declarations is the
answer DRF's ``.data`` gives, for every serializer the views render that way."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.exceptions import ObjectDoesNotExist
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from approvals.api import serializers as s
from approvals.api.rendering import compiled
from approvals.models import Tenant
from approvals.runtime.commands import CommandResult
from approvals.selectors.tasks import ListedTask, ListedWorkflow, TaskPage
from approvals.services.workflows import StartResult

from ...properties import examples

text = st.text(max_size=40)
zones = st.sampled_from([dt.UTC, dt.timezone(dt.timedelta(hours=5, minutes=30))])
moments = st.builds(
    lambda when, micro, zone: when.replace(microsecond=micro, tzinfo=zone),
    st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(2200, 1, 1)),
    st.sampled_from([0, 1, 999_999]) | st.integers(0, 999_999),
    zones,
)
workflows = st.builds(
    ListedWorkflow,
    id=st.uuids(),
    template_key=text,
    template_id=st.integers(1, 2**31),
    subject_type=text,
    subject_id=text,
    public_status=text,
    summary=text,
    # blank when the request has no amount: the answer's null
    amount_display=st.sampled_from(["", "₹45,000.00"]) | text,
)
tasks = st.builds(
    ListedTask,
    pk=st.integers(1, 2**63 - 1),
    tenant_id=st.integers(1, 10),
    assignee_id=st.integers(1, 10),
    workflow_id=st.uuids(),
    step=text,
    on_behalf_of=st.sampled_from(["", "bob"]) | text,
    due_at=moments,
    created_at=moments,
    workflow=workflows,
    step_name=text,
    subject=text,
)
pages = st.builds(
    TaskPage, tasks=st.lists(tasks, max_size=5), next_cursor=st.none() | text.map(str)
)


def _typed(value: Any) -> Any:
    """A rendered answer with each value's type beside it: True is not 1, "1" is not 1."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


@settings(max_examples=examples(200), deadline=None)
@given(pages)
def test_an_inbox_page_renders_as_drf_renders_it(page):
    assert _typed(compiled(s.TaskPageResponse)(page)) == _typed(s.TaskPageResponse(page).data)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.builds(
        CommandResult,
        workflow_id=st.uuids(),
        status=text,
        version=st.integers(0, 2**31),
        duplicate=st.booleans(),
    )
)
def test_a_command_answer_renders_as_drf_renders_it(result):
    assert _typed(compiled(s.DecisionResponse)(result)) == _typed(s.DecisionResponse(result).data)


def test_a_start_answer_renders_as_drf_renders_it():
    for existing in (True, False):
        result = StartResult(
            workflow_id=uuid.uuid4(),
            template_version=3,
            status="PENDING_MANAGER",
            version=2,
            existing=existing,
            replayed=False,
        )
        ours, theirs = compiled(s.StartResponse)(result), s.StartResponse(result).data
        assert _typed(ours) == _typed(theirs)
        assert ours["existing"] is existing


@dataclass
class _Person:
    username: str


@dataclass
class _Found:
    """What the search reads of a workflow (a ``Workflow`` with its submitter)."""

    pk: uuid.UUID
    public_status: str
    template_key: str
    template_version: int
    subject_type: str
    subject_id: str
    submitter: _Person | None
    current_step: str
    created_at: dt.datetime


@dataclass
class _SearchPage:
    workflows: list[_Found]


found = st.builds(
    _Found,
    pk=st.uuids(),
    public_status=text,
    template_key=text,
    template_version=st.integers(1, 1000),
    subject_type=text,
    subject_id=text,
    submitter=st.none() | st.builds(_Person, username=text),
    current_step=st.sampled_from(["", "manager"]) | text,
    created_at=moments,
)


@settings(max_examples=examples(150), deadline=None)
@given(st.builds(_SearchPage, workflows=st.lists(found, max_size=5)))
def test_a_search_page_renders_as_drf_renders_it(page):
    # The subject is read from the workflow itself (source "*"); a workflow with no
    # submitter has None part way along "submitter.username", which allows null.
    ours, theirs = compiled(s.WorkflowSearchResponse)(page), s.WorkflowSearchResponse(page).data
    assert _typed(ours) == _typed(theirs)


def test_a_missing_related_object_and_a_missing_attribute_read_as_drf_reads_them():
    class Gone:
        @property
        def owner(self) -> Any:
            raise ObjectDoesNotExist("no owner")

    class Out(serializers.Serializer):
        owner = serializers.CharField(source="owner.username")
        name = serializers.CharField(source="owner.first_name", default="nobody")

    assert compiled(Out)(Gone()) == {"owner": None, "name": None} == Out(Gone()).data

    class Strict(serializers.Serializer):
        label = serializers.CharField()

    with pytest.raises(AttributeError):
        compiled(Strict)(object())
    with pytest.raises(AttributeError):
        _ = Strict(object()).data


def test_none_stays_none_before_a_field_sees_it():
    @dataclass
    class Row:
        when: dt.datetime | None
        count: int | None

    class Out(serializers.Serializer):
        when = s.Timestamp()
        count = serializers.IntegerField()

    assert compiled(Out)(Row(None, None)) == {"when": None, "count": None}
    assert compiled(Out)(Row(None, None)) == Out(Row(None, None)).data


def test_a_field_that_needs_the_serializer_is_refused_when_compiled():
    class WithMethod(serializers.Serializer):
        total = serializers.SerializerMethodField()

        def get_total(self, obj: Any) -> int:
            return 1

    class MayBeLeftOut(serializers.Serializer):
        note = serializers.CharField(required=False)

    with pytest.raises(TypeError, match="SerializerMethodField"):
        compiled(WithMethod)
    with pytest.raises(TypeError, match="may be left out"):
        compiled(MayBeLeftOut)


def test_write_only_fields_are_left_out_as_drf_leaves_them():
    @dataclass
    class Row:
        name: str
        secret: str

    class Out(serializers.Serializer):
        name = serializers.CharField()
        secret = serializers.CharField(write_only=True)

    assert compiled(Out)(Row("a", "b")) == {"name": "a"} == Out(Row("a", "b")).data


@pytest.mark.django_db
def test_a_list_read_through_a_related_manager_renders_as_drf_renders_it(acme):
    class Member(serializers.Serializer):
        username = serializers.CharField()

    class Org(serializers.Serializer):
        slug = serializers.CharField()
        users = Member(many=True)  # Tenant.users, a related manager

    tenant = Tenant.objects.get(slug="acme")
    ours, theirs = compiled(Org)(tenant), Org(tenant).data
    assert ours == theirs
    assert len(ours["users"]) > 3
