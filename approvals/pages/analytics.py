"""The analytics page: how the organisation's approval process performs, for finance
admins, organisation admins and auditors (``access.may_analyse``). Per workflow
template and step: visits, how they ended, the time they waited, deadline breaches and
escalations; requests started per week; the slowest steps and the requests that have
waited longest. Filters: kind of request, period, and any enum field of the data
(a department, a category). Each chart is SVG drawn here with its numbers as a table
beside it and as a CSV download. The figures come from the step visits read model
(``selectors.analytics``), never from the event table."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from .. import access, clock
from ..audit.export import csv_lines
from ..models import User, WorkflowTemplate
from ..selectors.analytics import AnalyticsFilter, longest_open, step_figures, weekly_starts
from ..web import analytics_words as words
from ..words.data import code_words

DEFAULT_WEEKS = 12
LONGEST_DAYS = 731
PERIOD_BACKWARDS = (
    "The period ends before it starts: choose a “to” date on or after the “from” date."
)
PERIOD_TOO_LONG = "Choose a period of at most two years."
BAD_DATE = "Give the date as year, month and day, such as 2026-11-30."
UNKNOWN_KIND = "Choose a kind of request from the list."
UNKNOWN_WHERE = "Choose one of the listed values to filter by."
UNKNOWN_DOWNLOAD = "Choose a table to download: weeks, steps or waiting."
DOWNLOADS = ("weeks", "steps", "waiting")


def _kinds(tenant_id: int) -> dict[str, words.Kind]:
    """Each workflow template of the organisation (retired ones too: their requests
    count), named from its newest version."""
    kinds: dict[str, words.Kind] = {}
    for key, title, raw in (
        WorkflowTemplate.objects.filter(tenant_id=tenant_id)
        .order_by("key", "-version")
        .values_list("key", "title", "definition")
    ):
        if key not in kinds:
            kinds[key] = words.kind_of(title or words.present.humanise(key), raw or {})
    return kinds


class AnalyticsForm(forms.Form):
    template = forms.ChoiceField(
        label="Kind of request",
        required=False,
        error_messages={"invalid_choice": UNKNOWN_KIND},
    )
    start = forms.DateField(
        label="From",
        required=False,
        error_messages={"invalid": BAD_DATE},
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    end = forms.DateField(
        label="To",
        required=False,
        error_messages={"invalid": BAD_DATE},
        widget=forms.DateInput(attrs={"type": "date"}),
    )
    where = forms.ChoiceField(
        label="Only where",
        required=False,
        error_messages={"invalid_choice": UNKNOWN_WHERE},
    )
    download = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, kinds: dict[str, words.Kind], today: dt.date, **kw: Any):
        super().__init__(*args, **kw)
        self.kinds, self.today = kinds, today
        template_choices = [("", "Every kind")]
        template_choices += sorted(((k, v.title) for k, v in kinds.items()), key=lambda kv: kv[1])
        self.fields["template"].choices = template_choices  # type: ignore[attr-defined]
        wanted = (self.data.get("template") or "") if self.is_bound else ""
        where: dict[str, str] = {}
        for key, kind in kinds.items():
            if wanted and key != wanted:
                continue
            for name, (label, values) in kind.enums.items():
                for value in values:
                    where[f"{name}={value}"] = f"{label} is {code_words(value)}"
        choices = [("", "Everything"), *sorted(where.items(), key=lambda kv: kv[1])]
        self.fields["where"].choices = choices  # type: ignore[attr-defined]
        self.fields["start"].initial = today - dt.timedelta(weeks=DEFAULT_WEEKS)
        self.fields["end"].initial = today

    def clean_download(self) -> str:
        value = str(self.cleaned_data.get("download") or "")
        if value and value not in DOWNLOADS:
            raise forms.ValidationError(UNKNOWN_DOWNLOAD)
        return value

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        start = data.get("start") or self.today - dt.timedelta(weeks=DEFAULT_WEEKS)
        end = data.get("end") or self.today
        if "start" in self.errors or "end" in self.errors:
            return data
        if end < start:
            raise forms.ValidationError(PERIOD_BACKWARDS)
        if (end - start).days > LONGEST_DAYS:
            raise forms.ValidationError(PERIOD_TOO_LONG)
        data["start"], data["end"] = start, end
        return data


def _bounds(day: dt.date, zone: dt.tzinfo) -> dt.datetime:
    """The first moment of ``day`` in ``zone``."""
    return dt.datetime.combine(day, dt.time(), tzinfo=zone)


@login_required
def analytics_page(request: HttpRequest) -> HttpResponse:
    user = request.user
    if not isinstance(user, User) or not access.may_analyse(user):
        raise PermissionDenied(access.FORBIDDEN_ANALYTICS)
    tenant_id = user.member_tenant_id
    zone = timezone.get_current_timezone()
    now = clock.now()
    today = timezone.localtime(now, zone).date()
    kinds = _kinds(tenant_id)
    form = AnalyticsForm(request.GET or None, kinds=kinds, today=today)
    if form.is_bound and not form.is_valid():
        problems = [e for errors in form.errors.values() for e in errors]
        return render(
            request, "approvals/analytics.html", {"form": form, "problems": problems}, status=400
        )
    data = form.cleaned_data if form.is_bound else {}
    start: dt.date = data.get("start") or form.fields["start"].initial
    end: dt.date = data.get("end") or form.fields["end"].initial
    field, _, value = (data.get("where") or "").partition("=")
    f = AnalyticsFilter(
        tenant_id=tenant_id,
        start=_bounds(start, zone),
        end=_bounds(end + dt.timedelta(days=1), zone),
        template_key=data.get("template") or "",
        field=field,
        value=value,
    )
    download = data.get("download") or ""
    if download == "waiting":
        rows = words.open_rows(longest_open(f, limit=1000), kinds, now)
        return _csv("waiting", words.OPEN_COLUMNS, [r.cells() for r in rows])
    if download == "steps":
        steps = words.step_rows(step_figures(f, now=now), kinds)
        return _csv("steps", words.STEP_COLUMNS, [r.cells() for r in steps])
    weeks = words.week_rows(weekly_starts(f, zone=zone), start, end)
    if download == "weeks":
        cells = [[words.week_words(m), str(n)] for m, n in weeks]
        return _csv("weeks", words.WEEK_COLUMNS, cells)
    steps = words.step_rows(step_figures(f, now=now), kinds)
    query = request.GET.copy()
    query.pop("download", None)
    context = {
        "form": form,
        "period": f"{start.day} {start:%b %Y} to {end.day} {end:%b %Y}",
        "weeks": [(words.week_words(m), words.number(n)) for m, n in weeks],
        "started": words.number(sum(n for _, n in weeks)),
        "volume_chart": words.volume_chart(weeks),
        "steps": steps,
        "step_columns": words.STEP_COLUMNS,
        "slowest": words.slowest(steps),
        "wait_chart": words.wait_chart(steps),
        "outcome_chart": words.outcome_chart(steps),
        "open": words.open_rows(longest_open(f), kinds, now),
        "query": query.urlencode(),
    }
    return render(request, "approvals/analytics.html", context)


def _csv(name: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> HttpResponse:
    """A table as CSV; a cell a spreadsheet would take for a formula is quoted as text
    (the audit export's rule)."""
    text = "".join(csv_lines(columns, rows))
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="analytics-{name}.csv"'
    return response
