"""Someone leaves: deactivating them hands each open task to their manager (or the
organisation's fallback approver), one TaskReassigned event each through the command
path; their tokens and mailed links stop working; when nobody can take a task the
deactivation is refused and nothing changes."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from approvals.models import PendingTask, Tenant, User, Workflow, WorkflowEvent
from approvals.runtime.directory import TenantDirectory
from approvals.services.directory import (
    ALREADY_INACTIVE,
    DeactivationRefused,
    user_deactivate,
)
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start

from ..notifications.test_links import links_for

MEMO = "memo"


def memo_definition(approver: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "key": MEMO,
        "title": "Memo",
        "steps": [{"id": "review", "kind": "approval", "approvers": [approver], **extra}],
    }


def start_memo(submitter: str, n: int) -> str:
    return str(
        workflow_start(
            submitter=User.objects.get(username=submitter),
            template_key=MEMO,
            subject_type="memo",
            subject_id=f"M-{n}",
            data={},
        ).workflow_id
    )


def holders(wid: str) -> set[str]:
    return set(
        PendingTask.objects.filter(workflow_id=wid).values_list("assignee__username", flat=True)
    )


def moves(wid: str) -> list[tuple[str, str, str]]:
    rows = WorkflowEvent.objects.filter(workflow_id=wid, type="TaskReassigned").order_by("seq")
    return [(r.payload["from_user"], r.payload["to_user"], r.role) for r in rows]


def user(name: str) -> User:
    return User.objects.get(username=name)


@pytest.fixture
def bobs_memos(acme: Any) -> list[str]:
    """Three memos of alice's waiting for bob (her manager)."""
    workflow_template_publish(tenant=acme, definition=memo_definition({"manager": "submitter"}))
    wids = [start_memo("alice", n) for n in range(3)]
    assert all(holders(w) == {"bob"} for w in wids)
    return wids


@pytest.mark.django_db
class TestDeactivate:
    def test_each_open_task_goes_to_the_manager_once_with_who_and_why(self, bobs_memos):
        result = user_deactivate(user=user("bob"), by=user("olga"), reason="left in June")

        assert not user("bob").is_active
        assert sorted(str(h.workflow_id) for h in result.moved) == sorted(bobs_memos)
        for wid in bobs_memos:
            assert holders(wid) == {"victor"}
            assert moves(wid) == [("bob", "victor", "admin")]
            event = WorkflowEvent.objects.get(workflow_id=wid, type="TaskReassigned")
            assert event.actor == user("olga")
            assert event.payload["actor"] == "olga"
            assert event.payload["comment"] == "bob was deactivated: left in June"
        assert not PendingTask.objects.filter(assignee__username="bob").exists()

    def test_without_a_manager_the_fallback_approver_takes_them(self, acme, bobs_memos):
        User.objects.filter(username="bob").update(manager=None)
        Tenant.objects.filter(pk=acme.pk).update(fallback_approver=user("farah"))

        user_deactivate(user=user("bob"), by=None)

        for wid in bobs_memos:
            assert holders(wid) == {"farah"}
            assert moves(wid) == [("bob", "farah", "system")]

    def test_an_inactive_manager_is_skipped_for_the_next_one_up(self, bobs_memos):
        User.objects.filter(username="victor").update(is_active=False)

        user_deactivate(user=user("bob"), by=user("olga"))

        assert all(holders(w) == {"cora"} for w in bobs_memos)

    def test_nobody_to_take_a_task_refuses_and_changes_nothing(self, bobs_memos):
        User.objects.filter(username="bob").update(manager=None)
        versions = {w: Workflow.objects.get(pk=w).version for w in bobs_memos}

        with pytest.raises(
            DeactivationRefused,
            match="nobody can take their task on step 'review'",
        ):
            user_deactivate(user=user("bob"), by=user("olga"))

        assert user("bob").is_active
        assert all(holders(w) == {"bob"} for w in bobs_memos)
        assert {w: Workflow.objects.get(pk=w).version for w in bobs_memos} == versions

    def test_a_taker_ruled_out_by_segregation_of_duties_gives_way_to_the_fallback(self, acme):
        # victor submits; his manager is cora. Deactivating cora: her "manager" is none,
        # the fallback is victor (the submitter: refused), so nobody is left.
        workflow_template_publish(tenant=acme, definition=memo_definition({"manager": "submitter"}))
        wid = start_memo("victor", 1)
        assert holders(wid) == {"cora"}
        Tenant.objects.filter(pk=acme.pk).update(fallback_approver=user("victor"))

        with pytest.raises(DeactivationRefused, match="victor"):
            user_deactivate(user=user("cora"), by=user("olga"))
        assert holders(wid) == {"cora"} and user("cora").is_active

        User.objects.filter(username="cora").update(manager=user("farah"))
        user_deactivate(user=user("cora"), by=user("olga"))
        assert holders(wid) == {"farah"}

    def test_deactivating_twice_is_refused(self, bobs_memos):
        user_deactivate(user=user("bob"), by=user("olga"))
        with pytest.raises(DeactivationRefused, match=ALREADY_INACTIVE.format(user="bob")):
            user_deactivate(user=user("bob"), by=user("olga"))
        assert all(moves(w) == [("bob", "victor", "admin")] for w in bobs_memos)

    def test_tokens_and_mailed_links_stop_working(self, acme, api, client):
        from ..helpers import start_expense

        wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
        bob_api = api("bob")
        links = links_for(wid, "bob")
        assert bob_api.get("/api/me/tasks").status_code == 200

        user_deactivate(user=user("bob"), by=user("olga"))

        assert bob_api.get("/api/me/tasks").status_code == 401
        assert client.get(links["approve"]).status_code == 404  # gone, as for a deleted person
        assert client.post(links["approve"]).status_code == 404
        assert not WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").exists()


@pytest.mark.django_db
class TestDirectory:
    def test_escalation_from_an_inactive_assignee_finds_their_manager(self, acme):
        User.objects.filter(username="bob").update(is_active=False)
        assert TenantDirectory(acme.pk).manager_of("bob") == "victor"

    def test_an_inactive_manager_is_not_found(self, acme):
        User.objects.filter(username="bob").update(is_active=False)
        assert TenantDirectory(acme.pk).manager_of("alice") is None

    def test_the_deadline_escalates_from_a_deactivated_assignee_to_their_manager(self, acme):
        from approvals import clock
        from approvals.workers.timers import timer_drain

        workflow_template_publish(
            tenant=acme,
            definition=memo_definition({"user": "bob"}, deadline="PT1S"),
        )
        wid = start_memo("alice", 7)
        # Deactivated behind the service's back (an import straight into the table):
        # the escalation must still find bob's manager.
        User.objects.filter(username="bob").update(is_active=False)
        with clock.shifted(dt.timedelta(seconds=5)):
            timer_drain()
        assert holders(wid) == {"victor"}
        assert WorkflowEvent.objects.filter(workflow_id=wid, type="Escalated").exists()


@pytest.mark.django_db
def test_the_periodic_job_hands_on_a_task_given_to_someone_being_deactivated(bobs_memos):
    from approvals.workers import tasks

    # bob was deactivated while a command that had read him as active gave him tasks
    User.objects.filter(username="bob").update(is_active=False)

    assert tasks.hand_on_tasks() == len(bobs_memos)

    for wid in bobs_memos:
        assert holders(wid) == {"victor"}
        assert moves(wid) == [("bob", "victor", "system")]
    assert tasks.hand_on_tasks() == 0
