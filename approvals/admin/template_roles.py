"""The admin's screen "Who may start, edit and see the requests of" a workflow template:
the groups and people named for each role (``access.TemplateRole``), named and taken
away by typing a name (suggestions come from a search of at most ten, never a list of
the whole organisation). Everyone who may read the template in the admin reads this
page; those who may edit it (``access.edit_refusal``) change it."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from .. import access
from ..access import TemplateRole
from ..models import User, WorkflowTemplate
from ..selectors.people import people_matching, person_named
from ..selectors.template_roles import group_named, groups_matching, template_role_holders
from ..services.template_roles import RoleRefused, template_role_grant, template_role_revoke
from ..web.present import ROLE_GROUP_WORDS, group_words

ROLE_TITLES = {
    TemplateRole.START: "Who may start this workflow template",
    TemplateRole.EDIT: "Who may edit this workflow template",
    TemplateRole.VIEW_RUNS: "Who may see all its requests",
}
ROLE_HELP = {
    TemplateRole.START: (
        "While nobody is named here, every member of your organisation may start it, as "
        "before. Once a group or a person is named, only they may start it (superusers "
        "too; another system's account starts what its API token names). Auditors start "
        "nothing."
    ),
    TemplateRole.EDIT: (
        "While nobody is named here, every finance admin of your organisation may edit it "
        "and this page, as before. Once a group or a person is named, only the finance "
        "admins among them may. Naming someone does not make them a finance admin."
    ),
    TemplateRole.VIEW_RUNS: (
        "The people named here, and the members of the groups named, see every request of "
        "this workflow template (on any version) in search and on each request's page. "
        "Those who take part in a request always see it; auditors and organisation admins "
        "see them all."
    ),
}
ROLE_NOBODY = {
    TemplateRole.START: "Nobody is named: everyone in your organisation may start it.",
    TemplateRole.EDIT: "Nobody is named: every finance admin of your organisation may edit it.",
    TemplateRole.VIEW_RUNS: (
        "Nobody is named: a request is seen by those who take part in it, auditors and "
        "organisation admins."
    ),
}
ROLE_UNKNOWN = "Choose one of the roles on this page."
NAME_SOMEONE = "Type the name of a group or of a person to add."
QUERY_INVALID = "Type 1 to 100 characters of a name."
ADDED = "{who} {verb} now named under “{role}”."
REMOVED = "{who} {verb} no longer named under “{role}”."


def _role(value: str) -> TemplateRole | None:
    try:
        return TemplateRole(value)
    except ValueError:
        return None


class TemplateRolesAdmin:
    """Mixed into WorkflowTemplateAdmin: the roles screen and its name search."""

    admin_site: Any
    model: Any

    def role_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view
        name = "approvals_workflowtemplate"
        return [
            path("<int:pk>/roles/", view(self.roles_view), name=f"{name}_roles"),
            path("roles/find/", view(self.roles_find), name=f"{name}_roles_find"),
        ]

    def _template(self, request: HttpRequest, pk: int) -> WorkflowTemplate:
        admin: Any = self  # a ModelAdmin: its queryset and rights are TenantScoped's
        template = admin.get_queryset(request).filter(pk=pk).first()
        if template is None:
            raise Http404("No such workflow template version.")
        if not admin.has_view_permission(request, template):
            raise PermissionDenied
        return template

    def roles_find(self, request: HttpRequest) -> HttpResponse:
        """Suggestions for the screen's name boxes (``?q=``; ``?kind=group`` for the
        organisation's groups, else its active people): at most ten, never the list.
        Each answer's ``username`` is what the box takes (a group's name)."""
        user: Any = request.user
        if not access.admin_may(user, "view", "workflowtemplate") or not access.is_member(user):
            raise PermissionDenied
        text = request.GET.get("q", "").strip()
        if not 1 <= len(text) <= 100 or "\x00" in text:
            return JsonResponse({"error": QUERY_INVALID}, status=400)
        tenant = user.member_tenant_id
        if request.GET.get("kind") == "group":
            names = groups_matching(tenant_id=tenant, text=text)
            found = [
                {"username": n, "name": group_words(n), "label": f"{group_words(n)} (group)"}
                for n in names
            ]
        else:
            people = User.objects.filter(tenant_id=tenant, is_active=True)
            found = [
                {"username": c.username, "name": c.name, "label": c.label}
                for c in people_matching(people, text)
            ]
        return JsonResponse({"people": found})

    def roles_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        template = self._template(request, pk)
        user: Any = request.user
        refusal = access.edit_refusal(user, template)
        errors: dict[str, str] = {}
        typed: dict[str, dict[str, str]] = {}
        status = 200
        if request.method == "POST":
            if refusal is not None:
                raise PermissionDenied(refusal)
            role = _role(request.POST.get("role", ""))
            if role is None:
                errors[""] = ROLE_UNKNOWN
            else:
                done, why = self._change(request, template, role)
                if done:
                    return HttpResponseRedirect(
                        reverse("admin:approvals_workflowtemplate_roles", args=[template.pk])
                        + f"#{role.value}"
                    )
                errors[role.value] = why
                typed[role.value] = {
                    "group": request.POST.get("group", ""),
                    "person": request.POST.get("person", ""),
                }
            status = 400
        holders = template_role_holders(template=template)
        title = template.definition.get("title") or template.title or template.key
        roles = [
            {
                "key": role.value,
                "title": ROLE_TITLES[role],
                "help": ROLE_HELP[role],
                "nobody": ROLE_NOBODY[role],
                "holders": holders[role],
                "groups": [(name, group_words(name), n) for _, name, n in holders[role].groups],
                "error": errors.get(role.value, ""),
                "typed": typed.get(role.value, {}),
            }
            for role in TemplateRole
        ]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": template,
            "title": f"Who may start, edit and see the requests of {title}",
            "roles": roles,
            "may_change": refusal is None,
            "refusal": refusal if access.admin_may(user, "change", "workflowtemplate") else "",
            "page_error": errors.get("", ""),
        }
        return TemplateResponse(
            request, "admin/approvals/workflowtemplate/roles.html", context, status=status
        )

    def _change(
        self, request: HttpRequest, template: WorkflowTemplate, role: TemplateRole
    ) -> tuple[bool, str]:
        """Add or remove the group or person the form names; (done, why not)."""
        tenant = template.tenant_id
        removing = "remove" in request.POST
        group_text = request.POST.get("group", "").strip()
        person_text = request.POST.get("person", "").strip()
        if not group_text and not person_text:
            return False, NAME_SOMEONE
        # a role group may be typed by what people call it ("Finance admins")
        spoken = {words.casefold(): name for name, words in ROLE_GROUP_WORDS.items()}
        group_text = spoken.get(group_text.casefold(), group_text)
        group, why = group_named(tenant_id=tenant, text=group_text) if group_text else (None, "")
        if why:
            return False, why
        people = User.objects.filter(tenant_id=tenant)
        if not removing:
            people = people.filter(is_active=True)
        person, why = person_named(people, person_text) if person_text else (None, "")
        if why:
            return False, why
        by: Any = request.user
        change = template_role_revoke if removing else template_role_grant
        try:
            change(template=template, role=role, by=by, group=group, person=person)
        except RoleRefused as exc:
            return False, str(exc)
        except access.Forbidden as exc:
            raise PermissionDenied(exc.message) from exc
        named_group = group_words(group.name) if group else ""
        names = [n for n in (named_group, _name(person) if person else "") if n]
        words = REMOVED if removing else ADDED
        who = " and ".join(names)
        messages.info(
            request,
            words.format(who=who, verb="are" if len(names) > 1 else "is", role=ROLE_TITLES[role]),
        )
        return True, ""


def _name(person: User) -> str:
    return person.get_full_name() or person.username
