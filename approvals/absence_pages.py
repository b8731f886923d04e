"""Out of office, after it is set (approvals.pages sets one): ending a current absence
now, changing one's days or stand-in, deleting a planned one; and the banner every page
shows while the person's absence is on."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from . import clock
from .models import Delegation, User
from .pages import OutOfOfficeForm, _member
from .services.delegations import (
    DelegationNotFound,
    DelegationRefused,
    delegation_change,
    delegation_delete,
    delegation_end,
)
from .web import present
from .web.hand_over import hand_over_said

ABSENCE_ENDED = "Your absence has ended: your tasks come to you again."
ABSENCE_DELETED = "Deleted your absence from {first} to {last}."
ABSENCE_CHANGED = "Changed your absence: {first} to {last}, {name} decides your tasks."
ABSENCE_BANNER = "You are out of office until {last}; {name} decides for you."


def _name(person: User) -> str:
    return person.first_name or person.username


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
