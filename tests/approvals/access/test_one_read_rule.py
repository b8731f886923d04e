"""One read rule, asked three ways, gives one answer: the command path's lock (the facts
``access.READ_FACTS_SQL`` reads in the locking statement), ``access.may_read_workflow``
asking the database itself, and the set ``access.workflows_readable`` that lists and
searches filter with. Every kind of person and relationship to a request is tried."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.contrib.auth.models import Group
from guardian.shortcuts import assign_perm

from approvals import access, clock
from approvals.models import Delegation, Tenant, User, Workflow, WorkflowTemplate
from approvals.runtime.commands import Actor, LockReads, command_execute
from approvals.services.workflows import workflow_start
from templates_engine import commands as cmd

from ..helpers import EXPENSE

pytestmark = pytest.mark.django_db(transaction=True)

# Who reads alice's expense, waiting for her manager bob, and why (or why not).
EXPECTED = {
    "alice": True,  # the submitter
    "bob": True,  # the assignee
    "ivan": True,  # stands in for bob right now
    "victor": False,  # an employee with no part in it
    "fiona": False,  # finance: its step has not come yet
    "audrey": True,  # an auditor reads everything
    "olga": True,  # an organisation admin reads everything
    "gus": True,  # in a group granted view on the expense template
    "gina": False,  # another organisation
}


class _Asked(Exception):
    """Ends the command once the lock's answer is taken: nothing is written."""


def _through_the_lock(user: User, wf: Workflow) -> bool:
    answers: list[bool] = []

    def authorize(locked: Workflow, facts: Any) -> None:
        answers.append(access.may_read_workflow(user, locked, access.read_facts_of(facts)))
        raise _Asked

    reads = LockReads(
        access.READ_FACTS_SQL,
        access.read_facts_params(user, clock.now()),
        access.READ_FACTS_COLUMNS,
    )
    with pytest.raises(_Asked):
        command_execute(
            tenant_id=wf.tenant_id,
            workflow_id=wf.pk,
            command=cmd.Signal("nothing", {}),
            actor=Actor(user, "approver"),
            authorize=authorize,
            lock_reads=reads,
        )
    return answers[0]


def test_the_lock_the_rule_and_the_set_agree_for_every_relationship(acme: Any) -> None:
    alice = User.objects.get(username="alice")
    started = workflow_start(
        submitter=alice,
        template_key=EXPENSE,
        subject_type="expense",
        subject_id="one-rule",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    version = Workflow.objects.get(pk=started.workflow_id).version
    now = clock.now()
    Delegation.objects.create(
        tenant=acme,
        user=User.objects.get(username="bob"),
        delegate=User.objects.get(username="ivan"),
        starts_at=now - dt.timedelta(hours=1),
        ends_at=now + dt.timedelta(days=1),
    )
    gus = User.objects.create_user("gus", password="pw", tenant=acme)
    readers = Group.objects.create(name="expense-readers")
    gus.groups.add(readers)
    template = WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).first()
    assign_perm("approvals.view_workflowtemplate_runs", readers, template)
    globex = Tenant.objects.create(slug="globex", name="Globex")
    User.objects.create_user("gina", password="pw", tenant=globex)

    answers = {}
    for name in EXPECTED:
        person = User.objects.get(username=name)
        wf = Workflow.objects.get(pk=started.workflow_id)
        lock = _through_the_lock(person, wf)
        rule = access.may_read_workflow(User.objects.get(username=name), wf)
        listed = access.workflows_readable(person).filter(pk=wf.pk).exists()
        assert lock == rule == listed, (name, lock, rule, listed)
        answers[name] = lock
    assert answers == EXPECTED
    assert Workflow.objects.get(pk=started.workflow_id).version == version  # nothing written
