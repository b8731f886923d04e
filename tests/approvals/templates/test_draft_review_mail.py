"""Four eyes on rules: when a finance admin saves a change to a workflow template as a
draft, the organisation's other finance admins are mailed "Fiona changed Expense claim:
review and publish" with the draft's page, once the save has committed; nobody else is,
and with four eyes off (saving publishes at once) nobody is."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.core import mail
from django.urls import reverse

from approvals.models import Tenant, WorkflowTemplateDraft
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
