"""The pages a mail leads to: the one-click link's confirmation page, and each person's
choice of immediate mail or a daily digest. A GET never decides (mail scanners open
links); the POST confirms through the command path as the link's person."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from approvals import access
from approvals.definitions import definition_for, raw_definition_for
from approvals.models import PendingTask, User, Workflow
from approvals.runtime.commands import Busy, WorkflowNotFound
from approvals.services.people import SettingRefused, user_time_zone_set
from approvals.web.refusals import refusal_text
from approvals.words import zones
from approvals.words.decisions import Outcome, outcome_at
from approvals.words.steps import step_title
from approvals.words.zones import ZONE_INVALID, zone_choices
from templates_engine import CommandRejected

from .bodies import person_zone
from .confirm import link_confirm
from .format import amount_of
from .links import GONE, LinkRefused, LinkTarget, link_check, link_read
from .mail_words import request_line
from .models import DIGEST_HOUR_DEFAULT, LinkUse, NotificationMode, NotificationPreference

COMMENT_MAX = 2000
COMMENT_TOO_LONG = f"The comment may be at most {COMMENT_MAX} characters; nothing was recorded."
COMMENT_NUL = "The comment may not contain a NUL character; nothing was recorded."
BUSY_TEXT = "The request is busy right now; nothing was recorded. Try again in a moment."
REJECTED_TEXT = "This decision could not be recorded: {reason}"
DONE_TEXT = {"approve": "You approved"}
DIGEST_HOUR_INVALID = "Choose an hour of the day from the list."
RECORDED_NOUN = {"approve": "approval", "reject": "rejection"}


def _summary(target: LinkTarget) -> dict[str, Any]:
    """What the page may show: that task's summary, nothing more; it leads with the
    request's summary line and links to the full request (which asks to sign in)."""
    wf = target.workflow
    due_at = (
        PendingTask.objects.filter(workflow=wf, step=target.link.step, assignee=target.user)
        .values_list("due_at", flat=True)
        .first()
    )
    return {
        **_request(wf),
        "step": step_title(raw_definition_for(wf.template_id), target.link.step),
        # a link page has no signed-in browser to ask: the person's zone, named
        "due": zones.moment(due_at, person_zone(target.user)) if due_at else "",
    }


def _request(wf: Workflow) -> dict[str, Any]:
    submitter = wf.submitter
    title = definition_for(wf.template_id).title
    amount = amount_of(wf.data)
    return {
        "title": title,
        "summary": request_line(wf.summary, title, amount, wf.subject_id),
        "reference": f"{title} {wf.subject_id}",
        "amount": amount,
        "requester": (submitter.get_full_name() or submitter.username) if submitter else "",
        "workflow_url": reverse("workflow", args=[wf.pk]),
    }


def _outcome(target: LinkTarget) -> Outcome:
    """What the link's decision does at its step, in the words the app's buttons use."""
    wf = target.workflow
    submitter = wf.submitter
    requester = (submitter.first_name or submitter.username) if submitter else ""
    raw = raw_definition_for(wf.template_id)
    return outcome_at(raw, target.link.step, target.link.decision, requester=requester)


def _done_line(target: LinkTarget, summary: str, requester: str) -> str:
    decision = target.link.decision
    if decision in DONE_TEXT:
        return f"{DONE_TEXT[decision]} {summary} from {requester}."
    return _outcome(target).done_words(summary) + "."


def _person(target: LinkTarget) -> str:
    return target.user.get_full_name() or target.user.username


def _refused(request: HttpRequest, refusal: LinkRefused) -> HttpResponse:
    used = refusal.used
    if used is not None:
        return _recorded(request, used)
    ctx = {"message": refusal.message}
    return render(request, "approvals/link/refused.html", ctx, status=refusal.status)


def _recorded(request: HttpRequest, used: LinkUse) -> HttpResponse:
    """A link used a second time by its own person: their decision stands."""
    wf = used.workflow
    ctx = {
        **_request(wf),
        "decision": RECORDED_NOUN.get(used.decision, used.decision),
        "used_at": zones.moment(used.used_at, person_zone(used.user)),
        "signed_in": request.user.is_authenticated,
    }
    return render(request, "approvals/link/recorded.html", ctx, status=200)


@require_http_methods(["GET", "POST"])
def mail_link(request: HttpRequest, token: str) -> HttpResponse:
    viewer = request.user if request.user.is_authenticated else None
    if request.method == "GET":
        try:
            target = link_check(token=token, viewer=viewer)
        except LinkRefused as refusal:
            return _refused(request, refusal)
        decision = target.link.decision
        outcome = _outcome(target)
        ctx = {
            **_summary(target),
            "person": _person(target),
            "decision": decision,
            "caption": outcome.label,
            "question": outcome.question_words("this request"),
        }
        return render(request, "approvals/link/confirm.html", ctx)
    comment = request.POST.get("comment", "").strip()
    if len(comment) > COMMENT_MAX:
        return _refused(request, LinkRefused((400, COMMENT_TOO_LONG)))
    if "\x00" in comment:  # the database cannot keep a NUL in text
        return _refused(request, LinkRefused((400, COMMENT_NUL)))
    try:
        target, result = link_confirm(token=token, comment=comment, viewer=viewer)
    except LinkRefused as refusal:
        return _refused(request, refusal)
    except CommandRejected as exc:
        reason = refusal_text(exc, decision=link_read(token).decision)
        return _refused(request, LinkRefused((409, REJECTED_TEXT.format(reason=reason))))
    except (WorkflowNotFound, access.Forbidden):
        return _refused(request, LinkRefused(GONE))
    except Busy:
        return _refused(request, LinkRefused((503, BUSY_TEXT)))
    summary = _summary(target)
    ctx = {
        **summary,
        "person": _person(target),
        "done": _done_line(target, summary["summary"], summary["requester"]),
        "status": result.status,
        "signed_in": viewer is not None,
    }
    return render(request, "approvals/link/done.html", ctx)


BROWSER_ZONE = "As my browser says"


class PreferenceForm(forms.Form):
    mode = forms.ChoiceField(
        choices=[
            (NotificationMode.IMMEDIATE, "Each e-mail as it happens"),
            (NotificationMode.DIGEST, "One e-mail a day listing what waits for me"),
        ],
        widget=forms.RadioSelect,
        label="How do you want to hear about approvals?",
    )
    digest_hour = forms.TypedChoiceField(
        choices=[(h, f"{h:02d}:00") for h in range(24)],
        coerce=int,
        required=False,  # a form without it keeps the default hour (clean_digest_hour)
        empty_value=None,
        initial=DIGEST_HOUR_DEFAULT,
        label="Send my daily e-mail at",
        help_text="An hour of your day, in the zone above (else your organisation's).",
        error_messages={"invalid_choice": DIGEST_HOUR_INVALID},
    )
    time_zone = forms.ChoiceField(
        required=False,
        label="Show times in",
        help_text="Pages and e-mails show dates and times in this zone. Until you choose "
        "one, e-mails use your organisation's zone.",
    )

    def clean_digest_hour(self) -> int:
        hour = self.cleaned_data.get("digest_hour")
        return DIGEST_HOUR_DEFAULT if hour is None else int(hour)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["time_zone"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", BROWSER_ZONE), *zone_choices()]
        field.error_messages["invalid_choice"] = ZONE_INVALID


@login_required
@require_http_methods(["GET", "POST"])
def notification_settings(request: HttpRequest) -> HttpResponse:
    """The person's settings: how they hear (immediate or digest) and their time zone."""
    user = request.user
    if not isinstance(user, User) or user.tenant_id is None:
        raise Http404
    pref = NotificationPreference.objects.filter(user=user).first()
    current = pref.mode if pref else NotificationMode.IMMEDIATE
    hour = pref.digest_hour if pref else DIGEST_HOUR_DEFAULT
    form = PreferenceForm(
        request.POST or None,
        initial={"mode": current, "digest_hour": hour, "time_zone": user.time_zone},
    )
    page = "approvals/notification_settings.html"
    if request.method == "POST":
        if not form.is_valid():
            return render(request, page, {"form": form}, status=400)
        try:
            user_time_zone_set(user=user, time_zone=form.cleaned_data["time_zone"])
        except SettingRefused as exc:
            form.add_error("time_zone", str(exc))
            return render(request, page, {"form": form}, status=400)
        NotificationPreference.objects.update_or_create(
            user=user,
            defaults={
                "mode": form.cleaned_data["mode"],
                "digest_hour": form.cleaned_data["digest_hour"],
            },
        )
        messages.success(request, "Saved: your settings.")
        return HttpResponseRedirect(reverse("notification-settings"))
    return render(request, page, {"form": form, "now": timezone.now()})
