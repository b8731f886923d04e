"""A workflow template's roles (access.TemplateRole): who may start it, edit it and see
its runs, granted to a group in the roles screen's service and asked of four kinds of
person: a member of the granted group, someone not granted, someone of another
organisation in a group of the same name, and an organisation admin. Then each front
door that answers from them: the API's start and template list, the new-request page,
the search, the template editor and the roles screen itself (with its bad input)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from guardian.models import GroupObjectPermission, UserObjectPermission
from rest_framework.test import APIClient

from approvals import access
from approvals.access import Role, TemplateRole
from approvals.models import Tenant, User, Workflow, WorkflowTemplate
from approvals.selectors.template_roles import GROUP_UNKNOWN
from approvals.services.template_roles import (
    EDITOR_NOT_FINANCE_ADMIN,
    RoleRefused,
    template_role_grant,
    template_role_revoke,
)
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start

from ..helpers import EXPENSE, start_expense

pytestmark = pytest.mark.django_db

PERSONS = ["granted", "not_granted", "other_tenant", "org_admin"]
# Who each kind of person is: gus (a finance admin in the group "purchasers"), fiona (a
# finance admin not in it), gina (of Globex, in a group of the same name), olga.
WHO = {"granted": "gus", "not_granted": "fiona", "other_tenant": "gina", "org_admin": "olga"}

EXPECTED = {
    TemplateRole.START: {
        "granted": True,
        "not_granted": False,
        "other_tenant": False,
        "org_admin": False,
    },
    TemplateRole.EDIT: {
        "granted": True,
        "not_granted": False,
        "other_tenant": False,
        "org_admin": False,
    },
    TemplateRole.VIEW_RUNS: {
        "granted": True,
        "not_granted": False,
        "other_tenant": False,
        "org_admin": True,  # reads every workflow of the organisation anyway
    },
}


def _expense(tenant: Tenant) -> WorkflowTemplate:
    template = WorkflowTemplate.objects.filter(tenant=tenant, key=EXPENSE).first()
    assert template is not None
    return template


@pytest.fixture
def roles(acme: Tenant) -> dict[str, Any]:
    """alice's expense, filed before anyone was named; then the group "purchasers" (gus
    of Acme, gina of Globex) named for all three roles of Acme's expense template, and
    the finance admins' group no longer named to edit it."""
    alice = User.objects.get(username="alice")
    started = workflow_start(
        submitter=alice,
        template_key=EXPENSE,
        subject_type="expense",
        subject_id="R-1",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    globex = Tenant.objects.create(slug="globex", name="Globex")
    gus = User.objects.create_user("gus", password="pw", tenant=acme, first_name="Gus")
    gina = User.objects.create_user("gina", password="pw", tenant=globex, first_name="Gina")
    purchasers = Group.objects.create(name="purchasers")
    gus.groups.add(purchasers, Group.objects.get(name=Role.FINANCE_ADMIN))
    gina.groups.add(purchasers, Group.objects.get(name=Role.FINANCE_ADMIN))
    admin = User.objects.get(username="admin")
    for role in TemplateRole:
        template_role_grant(template=_expense(acme), role=role, by=admin, group=purchasers)
    # the seed names every finance admin an editor; now only the purchasers' are
    finance = Group.objects.get(name=Role.FINANCE_ADMIN)
    template_role_revoke(template=_expense(acme), role=TemplateRole.EDIT, by=admin, group=finance)
    return {"workflow_id": started.workflow_id, "purchasers": purchasers, "globex": globex}


def _answer(role: TemplateRole, person: User, acme: Tenant, workflow_id: Any) -> bool:
    template = _expense(acme)
    if role is TemplateRole.START:
        return access.may_start(person, EXPENSE) and person.tenant_id == acme.pk
    if role is TemplateRole.EDIT:
        return access.may_edit_template(person, template)
    wf = Workflow.objects.get(pk=workflow_id)
    rule = access.may_read_workflow(person, wf)
    listed = access.workflows_readable(person).filter(pk=wf.pk).exists()
    assert rule == listed, (person.username, rule, listed)
    return rule


@pytest.mark.parametrize("role", list(TemplateRole), ids=lambda r: r.value)
@pytest.mark.parametrize("persona", PERSONS)
def test_the_role_matrix(acme: Tenant, roles: dict[str, Any], role: TemplateRole, persona: str):
    person = User.objects.get(username=WHO[persona])
    assert _answer(role, person, acme, roles["workflow_id"]) is EXPECTED[role][persona]


def test_the_lock_reads_the_runs_role_as_the_rule_does(acme: Tenant, roles: dict[str, Any]):
    from .test_one_read_rule import _through_the_lock

    wf = Workflow.objects.get(pk=roles["workflow_id"])
    for persona, expected in EXPECTED[TemplateRole.VIEW_RUNS].items():
        person = User.objects.get(username=WHO[persona])
        assert _through_the_lock(person, wf) is expected, persona


def test_a_template_naming_nobody_is_started_and_edited_as_before(acme: Tenant):
    # given the demo as seeded: nobody named to start; the finance admins named to edit
    victor, fiona, farah = (User.objects.get(username=n) for n in ("victor", "fiona", "farah"))
    template = _expense(acme)
    # then every member starts it, every finance admin edits it, and no one beyond those
    # who take part sees its runs
    assert access.may_start(victor, EXPENSE)
    assert access.may_edit_template(fiona, template) and access.may_edit_template(farah, template)
    assert not access.may_edit_template(victor, template)
    assert access.templates_runs_seen(victor, [template]) == set()


def test_roles_hold_for_every_version(acme: Tenant, roles: dict[str, Any]):
    # given a second version, published after the group was named
    doc = {**_expense(acme).definition, "title": "Expense claim (new rules)"}
    newest = workflow_template_publish(tenant=acme, definition=doc)
    assert newest.version == 2
    gus, fiona = User.objects.get(username="gus"), User.objects.get(username="fiona")
    # then the grants still hold on it, and nobody else is let in
    assert access.may_edit_template(gus, newest)
    assert not access.may_edit_template(fiona, newest)
    assert access.may_start(gus, EXPENSE) and not access.may_start(fiona, EXPENSE)


# -- starting ---------------------------------------------------------------------------


def _api(username: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(User.objects.get(username=username))
    return client


def test_the_api_refuses_a_start_in_words_and_starts_nothing(roles: dict[str, Any]):
    before = Workflow.objects.count()
    refused = start_expense(_api("victor"), 4_500_000)
    assert refused.status_code == 403
    error = refused.json()["error"]
    assert error["code"] == "FORBIDDEN"
    assert "Who may start this workflow template" in error["message"]
    assert "Expense claim" in error["message"]
    assert Workflow.objects.count() == before
    # the other organisation's person finds no such template at all
    assert start_expense(_api("gina"), 4_500_000).status_code == 422
    assert Workflow.objects.count() == before
    # a member of the group named starts it
    assert start_expense(_api("gus"), 4_500_000).status_code == 201


def test_the_api_lists_the_templates_one_may_start(roles: dict[str, Any]):
    def keys(username: str) -> dict[str, bool]:
        response = _api(username).get("/api/templates")
        assert response.status_code == 200
        return {t["key"]: t["maySeeRuns"] for t in response.json()["templates"]}

    assert keys("gus") == {EXPENSE: True, "purchase-request": False}
    assert keys("victor") == {"purchase-request": False}
    assert keys("olga") == {"purchase-request": True}
    assert keys("gina") == {}


def _page(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def test_the_new_request_page_says_why_and_starts_nothing(roles: dict[str, Any]):
    before = Workflow.objects.count()
    page = _page("victor").get("/workflows/new", {"template": EXPENSE})
    assert page.status_code == 403
    text = page.content.decode()
    assert 'id="start-refused"' in text and "Who may start this workflow template" in text
    assert f"?template={EXPENSE}" not in text  # not offered among the kinds he may start
    posted = _page("victor").post(
        f"/workflows/new?template={EXPENSE}",
        {"amountPaise": "45000", "currency": "INR", "department": "eng", "subject_id": "P-1"},
    )
    assert posted.status_code == 403
    assert Workflow.objects.count() == before
    # gus is offered it
    assert f"?template={EXPENSE}" in _page("gus").get("/workflows/new").content.decode()


# -- seeing runs ------------------------------------------------------------------------


def _page_ids(client: Client) -> list[str]:
    response = client.get("/search", {"text": ""})
    assert response.status_code == 200
    return re.findall(r'<tr data-workflow="([0-9a-f-]+)"', response.content.decode())


def test_the_search_shows_a_templates_runs_to_whoever_may_see_them(roles: dict[str, Any]):
    wid = str(roles["workflow_id"])
    api_ids = [w["workflowId"] for w in _api("gus").get("/api/workflows").json()["workflows"]]
    assert wid in api_ids
    assert wid in _page_ids(_page("gus"))
    assert wid not in _page_ids(_page("fiona"))
    assert _page("gus").get(f"/workflows/{wid}").status_code == 200
    assert _page("fiona").get(f"/workflows/{wid}").status_code == 404
    assert _page("gina").get(f"/workflows/{wid}").status_code == 404


# -- editing ----------------------------------------------------------------------------


def test_the_editor_refuses_someone_not_named_to_edit_in_words(acme: Tenant, roles: dict):
    template = _expense(acme)
    change = f"/admin/approvals/workflowtemplate/{template.pk}/change/"
    fiona = _page("fiona")
    # she reads it, with the reason she may not change it
    page = fiona.get(change)
    assert page.status_code == 200
    assert 'id="edit-refused"' in page.content.decode()
    assert "Who may edit this workflow template" in page.content.decode()
    # saving, retiring and rolling back are refused with the same sentence
    posted = fiona.post(change, {"definition": "{}"})
    assert posted.status_code == 403 and "Who may edit" in posted.content.decode()
    retire = fiona.post(f"/admin/approvals/workflowtemplate/{template.pk}/retire/")
    assert retire.status_code == 403 and "Who may edit" in retire.content.decode()
    assert WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).count() == 1
    assert _expense(acme).retired_at is None
    # gus, named, retires it
    retired = _page("gus").post(
        f"/admin/approvals/workflowtemplate/{template.pk}/retire/", {"confirmed": "yes"}
    )
    assert retired.status_code == 302
    assert _expense(acme).retired_at is not None


# -- the roles screen -------------------------------------------------------------------


def _grants() -> int:
    return UserObjectPermission.objects.count() + GroupObjectPermission.objects.count()


def test_the_roles_screen_names_and_removes_by_typed_names(acme: Tenant):
    template = _expense(acme)
    url = f"/admin/approvals/workflowtemplate/{template.pk}/roles/"
    fiona = _page("fiona")
    page = fiona.get(url).content.decode()
    assert "Who may start this workflow template" in page
    assert "every member of your organisation may start it" in page
    assert "Finance admins <span" in page  # the seed names them editors
    # naming victor by his first name
    added = fiona.post(url, {"role": TemplateRole.START.value, "person": "Victor"})
    assert added.status_code == 302
    victor, alice = User.objects.get(username="victor"), User.objects.get(username="alice")
    assert access.may_start(victor, EXPENSE) and not access.may_start(alice, EXPENSE)
    assert "Victor" in fiona.get(url).content.decode()
    # and removing him opens it to everyone again
    removed = fiona.post(url, {"role": TemplateRole.START.value, "person": "victor", "remove": "1"})
    assert removed.status_code == 302
    assert access.may_start(alice, EXPENSE)


@pytest.mark.parametrize(
    ("form", "words"),
    [
        pytest.param({"role": "start_workflowtemplate"}, "Type the name of a group", id="nobody"),
        pytest.param({"role": "delete_everything", "person": "victor"}, "Choose one", id="role"),
        pytest.param(
            {"role": "start_workflowtemplate", "group": "no-such-group"},
            GROUP_UNKNOWN.format(text="no-such-group"),
            id="unknown-group",
        ),
        pytest.param(
            {"role": "start_workflowtemplate", "person": "zzz"}, "Nobody here matches", id="person"
        ),
        pytest.param(
            {"role": "edit_workflowtemplate", "person": "victor"},
            EDITOR_NOT_FINANCE_ADMIN.format(name="Victor"),
            id="editor-not-finance-admin",
        ),
        pytest.param(
            {"role": "start_workflowtemplate", "person": "audrey"}, "starts nothing", id="auditor"
        ),
    ],
)
def test_the_roles_screen_refuses_bad_input_in_words_and_changes_nothing(
    acme: Tenant, form: dict[str, str], words: str
):
    template = _expense(acme)
    before = _grants()
    response = _page("fiona").post(f"/admin/approvals/workflowtemplate/{template.pk}/roles/", form)
    assert response.status_code == 400
    assert words.replace("“", "&ldquo;") in response.content.decode() or words in (
        response.content.decode().replace("&#x27;", "'")
    )
    assert _grants() == before


def test_the_roles_screen_offers_no_other_organisations_groups(acme: Tenant):
    globex = Tenant.objects.create(slug="globex", name="Globex")
    gina = User.objects.create_user("gina", password="pw", tenant=globex)
    gina.groups.add(Group.objects.create(name="globex-buyers"))
    found = _page("fiona").get(
        "/admin/approvals/workflowtemplate/roles/find/", {"q": "buyers", "kind": "group"}
    )
    assert found.status_code == 200 and found.json() == {"people": []}
    template = _expense(acme)
    with pytest.raises(RoleRefused):
        template_role_grant(
            template=template,
            role=TemplateRole.START,
            by=User.objects.get(username="fiona"),
            group=Group.objects.get(name="globex-buyers"),
        )
    assert (
        _page("fiona")
        .get("/admin/approvals/workflowtemplate/roles/find/", {"q": "fin", "kind": "group"})
        .json()["people"][0]["username"]
        == Role.FINANCE_ADMIN.value
    )


def test_someone_not_named_to_edit_may_not_change_the_roles(acme: Tenant, roles: dict):
    template = _expense(acme)
    url = f"/admin/approvals/workflowtemplate/{template.pk}/roles/"
    before = _grants()
    page = _page("fiona").get(url)
    assert page.status_code == 200 and 'id="roles-refused"' in page.content.decode()
    assert 'name="person"' not in page.content.decode()
    refused = _page("fiona").post(url, {"role": "start_workflowtemplate", "person": "fiona"})
    assert refused.status_code == 403 and "Who may edit" in refused.content.decode()
    with pytest.raises(access.Forbidden):
        template_role_revoke(
            template=template,
            role=TemplateRole.EDIT,
            by=User.objects.get(username="fiona"),
            group=roles["purchasers"],
        )
    assert _grants() == before


def test_retiring_counts_only_the_people_who_may_start_it(acme: Tenant, roles: dict):
    from approvals.selectors.template_effects import workflow_template_reach

    # gus alone of Acme is in the group named to start it (gina is of Globex)
    assert workflow_template_reach(tenant_id=acme.pk, key=EXPENSE).people == 1
    everyone = workflow_template_reach(tenant_id=acme.pk, key="purchase-request").people
    assert everyone > 5


def test_a_role_group_is_named_by_what_people_call_it(acme: Tenant, roles: dict):
    template = _expense(acme)
    url = f"/admin/approvals/workflowtemplate/{template.pk}/roles/"
    added = _page("gus").post(url, {"role": "view_workflowtemplate_runs", "group": "auditors"})
    assert added.status_code == 302
    typed = _page("gus").post(
        url, {"role": "view_workflowtemplate_runs", "group": "Finance admins"}
    )
    assert typed.status_code == 302
    fiona = User.objects.get(username="fiona")
    assert access.may_read_workflow(fiona, Workflow.objects.get(pk=roles["workflow_id"]))


def test_no_way_round_the_edit_role_publishes_or_drafts_a_change(acme: Tenant, roles: dict):
    import json

    from approvals.models import WorkflowTemplateDraft
    from approvals.services.templates import (
        workflow_template_draft_save,
        workflow_template_publish,
    )

    fiona = User.objects.get(username="fiona")
    doc = {**_expense(acme).definition, "title": "Expense claim, by the back door"}
    drafts = WorkflowTemplateDraft.objects.count()
    # the add form, naming the existing key: refused in the form's words, nothing kept
    page = _page("fiona").post(
        "/admin/approvals/workflowtemplate/add/?as=json", {"definition": json.dumps(doc)}
    )
    assert page.status_code == 200
    assert "Who may edit this workflow template" in page.content.decode()
    # the services themselves refuse a person not named to edit
    with pytest.raises(access.Forbidden):
        workflow_template_publish(tenant=acme, definition=doc, published_by=fiona)
    with pytest.raises(access.Forbidden):
        workflow_template_draft_save(tenant=acme, definition=doc, drafted_by=fiona)
    assert WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).count() == 1
    assert WorkflowTemplateDraft.objects.count() == drafts
    # gus, named, drafts it
    workflow_template_draft_save(
        tenant=acme, definition=doc, drafted_by=User.objects.get(username="gus")
    )
    assert WorkflowTemplateDraft.objects.count() == drafts + 1
