"""Finance admins keep their organisation's base currency and exchange rates: one at a
time in the admin, or many from a CSV file. A file is read whole before anything is
written: one bad row refuses the file, in words, and changes nothing."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ..models import ExchangeRate, Tenant
from ..notifications.format import ISO_4217
from ..runtime.tenant_scope import atomic_for

CSV_HEADER = ("currency", "date", "rate")
CSV_MAX_BYTES = 1_000_000
CSV_MAX_ROWS = 10_000
MAX_PROBLEMS_SHOWN = 20
RATE_MAX = Decimal("1000000000")

NO_BASE_CURRENCY = "Choose the organisation's base currency first: the rates convert to it."
BASE_CURRENCY_INVALID = (
    "{value!r} is not a currency code of ISO 4217: a base currency is a currency's"
    " three-letter code, such as INR, USD or JPY."
)
FILE_TOO_LARGE = f"The file is larger than {CSV_MAX_BYTES // 1000:,} kB; split it."
FILE_NOT_TEXT = "The file is not UTF-8 text: save it from the spreadsheet as CSV UTF-8."
FILE_NOT_CSV = "The file is not a CSV file of rates ({problem})."
FILE_EMPTY = "The file has no rates: after the header currency,date,rate give one a line."
HEADER_WRONG = "The first line must name the columns currency,date,rate (found: {found})."
TOO_MANY_ROWS = f"The file has more than {CSV_MAX_ROWS:,} rates; split it."
ROW_COLUMNS = "Line {line}: expected 3 values (currency, date, rate), found {count}"
ROW_CURRENCY = "Line {line}: {value!r} is not a currency code of ISO 4217 such as USD"
ROW_BASE = "Line {line}: {value} is the base currency itself; it needs no rate"
ROW_DATE = "Line {line}: {value!r} is not a date written as 2026-12-06"
ROW_RATE = "Line {line}: {value!r} is not a rate above 0 (such as 83.20)"
ROW_REPEATED = "Line {line}: {currency} on {day} is already on line {first}"
REFUSED = "Nothing was imported. Correct these lines and import the file again: {problems}"

_CODE = re.compile(r"^[A-Z]{3}$")


class RatesRefused(Exception):
    """A base currency or a file of rates that is refused; nothing changed."""


@dataclass
class ImportResult:
    added: int = 0
    replaced: int = 0
    currencies: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        codes = ", ".join(self.currencies)
        return (
            f"Imported {self.added + self.replaced} rates for {codes}: {self.added} new, "
            f"{self.replaced} replacing the rate of the same day."
        )


def base_currency_set(*, tenant_id: int, currency: str) -> None:
    """Set the currency the organisation's rules compare amounts in."""
    code = currency.strip().upper()
    if not _CODE.match(code) or code not in ISO_4217:
        raise RatesRefused(BASE_CURRENCY_INVALID.format(value=currency.strip()))
    with atomic_for(tenant_id):
        Tenant.objects.filter(pk=tenant_id).update(base_currency=code)


@dataclass(frozen=True)
class _Row:
    currency: str
    on: dt.date
    rate: Decimal


def rates_import(*, tenant_id: int, content: bytes) -> ImportResult:
    """Add or replace the rates of a CSV file (``currency,date,rate`` lines), all or
    none. Raises RatesRefused naming every line it cannot read."""
    base = Tenant.objects.values_list("base_currency", flat=True).get(pk=tenant_id)
    if not base:
        raise RatesRefused(NO_BASE_CURRENCY)
    rows = _read(content, base)
    result = ImportResult(currencies=sorted({r.currency for r in rows}))
    with atomic_for(tenant_id):
        existing = set(
            ExchangeRate.objects.filter(
                tenant_id=tenant_id, base=base, currency__in=result.currencies
            ).values_list("currency", "on")
        )
        ExchangeRate.objects.bulk_create(
            [ExchangeRate(tenant_id=tenant_id, base=base, **r.__dict__) for r in rows],
            update_conflicts=True,
            unique_fields=["tenant", "base", "currency", "on"],
            update_fields=["rate"],
        )
    result.replaced = sum((r.currency, r.on) in existing for r in rows)
    result.added = len(rows) - result.replaced
    return result


def _read(content: bytes, base: str) -> list[_Row]:
    if len(content) > CSV_MAX_BYTES:
        raise RatesRefused(FILE_TOO_LARGE)
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RatesRefused(FILE_NOT_TEXT) from exc
    try:
        read = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise RatesRefused(FILE_NOT_CSV.format(problem=exc)) from exc
    lines = [(n, cells) for n, cells in enumerate(read, start=1) if any(c.strip() for c in cells)]
    if not lines:
        raise RatesRefused(FILE_EMPTY)
    header = tuple(c.strip().lower() for c in lines[0][1])
    if header != CSV_HEADER:
        raise RatesRefused(HEADER_WRONG.format(found=",".join(lines[0][1])[:80] or "nothing"))
    if len(lines) == 1:
        raise RatesRefused(FILE_EMPTY)
    if len(lines) - 1 > CSV_MAX_ROWS:
        raise RatesRefused(TOO_MANY_ROWS)
    rows: list[_Row] = []
    problems: list[str] = []
    seen: dict[tuple[str, dt.date], int] = {}
    for line, cells in lines[1:]:
        row = _row(line, cells, base, problems)
        if row is None:
            continue
        first = seen.setdefault((row.currency, row.on), line)
        if first != line:
            problems.append(
                ROW_REPEATED.format(line=line, currency=row.currency, day=row.on, first=first)
            )
        rows.append(row)
    if problems:
        shown = "; ".join(problems[:MAX_PROBLEMS_SHOWN])
        more = len(problems) - MAX_PROBLEMS_SHOWN
        if more > 0:
            shown += f"; and {more} more"
        raise RatesRefused(REFUSED.format(problems=shown + "."))
    return rows


def _row(line: int, cells: list[str], base: str, problems: list[str]) -> _Row | None:
    if len(cells) != 3:
        problems.append(ROW_COLUMNS.format(line=line, count=len(cells)))
        return None
    code, day_text, rate_text = (c.strip() for c in cells)
    before = len(problems)
    if not _CODE.match(code.upper()) or code.upper() not in ISO_4217:
        problems.append(ROW_CURRENCY.format(line=line, value=code))
    elif code.upper() == base:
        problems.append(ROW_BASE.format(line=line, value=base))
    try:
        day = dt.date.fromisoformat(day_text)
    except ValueError:
        problems.append(ROW_DATE.format(line=line, value=day_text))
    try:
        rate = Decimal(rate_text.replace(",", ""))
        if not rate.is_finite() or not Decimal(0) < rate < RATE_MAX or rate != round(rate, 8):
            raise InvalidOperation
    except InvalidOperation:
        problems.append(ROW_RATE.format(line=line, value=rate_text))
    if len(problems) > before:
        return None
    return _Row(code.upper(), day, rate)
