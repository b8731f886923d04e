"""Out of office: setting one (the form, with the colleague lookup it offers), ending a
current absence now, changing one's days or stand-in, deleting a planned one; and the
banner every page shows while the person's absence is on."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    JsonResponse,
)
from django.shortcuts import render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from .. import clock
from ..models import Delegation, User
from ..selectors.people import colleagues_matching
from ..services.delegations import (
    DelegationNotFound,
    DelegationRefused,
    delegation_change,
    delegation_delete,
    delegation_end,
    delegation_set,
)
from ..web import present
from ..web.forms import BoundedDateField
from ..web.hand_over import hand_over_said
from ..words import zones
from .common import NO_SUCH_COLLEAGUE, _member

PEOPLE_QUERY_INVALID = "Type 1 to 100 characters of a name or user name."


PEOPLE_DATALIST = "people-list"


def people_field(label: str, help_text: str) -> forms.CharField:
    """A colleague by user name, typed: suggestions come from ``/people`` (app.js fills
    the page's datalist); without the script the user name typed is what counts."""
    return forms.CharField(
        label=label,
        help_text=help_text,
        max_length=150,
        widget=forms.TextInput(
            attrs={
                "list": PEOPLE_DATALIST,
                "autocomplete": "off",
                "data-people": reverse_lazy("people"),
                "placeholder": "Type a name, e.g. Ivan",
            }
        ),
    )


class OutOfOfficeForm(forms.Form):
    delegate = people_field(
        "Who decides for you",
        "Type a name or user name and pick the colleague. They get the tasks that arrive "
        "while you are away.",
    )
    first_day = BoundedDateField(label="First day away")
    last_day = BoundedDateField(label="Last day away")
    reason = forms.CharField(label="Note (optional)", required=False, max_length=200)
    hand_over = forms.BooleanField(
        label="Also hand over the tasks I hold now",
        required=False,
        help_text="They go to your colleague at once, who decides them for you; they stay "
        "with them when you are back.",
    )

    def period(self) -> tuple[dt.datetime, dt.datetime]:
        """The absence as moments: from the first day's start to the end of the last
        day, in the person's zone. Call after ``is_valid``."""
        zone = timezone.get_current_timezone()
        first, last = self.cleaned_data["first_day"], self.cleaned_data["last_day"]
        starts = dt.datetime.combine(first, dt.time.min, tzinfo=zone)
        return starts, dt.datetime.combine(last + dt.timedelta(days=1), dt.time.min, tzinfo=zone)

    def colleague(self, user: User) -> User | None:
        """The stand-in named, in ``user``'s organisation; None (and the field's error
        NO_SUCH_COLLEAGUE) when nobody there has that name."""
        found = User.objects.filter(
            tenant_id=user.member_tenant_id, username=self.cleaned_data["delegate"]
        ).first()
        if found is None:
            self.add_error("delegate", NO_SUCH_COLLEAGUE)
        return found

    def refused(self, exc: Exception) -> None:
        """Show a service's refusal beside the field it is about."""
        first, last = self.cleaned_data["first_day"], self.cleaned_data["last_day"]
        self.add_error("delegate" if last >= first else "last_day", str(exc))


@login_required
@require_http_methods(["GET"])
def people(request: HttpRequest) -> JsonResponse:
    """Colleagues whose names start with what was typed (``?q=``), for the fields that
    name one; at most ten, so the answer stays small in an organisation of any size."""
    user = _member(request)
    text = request.GET.get("q", "").strip()
    if not 1 <= len(text) <= 100 or "\x00" in text:
        return JsonResponse({"error": PEOPLE_QUERY_INVALID}, status=400)
    found = colleagues_matching(user=user, text=text)
    return JsonResponse(
        {"people": [{"username": c.username, "name": c.name, "label": c.label} for c in found]}
    )


@login_required
@require_http_methods(["GET", "POST"])
def out_of_office(request: HttpRequest) -> HttpResponse:
    user = _member(request)
    # Any user name may be typed, the person's own too, so that the service is what
    # refuses a bad delegate with its own words.
    form = OutOfOfficeForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            first = form.cleaned_data["first_day"]
            last = form.cleaned_data["last_day"]
            starts, ends = form.period()
            delegate = form.colleague(user)
            if delegate is not None:
                try:
                    absence = delegation_set(
                        user=user,
                        delegate=delegate,
                        starts_at=starts,
                        ends_at=ends,
                        reason=form.cleaned_data["reason"],
                    )
                except DelegationRefused as exc:
                    form.refused(exc)
                else:
                    name = delegate.first_name or delegate.username
                    messages.success(
                        request,
                        f"While you are away ({zones.day_month(first)} to "
                        f"{zones.day_month(last)}), {name} decides your tasks.",
                    )
                    if form.cleaned_data["hand_over"]:
                        hand_over_said(request, user, absence.pk, delegate)
                    return HttpResponseRedirect(reverse("out-of-office"))
    now = timezone.now()
    current = (
        Delegation.objects.filter(user=user, ends_at__gt=now)
        .select_related("delegate", "created_by")
        .order_by("starts_at")
    )
    return render(
        request,
        "approvals/out_of_office.html",
        {
            "form": form,
            "delegations": [
                {
                    "id": d.pk,
                    "delegate": d.delegate.first_name or d.delegate.username,
                    "starts": present.day(d.starts_at),
                    "ends": present.day(d.ends_at - dt.timedelta(seconds=1)),
                    "reason": d.reason,
                    "current": d.starts_at <= now,
                    "set_up_by": _set_up_by(d, user),
                }
                for d in current
            ],
        },
        status=status,
    )


ABSENCE_ENDED = "Your absence has ended: your tasks come to you again."
ABSENCE_DELETED = "Deleted your absence from {first} to {last}."
ABSENCE_CHANGED = "Changed your absence: {first} to {last}, {name} decides your tasks."
ABSENCE_SET_UP_BY = "Set up for you by {name}"
ABSENCE_BANNER = "You are out of office until {last}; {name} decides for you."


def _name(person: User) -> str:
    return person.first_name or person.username


def _set_up_by(d: Delegation, user: User) -> str:
    """Who set the absence up, when someone else did (an admin, for the person): the
    person sees that a colleague was named to decide for them, and by whom."""
    if d.created_by is None or d.created_by_id == user.pk:
        return ""
    return ABSENCE_SET_UP_BY.format(name=d.created_by.get_full_name() or _name(d.created_by))


def _last_day(d: Delegation) -> str:
    return present.day(d.ends_at - dt.timedelta(seconds=1))


def _back(request: HttpRequest, fallback: str = "out-of-office") -> HttpResponseRedirect:
    """Back to the page the form was sent from when it is one of ours (the banner's
    button is on every page), else to Out of office."""
    nxt = request.POST.get("next", "")
    if nxt.startswith("/") and url_has_allowed_host_and_scheme(
        nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return HttpResponseRedirect(nxt)
    return HttpResponseRedirect(reverse(fallback))


@login_required
@require_http_methods(["POST"])
def absence_end(request: HttpRequest, delegation_id: int) -> HttpResponse:
    user = _member(request)
    try:
        delegation_end(user=user, delegation_id=delegation_id)
    except DelegationNotFound:
        raise Http404 from None
    except DelegationRefused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, ABSENCE_ENDED)
    return _back(request)


@login_required
@require_http_methods(["POST"])
def absence_delete(request: HttpRequest, delegation_id: int) -> HttpResponse:
    user = _member(request)
    found = Delegation.objects.filter(pk=delegation_id, user_id=user.pk).first()
    try:
        delegation_delete(user=user, delegation_id=delegation_id)
    except DelegationNotFound:
        raise Http404 from None
    except DelegationRefused as exc:
        messages.error(request, str(exc))
    else:
        assert found is not None
        messages.success(
            request,
            ABSENCE_DELETED.format(first=present.day(found.starts_at), last=_last_day(found)),
        )
    return HttpResponseRedirect(reverse("out-of-office"))


@login_required
@require_http_methods(["GET", "POST"])
def absence_change(request: HttpRequest, delegation_id: int) -> HttpResponse:
    """Change an absence's days or stand-in, with the checks of setting one."""
    user = _member(request)
    found = (
        Delegation.objects.filter(
            pk=delegation_id, tenant_id=user.member_tenant_id, user_id=user.pk
        )
        .select_related("delegate")
        .first()
    )
    if found is None:
        raise Http404
    initial = {
        "delegate": found.delegate.username,
        "first_day": timezone.localtime(found.starts_at).date(),
        "last_day": timezone.localtime(found.ends_at - dt.timedelta(seconds=1)).date(),
        "reason": found.reason,
    }
    form = OutOfOfficeForm(request.POST if request.method == "POST" else None, initial=initial)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            starts, ends = form.period()
            delegate = form.colleague(user)
            if delegate is not None:
                try:
                    changed = delegation_change(
                        user=user,
                        delegation_id=found.pk,
                        delegate=delegate,
                        starts_at=starts,
                        ends_at=ends,
                        reason=form.cleaned_data["reason"],
                    )
                except DelegationNotFound:
                    raise Http404 from None
                except DelegationRefused as exc:
                    form.refused(exc)
                else:
                    messages.success(
                        request,
                        ABSENCE_CHANGED.format(
                            first=present.day(changed.starts_at),
                            last=_last_day(changed),
                            name=_name(delegate),
                        ),
                    )
                    if form.cleaned_data["hand_over"]:
                        hand_over_said(request, user, changed.pk, delegate)
                    return HttpResponseRedirect(reverse("out-of-office"))
    return render(
        request,
        "approvals/out_of_office_change.html",
        {"form": form, "delegation_id": found.pk},
        status=status,
    )


def banner(request: HttpRequest) -> dict[str, Any]:
    """For every page: the person's absence that is on now, if any, with the sentence
    the banner shows. Looked up only when a page shows it, once, in one query on the
    (tenant, user, starts_at) index."""
    user = getattr(request, "user", None)

    @functools.cache
    def absence() -> dict[str, Any] | None:
        if not isinstance(user, User) or user.tenant_id is None:
            return None
        now = clock.now()
        on = (
            Delegation.objects.filter(
                tenant_id=user.tenant_id, user_id=user.pk, starts_at__lte=now, ends_at__gt=now
            )
            .select_related("delegate")
            .order_by("-ends_at")
            .first()
        )
        if on is None:
            return None
        return {
            "id": on.pk,
            "text": ABSENCE_BANNER.format(last=_last_day(on), name=_name(on.delegate)),
        }

    return {"absence_on": absence}
