"""The organisation admin's offboarding page in Django admin: pick someone who leaves,
see each of their open tasks and where it would go (services.directory's rules), give
any of them to someone else, and confirm with a reason; then the person is
deactivated and every task handed on in one transaction. Showing where tasks would go
changes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from .. import access
from ..models import OrgGroup, User, Workflow
from ..selectors.people import people_matching, person_named
from ..services.directory import (
    GROUP,
    NAMED,
    PRINCIPAL,
    DeactivationRefused,
    PlannedMove,
    offboarding_choice_refusal,
    offboarding_plan,
    takers_for,
    user_deactivate,
)
from ..web import present
from .confirm import confirm_page, confirmed

NOBODY_TAKES = "nobody can take it: choose someone"
NOT_A_CHOICE = (
    "Some tasks cannot go to the person you named: the reason is beside each. Name "
    "someone else, or leave the box empty for where the rules send it."
)
QUERY_INVALID = "Type 1 to 100 characters of a name."
REASON_NEEDED = "Say why they are leaving: it is kept in each request's history."
DONE = "{name} is deactivated. {tasks}"
# Asked first (by the page's dialog, or without its script by a page of its own).
OFFBOARD_QUESTION = (
    "Deactivate {name} and hand on their tasks as shown? They can no longer sign in, and"
    " the tasks do not come back to them."
)
PAGE_TITLE = "Offboard someone who leaves"


def _name(user: User) -> str:
    return user.get_full_name() or user.username


def _people(admin_user: User) -> Any:
    """The active people of the admin's organisation, the admin aside: who may leave."""
    return User.objects.filter(tenant_id=admin_user.member_tenant_id, is_active=True).exclude(
        pk=admin_user.pk
    )


def _takers(admin_user: User, leaver: User) -> Any:
    """Who may be given a leaver's task: those who can hold tasks, the leaver aside."""
    return access.approver_candidates(admin_user.member_tenant_id or 0).exclude(pk=leaver.pk)


@dataclass
class _Choice:
    """A task given to someone else: what was typed, whom it names, why not (words)."""

    typed: str
    person: User | None = None
    refusal: str = ""


def _choices(
    admin_user: User, leaver: User, source: Mapping[str, Any], plan: list[PlannedMove]
) -> dict[str, _Choice]:
    """Each task's override, found by name among those who may take it and checked by
    segregation of duties now, so the preview says why before anything is confirmed."""
    steps = {str(m.workflow_id): m.step for m in plan}
    out: dict[str, _Choice] = {}
    for key in source:
        typed = str(source.get(key) or "").strip()
        if not key.startswith("to-") or not typed:
            continue
        wid = key[3:]
        choice = _Choice(typed)
        out[wid] = choice
        if wid not in steps:
            choice.refusal = NOT_A_CHOICE
            continue
        choice.person, choice.refusal = person_named(_takers(admin_user, leaver), typed)
        if choice.person is None:
            named, _ = person_named(_people(admin_user), typed)
            if named is not None:  # someone, but one who may not take tasks: say why
                choice.refusal = (
                    offboarding_choice_refusal(
                        person=leaver, workflow_id=uuid.UUID(wid), step=steps[wid], chosen=named
                    )
                    or choice.refusal
                )
            continue
        choice.refusal = (
            offboarding_choice_refusal(
                person=leaver, workflow_id=uuid.UUID(wid), step=steps[wid], chosen=choice.person
            )
            or ""
        )
    return out


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
    leaver: User, plan: list[PlannedMove], names: Mapping[str, str], chosen: Mapping[str, _Choice]
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
        pick = chosen.get(str(move.workflow_id))
        if pick is not None and pick.refusal:
            goes_to = pick.refusal
        elif pick is not None and pick.person is not None:
            goes_to = f"{_name(pick.person)}, chosen by you"
        else:
            goes_to = _destination_words(move, leaver, names, wf, manager)
        rows.append(
            {
                "key": str(move.workflow_id),
                "task": _task_words(wf, move.step),
                "goes_to": goes_to,
                "chosen": pick.typed if pick is not None else "",
                "refused": bool(pick is not None and pick.refusal),
                "nobody": not move.to_users and pick is None,
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
    model: Any

    def get_urls(self) -> list[URLPattern]:
        page = path(
            "offboard/",
            self._guarded(self.offboard_view),
            name="approvals_user_offboard",
        )
        people = path(
            "offboard/people/",
            self._guarded(self.offboard_people),
            name="approvals_user_offboard_people",
        )
        return [page, people, *super().get_urls()]  # type: ignore[misc]

    def offboard_people(self, request: HttpRequest) -> HttpResponse:
        """Suggestions for the admin's name boxes (``?q=``): who may leave; with
        ``?taking=<leaver>`` who may take their tasks; with ``?takers=1`` who can take a
        task at all (reassign, add an approver). At most ten, never the list."""
        admin_user: Any = request.user
        text = request.GET.get("q", "").strip()
        if not 1 <= len(text) <= 100 or "\x00" in text:
            return JsonResponse({"error": QUERY_INVALID}, status=400)
        people = _people(admin_user)
        leaver = people.filter(username=request.GET.get("taking", "")).first()
        if leaver is not None:
            people = _takers(admin_user, leaver)
        elif request.GET.get("takers"):  # reassign, add an approver: who can take a task
            people = access.approver_candidates(admin_user.member_tenant_id or 0)
        found = people_matching(people, text)
        return JsonResponse(
            {"people": [{"username": c.username, "name": c.name, "label": c.label} for c in found]}
        )

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
        source = request.POST if request.method == "POST" else request.GET
        leaver, who_error = self._leaver(admin_user, source)
        if leaver is not None and not access.may_deactivate(admin_user, leaver):
            raise PermissionDenied
        errors: list[str] = []
        status = 200
        reason = (source.get("reason") or "").strip()
        plan: list[PlannedMove] = offboarding_plan(person=leaver) if leaver is not None else []
        chosen = _choices(admin_user, leaver, source, plan) if leaver is not None else {}
        if any(c.refusal for c in chosen.values()):
            errors.append(NOT_A_CHOICE)
        if leaver is not None and request.method == "POST" and source.get("confirm"):
            if not reason:
                errors.append(REASON_NEEDED)
            if not errors and not confirmed(request):
                # without the page's script: a page of its own asks first
                return confirm_page(
                    request,
                    admin_site=self.admin_site,
                    opts=self.model._meta,
                    title=f"Deactivate {_name(leaver)}?",
                    question=OFFBOARD_QUESTION.format(name=_name(leaver)),
                    action=f"Deactivate {_name(leaver)} and hand on these tasks",
                    back=request.path,
                )
            if not errors:
                done = self._offboard(request, admin_user, leaver, reason, chosen)
                if isinstance(done, str):
                    errors.append(done)
                else:
                    return done
            status = 409 if errors else 200
        names = {admin_user.username: _name(admin_user)}
        if leaver is not None:
            names |= {leaver.username: _name(leaver)}
            names |= {u.username: _name(u) for u in takers_for(leaver)}
            names |= {u: _name(p) for u, p in _holders(plan).items()}
        context = {
            **self.admin_site.each_context(request),
            "title": PAGE_TITLE,
            "who": source.get("who", "") if leaver is None else _name(leaver),
            "who_error": who_error,
            "leaver": leaver,
            "leaver_name": _name(leaver) if leaver is not None else "",
            "question": OFFBOARD_QUESTION.format(name=_name(leaver)) if leaver is not None else "",
            "rows": _rows(leaver, plan, names, chosen) if leaver is not None else [],
            "reason": reason,
            "errors": errors,
            "named": NAMED,
        }
        return TemplateResponse(
            request, "admin/approvals/user/offboard.html", context, status=status
        )

    @staticmethod
    def _leaver(admin_user: User, source: Mapping[str, Any]) -> tuple[User | None, str]:
        """The person leaving: by user name once found (``person``), else by the name
        typed (``who``); why not, in words."""
        people = _people(admin_user)
        if source.get("person"):
            return people.filter(username=source.get("person")).first(), ""
        return person_named(people, str(source.get("who") or ""))

    @staticmethod
    def _offboard(
        request: HttpRequest,
        admin_user: User,
        leaver: User,
        reason: str,
        chosen: Mapping[str, _Choice],
    ) -> HttpResponse | str:
        try:
            result = user_deactivate(
                user=leaver,
                by=admin_user,
                reason=reason,
                choices={
                    uuid.UUID(k): c.person.username
                    for k, c in chosen.items()
                    if c.person is not None
                },
            )
        except DeactivationRefused as exc:
            return str(exc)
        moved = len(result.moved)
        tasks = (
            f"{moved} open task{'s' if moved != 1 else ''} handed on."
            if moved
            else "They held no open task."
        )
        messages.success(request, DONE.format(name=_name(leaver), tasks=tasks))
        return HttpResponseRedirect(reverse("admin:approvals_user_offboard"))


def _holders(plan: list[PlannedMove]) -> dict[str, User]:
    """The people the plan sends tasks to, by user name (for their names)."""
    wanted = {u for m in plan for u in m.to_users}
    return {u.username: u for u in User.objects.filter(username__in=wanted)}
