"""Offboarding a leaver: olga sees where each of ivan's open tasks would go (nothing
changes), gives one to someone else, and confirms with a reason. A task ivan held for
a group stays with the group's other members, one he held on behalf of bob goes back to
bob, a task naming him goes to his manager (or the person olga chose); his delegations
end; each receiver's inbox marks the task "handed on from Ivan (left)". The directory
sync deactivates by the same rules; a deactivated person signing in is told the account
is no longer active."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from approvals.admin.login import ACCOUNT_INACTIVE
from approvals.admin.offboarding import NOT_A_CHOICE
from approvals.models import Delegation, OrgGroup, PendingTask, User, WorkflowEvent
from approvals.runtime.rebuild import read_models_check, read_models_rebuild
from approvals.selectors.people import PERSON_UNKNOWN
from approvals.services.delegations import delegation_set
from approvals.services.directory import (
    CHOICE_IS_SUBMITTER,
    CHOSEN,
    GROUP,
    NAMED,
    PRINCIPAL,
    DirectoryEntry,
    directory_sync,
    offboarding_plan,
)
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start

pytestmark = pytest.mark.django_db

PAGE = "/admin/approvals/user/offboard/"
MARK = "handed on from Ivan (left)"


def user(name: str) -> User:
    return User.objects.get(username=name)


def _start(key: str, approver: dict[str, str], n: int) -> str:
    workflow_template_publish(
        tenant=user("alice").tenant,
        definition={
            "key": key,
            "title": key.replace("-", " ").capitalize(),
            "steps": [
                {"id": "review", "title": "Review", "kind": "approval", "approvers": [approver]}
            ],
        },
    )
    return str(
        workflow_start(
            submitter=user("alice"),
            template_key=key,
            subject_type="memo",
            subject_id=f"M-{n}",
            data={},
        ).workflow_id
    )


@pytest.fixture
def ivans_tasks(acme: Any) -> dict[str, str]:
    """ivan holds four tasks: one as an IT admin (irene is one too), one for bob while
    bob is away, and two naming him."""
    irene = User.objects.create_user("irene", password="demo", tenant=acme, first_name="Irene")
    irene.org_groups.add(OrgGroup.objects.get(tenant=acme, key="it-admins"))
    now = timezone.now()
    delegation_set(
        user=user("bob"),
        delegate=user("ivan"),
        starts_at=now - dt.timedelta(hours=1),
        ends_at=now + dt.timedelta(days=3),
    )
    # ivan is away later this month; farah stands in (a delegation from him)
    delegation_set(
        user=user("ivan"),
        delegate=user("farah"),
        starts_at=now + dt.timedelta(days=10),
        ends_at=now + dt.timedelta(days=12),
    )
    return {
        "group": _start("it-memo", {"group": "it-admins"}, 1),
        "behalf": _start("bob-memo", {"user": "bob"}, 2),
        "named": _start("ivan-memo", {"user": "ivan"}, 3),
        "chosen": _start("ivan-note", {"user": "ivan"}, 4),
    }


def holders(wid: str) -> dict[str, str]:
    """assignee -> the leaver the inbox row names (handed on from)."""
    rows = PendingTask.objects.filter(workflow_id=wid).values_list(
        "assignee__username", "handed_on_from"
    )
    return dict(rows)


def signed_in(name: str) -> Client:
    client = Client()
    client.force_login(user(name))
    return client


def test_olga_previews_ivans_offboarding_changes_one_destination_and_confirms(ivans_tasks):
    olga = signed_in("olga")
    events_before = WorkflowEvent.objects.count()

    # the preview: where each task would go, in words; nothing changes
    page = olga.get(PAGE, {"person": "ivan"})
    text = page.content.decode()
    assert page.status_code == 200
    assert "It memo M-1 (Review step)" in text
    assert "back to the other members of IT admins: Irene" in text
    assert "back to Bob, for whom Ivan held it" in text
    assert "Victor, Ivan&#x27;s manager" in text
    changed = olga.post(
        PAGE, {"person": "ivan", f"to-{ivans_tasks['chosen']}": "farah", "preview": "1"}
    )
    assert "Farah, chosen by you" in changed.content.decode()
    assert user("ivan").is_active
    assert WorkflowEvent.objects.count() == events_before
    assert holders(ivans_tasks["named"]) == {"ivan": ""}

    # confirmed, with one task given to farah
    done = olga.post(
        PAGE,
        {
            "person": "ivan",
            f"to-{ivans_tasks['chosen']}": "farah",
            "reason": "moved to another company",
            "confirm": "1",
            "confirmed": "yes",
        },
        follow=True,
    )

    assert done.status_code == 200
    assert "Ivan is deactivated. 4 open tasks handed on." in done.content.decode()
    assert not user("ivan").is_active
    assert holders(ivans_tasks["group"]) == {"irene": "ivan"}
    assert holders(ivans_tasks["behalf"]) == {"bob": "ivan"}
    assert holders(ivans_tasks["named"]) == {"victor": "ivan"}
    assert holders(ivans_tasks["chosen"]) == {"farah": "ivan"}
    moves = WorkflowEvent.objects.filter(type="TaskReassigned", actor__username="olga")
    assert {(m.payload["reason"], m.payload["comment"]) for m in moves} == {
        ("handed_on", "ivan was deactivated: moved to another company")
    }
    assert not Delegation.objects.filter(user__username="ivan").exists()  # not begun: dropped
    ended = Delegation.objects.get(delegate__username="ivan")
    assert ended.ends_at <= timezone.now()
    for receiver in ("irene", "bob", "victor", "farah"):
        inbox = signed_in(receiver).get("/").content.decode()
        assert MARK in inbox, receiver


def test_the_plan_names_each_rule_and_a_refused_choice_changes_nothing(ivans_tasks):
    plan = {str(m.workflow_id): (m.kind, m.to_users) for m in offboarding_plan(person=user("ivan"))}
    assert plan == {
        ivans_tasks["group"]: (GROUP, ("irene",)),
        ivans_tasks["behalf"]: (PRINCIPAL, ("bob",)),
        ivans_tasks["named"]: (NAMED, ("victor",)),
        ivans_tasks["chosen"]: (NAMED, ("victor",)),
    }

    # alice submitted them all: giving her one is refused, and nothing changes
    reply = signed_in("olga").post(
        PAGE,
        {
            "person": "ivan",
            f"to-{ivans_tasks['chosen']}": "alice",
            "reason": "left",
            "confirm": "1",
            "confirmed": "yes",
        },
    )

    assert reply.status_code == 409
    assert CHOICE_IS_SUBMITTER.format(name="Alice") in reply.content.decode().replace("&#x27;", "'")
    assert user("ivan").is_active
    assert holders(ivans_tasks["chosen"]) == {"ivan": ""}


def test_the_preview_says_why_a_choice_is_refused_before_confirm(ivans_tasks):
    olga = signed_in("olga")
    chosen = f"to-{ivans_tasks['chosen']}"

    preview = olga.post(PAGE, {"person": "ivan", chosen: "Alice", "preview": "1"})
    auditor = olga.post(PAGE, {"person": "ivan", chosen: "audrey", "preview": "1"})
    unknown = olga.post(PAGE, {"person": "ivan", chosen: "Zed", "preview": "1"})

    page = preview.content.decode().replace("&#x27;", "'")
    assert preview.status_code == 200
    assert CHOICE_IS_SUBMITTER.format(name="Alice") in page
    assert NOT_A_CHOICE in page
    assert "an auditor" in auditor.content.decode().lower()
    assert PERSON_UNKNOWN.format(text="Zed") in unknown.content.decode().replace("&#x27;", "'")
    assert user("ivan").is_active and holders(ivans_tasks["chosen"]) == {"ivan": ""}


def test_people_are_found_by_name_never_listed_whole(ivans_tasks):
    olga = signed_in("olga")

    by_name = olga.get(PAGE, {"who": "Iva"})
    several = olga.get(PAGE, {"who": "F"})
    suggestions = olga.get(f"{PAGE}people/", {"q": "a", "taking": "ivan"}).json()["people"]
    page = olga.get(PAGE).content.decode()

    assert by_name.context["leaver"].username == "ivan"
    assert "Several people match “F”: Farah (farah), Fiona (fiona)." in (
        several.content.decode().replace("&#x27;", "'")
    )
    offered = {p["username"] for p in suggestions}
    assert "alice" in offered and not offered & {"audrey", "erp", "admin", "ivan"}
    assert "<option" not in page  # no list of everyone to choose from
    assert olga.get(f"{PAGE}people/", {"q": ""}).status_code == 400


def test_a_group_task_ivan_alone_held_goes_to_his_manager(ivans_tasks):
    user("irene").org_groups.clear()
    wid = _start("it-memo", {"group": "it-admins"}, 9)  # assigned to ivan alone

    (move,) = [m for m in offboarding_plan(person=user("ivan")) if str(m.workflow_id) == wid]

    assert (move.kind, move.to_users) == (NAMED, ("victor",))


def test_bob_an_employee_is_refused_the_offboarding_page(acme):
    bob = signed_in("bob")

    assert bob.get(PAGE, {"person": "ivan"}).status_code == 403
    assert bob.post(PAGE, {"person": "ivan", "reason": "x", "confirm": "1"}).status_code == 403
    assert user("ivan").is_active


def test_the_admin_home_links_org_admins_to_offboarding(acme):
    assert PAGE in signed_in("olga").get("/admin/").content.decode()
    assert PAGE not in signed_in("fiona").get("/admin/").content.decode()


def test_the_directory_sync_deactivates_by_the_same_rules(ivans_tasks):
    report = directory_sync(
        tenant=user("ivan").tenant,
        entries=[DirectoryEntry(username="ivan", manager="victor", active=False)],
    )

    (result,) = report.deactivated
    assert sorted((h.kind, h.receivers) for h in result.handovers) == [
        (GROUP, ("irene",)),
        (NAMED, ("victor",)),
        (NAMED, ("victor",)),
        (PRINCIPAL, ("bob",)),
    ]
    assert holders(ivans_tasks["group"]) == {"irene": "ivan"}
    assert holders(ivans_tasks["behalf"]) == {"bob": "ivan"}
    assert holders(ivans_tasks["named"]) == {"victor": "ivan"}
    assert CHOSEN not in {h.kind for h in result.handovers}


def test_the_sync_command_reports_where_each_task_went(ivans_tasks, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    path = tmp_path / "people.csv"
    path.write_text(
        "username,email,first_name,last_name,manager,groups,active\n"
        "ivan,,Ivan,,victor,it-admins,false\n"
    )
    out = StringIO()

    call_command("sync_directory", str(path), "--tenant", "acme", stdout=out)

    assert f"{ivans_tasks['group']} -> irene (back to the group)" in out.getvalue()
    assert f"{ivans_tasks['behalf']} -> bob (back to the person it was held for)" in out.getvalue()
    assert f"{ivans_tasks['named']} -> victor (to the manager)" in out.getvalue()


def test_the_inbox_marks_are_derived_again_by_the_rebuild(ivans_tasks):
    directory_sync(
        tenant=user("ivan").tenant,
        entries=[DirectoryEntry(username="ivan", manager="victor", active=False)],
    )
    assert read_models_check(tenant_id=user("ivan").tenant_id) == []
    PendingTask.objects.update(handed_on_from="")

    read_models_rebuild(tenant_id=user("ivan").tenant_id)

    assert holders(ivans_tasks["group"]) == {"irene": "ivan"}
    assert holders(ivans_tasks["named"]) == {"victor": "ivan"}


@pytest.mark.parametrize("where", ["/accounts/login/", "/admin/login/"])
def test_a_deactivated_person_signing_in_is_told_the_account_is_no_longer_active(acme, where):
    directory_sync(
        tenant=acme, entries=[DirectoryEntry(username="olga", manager="victor", active=False)]
    )
    client = Client()

    right = client.post(where, {"username": "olga", "password": "demo"})
    wrong = client.post(where, {"username": "olga", "password": "not-it"})

    assert ACCOUNT_INACTIVE.replace("'", "&#x27;") in right.content.decode()
    assert "_auth_user_id" not in client.session
    assert ACCOUNT_INACTIVE.replace("'", "&#x27;") not in wrong.content.decode()
