"""The organisation admin's offboarding page in Django admin: pick someone who leaves,
see each of their open tasks and where it would go (services.directory's rules), give
any of them to someone else, and confirm with a reason; then the person is
deactivated and every task handed on in one transaction. Showing where tasks would go
changes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from .. import access
from ..models import OrgGroup, User, Workflow
from ..services.directory import (
    GROUP,
    NAMED,
    PRINCIPAL,
    DeactivationRefused,
    PlannedMove,
    offboarding_plan,
    takers_for,
    user_deactivate,
)
from ..web import present

NOBODY_TAKES = "nobody can take it: choose someone"
NOT_A_CHOICE = "Choose someone from the list for each task you give to someone else."
REASON_NEEDED = "Say why they are leaving: it is kept in each request's history."
DONE = "{name} is deactivated. {tasks}"
PAGE_TITLE = "Offboard someone who leaves"


class PickForm(forms.Form):
    person = forms.ChoiceField(label="Who is leaving")

    def __init__(self, *args: Any, people: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["person"].choices = [("", "Choose a person"), *people]  # type: ignore[attr-defined]


def _name(user: User) -> str:
    return user.get_full_name() or user.username


def _people(admin_user: User) -> list[User]:
    """The active people of the admin's organisation, the admin aside."""
    return list(
        User.objects.filter(tenant_id=admin_user.member_tenant_id, is_active=True)
        .exclude(pk=admin_user.pk)
        .order_by("first_name", "last_name", "username")
    )


def _task_words(wf: Workflow | None, step: str) -> str:
    """``Expense claim R-8 (Manager step)``."""
    if wf is None:
        return "A request that has since finished"
    definition = wf.template.definition or {}
    title = definition.get("title") or present.humanise(wf.template_key)
    return f"{title} {wf.subject_id} ({present.step_title(definition, step)} step)"


def _destination_words(
    move: PlannedMove,
    leaver: User,
    names: Mapping[str, str],
    wf: Workflow | None,
    manager: str | None,
) -> str:
    """Where a task goes, as the admin reads it: ``Victor, Ivan's manager``."""
    who = [present.person(u, names) for u in move.to_users]
    leaver_name = names.get(leaver.username, leaver.username)
    possessive = leaver_name + ("'" if leaver_name.endswith("s") else "'s")
    if not who:
        return NOBODY_TAKES
    if move.kind == PRINCIPAL:
        return f"back to {who[0]}, for whom {leaver_name} held it"
    if move.kind == GROUP:
        group = _group_name(wf, move.step)
        listed = who[0] if len(who) == 1 else ", ".join(who[:-1]) + " and " + who[-1]
        return f"back to the other members of {group}: {listed}"
    if move.to_users[0] == manager:
        return f"{who[0]}, {possessive} manager"
    return f"{who[0]}, the organisation's fallback approver"


def _group_name(wf: Workflow | None, step: str) -> str:
    if wf is None:
        return "the group"
    for s in (wf.template.definition or {}).get("steps", []):
        if s.get("id") == step:
            for rule in s.get("approvers", []):
                if "group" in rule:
                    group = OrgGroup.objects.filter(
                        tenant_id=wf.tenant_id, key=rule["group"]
                    ).first()
                    return group.name if group is not None else present.humanise(rule["group"])
    return "the group"


def _rows(
    leaver: User, plan: list[PlannedMove], names: Mapping[str, str], chosen: Mapping[str, str]
) -> list[dict[str, Any]]:
    workflows = {
        wf.pk: wf
        for wf in Workflow.objects.filter(pk__in=[m.workflow_id for m in plan]).select_related(
            "template"
        )
    }
    takers = takers_for(leaver)
    # the first active manager up the chain (takers_for's first, unless only the
    # organisation's fallback approver is left)
    manager = takers[0].username if takers and _is_manager_up(leaver, takers[0]) else None
    rows = []
    for move in plan:
        wf = workflows.get(move.workflow_id)
        pick = chosen.get(str(move.workflow_id), "")
        rows.append(
            {
                "key": str(move.workflow_id),
                "task": _task_words(wf, move.step),
                "goes_to": (
                    f"{present.person(pick, names)}, chosen by you"
                    if pick
                    else _destination_words(move, leaver, names, wf, manager)
                ),
                "chosen": pick,
                "nobody": not move.to_users and not pick,
                "rule": move.kind,
            }
        )
    return rows


def _is_manager_up(leaver: User, taker: User) -> bool:
    seen: set[int] = set()
    manager = leaver.manager
    while manager is not None and manager.pk not in seen:
        if manager.pk == taker.pk:
            return True
        seen.add(manager.pk)
        manager = manager.manager
    return False


class OffboardingAdmin:
    """Mixed into the user admin: the offboarding page, for organisation admins."""

    admin_site: Any

    def get_urls(self) -> list[URLPattern]:
        page = path(
            "offboard/",
            self._guarded(self.offboard_view),
            name="approvals_user_offboard",
        )
        return [page, *super().get_urls()]  # type: ignore[misc]

    def _guarded(self, view: Callable[[HttpRequest], HttpResponseBase]) -> Any:
        wrapped = self.admin_site.admin_view(view)

        def guarded(request: HttpRequest) -> HttpResponseBase:
            # Someone signed in who may not deactivate people is refused outright
            # (403), not sent to the admin's sign-in page.
            user: Any = request.user
            if user.is_authenticated and not access.may_deactivate_people(user):
                raise PermissionDenied
            return wrapped(request)

        return guarded

    def offboard_view(self, request: HttpRequest) -> HttpResponse:
        admin_user: Any = request.user
        people = _people(admin_user)
        names = {u.username: _name(u) for u in people} | {admin_user.username: _name(admin_user)}
        source = request.POST if request.method == "POST" else request.GET
        pick = PickForm(
            source if "person" in source else None,
            people=[(u.username, _name(u)) for u in people],
        )
        leaver = next((u for u in people if u.username == source.get("person")), None)
        if leaver is not None and not access.may_deactivate(admin_user, leaver):
            raise PermissionDenied
        errors: list[str] = []
        status = 200
        chosen: dict[str, str] = {
            key[3:]: str(source.get(key))
            for key in source
            if key.startswith("to-") and source.get(key)
        }
        reason = (source.get("reason") or "").strip()
        plan: list[PlannedMove] = offboarding_plan(person=leaver) if leaver is not None else []
        if leaver is not None and request.method == "POST" and source.get("confirm"):
            known = {u.username for u in people} - {leaver.username}
            planned = {str(m.workflow_id) for m in plan}
            if any(k not in planned or v not in known for k, v in chosen.items()):
                errors.append(NOT_A_CHOICE)
            if not reason:
                errors.append(REASON_NEEDED)
            if not errors:
                try:
                    result = user_deactivate(
                        user=leaver,
                        by=admin_user,
                        reason=reason,
                        choices={uuid.UUID(k): v for k, v in chosen.items()},
                    )
                except DeactivationRefused as exc:
                    errors.append(str(exc))
                else:
                    moved = len(result.moved)
                    tasks = (
                        f"{moved} open task{'s' if moved != 1 else ''} handed on."
                        if moved
                        else "They held no open task."
                    )
                    messages.success(request, DONE.format(name=_name(leaver), tasks=tasks))
                    return HttpResponseRedirect(reverse("admin:approvals_user_offboard"))
            status = 409 if errors else 200
        context = {
            **self.admin_site.each_context(request),
            "title": PAGE_TITLE,
            "pick": pick,
            "leaver": leaver,
            "leaver_name": _name(leaver) if leaver is not None else "",
            "rows": _rows(leaver, plan, names, chosen) if leaver is not None else [],
            "others": [(u.username, _name(u)) for u in people if u != leaver],
            "reason": reason,
            "errors": errors,
            "named": NAMED,
        }
        return TemplateResponse(
            request, "admin/approvals/user/offboard.html", context, status=status
        )
