"""The parts of the workflow template editor page beyond Django's change form: the
condition builders, the problems in words at the top, the sample request employees'
form, the section links; and the confirmations retire and roll back ask first."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .. import access
from ..models import OrgGroup, Tenant, User, WorkflowTemplate
from ..selectors.template_effects import workflow_template_reach
from . import condition_form, present, step_cards
from .definition_problems import Problem
from .story import group_names_in

SECTIONS = (
    ("steps", "Steps"),
    ("conditions", "Conditions"),
    ("try", "Try it"),
    ("preview", "Preview"),
    ("versions", "Versions"),
    ("diagram", "Diagram"),
)
RETIRE_EFFECT = "{title} will no longer be offered to {people}; {running}, each on its own version."
ROLLBACK_EFFECT = (
    "Version {version} of {title} is published again as the newest version: new "
    "requests follow it; {running}."
)


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def editor_context(form: Any, obj: WorkflowTemplate | None, part: str = "") -> dict[str, Any]:
    """What the editor page draws besides the form: builders, problems, try it; and the
    part of the page shown first (``part``, as ``?part=versions`` asks; else the preview
    after Preview, else the steps). static/admin_templates.js shows one part at a time."""
    sections = [
        (anchor, words)
        for anchor, words in SECTIONS
        if (anchor != "preview" or form.preview is not None)
        and (anchor not in ("versions", "diagram") or obj is not None)
        and (anchor not in ("conditions", "try") or not form.as_json)
    ]
    shown = [anchor for anchor, _ in sections]
    out: dict[str, Any] = {
        "show_save_and_add_another": False,  # a new version, not another template
        "show_save_and_continue": False,  # saving already comes back to the page
        "sections": sections,
        "current_section": part
        if part in shown
        else ("preview" if form.preview is not None else "steps"),
        "section_chosen": part in shown or form.preview is not None,
    }
    problems = [Problem(text, prefix) for prefix, text in form.condition_errors.items()]
    out["problems"] = problems + list(form.problems)
    if form.as_json:
        return out
    base = form.edited or form.previous or {}
    out.update(
        {
            "conditions": condition_form.builders(
                base,
                form.data if form.is_bound else None,
                form.condition_errors,
                names=first_names(form.tenant_id, base),
                base=base_currency(form.tenant_id),
            ),
            "try_form": form.try_form,
            "try_submitter": form["try_submitter"],
            "try_late": form["try_late"],
            "cards": form.cards(),
            "picker": form.picker,
            "picker_words": form.picker.words(),
            "step_kinds": step_cards.KINDS,
            "step_modes": step_cards.MODES,
            "units": ("days", "hours", "minutes"),
            "activities": form.activities,
        }
    )
    return out


def base_currency(tenant_id: int | None) -> str:
    """The organisation's base currency, which conditions compare amounts in."""
    if tenant_id is None:
        return ""
    found = Tenant.objects.filter(pk=tenant_id).values_list("base_currency", flat=True)
    return next(iter(found), "")


def approver_picker(tenant_id: int, kept: list[str] | None = None) -> step_cards.Picker:
    """Whom the step cards offer: the manager, the organisation's groups by name, and
    the people who can approve (``access.approver_candidates``) by name; two people of
    one name are told apart by their e-mail addresses."""
    groups = OrgGroup.objects.filter(tenant_id=tenant_id).order_by("name")
    people = list(
        access.approver_candidates(tenant_id).only("username", "first_name", "last_name", "email")
    )
    named = [(p, p.get_full_name() or p.username) for p in people]
    counts = Counter(name for _, name in named)
    return step_cards.Picker(
        managers=[
            (step_cards.MANAGER_OF_SUBMITTER, "The submitter's manager"),
            (step_cards.MANAGER_OF_HOLDER, "The manager of whoever holds the step"),
        ],
        groups=[(f"group:{g.key}", f"{g.name} (group)") for g in groups],
        people=sorted(
            (
                (f"user:{p.username}", f"{name} ({p.email})" if counts[name] > 1 else name)
                for p, name in named
            ),
            key=lambda c: c[1].casefold(),
        ),
        kept=list(kept or []),
    )


def first_names(tenant_id: int, *definitions: dict[str, Any]) -> dict[str, str]:
    """The first names of the people ``definitions``' approval steps name, and the names
    of their groups, as ``present``'s ``names`` keeps them."""
    named = set().union(*(present.named_approvers(d) for d in definitions))
    rows = User.objects.filter(tenant_id=tenant_id, username__in=named).values_list(
        "username", "first_name"
    )
    out = {u: f or u for u, f in rows}
    for definition in definitions:
        out.update(group_names_in(tenant_id, definition))
    return out


def retire_effect(template: WorkflowTemplate) -> str:
    reach = workflow_template_reach(tenant_id=template.tenant_id, key=template.key)
    return RETIRE_EFFECT.format(
        title=template.definition.get("title") or template.key,
        people=_count(reach.people, "person", "people"),
        running=_count(reach.running, "running request finishes", "running requests finish"),
    )


def rollback_effect(template: WorkflowTemplate) -> str:
    reach = workflow_template_reach(tenant_id=template.tenant_id, key=template.key)
    return ROLLBACK_EFFECT.format(
        version=template.version,
        title=template.definition.get("title") or template.key,
        running=_count(
            reach.running, "running request keeps its version", "running requests keep theirs"
        ),
    )
