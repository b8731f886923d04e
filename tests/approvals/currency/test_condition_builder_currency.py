"""The template editor's condition builder states the currency its amounts are in: the
organisation's base currency, with that currency's sign, never another's."""

from __future__ import annotations

import pytest
from django.test import Client

from approvals.models import Tenant, User, WorkflowTemplate

from ..helpers import EXPENSE

pytestmark = pytest.mark.django_db


def _editor(acme: Tenant) -> str:
    fiona = Client()
    fiona.force_login(User.objects.get(username="fiona"))
    template = WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).first()
    assert template is not None
    return fiona.get(f"/admin/approvals/workflowtemplate/{template.pk}/change/").content.decode()


def test_the_condition_builder_states_the_base_currency(acme: Tenant) -> None:
    page = _editor(acme)

    assert "Amounts are compared in rupees (INR), the organisation&#x27;s base currency" in page
    assert 'class="wt-currency" aria-hidden="true">₹</span>' in page
    assert "condition 1: value in rupees" in page


def test_a_dollar_base_shows_dollars_and_no_rupee_sign(acme: Tenant) -> None:
    Tenant.objects.filter(pk=acme.pk).update(base_currency="USD")

    page = _editor(acme)

    assert "Amounts are compared in US dollars (USD)" in page
    assert 'class="wt-currency" aria-hidden="true">$</span>' in page
    assert 'aria-hidden="true">₹</span>' not in page
    assert "in minor units of USD: $1.00 is 100" in page


def test_with_no_base_currency_the_builder_says_amounts_compare_as_entered(acme: Tenant) -> None:
    Tenant.objects.filter(pk=acme.pk).update(base_currency="")

    page = _editor(acme)

    assert "The organisation has no base currency yet" in page
