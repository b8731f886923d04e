"""The new-request and resubmission form, built from the workflow template's JSON
Schema: ``title`` and ``description`` as label and help text, ``enum`` as a select,
``format: date`` as a date input, and ``x-money`` integer fields entered in currency
units and kept in minor units, converted exactly; a field marked ``"x-list":
"departments"`` a choice of the departments the organisation keeps (free text when it
keeps none)."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from decimal import Context, Decimal, Inexact, InvalidOperation, Overflow
from typing import Any

from django import forms

from ..models import time_bounds
from ..notifications.format import EXPONENTS
from ..words.data import department_fields
from .present import code_words, currency_of, field_label, field_order, money_fields

_AMOUNT = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
_EXACT = Context(prec=80, traps=[InvalidOperation, Inexact, Overflow])
MONEY_INVALID = "Enter an amount such as 45000.00."
MONEY_TOO_PRECISE = "Enter at most {places} digits after the decimal point."
MONEY_TOO_SMALL = "Enter at least {shown}."
MONEY_TOO_LARGE = "Enter at most {shown}."
NUMBER_TOO_LARGE = "That number is too large to keep; enter a smaller one."
NOT_A_DEPARTMENT = "Choose one of the organisation's departments from the list."
CHOOSE_DEPARTMENT = "Choose a department"


class DateInput(forms.DateInput):
    input_type = "date"


def _day_in_range(value: dt.date) -> None:
    if not time_bounds.day_in_range(value):
        raise forms.ValidationError(time_bounds.DAY_OUT_OF_RANGE, code="out_of_range")


class BoundedDateField(forms.DateField):
    """A date from 1 January 1970 to 31 December 2200 (approvals.models.time_bounds)."""

    default_validators = [_day_in_range]
    widget = DateInput


class MoneyField(forms.CharField):
    """An amount typed in currency units ("45000.00", "45,000"), cleaned to integer minor
    units with Decimal: never a float."""

    def __init__(
        self, *, exponent: int = 2, min_minor: int | None, max_minor: int | None, **kw: Any
    ) -> None:
        self.exponent = exponent
        self.min_minor, self.max_minor = min_minor, max_minor
        super().__init__(**kw)
        self.widget.attrs.update({"inputmode": "decimal", "autocomplete": "off"})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{Decimal(value).scaleb(-self.exponent):.{self.exponent}f}"
        return value

    def to_python(self, value: Any) -> int | None:  # type: ignore[override]
        text = (super().to_python(value) or "").replace(",", "").replace(" ", "")
        if not text:
            return None
        if not _AMOUNT.fullmatch(text) or len(text) > 40:
            raise forms.ValidationError(MONEY_INVALID, code="invalid")
        try:
            minor = Decimal(text).scaleb(self.exponent, context=_EXACT)
        except (InvalidOperation, ArithmeticError):
            raise forms.ValidationError(MONEY_INVALID, code="invalid") from None
        if minor != minor.to_integral_value():
            raise forms.ValidationError(
                MONEY_TOO_PRECISE.format(places=self.exponent), code="precision"
            )
        result = int(minor)
        if self.min_minor is not None and result < self.min_minor:
            shown = f"{Decimal(self.min_minor).scaleb(-self.exponent):.{self.exponent}f}"
            raise forms.ValidationError(MONEY_TOO_SMALL.format(shown=shown), code="min")
        if self.max_minor is not None and result > self.max_minor:
            shown = f"{Decimal(self.max_minor).scaleb(-self.exponent):.{self.exponent}f}"
            raise forms.ValidationError(MONEY_TOO_LARGE.format(shown=shown), code="max")
        return result


class NumberField(forms.DecimalField):
    """A number the workflow data can hold: it travels as a JSON number, a float, so
    ``1e400`` (infinite there) is refused."""

    def validate(self, value: Any) -> None:
        super().validate(value)
        if isinstance(value, Decimal) and not math.isfinite(float(value)):
            raise forms.ValidationError(NUMBER_TOO_LARGE, code="max_value")


def _field(
    name: str,
    spec: Mapping[str, Any],
    *,
    required: bool,
    schema: Mapping[str, Any],
    currency: str,
    departments: list[tuple[str, str]],
) -> forms.Field:
    label = field_label(schema, name)
    help_text = spec.get("description") or ""
    common: dict[str, Any] = {"label": label, "required": required, "help_text": help_text}
    if departments and name in department_fields(schema):
        return forms.ChoiceField(
            choices=[("", CHOOSE_DEPARTMENT), *departments],
            error_messages={"invalid_choice": NOT_A_DEPARTMENT},
            **common,
        )
    kind = spec.get("type")
    money = money_fields(schema)
    if name in money and kind == "integer":
        return MoneyField(
            exponent=EXPONENTS.get(currency.upper(), 2),
            min_minor=spec.get("minimum"),
            max_minor=spec.get("maximum"),
            **common,
        )
    if "enum" in spec:
        choices = [(v, code_words(str(v))) for v in spec["enum"]]
        if not required:
            choices = [("", "—"), *choices]
        return forms.ChoiceField(choices=choices, **common)
    if kind == "integer":
        return forms.IntegerField(
            min_value=spec.get("minimum"), max_value=spec.get("maximum"), **common
        )
    if kind == "number":
        return NumberField(**common)
    if kind == "boolean":
        return forms.BooleanField(**{**common, "required": False})
    if spec.get("format") == "date":
        return BoundedDateField(**common)
    max_length = spec.get("maxLength")
    if isinstance(max_length, int) and max_length > 200:
        return forms.CharField(
            max_length=max_length, widget=forms.Textarea(attrs={"rows": 3}), **common
        )
    return forms.CharField(max_length=max_length, min_length=spec.get("minLength"), **common)


class SchemaForm(forms.Form):
    """Fields in the schema's order; the data the engine gets is ``data()``.
    ``departments``: the organisation's (key, name) pairs its department fields offer."""

    def __init__(
        self,
        schema: Mapping[str, Any] | None,
        *args: Any,
        with_reference: bool = True,
        departments: list[tuple[str, str]] | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.schema = schema or {}
        required = set(self.schema.get("required") or [])
        money = money_fields(self.schema)
        source: Mapping[str, Any] = self.data or self.initial or {}
        properties = self.schema.get("properties") or {}
        for name in field_order(self.schema):
            spec = properties[name]
            if not isinstance(spec, Mapping):
                continue
            currency = currency_of(source, money.get(name, ""))
            self.fields[name] = _field(
                name,
                spec,
                required=name in required,
                schema=self.schema,
                currency=currency,
                departments=departments or [],
            )
        if with_reference:
            self.fields["subject_id"] = forms.CharField(
                label="Reference",
                max_length=128,
                help_text="Your own reference for this request, such as a receipt number.",
            )

    def data_for_engine(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in self.cleaned_data.items():
            if name == "subject_id" or value in (None, ""):
                continue
            if isinstance(value, dt.date):
                value = value.isoformat()
            elif isinstance(value, Decimal):
                value = float(value)
            out[name] = value
        return out
