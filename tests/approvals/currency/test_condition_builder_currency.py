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


# -- a currency without a minor unit: yen --------------------------------------------------


def test_a_yen_base_shows_whole_yen_with_no_fraction(acme: Tenant) -> None:
    from approvals.web import condition_builder as cb

    schema = {"properties": {"amount": {"type": "integer", "x-money": {"currency": "c"}}}}

    condition = cb.read("data.amount >= 1500000", schema, "JPY")

    assert condition is not None
    assert condition.rows[0].value == "1,500,000"  # not 15,000.00, not 1,500,000.00
    assert cb.money_text(1_500_000, "JPY") == "1,500,000"
    assert cb.money_text(5_000_050, "INR") == "50,000.50"


@pytest.mark.parametrize(
    ("typed", "written"),
    [("1,500,000", "1500000"), ("¥1500000", None), ("1500000", "1500000"), ("250", "250")],
)
def test_thresholds_entered_in_whole_yen_are_written_in_yen(
    acme: Tenant, typed: str, written: str | None
) -> None:
    from approvals.web import condition_builder as cb

    schema = {"properties": {"amount": {"type": "integer", "x-money": {"currency": "c"}}}}
    rows = (cb.Row("amount", ">=", typed),)

    if written is None:
        with pytest.raises(cb.BuilderError):
            cb.write(cb.Condition("all", rows), schema, "JPY")
    else:
        assert cb.write(cb.Condition("all", rows), schema, "JPY") == f"data.amount >= {written}"
        assert cb.write(cb.Condition("all", rows), schema, "INR") == f"data.amount >= {written}00"


def test_a_yen_amount_with_a_fraction_is_refused_in_words(acme: Tenant) -> None:
    from approvals.web import condition_builder as cb

    schema = {"properties": {"amount": {"type": "integer", "x-money": {"currency": "c"}}}}
    rows = (cb.Row("amount", ">=", "1500.50"),)

    with pytest.raises(cb.BuilderError) as refused:
        cb.write(cb.Condition("all", rows), schema, "JPY")

    assert str(refused.value) == cb.MONEY_WHOLE_INVALID.format(
        label="Amount", value="1500.50", currency="JPY"
    )


def test_the_editor_of_a_yen_organisation_shows_and_saves_whole_yen(acme: Tenant) -> None:
    Tenant.objects.filter(pk=acme.pk).update(base_currency="JPY")

    page = _editor(acme)

    assert "Amounts are compared in JPY (JPY)" in page or "(JPY), the organisation" in page
    assert 'inputmode="numeric" autocomplete="off" id="when-' in page
    assert 'inputmode="decimal" autocomplete="off" id="when-' not in page
    # the demo's thresholds, 100000 and 10000000 minor units: as many whole yen, no ".00"
    assert 'id="when-manager-0-value" name="when-manager-0-value" value="100,000"' in page
    assert 'id="when-vp-0-value" name="when-vp-0-value" value="10,000,000"' in page
    assert "in minor units of JPY: JPY 1 is 1" in page


@pytest.mark.parametrize(
    ("code", "accepted"),
    [("JPY", True), ("inr", True), ("ABC", False), ("XAU", False), ("US", False), ("", False)],
)
def test_a_base_currency_must_be_an_iso_4217_code(acme: Tenant, code: str, accepted: bool) -> None:
    from approvals.services.rates import BASE_CURRENCY_INVALID, RatesRefused, base_currency_set

    if accepted:
        base_currency_set(tenant_id=acme.pk, currency=code)
        assert Tenant.objects.get(pk=acme.pk).base_currency == code.upper()
        return
    with pytest.raises(RatesRefused) as refused:
        base_currency_set(tenant_id=acme.pk, currency=code)
    assert str(refused.value) == BASE_CURRENCY_INVALID.format(value=code)
    assert Tenant.objects.get(pk=acme.pk).base_currency == "INR"  # unchanged


def test_the_base_currency_page_refuses_a_code_outside_iso_4217_in_words(acme: Tenant) -> None:
    fiona = Client()
    fiona.force_login(User.objects.get(username="fiona"))

    response = fiona.post("/admin/approvals/exchangerate/base/", {"currency": "ABC"})

    assert response.status_code == 400
    assert "&#x27;ABC&#x27; is not a currency code of ISO 4217" in response.content.decode()
    assert Tenant.objects.get(pk=acme.pk).base_currency == "INR"
