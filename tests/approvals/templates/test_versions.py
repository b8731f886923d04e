"""Publishing a new version while workflows run: the running ones finish under the
rules they started with, new ones start under the new rules; a retired workflow
template refuses starts with a clear error and its running workflows still finish;
a roll back publishes an earlier version again as the newest and opens it."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import Tenant, Workflow, WorkflowTemplate
from approvals.selectors.templates import workflow_template_versions, workflow_templates_latest
from approvals.services.templates import (
    AlreadyRetired,
    workflow_template_publish,
    workflow_template_retire,
    workflow_template_rollback,
)
from approvals.services.workflows import TEMPLATE_RETIRED

from ..helpers import EXPENSE, decide, start_expense

pytestmark = pytest.mark.django_db

AMOUNT = 4_500_000  # ₹45,000.00: manager, then finance; the VP only above ₹1,00,000.00


def _lower_the_vp_threshold(acme: Tenant) -> WorkflowTemplate:
    newest = WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).first()
    assert newest is not None
    doc = dict(newest.definition)
    doc["steps"] = [dict(s) for s in doc["steps"]]
    doc["steps"][1]["when"] = "data.amountPaise > 4000000"  # ₹40,000.00
    return workflow_template_publish(tenant=acme, definition=doc)


def _step(wid: str) -> str:
    return Workflow.objects.get(pk=wid).current_step


def test_running_workflows_keep_their_version_new_ones_take_the_new_one(
    acme: Tenant, api: Any
) -> None:
    # given a workflow running on version 1
    old = start_expense(api("alice"), AMOUNT, subject="E-old").json()["workflowId"]

    # when version 2 lowers the VP's threshold below its amount
    v2 = _lower_the_vp_threshold(acme)
    new = start_expense(api("alice"), AMOUNT, subject="E-new").json()["workflowId"]
    assert decide(api("bob"), old, "approve", "old-1").status_code == 200
    assert decide(api("bob"), new, "approve", "new-1").status_code == 200

    # then the old one skips the VP (version 1), the new one asks the VP (version 2)
    assert Workflow.objects.get(pk=old).template_version == 1
    assert Workflow.objects.get(pk=new).template_version == v2.version == 2
    assert _step(old) == "finance"
    assert _step(new) == "vp"
    counts = {
        v.version: (v.running, v.started)
        for v in workflow_template_versions(tenant_id=acme.pk, key=EXPENSE)
    }
    assert counts == {2: (1, 1), 1: (1, 1)}


def test_a_retired_workflow_template_refuses_starts_and_its_running_ones_finish(
    acme: Tenant, api: Any
) -> None:
    running = start_expense(api("alice"), AMOUNT, subject="E-1").json()["workflowId"]

    workflow_template_retire(tenant=acme, key=EXPENSE, retired_by=None)
    refused = start_expense(api("alice"), AMOUNT, subject="E-2")

    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "TEMPLATE_RETIRED"
    assert refused.json()["error"]["message"] == TEMPLATE_RETIRED.format(key=EXPENSE)
    assert Workflow.objects.filter(subject_id="E-2").count() == 0
    assert EXPENSE not in [t.key for t in workflow_templates_latest(tenant_id=acme.pk)]
    with pytest.raises(AlreadyRetired):
        workflow_template_retire(tenant=acme, key=EXPENSE, retired_by=None)
    # the running one still finishes
    assert decide(api("bob"), running, "approve", "r-1").status_code == 200
    assert decide(api("farah"), running, "approve", "r-2").status_code == 200
    assert Workflow.objects.get(pk=running).status == "COMPLETED"


def test_roll_back_publishes_an_earlier_version_as_the_newest_and_opens_it(
    acme: Tenant, api: Any
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    _lower_the_vp_threshold(acme)
    workflow_template_retire(tenant=acme, key=EXPENSE, retired_by=None)

    v3 = workflow_template_rollback(template=v1)

    assert v3.version == 3
    assert v3.definition == v1.definition
    started = start_expense(api("alice"), AMOUNT, subject="E-3")
    assert started.status_code == 201, started.content
    assert started.json()["templateVersion"] == 3
