"""Requests nobody can finish, and the admin's way out: the attention page lists a
running request whose every approver left ("Requests nobody can finish"), the
``find_stuck_requests`` command reports it, and "Add an approver" (through the one
command path: an ``ApproverAdded`` event with who and why) gives a person a task that
finishes it. Each refusal says why and changes nothing; only the organisation's admins
(and superusers) may add an approver."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from approvals.models import PendingTask, Tenant, User, Workflow, WorkflowEvent
from approvals.notifications.models import MailMessage
from approvals.runtime.rebuild import read_models_check
from approvals.services.admin_operations import ReasonRequired, workflow_add_approver
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_decide, workflow_start
from templates_engine import CommandRejected

pytestmark = pytest.mark.django_db

FLOW = {
    "key": "stuck-flow",
    "title": "Laptop request",
    "steps": [
        {
            "id": "manager",
            "title": "Manager approval",
            "kind": "approval",
            "approvers": [{"manager": "submitter"}],
        }
    ],
}
OPERATIONS = "/admin/approvals/workflow/{wid}/operations/"
ATTENTION = "/admin/approvals/workflow/attention/"


def start(acme: Any, n: int = 1) -> str:
    workflow_template_publish(tenant=acme, definition=FLOW)
    return str(
        workflow_start(
            submitter=User.objects.get(username="alice"),
            template_key="stuck-flow",
            subject_type="laptop",
            subject_id=f"L-{n}",
            data={},
        ).workflow_id
    )


def stuck(acme: Any, n: int = 1) -> str:
    """A request waiting on Bob, who then left: his account deactivated by the
    organisation's identity provider, with nobody his task was handed on to."""
    wid = start(acme, n)
    User.objects.filter(username="bob").update(is_active=False)
    return wid


def signed_in(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def add(client: Client, wid: str, **fields: Any) -> Any:
    body = {
        "operation": "add_approver",
        "add_approver-request_id": f"admin-{fields.pop('rid', 'r1')}",
        "add_approver-step": fields.pop("step", "manager"),
    }
    body.update({f"add_approver-{k}": v for k, v in fields.items()})
    return client.post(OPERATIONS.format(wid=wid), body)


def olga_adds_victor(wid: str, reason: str, step: str = "manager", who: str = "olga") -> Any:
    """The service an admin page calls: ``who`` adds Victor to ``step``."""
    return workflow_add_approver(
        user=User.objects.get(username=who),
        workflow_id=wid,
        person="victor",
        step=step,
        reason=reason,
        request_id=f"svc-{reason}",
    )


def history(wid: str) -> list[tuple[int, str]]:
    return list(WorkflowEvent.objects.filter(workflow_id=wid).values_list("seq", "type"))


def holders(wid: str) -> set[str]:
    return set(
        PendingTask.objects.filter(workflow_id=wid).values_list("assignee__username", flat=True)
    )


def test_the_admin_finds_the_stuck_request_adds_an_approver_and_it_finishes(acme):
    wid = stuck(acme)
    olga = signed_in("olga")

    listed = olga.get(ATTENTION).content.decode()
    assert "Requests nobody can finish" in listed
    # the page does not also say that nothing needs attention
    assert "Nothing needs attention" not in listed
    assert "no task is overdue" in listed
    assert (
        "Nobody can finish the Manager approval step: every open task belongs to someone "
        "who has left." in listed
    )
    page = olga.get(OPERATIONS.format(wid=wid)).content.decode()
    assert "Add an approver" in page and "Nobody can finish the Manager approval step" in page

    reply = add(olga, wid, person="victor", reason="Bob left; Victor approves his team's")

    assert reply.status_code == 302, reply.content[:600]
    event = WorkflowEvent.objects.filter(workflow_id=wid).latest("seq")
    assert event.type == "ApproverAdded" and event.role == "admin"
    assert event.actor == User.objects.get(username="olga")
    assert event.payload["user"] == "victor" and event.payload["actor"] == "olga"
    assert event.payload["reason"] == "Bob left; Victor approves his team's"
    assert "victor" in holders(wid)
    # told as a new task, and listed in Victor's inbox
    mail = MailMessage.objects.get(workflow_id=wid, recipient__username="victor")
    assert mail.kind == "task_assigned" and "Olga asked you to approve" in str(mail.context)
    inbox = signed_in("victor").get("/").content.decode()
    assert "L-1" in inbox and "Olga&#x27;s note: Bob left; Victor approves" in inbox
    # the timeline says who added whom, where and why
    timeline = olga.get(f"/workflows/{wid}").content.decode()
    assert (
        "Olga added Victor as an approver on the Manager approval step: Bob left; Victor "
        "approves his team&#x27;s" in timeline
    )
    # no longer stuck
    listed = olga.get(ATTENTION).content.decode()
    assert "Requests nobody can finish" not in listed and "Nothing needs attention" in listed

    workflow_decide(
        user=User.objects.get(username="victor"),
        workflow_id=wid,
        decision="approve",
        request_id="v1",
    )

    assert Workflow.objects.get(pk=wid).status == "COMPLETED"
    assert read_models_check(tenant_id=acme.pk) == []
    out = StringIO()
    call_command("verify_audit", "--tenant", "acme", stdout=out)
    call_command("verify_replay", "--tenant", "acme", stdout=out)
    call_command("rebuild_read_models", "--check", stdout=out)


@pytest.mark.parametrize(
    ("fields", "status", "words"),
    [
        ({"person": "alice", "reason": "x"}, 409, "submitter of a workflow may not be given"),
        ({"person": "olga", "reason": "x"}, 409, "You may not add yourself as an approver"),
        ({"person": "zoe", "reason": "x"}, 400, "Nobody here matches “zoe”"),
        ({"person": "bob", "reason": "x"}, 400, "deactivated, so Bob cannot be given tasks"),
        ({"person": "gina", "reason": "x"}, 400, "Nobody here matches “gina”"),
        ({"person": "audrey", "reason": "x"}, 400, "is an auditor: auditors read and change"),
        ({"person": "victor", "reason": ""}, 400, "This field is required"),
        ({"person": "victor", "reason": "x", "step": "finance"}, 409, "does not wait in"),
    ],
    ids=["submitter", "self", "nobody", "inactive", "other-org", "auditor", "no-reason", "step"],
)
def test_a_refused_addition_says_why_and_changes_nothing(acme, fields, status, words):
    Tenant.objects.create(slug="globex", name="Globex")
    User.objects.create_user("gina", password="pw", tenant=Tenant.objects.get(slug="globex"))
    wid = stuck(acme)
    before = (history(wid), holders(wid))

    reply = add(signed_in("olga"), wid, **fields)

    assert reply.status_code == status, reply.content[:600]
    assert words in reply.content.decode().replace("&#x27;", "'")
    assert (history(wid), holders(wid)) == before


def test_someone_already_holding_a_task_on_the_step_is_not_added_again(acme):
    wid = start(acme)  # Bob holds it and can act
    before = history(wid)

    reply = add(signed_in("olga"), wid, person="bob", reason="again")

    assert reply.status_code == 409
    assert "bob already holds an open task on the Manager approval step" in reply.content.decode()
    assert history(wid) == before


@pytest.mark.parametrize("who", ["alice", "bob", "audrey", "fiona"])
def test_only_an_organisation_admin_may_add_an_approver(acme, who):
    wid = start(acme)
    before = (history(wid), holders(wid))

    page = signed_in(who).get(OPERATIONS.format(wid=wid))
    reply = add(signed_in(who), wid, person="victor", reason="x")

    assert page.status_code in (302, 403) and reply.status_code in (302, 403)
    assert "/admin/login/" in reply.get("Location", "/admin/login/")
    assert (history(wid), holders(wid)) == before
    with pytest.raises(Exception) as refused:  # the service refuses them too
        olga_adds_victor(wid, "x", who=who)
    assert type(refused.value).__name__ in ("Forbidden", "WorkflowNotFound")
    assert (history(wid), holders(wid)) == before


def test_another_organisations_admin_may_not(acme):
    from django.contrib.auth.models import Group

    from approvals.access import Role

    wid = stuck(acme)
    globex = Tenant.objects.create(slug="globex", name="Globex")
    gail = User.objects.create_user("gail", password="pw", tenant=globex, is_staff=True)
    gail.groups.add(Group.objects.get(name=Role.ORG_ADMIN.value))
    before = (history(wid), holders(wid))

    reply = add(signed_in("gail"), wid, person="victor", reason="x")

    assert reply.status_code == 403
    assert "L-1" not in signed_in("gail").get(ATTENTION).content.decode()
    assert (history(wid), holders(wid)) == before


def test_the_superuser_may_add_an_approver(acme):
    wid = stuck(acme)

    reply = add(signed_in("admin"), wid, person="victor", reason="Bob left")

    assert reply.status_code == 302
    assert "victor" in holders(wid)


def test_through_the_command_path_a_repeat_is_recorded_once(acme):
    wid = stuck(acme)
    olga = User.objects.get(username="olga")
    kwargs: dict[str, Any] = dict(
        user=olga, workflow_id=wid, person="victor", step="manager", reason="Bob left"
    )

    first = workflow_add_approver(request_id="once", **kwargs)
    again = workflow_add_approver(request_id="once", **kwargs)

    assert first.recorded == 1 and again.duplicate
    assert [t for _, t in history(wid)].count("ApproverAdded") == 1
    with pytest.raises(ReasonRequired):
        workflow_add_approver(request_id="r2", **{**kwargs, "reason": "  "})
    with pytest.raises(CommandRejected, match="victor already holds"):
        workflow_add_approver(request_id="r3", **kwargs)


def test_the_read_models_rebuild_to_the_same_rows_after_an_approver_is_added(acme):
    wid = start(acme)
    olga_adds_victor(wid, "Bob is swamped")
    assert holders(wid) == {"bob", "victor"}

    assert read_models_check(tenant_id=acme.pk) == []
    call_command("rebuild_read_models", "--check", stdout=StringIO())
    call_command("verify_replay", "--tenant", "acme", stdout=StringIO())


def test_find_stuck_requests_reports_each_in_a_sentence_and_exits_1(acme):
    wid = start(acme)
    start(acme, 2)  # Bob's other request
    ok = StringIO()
    call_command("find_stuck_requests", stdout=ok)
    assert "No running request is stuck" in ok.getvalue()
    User.objects.filter(username="bob").update(is_active=False)
    out = StringIO()

    with pytest.raises(CommandError, match="2 running request"):
        call_command("find_stuck_requests", "--tenant", "acme", stdout=out)

    assert out.getvalue().splitlines()[0] == (
        "acme: Laptop request L-1 waits in the Manager approval step, and nobody can finish "
        "it: every open task belongs to someone who has left."
    )
    olga_adds_victor(wid, "Bob left")
    with pytest.raises(CommandError, match="1 running request"):
        call_command("find_stuck_requests", stdout=StringIO())
    Tenant.objects.create(slug="globex", name="Globex")
    call_command("find_stuck_requests", "--tenant", "globex", stdout=StringIO())
    with pytest.raises(CommandError, match="No organisation"):
        call_command("find_stuck_requests", "--tenant", "nope", stdout=StringIO())


BOTH = {
    "key": "both-flow",
    "title": "Server purchase",
    "steps": [
        {
            "id": "review",
            "title": "Joint review",
            "kind": "approval",
            "mode": "all",
            "approvers": [{"user": "bob"}, {"user": "ivan"}],
        }
    ],
}


def test_a_step_needing_two_people_with_one_left_is_found_and_finished(acme):
    # given: both Bob and Ivan must approve; Ivan left, so Bob alone cannot finish it
    workflow_template_publish(tenant=acme, definition=BOTH)
    wid = str(
        workflow_start(
            submitter=User.objects.get(username="alice"),
            template_key="both-flow",
            subject_type="server",
            subject_id="S-1",
            data={},
        ).workflow_id
    )
    User.objects.filter(username="ivan").update(is_active=False)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("find_stuck_requests", stdout=out)
    assert out.getvalue().strip() == (
        "acme: Server purchase S-1 waits in the Joint review step, and nobody can finish it: "
        "the people who hold its open tasks are too few to give the approvals it still needs."
    )

    # when: Olga adds Victor, and Bob and Victor approve
    olga_adds_victor(wid, "Ivan left", step="review")
    call_command("find_stuck_requests", stdout=StringIO())
    for who in ("bob", "victor"):
        workflow_decide(
            user=User.objects.get(username=who),
            workflow_id=wid,
            decision="approve",
            request_id=f"{who}-1",
        )

    # then
    assert Workflow.objects.get(pk=wid).status == "COMPLETED"
