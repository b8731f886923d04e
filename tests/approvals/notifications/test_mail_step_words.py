"""A mail's step words (its links' captions and the step's title) are worked out once per
published workflow template, step and requester: they are the words the definition
gives when read afresh, for every step of every demo template, whoever submitted."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.definitions import raw_definition_for
from approvals.models import WorkflowTemplate
from approvals.notifications.bodies import link_captions, template_link_captions
from approvals.notifications.mail_words import _step_label
from approvals.runtime.directory import Contact
from approvals.words.decisions import SUBMITTER
from approvals.words.steps import step_title

pytestmark = pytest.mark.django_db


def _contact(username: str, first_name: str) -> Contact:
    return Contact(
        id=1,
        username=username,
        email=f"{username}@example.com",
        first_name=first_name,
        last_name="",
        is_active=True,
        mode=None,
        time_zone="",
    )


SUBMITTERS: list[Any] = [_contact("alice", "Alice"), _contact("dev", ""), None]


def test_the_step_words_of_a_mail_are_the_definitions(acme: Any) -> None:
    templates = list(WorkflowTemplate.objects.filter(tenant=acme))
    assert templates
    for template in templates:
        raw = raw_definition_for(template.pk)
        steps = [s["id"] for s in raw["steps"]] + [SUBMITTER, "gone", ""]
        for step in steps:
            assert _step_label(template.pk, step) == (step_title(raw, step) if step else "")
            for submitter in SUBMITTERS:
                cached = template_link_captions(template.pk, step, submitter)
                assert cached == link_captions(raw, step, submitter), (template.key, step)
                assert list(cached) == list(link_captions(raw, step, submitter))


def test_a_mails_captions_are_its_own_to_change(acme: Any) -> None:
    template = WorkflowTemplate.objects.filter(tenant=acme).first()
    assert template is not None
    step = raw_definition_for(template.pk)["steps"][0]["id"]
    first = template_link_captions(template.pk, step, SUBMITTERS[0])
    first["approve"] = "changed"

    assert template_link_captions(template.pk, step, SUBMITTERS[0])["approve"] != "changed"


def test_the_requester_named_is_the_submitter_of_the_mail(acme: Any) -> None:
    # a send-back to the submitter names them: each requester has words of their own
    template = WorkflowTemplate.objects.get(tenant=acme, key="expense-approval")

    alice = template_link_captions(template.pk, "manager", SUBMITTERS[0])
    dev = template_link_captions(template.pk, "manager", SUBMITTERS[1])

    assert alice["reject"] == "Send back to Alice"
    assert dev["reject"] == "Send back to dev"
