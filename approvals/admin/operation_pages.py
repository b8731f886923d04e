"""The organisation admin's operations in Django admin, mixed into the workflow admin:
a page per workflow offering what can be done to it now (cancel, reassign a task, add
an approver, retry a step that failed for good, retry or settle by hand a failed undo,
re-arm a parked timer), and a page of what needs attention, with the requests nobody
can finish. Every operation is a service that
goes through the command path and records who and why; no form here edits a row."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from templates_engine import CommandRejected

from .. import access
from ..models import User, Workflow, WorkflowStatus
from ..runtime.commands import RequestIdReused, WorkflowNotFound
from ..selectors import attention, stuck
from ..selectors.people import person_named
from ..services.admin_operations import (
    ReasonRequired,
    timer_rearm,
    workflow_add_approver,
    workflow_resolve_by_hand,
    workflow_restart,
    workflow_retry_compensation,
)
from ..services.workflows import (
    IdempotencyKeyReused,
    SubjectTaken,
    TemplateNotFound,
    workflow_cancel,
    workflow_reassign,
)
from ..web import present
from .confirm import confirm_page, confirmed

REASON_HELP = "Kept in the workflow's history with your name."


class _Operation(forms.Form):
    request_id = forms.CharField(widget=forms.HiddenInput, max_length=128)
    reason = forms.CharField(
        max_length=500, widget=forms.Textarea(attrs={"rows": 2}), help_text=REASON_HELP
    )

    # What is asked before an operation that cannot be taken back ("" for none), with
    # ``{what}`` for the request: the page's dialog asks it first (static/confirm.js),
    # or without the script a page of its own (admin/confirm.py); unconfirmed, nothing
    # is done.
    confirm = ""
    question = ""
    title = ""  # what the operation does, as its button says it

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["request_id"] = f"admin-{uuid.uuid4()}"

    def asking(self, what: str) -> _Operation:
        self.question = self.confirm.format(what=what)
        return self


class CancelForm(_Operation):
    name, title = "cancel", "Cancel the request"
    help = "Completed steps are undone first; the submitter is told."
    confirm = "Cancel {what}? Its completed steps are undone and it ends for good."


def person_field(label: str) -> forms.CharField:
    """A person named by typing part of their name; suggestions (at most ten, of those
    who can take tasks) come from the admin's people search (static/admin_people.js)."""
    return forms.CharField(
        label=label,
        max_length=100,
        widget=forms.TextInput(
            attrs={
                "list": "people-taking",
                "autocomplete": "off",
                "placeholder": "Type part of their name",
            }
        ),
    )


class _NamesPerson(_Operation):
    """An operation naming a person: found by name among those who can take tasks in
    the workflow's organisation (``tenant_id``), answered as their user name."""

    tenant_id = 0

    def _suggest(self, field: str) -> None:
        url = reverse("admin:approvals_user_offboard_people") + "?takers=1"
        self.fields[field].widget.attrs["data-people"] = url

    def _person(self, field: str) -> str:
        typed = self.cleaned_data.get(field) or ""
        found, why = person_named(access.approver_candidates(self.tenant_id), typed)
        if found is None:
            # anyone of the organisation, deactivated ones too, to say why not
            someone, _ = person_named(User.objects.filter(tenant_id=self.tenant_id), typed)
            refusal = access.task_holder_refusal(someone) if someone is not None else None
            raise forms.ValidationError(refusal or why or PERSON_MISSING)
        self.named = found
        return found.username


PERSON_MISSING = "Type part of the person's name."


class ReassignForm(_NamesPerson):
    name, title = "reassign", "Give a task to someone else"
    help = "The task leaves its holder at once and goes to the person you name."
    from_user = forms.ChoiceField(label="Task of")
    to_user = person_field("Give it to")

    def __init__(self, *args: Any, holders: list[tuple[str, str]], **kwargs: Any) -> None:
        self.tenant_id = kwargs.pop("tenant_id", 0)
        super().__init__(*args, **kwargs)
        self.fields["from_user"].choices = holders  # type: ignore[attr-defined]
        self._suggest("to_user")

    def clean_to_user(self) -> str:
        return self._person("to_user")


class AddApproverForm(_NamesPerson):
    name, title = "add_approver", "Add an approver"
    person = person_field("Person to add")
    step = forms.CharField(widget=forms.HiddenInput, max_length=64)
    field_order = ("person", "reason")

    def clean_person(self) -> str:
        return self._person("person")

    def __init__(self, *args: Any, step: str, step_words: str, **kwargs: Any) -> None:
        self.tenant_id = kwargs.pop("tenant_id", 0)
        super().__init__(*args, **kwargs)
        self._suggest("person")
        self.step_words = step_words
        self.help = (
            f"They get a task on the {step_words} step beside whoever holds one, and "
            "may approve or reject it as its other approvers may. Use it when nobody "
            "can finish the step."
        )
        if not self.is_bound:
            self.initial["step"] = step


class RetryStepForm(_Operation):
    name, title = "retry_step", "Start it again as a new request"
    help = (
        "A new request starts with the same details, on the current version of its "
        "workflow template; this one stays rolled back, and each links to the other."
    )
    confirm = "Start {what} again as a new request? This one stays rolled back for good."


class RetryCompensationForm(_Operation):
    name, title = "retry_compensation", "Try the roll-back again"
    help = (
        "One more attempt of the undo that failed, then of any undo left after it. "
        "The request stays marked as a failed roll-back; if every undo succeeds, it is "
        "settled and leaves this list."
    )


class ResolveForm(_Operation):
    name, title = "resolve", "Mark the roll-back as done by hand"
    help = (
        "Say what was done by hand. The request stays marked as a failed roll-back, "
        "settled by you, and leaves the attention list."
    )
    confirm = (
        "Mark the roll-back of {what} as done by hand? No undo is tried again, and it "
        "leaves the attention list."
    )


class RearmForm(_Operation):
    name, title = "rearm", "Re-arm a stopped timer"
    help = "The timer is delivered again now; its failures are forgotten."
    timer = forms.TypedChoiceField(coerce=int, label="Timer")

    def __init__(self, *args: Any, timers: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["timer"].choices = timers  # type: ignore[attr-defined]


DONE = {
    "cancel": "Cancelled by {who}: {reason}",
    "reassign": "The task was given to {to}.",
    "add_approver": "{person} was added as an approver on the {step} step.",
    "retry_step": "The request was started again as a new request.",
    "retry_compensation": "The roll-back is being tried again.",
    "resolve": "The roll-back was marked as done by hand.",
    "rearm": "The timer was re-armed and is due now.",
}


def _forms_for(wf: Workflow, data: Any = None) -> list[_Operation]:
    """The operations that make sense for the workflow as it stands now."""
    snapshot = wf.snapshot or {}
    out: list[_Operation] = []
    tasks = attention.workflow_open_tasks(workflow_id=wf.pk)
    if tasks:
        holders = [
            (t.assignee.username, present.person(t.assignee.username, _names(t.assignee)))
            for t in tasks
        ]
        out.append(ReassignForm(data, prefix="reassign", holders=holders, tenant_id=wf.tenant_id))
    step = wf.current_step
    if wf.status == WorkflowStatus.RUNNING and snapshot.get("assignments") and step != "submitter":
        words = present.step_title(wf.template.definition, step)
        out.append(
            AddApproverForm(
                data, prefix="add_approver", step=step, step_words=words, tenant_id=wf.tenant_id
            )
        )
    restarted = snapshot.get("restarted_as")
    if wf.status == WorkflowStatus.ROLLED_BACK and snapshot.get("failed_step") and not restarted:
        out.append(RetryStepForm(data, prefix="retry_step"))
    settled = snapshot.get("settled") or snapshot.get("activity") is not None
    if wf.status == WorkflowStatus.COMPENSATION_FAILED and not settled:
        out.append(RetryCompensationForm(data, prefix="retry_compensation"))
        out.append(ResolveForm(data, prefix="resolve"))
    timers = attention.workflow_parked_timers(workflow_id=wf.pk)
    if timers:
        choices = [(t.pk, f"{present.humanise(t.kind)} of the {t.step} step") for t in timers]
        out.append(RearmForm(data, prefix="rearm", timers=choices))
    if wf.status == WorkflowStatus.RUNNING:  # last: what ends the request for good
        out.append(CancelForm(data, prefix="cancel"))
    return out


def _names(user: User) -> dict[str, str]:
    return {user.username: user.get_full_name() or user.username}


def _perform(form: _Operation, user: User, wf: Workflow) -> str:
    d = form.cleaned_data
    common = {"user": user, "workflow_id": wf.pk, "request_id": d["request_id"]}
    if isinstance(form, CancelForm):
        workflow_cancel(reason=d["reason"], **common)
        return DONE["cancel"].format(who=user.get_full_name() or user.username, reason=d["reason"])
    elif isinstance(form, ReassignForm):
        workflow_reassign(
            from_user=d["from_user"], to_user=d["to_user"], comment=d["reason"], **common
        )
        return DONE["reassign"].format(to=form.named.get_full_name() or d["to_user"])
    elif isinstance(form, AddApproverForm):
        workflow_add_approver(person=d["person"], step=d["step"], reason=d["reason"], **common)
        added = User.objects.filter(tenant_id=wf.tenant_id, username=d["person"]).first()
        name = (added.get_full_name() if added else "") or d["person"]
        return DONE["add_approver"].format(person=name, step=form.step_words)
    elif isinstance(form, RetryStepForm):
        workflow_restart(reason=d["reason"], **common)
    elif isinstance(form, RetryCompensationForm):
        workflow_retry_compensation(reason=d["reason"], **common)
    elif isinstance(form, ResolveForm):
        workflow_resolve_by_hand(reason=d["reason"], **common)
    elif isinstance(form, RearmForm):
        timer_rearm(user=user, timer_id=d["timer"], reason=d["reason"], request_id=d["request_id"])
    return DONE[form.name]  # type: ignore[attr-defined]


class WorkflowOperationsAdmin(admin.ModelAdmin):
    """Mixed into the workflow admin: the operations page and the attention page."""

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        pages = [
            path("attention/", wrap(self.attention_view), name="approvals_workflow_attention"),
            path(
                "<str:object_id>/operations/",
                wrap(self.operations_view),
                name="approvals_workflow_operations",
            ),
        ]
        return [*pages, *super().get_urls()]

    def _operable(self, request: HttpRequest, object_id: str) -> Workflow:
        user: Any = request.user
        if not access.admin_may(user, "view", "workflow"):
            raise PermissionDenied
        try:
            wf = access.admin_scope(user, Workflow.objects.select_related("template")).get(
                pk=object_id
            )
        except (Workflow.DoesNotExist, ValueError, TypeError, DjangoValidationError) as exc:
            raise PermissionDenied from exc
        if not access.may_operate(user, wf):
            raise PermissionDenied
        return wf

    def operations_view(self, request: HttpRequest, object_id: str) -> HttpResponseBase:
        wf = self._operable(request, object_id)
        user: Any = request.user
        status = 200
        if request.method == "POST":
            chosen = request.POST.get("operation", "")
            forms_now = _forms_for(wf, request.POST)
            form = next((f for f in forms_now if f.name == chosen), None)  # type: ignore[attr-defined]
            if form is None:
                messages.error(request, "That cannot be done to this request as it stands now.")
                status = 409
            elif form.is_valid() and form.confirm and not confirmed(request):
                # without the page's script: a page of its own asks first
                return confirm_page(
                    request,
                    admin_site=self.admin_site,
                    opts=self.model._meta,
                    title=f"{form.title}?",
                    question=form.confirm.format(what=_title(wf)),
                    action=form.title,
                    back=request.path,
                )
            elif form.is_valid():
                try:
                    done = _perform(form, user, wf)
                except (CommandRejected, access.Forbidden, ReasonRequired) as exc:
                    message = exc.message if isinstance(exc, CommandRejected) else str(exc)
                    form.add_error(None, message)
                    status = 409
                except (
                    WorkflowNotFound,
                    RequestIdReused,
                    SubjectTaken,
                    TemplateNotFound,
                    IdempotencyKeyReused,
                ) as exc:  # the last three: a restart's start was refused
                    form.add_error(None, str(exc))
                    status = 409
                else:
                    messages.success(request, done)
                    return HttpResponseRedirect(request.path)
            else:
                status = 400
            others = [f if f is form else type(f)(prefix=f.prefix, **_extra(f)) for f in forms_now]
            forms_shown = others
        else:
            forms_shown = _forms_for(wf)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Deal with {_title(wf)}",
            "wf": wf,
            "status_words": present.status_label(wf.public_status, wf.template.definition),
            "went_wrong": _went_wrong(wf),
            "forms": [f.asking(_title(wf)) for f in forms_shown],
            "opts": self.model._meta,
        }
        return TemplateResponse(
            request, "admin/approvals/workflow/operations.html", context, status=status
        )

    def attention_view(self, request: HttpRequest) -> HttpResponse:
        user: Any = request.user
        if not access.admin_may(user, "view", "workflow"):
            raise PermissionDenied
        rows = [attention_row(item, user) for item in attention.attention_by_request(user=user)]
        nobody = [
            stuck_row(item, user)
            for item in stuck.stuck_requests(access.admin_scope(user, Workflow.objects.all()))
        ]
        context = {
            **self.admin_site.each_context(request),
            "title": "What needs attention",
            "rows": rows,
            "stuck": nobody,
            "delegations_unreadable": attention.delegations_unreadable(user=user),
            "templates_naming_absent": attention.templates_naming_absent(user=user),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/approvals/workflow/attention.html", context)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        extra = {**(extra_context or {}), "attention_page": True}
        return super().changelist_view(request, extra)

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        user: Any = request.user
        wf = Workflow.objects.filter(pk=object_id).first() if _is_uuid(object_id) else None
        extra = {
            **(extra_context or {}),
            "operations_page": wf is not None and access.may_operate(user, wf),
        }
        return super().change_view(request, object_id, form_url, extra)


def _went_wrong(wf: Workflow) -> str:
    """Why a finished or stuck workflow stopped, in words; empty while it runs, unless
    nobody can finish it."""
    snapshot = wf.snapshot or {}
    if wf.status == WorkflowStatus.RUNNING:
        found = stuck.stuck_requests(Workflow.objects.filter(pk=wf.pk))
        if found:
            return _nobody_can_finish(found[0]) + " Add an approver, or cancel the request."
        return ""
    if wf.status not in (WorkflowStatus.ROLLED_BACK, WorkflowStatus.COMPENSATION_FAILED):
        return ""
    step = snapshot.get("failed_step")
    error = error_words(snapshot.get("error") or "")
    if wf.status == WorkflowStatus.COMPENSATION_FAILED:
        compensations = snapshot.get("compensations") or []
        if compensations:
            title = present.step_title(wf.template.definition, compensations[-1][0])
            return f"Undoing the {title} step failed: {error}"
    words = error
    if step:
        words = f"The {present.step_title(wf.template.definition, step)} step failed: {error}"
    if wf.status == WorkflowStatus.COMPENSATION_FAILED and snapshot.get("settled"):
        words += ". The failed roll-back has since been settled; the history says by whom."
    if wf.status == WorkflowStatus.ROLLED_BACK and snapshot.get("restarted_as"):
        words += ". It has since been started again as a new request."
    return words


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _extra(form: _Operation) -> dict[str, Any]:
    if isinstance(form, ReassignForm):
        holders = form.fields["from_user"].choices  # type: ignore[attr-defined]
        return {"holders": holders, "tenant_id": form.tenant_id}
    if isinstance(form, RearmForm):
        return {"timers": form.fields["timer"].choices}  # type: ignore[attr-defined]
    if isinstance(form, AddApproverForm):
        return {
            "step": form.initial.get("step") or form.data.get(form.add_prefix("step"), ""),
            "step_words": form.step_words,
            "tenant_id": form.tenant_id,
        }
    return {}


def error_words(error: str) -> str:
    """``ConnectionError: the ERP is down`` -> ``Connection error: the ERP is down``."""
    name, sep, message = (error or "").partition(": ")
    if not sep:
        return present.humanise(name) if name.isidentifier() else name
    return f"{present.humanise(name)}: {message}"


def _title(wf: Workflow) -> str:
    title = (wf.template.definition or {}).get("title") or present.humanise(wf.template_key)
    return f"{title} {wf.subject_id}"


KIND_WORDS = {
    attention.ROLLBACK_FAILED: "Roll-back failed",
    attention.TIMER_PARKED: "Timer stopped",
    attention.ATTEMPTS_FAILING: "Automated step failing",
    attention.TASK_OVERDUE: "Task overdue",
}


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def attention_row(item: attention.AttentionItem, user: Any) -> dict[str, Any]:
    wf, d = item.workflow, item.detail
    step = present.step_title(wf.template.definition, item.step) if item.step else ""
    if item.kind == attention.ROLLBACK_FAILED:
        what = f"Undoing the {step} step failed" if step else "The roll-back failed"
        if d["error"]:
            what += f": {error_words(d['error'])}"
    elif item.kind == attention.TIMER_PARKED:
        what = (
            f"The {present.humanise(d['kind']).lower()} of the {step} step could not be "
            f"delivered after {d['failures']} tries: "
            f"{error_words(d['error']) or 'no error recorded'}"
        )
    elif item.kind == attention.ATTEMPTS_FAILING:
        doing = "Undoing" if d["undo"] else "Running"
        what = (
            f"{doing} {present.humanise(d['activity']).lower()} for the {step} step has failed "
            f"{d['failed']} time{'s' if d['failed'] != 1 else ''}"
            + (f" ({present.humanise(d['error']).lower()})" if d["error"] else "")
            + f"; next try {present.when(d['next_at'])}"
        )
    else:
        people = d.get("assignees") or [d["assignee"]]
        who = _and([p.get_full_name() or p.username for p in people])
        what = f"Waiting for {who} on the {step} step since it was due"
    return {
        "kind": KIND_WORDS[item.kind],
        "since": present.when(item.since),
        "request": _title(wf),
        "status": present.status_label(wf.public_status, wf.template.definition),
        "what": what,
        "operations": reverse("admin:approvals_workflow_operations", args=[wf.pk])
        if access.may_operate(user, wf)
        else "",
        "workflow": reverse("admin:approvals_workflow_change", args=[wf.pk]),
    }


def _nobody_can_finish(item: stuck.StuckRequest) -> str:
    step = present.step_title(item.workflow.template.definition, item.step)
    return f"Nobody can finish the {step} step: {item.why}."


def stuck_row(item: stuck.StuckRequest, user: Any) -> dict[str, Any]:
    """One line of "Requests nobody can finish" on the attention page."""
    wf = item.workflow
    return {
        "since": present.when(wf.updated_at),
        "request": _title(wf),
        "what": _nobody_can_finish(item),
        "operations": reverse("admin:approvals_workflow_operations", args=[wf.pk])
        if access.may_operate(user, wf)
        else "",
        "workflow": reverse("admin:approvals_workflow_change", args=[wf.pk]),
    }
