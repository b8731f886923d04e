"""Four eyes on rules: when a finance admin saves a change to a workflow template as a
draft, the organisation's other finance admins are mailed "Fiona changed Expense claim:
review and publish" with the draft's page, once the save has committed; nobody else is
(of a template that names its editors, only the other named editors: no one else may
publish it), and with four eyes off (saving publishes at once) nobody is."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core import mail
from django.urls import reverse

from approvals.access import Role, TemplateRole
from approvals.models import Tenant, User, WorkflowTemplateDraft
from approvals.services.template_roles import template_role_grant, template_role_revoke
from tests.approvals.templates.test_four_eyes import _as, _draft_by_fiona, _save, _v1

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _mails_kept(settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def test_saving_a_draft_mails_the_other_finance_admins_a_link_to_review_and_publish(
    acme: Tenant, django_capture_on_commit_callbacks: Any
) -> None:
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        draft = _draft_by_fiona(acme)

    (message,) = mail.outbox
    assert message.to == ["farah@acme.example"]  # not fiona, not olga nor audrey
    assert message.subject == "Fiona changed Expense claim: review and publish"
    page = settings.APPROVALS_BASE_URL + reverse(
        "admin:approvals_workflowtemplate_draft", args=[draft.pk]
    )
    assert f"Review and publish: {page}" in message.body
    assert message.body.startswith("Hello Farah,")
    assert _as("farah").get(page.removeprefix(settings.APPROVALS_BASE_URL)).status_code == 200


def test_nothing_is_mailed_before_the_draft_is_committed(
    acme: Tenant, django_capture_on_commit_callbacks: Any
) -> None:
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=False) as waiting:
        _draft_by_fiona(acme)

    assert mail.outbox == [] and len(waiting) == 1


def test_with_four_eyes_off_saving_publishes_and_mails_nobody(
    acme: Tenant, django_capture_on_commit_callbacks: Any
) -> None:
    Tenant.objects.filter(pk=acme.pk).update(template_four_eyes=False)
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        response = _save(_as("fiona"), _v1(acme), publish_confirmed="yes")

    assert response.status_code == 302
    assert not WorkflowTemplateDraft.objects.exists()
    assert mail.outbox == []


def test_of_a_template_that_names_its_editors_only_the_other_named_editors_are_mailed(
    acme: Tenant, django_capture_on_commit_callbacks: Any
) -> None:
    fiona = User.objects.get(username="fiona")
    fred = User.objects.create_user(
        username="fred", email="fred@acme.example", first_name="Fred", tenant=acme
    )
    finance = Group.objects.get(name=Role.FINANCE_ADMIN.value)
    fred.groups.add(finance)
    for editor in (fiona, fred):
        template_role_grant(template=_v1(acme), role=TemplateRole.EDIT, by=fiona, person=editor)
    # the demo names the finance admins' group: now only the two people are named
    template_role_revoke(template=_v1(acme), role=TemplateRole.EDIT, by=fiona, group=finance)
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        _draft_by_fiona(acme)

    # farah is a finance admin but not named: she could not publish it
    assert [m.to for m in mail.outbox] == [["fred@acme.example"]]
    assert mail.outbox[0].body.startswith("Hello Fred,")
