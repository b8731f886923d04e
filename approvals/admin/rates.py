"""Exchange rates in the admin, kept by finance admins: the organisation's base currency
(the one rules compare amounts in), rates one at a time, and a CSV import that refuses
a file with any bad line, in words, and changes nothing (services.rates)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from .. import access
from ..models import ExchangeRate, Tenant
from ..notifications.format import ISO_4217
from ..services.rates import (
    CSV_MAX_BYTES,
    NO_BASE_CURRENCY,
    RatesRefused,
    base_currency_set,
    rates_import,
)

NOT_A_MEMBER = "Rates belong to an organisation: sign in as one of its finance admins."
BASE_SET = "Rules now compare amounts in {code}."
SAME_AS_BASE = "{code} is the base currency itself; it needs no rate."
NOT_A_CURRENCY = "{value} is not a currency code of ISO 4217, such as USD or JPY."
ALREADY_A_RATE = "{code} already has a rate on {day}: change that one instead."


class BaseCurrencyForm(forms.Form):
    currency = forms.CharField(
        label="Base currency",
        max_length=3,
        help_text="The three-letter code rules compare amounts in, such as INR.",
    )


class RatesFileForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text=(
            "One rate a line after the header currency,date,rate: USD,2026-12-06,83.20 "
            "(units of the base currency per unit of the currency)."
        ),
    )


class ExchangeRateForm(forms.ModelForm):
    """A rate of the signed-in person's organisation, to its base currency."""

    organisation: Tenant | None = None  # set by the admin's get_form

    class Meta:
        model = ExchangeRate
        fields = ["currency", "on", "rate"]

    def clean_currency(self) -> str:
        code = str(self.cleaned_data.get("currency") or "").strip().upper()
        if code not in ISO_4217:
            raise forms.ValidationError(NOT_A_CURRENCY.format(value=code))
        return code

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        tenant = self.organisation
        if tenant is None or not tenant.base_currency:
            raise forms.ValidationError(NO_BASE_CURRENCY)
        code, on = data.get("currency"), data.get("on")
        if code == tenant.base_currency:
            self.add_error("currency", SAME_AS_BASE.format(code=code))
        taken = ExchangeRate.objects.filter(
            tenant=tenant, base=tenant.base_currency, currency=code, on=on or dt.date.min
        ).exclude(pk=self.instance.pk)
        if code and on and taken.exists():
            self.add_error("on", ALREADY_A_RATE.format(code=code, day=f"{on:%-d %b %Y}"))
        self.instance.tenant = tenant
        self.instance.base = tenant.base_currency
        return data


class RatesAdmin:
    """Mixed into the exchange rates' admin: the base currency and the CSV import."""

    admin_site: Any
    model: Any

    def get_urls(self) -> list[URLPattern]:
        pages = [
            path(
                "import/",
                self.admin_site.admin_view(self.import_view),
                name="approvals_exchangerate_import",
            ),
            path(
                "base/",
                self.admin_site.admin_view(self.base_view),
                name="approvals_exchangerate_base",
            ),
        ]
        return [*pages, *super().get_urls()]  # type: ignore[misc]

    def _tenant(self, request: HttpRequest, action: str) -> Tenant:
        user: Any = request.user
        if not access.admin_may(user, action, "exchangerate"):
            raise PermissionDenied
        if user.tenant_id is None:
            raise PermissionDenied(NOT_A_MEMBER)
        return Tenant.objects.get(pk=user.tenant_id)

    def import_view(self, request: HttpRequest) -> HttpResponse:
        tenant = self._tenant(request, "add")
        form = RatesFileForm(request.POST or None, request.FILES or None)
        problem = ""
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                result = rates_import(tenant_id=tenant.pk, content=upload.read(CSV_MAX_BYTES + 1))
            except RatesRefused as exc:
                problem = str(exc)
            else:
                messages.success(request, result.sentence())
                return HttpResponseRedirect(reverse("admin:approvals_exchangerate_changelist"))
        return self._page(request, "Import exchange rates", form, problem, tenant)

    def base_view(self, request: HttpRequest) -> HttpResponse:
        tenant = self._tenant(request, "change")
        form = BaseCurrencyForm(request.POST or None, initial={"currency": tenant.base_currency})
        problem = ""
        if request.method == "POST" and form.is_valid():
            try:
                base_currency_set(tenant_id=tenant.pk, currency=form.cleaned_data["currency"])
            except RatesRefused as exc:
                problem = str(exc)
            else:
                code = form.cleaned_data["currency"].strip().upper()
                messages.success(request, BASE_SET.format(code=code))
                return HttpResponseRedirect(reverse("admin:approvals_exchangerate_changelist"))
        return self._page(request, "Base currency", form, problem, tenant)

    def _page(
        self,
        request: HttpRequest,
        title: str,
        form: forms.Form,
        problem: str,
        tenant: Tenant,
    ) -> HttpResponse:
        """The form again: 400 after a POST that changed nothing."""
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "form": form,
            "problem": problem,
            "organisation": tenant,
            "opts": self.model._meta,
        }
        return TemplateResponse(
            request,
            "admin/approvals/exchangerate/form.html",
            context,
            status=400 if request.method == "POST" else 200,
        )
