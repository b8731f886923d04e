"""Amounts as people read them: integer minor units shown in currency units; and text
folded to one line for a mail header."""

from __future__ import annotations

import re
from typing import Any

# What people write before the figure; other currencies show their ISO code.
SYMBOLS = {"INR": "₹", "USD": "$", "EUR": "€", "GBP": "£"}
# How a sentence names a currency ("amounts in rupees"); others by their ISO code.
CURRENCY_NAMES = {"INR": "rupees", "USD": "US dollars", "EUR": "euros", "GBP": "pounds sterling"}
INDIAN_GROUPING = frozenset({"INR"})  # lakhs and crores: 1,00,000
# Currencies whose minor unit is not a hundredth (ISO 4217's minor units).
EXPONENTS = {
    **dict.fromkeys(
        ("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "VND"),
        0,
    ),
    **dict.fromkeys(("VUV", "XAF", "XOF", "XPF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
}
# The currencies of ISO 4217 (its current list, without the funds, the precious metals
# and the codes kept for testing): what a base currency or a rate's currency may be.
ISO_4217 = frozenset(
    """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL
    BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP
    ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR
    IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL
    LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR
    NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD
    SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX
    USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG""".split()  # noqa: SIM905
)


def _group(digits: str, indian: bool) -> str:
    if len(digits) <= 3:
        return digits
    head, tail = digits[:-3], digits[-3:]
    size = 2 if indian else 3  # lakh and crore: 1,00,000 and 1,00,00,000
    parts: list[str] = []
    while head:
        parts.insert(0, head[-size:])
        head = head[:-size]
    return ",".join([*parts, tail])


def money_format(*, minor: int, currency: str, whole_units: bool = False) -> str:
    """``money_format(minor=4500000, currency="INR")`` -> ``"₹45,000.00"``; Indian
    grouping for rupees (``₹1,00,000.00``), thousands elsewhere. ``whole_units`` rounds
    to whole units (``₹83,117``), for an amount that is itself an estimate."""
    currency = (currency or "").upper()
    exponent = EXPONENTS.get(currency, 2)
    sign = "-" if minor < 0 else ""
    whole, fraction = divmod(abs(int(minor)), 10**exponent)
    if whole_units:
        whole += 1 if fraction * 2 >= 10**exponent and exponent else 0
    figure = _group(str(whole), indian=currency in INDIAN_GROUPING)
    if exponent and not whole_units:
        figure += "." + str(fraction).rjust(exponent, "0")
    symbol = SYMBOLS.get(currency, currency)
    if not symbol:
        return f"{sign}{figure}"
    spacer = " " if symbol.isalpha() else ""
    return f"{sign}{symbol}{spacer}{figure}"


def amount_of(data: dict[str, Any]) -> str:
    """The amount of a workflow's data, formatted; empty when it has none."""
    minor = data.get("amountPaise")
    if not isinstance(minor, int) or isinstance(minor, bool):
        return ""
    currency = data.get("currency")
    return money_format(minor=minor, currency=currency if isinstance(currency, str) else "INR")


# Line breaks and other control characters: a mail header is one line, and Django
# refuses to send one that holds a CR or LF (header injection), for good.
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")


def one_line(text: str) -> str:
    """``text`` for a mail header: each run of line breaks and control characters
    becomes one space, so a workflow template title or a person's name typed with a
    line break still lets the mail go out."""
    return _BREAKS.sub(" ", text).strip()
