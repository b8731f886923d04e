"""The exchange rates a start records (templates_engine.money): the organisation's
base currency and, for each other currency in the request, its newest rate dated on or
before the day of the start in the organisation's zone, and at most ``RATE_MAX_AGE_DAYS``
old. One indexed query (the rates' unique key), which a start sends in its first round
trip with the workflow template's; ``conversion_for`` then turns its rows into the
conversion the WorkflowStarted event keeps, or refuses a currency that has no rate."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from templates_engine import CommandRejected, errors
from templates_engine.money import currencies_in

from ..models import ExchangeRate, Tenant
from ..notifications.format import EXPONENTS
from ..runtime import store

# A rate a week old still holds over a weekend or a holiday; an older one is refused.
RATE_MAX_AGE_DAYS = 7
NO_RATE_FOR_DAY = (
    "There is no exchange rate from {currency} to {base} for {day}, so this request "
    "cannot be compared with the organisation's rules (which are in {base}). Ask a "
    "finance admin to add one under Exchange rates, or enter the amount in {base}."
)
_CODE = re.compile(r"^[A-Za-z]{3}$")

# The tenant's base currency, the start's day in the tenant's zone, and per currency
# asked for the newest rate of the last RATE_MAX_AGE_DAYS days on or before it.
RATES_SQL = (
    "WITH t AS (SELECT id, base_currency,"
    " (%s::timestamptz AT TIME ZONE COALESCE(NULLIF(time_zone, ''), 'UTC'))::date AS day"
    f" FROM {store.table(Tenant)} WHERE id = %s)"
    " SELECT t.base_currency, t.day, r.currency, r.rate::text, r.on FROM t"
    " LEFT JOIN LATERAL (SELECT DISTINCT ON (x.currency) x.currency, x.rate, x.on"
    f" FROM {store.table(ExchangeRate)} x"
    " WHERE x.tenant_id = t.id AND x.base = t.base_currency AND x.currency = ANY(%s)"
    f" AND x.on <= t.day AND x.on > t.day - {RATE_MAX_AGE_DAYS}"
    " ORDER BY x.currency, x.on DESC) r ON true"
)


# The rows of RATES_SQL as one JSON value, for a statement that reads other things too
# (the start's first: no statement of its own); ``rates_rows`` reads them back.
RATES_JSON_SQL = (
    "(SELECT json_agg(json_build_array(q.base_currency, q.day, q.currency, q.rate, q.on))"
    f" FROM ({RATES_SQL}) q)"
)


def rates_rows(value: Any) -> list[tuple[Any, ...]]:
    """RATES_SQL's rows from RATES_JSON_SQL's value (dates back as dates)."""
    return [
        (base, _date(day), currency, rate, _date(on))
        for base, day, currency, rate, on in value or ()
    ]


def _date(value: Any) -> dt.date | None:
    return None if value is None else dt.date.fromisoformat(str(value))


def currency_candidates(data: Mapping[str, Any]) -> list[str]:
    """Every top-level value of ``data`` that could be a currency code, in capitals: the
    look-up goes out before the workflow template says which field holds a currency."""
    return sorted({v.upper() for v in data.values() if isinstance(v, str) and _CODE.match(v)})


def rates_query(
    *, tenant_id: int, data: Mapping[str, Any], now: dt.datetime
) -> tuple[str, list[Any]] | None:
    """The look-up for a start of ``data``, or None when no value could be a currency."""
    candidates = currency_candidates(data)
    if not candidates:
        return None
    return RATES_SQL, [now, tenant_id, candidates]


def conversion_for(
    rows: Sequence[tuple[Any, ...]],
    *,
    data: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
) -> dict[str, Any] | None:
    """The conversion a start of ``data`` records, from ``rates_query``'s rows; None when
    the organisation keeps no base currency (amounts compared as they are). Raises
    CommandRejected (NO_EXCHANGE_RATE), in words, for a currency with no rate."""
    if not rows or not rows[0][0]:
        return None
    base, day = str(rows[0][0]), rows[0][1]
    found = {str(r[2]): (Decimal(r[3]), r[4]) for r in rows if r[2] is not None}
    rates: dict[str, Any] = {}
    for code in sorted(currencies_in(data, schema) - {base}):
        if code not in found:
            message = NO_RATE_FOR_DAY.format(currency=code, base=base, day=f"{day:%-d %b %Y}")
            raise CommandRejected(errors.NO_EXCHANGE_RATE, message)
        rate, on = found[code]
        rates[code] = rate_entry(rate=rate, on=on, currency=code, base=base)
    return {"base": base, "rates": rates}


def rate_entry(*, rate: Decimal, on: dt.date, currency: str, base: str) -> dict[str, str]:
    """One currency's recorded rate: as people read it, its date, and the factor from
    its minor units to the base currency's (templates_engine.money)."""
    shift = EXPONENTS.get(base, 2) - EXPONENTS.get(currency, 2)
    factor = rate.scaleb(shift)
    return {
        "rate": f"{rate.normalize():f}",
        "on": on.isoformat(),
        "factor": f"{factor.normalize():f}",
    }


def conversion_now(
    *, tenant_id: int, data: Mapping[str, Any], schema: Mapping[str, Any] | None, now: dt.datetime
) -> dict[str, Any] | None:
    """``conversion_for`` with its own query (the route preview, a trial); one query."""
    query = rates_query(tenant_id=tenant_id, data=data, now=now)
    if query is None:
        return None
    (rows,) = store.fetch_many([query])
    return conversion_for(rows, data=data, schema=schema)
