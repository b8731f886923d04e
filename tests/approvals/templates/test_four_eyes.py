"""Four eyes on rules: saving a workflow template in the editor keeps a draft; a second
finance admin reads the change in words and publishes it, and the version and the
admin's history record both people. The author cannot publish her own draft while the
organisation keeps the rule; turned off, Save publishes at once but only once confirmed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.messages import get_messages
from django.test import Client

from approvals.admin.templates import DRAFT_SAVED, PUBLISH_ASKS_FIRST
from approvals.models import OrgGroup, Tenant, User, WorkflowTemplate, WorkflowTemplateDraft
from approvals.services.templates import (
    OWN_DRAFT,
    DraftRefused,
    workflow_template_draft_publish,
    workflow_template_draft_save,
)
from approvals.web.definition_editor import complete, editor_schema, to_editor

from ..helpers import EXPENSE

pytestmark = pytest.mark.django_db

BASE = "/admin/approvals/workflowtemplate"


def _as(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _v1(acme: Tenant) -> WorkflowTemplate:
    return WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)


def _three_day_deadline(template: WorkflowTemplate) -> dict[str, Any]:
    groups = list(OrgGroup.objects.filter(tenant=template.tenant).values_list("key", flat=True))
    users = list(User.objects.filter(tenant=template.tenant).values_list("username", flat=True))
    doc = complete(to_editor(template.definition), editor_schema(groups=groups, users=users))
    doc["steps"][0]["deadline"] = {"number": 3, "unit": "days"}
    return doc


def _save(client: Client, template: WorkflowTemplate, **extra: str) -> Any:
    body = {
        "definition": json.dumps(_three_day_deadline(template)),
        "try_submitter": "alice",
        "_save": "Save",
        **extra,
    }
    return client.post(f"{BASE}/{template.pk}/change/", body)


def _draft_by_fiona(acme: Tenant) -> WorkflowTemplateDraft:
    response = _save(_as("fiona"), _v1(acme))
    assert response.status_code == 302
    return WorkflowTemplateDraft.objects.get(tenant=acme, key=EXPENSE)


def test_saving_keeps_a_draft_and_publishes_nothing(acme: Tenant) -> None:
    response = _save(_as("fiona"), _v1(acme))

    draft = WorkflowTemplateDraft.objects.get(tenant=acme, key=EXPENSE)
    assert response["Location"] == f"{BASE}/drafts/{draft.pk}/"
    assert [m.message for m in get_messages(response.wsgi_request)] == [DRAFT_SAVED]
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1
    assert draft.drafted_by == User.objects.get(username="fiona")
    assert draft.based_on == _v1(acme) and draft.closed_at is None
    assert draft.definition["steps"][0]["deadline"] == "P3D"


def test_the_draft_reads_in_words_and_is_listed_on_the_versions(acme: Tenant) -> None:
    draft = _draft_by_fiona(acme)

    page = _as("farah").get(f"{BASE}/drafts/{draft.pk}/").content.decode()
    versions = _as("farah").get(f"{BASE}/{_v1(acme).pk}/change/").content.decode()

    assert "deadline" in page.lower() and "3 days" in page
    assert 'value="Publish as version 2"' in page
    assert f'href="{BASE}/drafts/{draft.pk}/"' in versions


def test_one_person_cannot_publish_their_own_draft_while_four_eyes_are_on(acme: Tenant) -> None:
    draft = _draft_by_fiona(acme)
    fiona = _as("fiona")

    page = fiona.get(f"{BASE}/drafts/{draft.pk}/").content.decode()
    response = fiona.post(f"{BASE}/drafts/{draft.pk}/", {"_publish": "Publish", "confirmed": "yes"})

    assert "Publish as version" not in page  # no button to press
    assert [m.message for m in get_messages(response.wsgi_request)][-1] == OWN_DRAFT
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1
    draft.refresh_from_db()
    assert draft.closed_at is None
    with pytest.raises(DraftRefused, match="another finance admin publishes it"):
        workflow_template_draft_publish(
            tenant=acme, draft_id=draft.pk, published_by=User.objects.get(username="fiona")
        )


def test_a_second_finance_admin_publishes_and_both_people_are_recorded(acme: Tenant) -> None:
    draft = _draft_by_fiona(acme)

    response = _as("farah").post(
        f"{BASE}/drafts/{draft.pk}/", {"_publish": "Publish", "confirmed": "yes"}
    )

    v2 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=2)
    assert response["Location"] == f"{BASE}/{v2.pk}/change/"
    assert (v2.drafted_by.username, v2.published_by.username) == ("fiona", "farah")
    assert v2.definition["steps"][0]["deadline"] == "P3D"
    draft.refresh_from_db()
    assert draft.published == v2 and draft.closed_by.username == "farah"
    entry = LogEntry.objects.get(object_id=str(v2.pk))
    assert entry.user.username == "farah"
    assert entry.get_change_message() == (
        "Published version 2, drafted by Fiona and published by Farah."
    )
    versions = _as("fiona").get(f"{BASE}/{v2.pk}/change/").content.decode()
    assert "farah (drafted by fiona)" in versions


def test_a_published_draft_cannot_be_published_again(acme: Tenant) -> None:
    draft = _draft_by_fiona(acme)
    farah = _as("farah")
    farah.post(f"{BASE}/drafts/{draft.pk}/", {"_publish": "Publish", "confirmed": "yes"})

    response = farah.post(f"{BASE}/drafts/{draft.pk}/", {"_publish": "Publish", "confirmed": "yes"})

    shown = [m.message for m in get_messages(response.wsgi_request)]
    assert shown[-1] == "This draft was already published: nothing changed."
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 2


def test_a_discarded_draft_publishes_nothing(acme: Tenant) -> None:
    draft = _draft_by_fiona(acme)

    _as("fiona").post(f"{BASE}/drafts/{draft.pk}/", {"_discard": "Discard"})
    response = _as("farah").post(
        f"{BASE}/drafts/{draft.pk}/", {"_publish": "Publish", "confirmed": "yes"}
    )

    shown = [m.message for m in get_messages(response.wsgi_request)]
    assert shown[-1] == "This draft was already discarded: nothing changed."
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1


def test_an_auditor_and_another_organisation_cannot_reach_a_draft(acme: Tenant) -> None:
    draft = _draft_by_fiona(acme)
    globex = Tenant.objects.create(slug="globex", name="Globex")
    outsider = User.objects.create(username="gina", tenant=globex, is_staff=True)
    outsider.groups.set(User.objects.get(username="farah").groups.all())
    other = Client()
    other.force_login(outsider)

    assert (
        _as("audrey")
        .post(f"{BASE}/drafts/{draft.pk}/", {"_publish": "x", "confirmed": "yes"})
        .status_code
        == 403
    )
    assert (
        other.post(f"{BASE}/drafts/{draft.pk}/", {"_publish": "x", "confirmed": "yes"}).status_code
        == 404
    )
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1


def test_with_four_eyes_off_save_publishes_only_once_confirmed(acme: Tenant) -> None:
    Tenant.objects.filter(pk=acme.pk).update(template_four_eyes=False)
    fiona = _as("fiona")

    unasked = _save(fiona, _v1(acme))

    assert unasked.status_code == 200
    assert PUBLISH_ASKS_FIRST in unasked.content.decode().replace("&#x27;", "'")
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1
    assert not WorkflowTemplateDraft.objects.exists()

    confirmed = _save(fiona, _v1(acme), publish_confirmed="yes")

    v2 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=2)
    assert confirmed["Location"] == f"{BASE}/{v2.pk}/change/"
    assert v2.published_by.username == "fiona" and v2.drafted_by is None


def test_a_draft_that_could_not_publish_is_refused_when_saved(acme: Tenant) -> None:
    doc = dict(_v1(acme).definition)
    doc["steps"] = [*doc["steps"], {"id": "pay", "kind": "action", "activity": "pay_out"}]

    with pytest.raises(Exception, match="pay_out"):
        workflow_template_draft_save(
            tenant=acme, definition=doc, drafted_by=User.objects.get(username="fiona")
        )
    assert not WorkflowTemplateDraft.objects.exists()
