"""Amounts in conditions: compared in the organisation's base currency.

A money field is an integer of minor units whose schema property carries
``"x-money": {"currency": FIELD}`` (FIELD holds its currency code). A start records the
conversion it used in its WorkflowStarted event::

    {"base": "INR",
     "rates": {"USD": {"rate": "83.20", "on": "2026-12-06", "factor": "83.20"}}}

``rate`` is base units per unit of the currency, as people read it; ``factor`` is base
minor units per minor unit of the currency (the rate scaled by the two currencies'
decimal places); ``on`` is the date of the rate. Conditions then see each money field
converted: ``data.amountPaise`` in a condition is the amount in the base currency's
minor units, rounded half to even, while the workflow's data keeps the amount as it was
submitted. The conversion comes from the history alone, so a replay gives the same
route whatever today's rates are. A history with no recorded conversion (started
before rates existed) compares the amounts as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

NO_RATE = (
    "No exchange rate from {currency} to {base} was recorded for this request, so its "
    "amount cannot be compared with the rules (which are in {base})."
)


class NoRate(Exception):
    """A money field in a currency the recorded conversion has no rate for."""


def money_fields(schema: Mapping[str, Any] | None) -> dict[str, str]:
    """Integer fields annotated ``"x-money": {"currency": FIELD}`` -> FIELD ("" when the
    annotation names none)."""
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    out: dict[str, str] = {}
    for name, spec in (props or {}).items():
        money = spec.get("x-money") if isinstance(spec, Mapping) else None
        if isinstance(money, Mapping):
            currency = money.get("currency")
            out[str(name)] = currency if isinstance(currency, str) else ""
        elif money is True:
            out[str(name)] = ""
    return out


def currencies_in(data: Mapping[str, Any], schema: Mapping[str, Any] | None) -> set[str]:
    """The currency codes ``data``'s money fields are in (upper case; none when a money
    field names no currency)."""
    found: set[str] = set()
    for name, currency_field in money_fields(schema).items():
        code = data.get(currency_field) if currency_field else None
        if name in data and isinstance(code, str) and code.strip():
            found.add(code.strip().upper())
    return found


def convert(minor: int, factor: str) -> int:
    """``minor`` units times ``factor``, rounded half to even to whole minor units."""
    exact = Decimal(minor) * Decimal(factor)
    return int(exact.to_integral_value(rounding=ROUND_HALF_EVEN))


def condition_data(
    data: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    conversion: Mapping[str, Any] | None,
) -> Mapping[str, Any]:
    """The data a condition sees: each money field in the base currency's minor units.
    Raises NoRate for a currency the conversion does not cover."""
    if not conversion:
        return data
    base = str(conversion.get("base", "")).upper()
    rates = conversion.get("rates") or {}
    out: dict[str, Any] | None = None
    for name, currency_field in money_fields(schema).items():
        value = data.get(name)
        code = data.get(currency_field) if currency_field else None
        if not isinstance(value, int) or isinstance(value, bool) or not isinstance(code, str):
            continue
        code = code.strip().upper()
        if not code or code == base:
            continue
        rate = rates.get(code)
        if not isinstance(rate, Mapping):
            raise NoRate(NO_RATE.format(currency=code, base=base))
        out = dict(data) if out is None else out
        out[name] = convert(value, str(rate["factor"]))
    return data if out is None else out


def conversion_problem(conversion: Mapping[str, Any] | None) -> str | None:
    """What is wrong with a conversion as a command carries it, or None."""
    if conversion is None:
        return None
    if not isinstance(conversion, Mapping) or not isinstance(conversion.get("base"), str):
        return "a conversion names its base currency"
    rates = conversion.get("rates", {})
    if not isinstance(rates, Mapping):
        return "a conversion's rates are keyed by currency"
    for code, rate in rates.items():
        try:
            ok = isinstance(rate, Mapping) and Decimal(str(rate["factor"])) > 0
        except (KeyError, InvalidOperation):
            ok = False
        if not ok:
            return f"the rate for {code} has no positive factor"
    return None
