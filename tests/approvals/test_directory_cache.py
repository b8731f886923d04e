"""The directory's answers are kept per process under the version the database bumps
on every change to people, groups, memberships and delegations: a change made any way
(the ORM, plain SQL) is seen by the next command."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection

from approvals import clock
from approvals.models import Delegation, DirectoryVersion, OrgGroup, PendingTask, User
from approvals.services.workflows import workflow_start

pytestmark = pytest.mark.django_db


def _start(alice: User, subject: str, amount: int = 4_500_000) -> Any:
    return workflow_start(
        submitter=alice,
        template_key="expense-approval",
        subject_type="expense",
        subject_id=subject,
        data={"amountPaise": amount, "currency": "INR", "department": "eng"},
    ).workflow_id


def _assignees(workflow_id: Any) -> set[str]:
    return {
        t.assignee.username
        for t in PendingTask.objects.filter(workflow_id=workflow_id).select_related("assignee")
    }


def test_every_kind_of_directory_change_moves_the_version(acme: Any) -> None:
    def version() -> int:
        return DirectoryVersion.objects.get(pk=1).version

    alice = User.objects.get(username="alice")
    before = version()
    alice.first_name = "Alicia"
    alice.save()
    assert version() > before
    before = version()
    OrgGroup.objects.get(key="finance").members.remove(User.objects.get(username="farah"))
    assert version() > before
    before = version()
    with connection.cursor() as cursor:  # not through the ORM: the trigger still sees it
        cursor.execute(
            f"UPDATE {User._meta.db_table} SET email = 'a@x.example' WHERE id = %s", [alice.pk]
        )
    assert version() > before


def test_a_new_manager_is_asked_by_the_next_start(acme: Any) -> None:
    alice = User.objects.get(username="alice")
    assert _assignees(_start(alice, "before")) == {"bob"}  # cached: bob is her manager
    alice.manager = User.objects.get(username="ivan")
    alice.save()
    assert _assignees(_start(alice, "after")) == {"ivan"}


def test_a_delegation_set_later_is_followed(acme: Any) -> None:
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    assert _assignees(_start(alice, "before")) == {"bob"}
    now = clock.now()
    Delegation.objects.create(
        tenant=bob.tenant,
        user=bob,
        delegate=User.objects.get(username="ivan"),
        starts_at=now - dt.timedelta(minutes=1),
        ends_at=now + dt.timedelta(days=1),
    )
    assert _assignees(_start(alice, "after")) == {"ivan"}
