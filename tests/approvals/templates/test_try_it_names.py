"""The template editor's "try it" panel names the people one may submit as by their
names, never their usernames; two of one name are told apart by their addresses."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from approvals.models import Tenant, User, WorkflowTemplate

from ..helpers import EXPENSE

pytestmark = pytest.mark.django_db


def _options(page: str) -> dict[str, str]:
    select = re.search(r'<select name="try_submitter".*?</select>', page, re.S)
    assert select is not None, "no Submitted by list on the page"
    return dict(re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', select.group(0)))


def test_the_submitted_by_list_shows_names_not_usernames(acme: Tenant) -> None:
    User.objects.create_user(
        "alice2", password="pw", tenant=acme, first_name="Alice", email="alice2@acme.test"
    )
    fiona = Client()
    fiona.force_login(User.objects.get(username="fiona"))
    template = WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).first()
    assert template is not None

    page = fiona.get(f"/admin/approvals/workflowtemplate/{template.pk}/change/").content.decode()

    options = _options(page)
    names = {u.username: u.get_full_name() for u in User.objects.filter(tenant=acme)}
    assert options["bob"] == names["bob"] and options["bob"] != "bob"
    for person in User.objects.filter(tenant=acme, is_active=True):
        if person.get_full_name() or person.email:  # else the username is all there is
            assert options[person.username] != person.username, person.username
    if names["alice"] == "Alice":  # two of one name: told apart by their addresses
        assert options["alice2"] == "Alice (alice2@acme.test)"
    assert list(options.values()) == sorted(options.values(), key=str.casefold)
