"""Finance admins keep the exchange rates in the admin: a CSV import adds or replaces
a file's rates all at once, and refuses a file with any bad line in words, naming each
line, changing nothing. Only finance admins may change rates; auditors read them."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from approvals.models import ExchangeRate, Tenant, User
from approvals.services.rates import (
    FILE_NOT_TEXT,
    NO_BASE_CURRENCY,
    RatesRefused,
    rates_import,
)

pytestmark = pytest.mark.django_db

IMPORT = "/admin/approvals/exchangerate/import/"


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _rows() -> list[tuple[str, str, str]]:
    return sorted(
        (r.currency, r.on.isoformat(), f"{r.rate.normalize():f}")
        for r in ExchangeRate.objects.all()
    )


def test_a_good_file_adds_and_replaces_rates(acme: Any) -> None:
    content = b"currency,date,rate\nUSD,2030-01-02,83.5\nJPY,2030-01-02,0.56\n"

    first = rates_import(tenant_id=acme.pk, content=content)
    again = rates_import(tenant_id=acme.pk, content=content.replace(b"83.5", b"84"))

    assert (first.added, first.replaced) == (2, 0)
    assert (again.added, again.replaced) == (0, 2)
    assert ("USD", "2030-01-02", "84") in _rows()
    assert ("JPY", "2030-01-02", "0.56") in _rows()


BAD_FILES = [
    pytest.param(
        b"currency,date,rate\nUSD,2030-01-02,83.5\nusd dollars,2030-01-02,1\n",
        "Line 3: 'usd dollars' is not a currency code of ISO 4217 such as USD",
        id="bad-currency",
    ),
    pytest.param(
        b"currency,date,rate\nUSD,02/01/2030,83.5\n",
        "Line 2: '02/01/2030' is not a date written as 2026-12-06",
        id="bad-date",
    ),
    pytest.param(
        b"currency,date,rate\nUSD,2030-01-02,-1\nEUR,2030-01-02,abc\nGBP,2030-01-02,NaN\n",
        "Line 2: '-1' is not a rate above 0",
        id="bad-rates",
    ),
    pytest.param(
        b"currency,date,rate\nUSD,2030-01-02,83.123456789\n",
        "'83.123456789' is not a rate above 0",
        id="rate-past-8-places",
    ),
    pytest.param(
        b"currency,date,rate\nINR,2030-01-02,1\n",
        "Line 2: INR is the base currency itself",
        id="base-currency",
    ),
    pytest.param(
        b"currency,date,rate\nUSD,2030-01-02\n", "Line 2: expected 3 values", id="short-line"
    ),
    pytest.param(
        b"currency,date,rate\nUSD,2030-01-02,83\nUSD,2030-01-02,84\n",
        "Line 3: USD on 2030-01-02 is already on line 2",
        id="repeated-day",
    ),
    pytest.param(b"code;day;value\nUSD;2030-01-02;83\n", "must name the columns", id="header"),
    pytest.param(b"currency,date,rate\n", "The file has no rates", id="empty"),
    pytest.param(b"\xff\xfe\x00U", FILE_NOT_TEXT, id="not-utf8"),
    pytest.param(
        b'currency,date,rate\nUSD,2030-01-02,"' + b"9" * 200_000 + b'"\n',
        "The file is not a CSV file of rates",
        id="field-past-the-csv-limit",
    ),
]


@pytest.mark.parametrize(("content", "expected"), BAD_FILES)
def test_the_csv_import_refuses_bad_rows_in_words_and_changes_nothing(
    acme: Any, content: bytes, expected: str
) -> None:
    before = _rows()

    with pytest.raises(RatesRefused) as refused:
        rates_import(tenant_id=acme.pk, content=content)

    assert expected in str(refused.value)
    assert _rows() == before


def test_a_file_with_one_bad_line_among_good_ones_imports_none_of_them(acme: Any) -> None:
    before = _rows()
    content = b"currency,date,rate\nUSD,2030-01-02,83\nEUR,2030-01-02,90\nGBP,someday,105\n"

    with pytest.raises(RatesRefused) as refused:
        rates_import(tenant_id=acme.pk, content=content)

    assert str(refused.value) == (
        "Nothing was imported. Correct these lines and import the file again: "
        "Line 4: 'someday' is not a date written as 2026-12-06."
    )
    assert _rows() == before


def test_rates_need_a_base_currency_first(acme: Any) -> None:
    Tenant.objects.filter(pk=acme.pk).update(base_currency="")

    with pytest.raises(RatesRefused, match=NO_BASE_CURRENCY):
        rates_import(tenant_id=acme.pk, content=b"currency,date,rate\nUSD,2030-01-02,83\n")


def test_a_finance_admin_imports_a_file_in_the_admin(acme: Any) -> None:
    upload = SimpleUploadedFile("rates.csv", b"currency,date,rate\nUSD,2030-01-02,83.5\n")

    response = _client("fiona").post(IMPORT, {"file": upload})

    assert response.status_code == 302
    assert ("USD", "2030-01-02", "83.5") in _rows()


def test_the_admin_shows_a_refused_file_in_words_and_changes_nothing(acme: Any) -> None:
    before = _rows()
    upload = SimpleUploadedFile("rates.csv", b"currency,date,rate\nUSD,2030-01-02,lots\n")

    response = _client("fiona").post(IMPORT, {"file": upload})

    assert response.status_code == 400
    assert "Line 2: &#x27;lots&#x27; is not a rate above 0" in response.content.decode()
    assert _rows() == before


def test_only_finance_admins_change_rates_and_auditors_read_them(acme: Any) -> None:
    upload = SimpleUploadedFile("rates.csv", b"currency,date,rate\nUSD,2030-01-02,83.5\n")

    refused = _client("audrey").post(IMPORT, {"file": upload})
    listed = _client("audrey").get("/admin/approvals/exchangerate/")

    assert refused.status_code == 403
    assert listed.status_code == 200
    assert "Rules compare amounts in INR" in listed.content.decode()
    assert ("USD", "2030-01-02", "83.5") not in _rows()


def test_a_finance_admin_adds_one_rate_and_a_second_for_the_same_day_is_refused(
    acme: Any,
) -> None:
    client = _client("fiona")
    form = {"currency": "chf", "on": "2030-01-02", "rate": "95.5"}

    added = client.post("/admin/approvals/exchangerate/add/", form)
    again = client.post("/admin/approvals/exchangerate/add/", form)

    assert added.status_code == 302
    assert again.status_code == 200
    assert "CHF already has a rate on 2 Jan 2030" in again.content.decode()
    assert [r for r in _rows() if r[0] == "CHF"] == [("CHF", "2030-01-02", "95.5")]
    assert ExchangeRate.objects.get(currency="CHF").base == "INR"


def test_a_finance_admin_sets_the_base_currency(acme: Any) -> None:
    client = _client("fiona")

    bad = client.post("/admin/approvals/exchangerate/base/", {"currency": "rupees"})
    good = client.post("/admin/approvals/exchangerate/base/", {"currency": "usd"})

    assert bad.status_code == 400
    assert good.status_code == 302
    assert Tenant.objects.get(pk=acme.pk).base_currency == "USD"
