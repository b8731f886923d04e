"""Who will approve this, before it is submitted: as a person fills in the new-request
form, its script asks ``GET /workflows/new/route`` with what is there so far, and the
answer names the route in words ("Bob (your manager), then Finance (Fiona); Victor too
if the amount is above ₹1,00,000.00"). An amount in another currency than the
organisation's base leads with the conversion the rules will compare
("$999.00 ≈ ₹83,117 at 83.20 on 6 Dec 2026: it will go to Bob (your manager) ...").
The route comes from the same in-memory run that "try it" gives administrators
(selectors.template_trial), against the real directory, with nothing written. Only a
person who may start the template may ask."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_http_methods
from rest_framework.throttling import UserRateThrottle

from .. import access
from ..definitions import definition_for
from ..models import User
from ..selectors.template_trial import Trial, TrialEntry, workflow_template_try
from ..selectors.templates import workflow_templates_latest
from ..words.steps import failure_sentence
from . import present
from .forms import SchemaForm

NOT_YOURS = "There is no such kind of request for you to start."
FILL_IN = "Fill in the form to see who will approve it."
NO_ONE = "No one needs to approve this: it is approved as soon as you submit it."
STOPS = "As it stands this request would not go through: {why}"
ROUTE_START = "It will go to "
TOO_MANY = "Too many route previews at once; the next change will show it again."


class PreviewThrottle(UserRateThrottle):
    """Each person's route previews, counted in the cache as the API's throttles are:
    the form's script asks at most once per pause in typing, far below this."""

    scope = "route_preview"
    rate = "120/minute"


def _names(user: User, usernames: set[str]) -> dict[str, str]:
    wanted = {u for u in usernames if u}
    rows = User.objects.filter(tenant_id=user.member_tenant_id, username__in=wanted)
    return {u.username: u.first_name or u.get_full_name() or u.username for u in rows}


def _steps(raw: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        str(s.get("id")): s
        for s in raw.get("steps") or []
        if isinstance(s, Mapping) and s.get("kind", "approval") == "approval"
    }


def _rule(step: Mapping[str, Any], slot: int) -> Mapping[str, Any]:
    rules = step.get("approvers") or []
    rule = rules[slot] if 0 <= slot < len(rules) else {}
    return rule if isinstance(rule, Mapping) else {}


def _or(items: Sequence[str]) -> str:
    items = list(dict.fromkeys(i for i in items if i))
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _asked_words(
    entry: TrialEntry, step: Mapping[str, Any], raw: Mapping[str, Any], names: Mapping[str, str]
) -> str:
    """One step of the route: ``Bob (your manager)``, ``Finance (Fiona or Farah)``,
    ``Ivan (for Bob, who is away)``."""
    title = present.step_title(raw, entry.step)
    by_group: list[str] = []
    parts: list[str] = []
    for user, slot, behalf in zip(entry.users, entry.slots, entry.behalf, strict=False):
        rule = _rule(step, slot)
        name = present.person(user, names)
        if behalf:
            parts.append(f"{name} (for {present.person(behalf, names)}, who is away)")
        elif "group" in rule:
            by_group.append(name)
        elif "manager" in rule:
            parts.append(f"{name} (your manager)")
        else:
            parts.append(name)
    if by_group:
        shown = _or(by_group) if len(by_group) <= 3 else f"{len(by_group)} people"
        parts.append(f"{title} ({shown})")
    joiner = " and " if step.get("mode") == "all" else " or "
    return joiner.join(dict.fromkeys(parts))


def _skipped_words(
    step: Mapping[str, Any],
    raw: Mapping[str, Any],
    data: Mapping[str, Any],
    names: Mapping[str, str],
    base: str = "",
) -> str:
    """A step this data skips, with when it would not: ``Victor too if the amount is
    above ₹1,00,000.00``; "" for a step with no condition in words."""
    condition = step.get("when")
    if not isinstance(condition, str) or not condition:
        return ""
    schema = raw.get("schema") if isinstance(raw.get("schema"), Mapping) else None
    rules = [r for r in step.get("approvers") or [] if isinstance(r, Mapping)]
    who = _or(
        [
            "your manager"
            if "manager" in r
            else present.step_title(raw, str(step.get("id")))
            if "group" in r
            else present.person(str(r.get("user")), names)
            for r in rules
        ]
    )
    return f"{who or present.step_title(raw, str(step.get('id')))} too if " + (
        present.approver_reason(condition, schema, data, base)
    )


def route_words(trial: Trial, raw: Mapping[str, Any], data: Mapping[str, Any], user: User) -> str:
    """The route of ``trial`` in one sentence, after the conversion the rules compare
    when the amount is in another currency than the organisation's."""
    if trial.no_rate:
        return trial.no_rate
    if trial.problems and not trial.entries:
        return FILL_IN
    schema = raw.get("schema") if isinstance(raw.get("schema"), Mapping) else None
    converted = present.conversion_words(schema, data, trial.conversion)
    text = _route(trial, raw, data, user)
    return f"{converted}: {text[:1].lower()}{text[1:]}" if converted else text


def _route(trial: Trial, raw: Mapping[str, Any], data: Mapping[str, Any], user: User) -> str:
    steps = _steps(raw)
    asked: dict[str, TrialEntry] = {}
    skipped: list[str] = []
    for entry in trial.entries:
        if entry.kind == "asked" and entry.step in steps and entry.step not in asked:
            asked[entry.step] = entry
        elif entry.kind == "skipped" and entry.step in steps:
            skipped.append(entry.step)
    wanted = {u for e in asked.values() for u in (*e.users, *e.behalf)}
    wanted |= present.named_approvers(raw)
    names = _names(user, wanted)
    route = [_asked_words(e, steps[s], raw, names) for s, e in asked.items()]
    base = str((trial.conversion or {}).get("base", ""))
    extra = [w for s in skipped if (w := _skipped_words(steps[s], raw, data, names, base))]
    failed = next((e for e in trial.entries if e.kind == "failed"), None)
    if failed is not None and not route:
        # the step's own failure text, else its title: never the engine's message
        return STOPS.format(why=failure_sentence(raw, failed.step, failed.note) + ".")
    if not route:
        return NO_ONE + (f" ({'; '.join(extra)})" if extra else "")
    text = ROUTE_START + ", then ".join(route)
    if extra:
        text += "; " + "; ".join(extra)
    return text + "."


@login_required
@require_http_methods(["GET"])
def workflow_route(request: HttpRequest) -> JsonResponse:
    """The route a request of ``?template=`` with the form's values would take now, in
    words. 404 for a template the person may not start (or none); never writes."""
    user = request.user
    if not isinstance(user, User) or user.tenant_id is None or not access.may_submit(user):
        return JsonResponse({"error": NOT_YOURS}, status=404)
    if not PreviewThrottle().allow_request(request, None):  # type: ignore[arg-type]
        return JsonResponse({"error": TOO_MANY}, status=429)
    key = request.GET.get("template", "")
    template = next(
        (
            t
            for t in workflow_templates_latest(tenant_id=user.member_tenant_id)
            if t.key == key and access.may_start(user, t.key)
        ),
        None,
    )
    if template is None:
        return JsonResponse({"error": NOT_YOURS}, status=404)
    raw = template.definition if isinstance(template.definition, Mapping) else {}
    form = SchemaForm(definition_for(template.pk).schema, request.GET, with_reference=False)
    for field in form.fields.values():
        field.required = False  # what is there so far; a gap reads as "fill in"
    form.is_valid()  # a value that does not fit yet is left out of cleaned_data
    data = form.data_for_engine()
    trial = workflow_template_try(
        tenant_id=user.member_tenant_id, definition=raw, data=data, submitter=user, prompt=True
    )
    return JsonResponse({"route": route_words(trial, raw, data, user)})
