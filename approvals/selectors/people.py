"""Finding a colleague by what one types: the out-of-office and hand-over fields ask
this instead of listing an organisation of 20,000 people in every page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from ..models import User

PEOPLE_LIMIT = 10
PERSON_UNKNOWN = "Nobody here matches “{text}”: type part of their name."
PERSON_AMBIGUOUS = "Several people match “{text}”: {names}. Type more of the name."


@dataclass(frozen=True)
class Colleague:
    username: str
    name: str

    @property
    def label(self) -> str:
        return f"{self.name} ({self.username})" if self.name else self.username


def _matching(qs: Any, text: str) -> Any:
    for word in text.split():
        qs = qs.filter(
            Q(username__istartswith=word)
            | Q(first_name__istartswith=word)
            | Q(last_name__istartswith=word)
        )
    return qs.order_by("first_name", "last_name", "username")


def people_matching(people: Any, text: str, limit: int = PEOPLE_LIMIT) -> list[Colleague]:
    """Those of the queryset ``people`` whose names start with each word of ``text``,
    by name; at most ``limit``. For the admin's pickers, which search the people who
    may take a task (``access.approver_candidates``) or who may leave."""
    rows = _matching(people, text).values_list("username", "first_name", "last_name")[:limit]
    return [Colleague(u, f"{first} {last}".strip()) for u, first, last in rows]


def person_named(people: Any, text: str) -> tuple[User | None, str]:
    """The one person of the queryset ``people`` that ``text`` names (a user name picked
    from the suggestions, a full name, or the start of one), or None and why, in words:
    nobody matches, or several do (named, so the admin types more)."""
    text = text.strip()[:100]
    if not text:
        return None, ""
    exact = people.filter(username=text).first()
    if exact is not None:
        return exact, ""
    found = people_matching(people, text, limit=6)
    whole = [c for c in found if c.name.casefold() == text.casefold()]
    if len(whole) == 1 or len(found) == 1:
        one = (whole or found)[0]
        return people.filter(username=one.username).first(), ""
    if not found:
        return None, PERSON_UNKNOWN.format(text=text)
    names = ", ".join(c.label for c in found[:5])
    return None, PERSON_AMBIGUOUS.format(text=text, names=names)


def colleagues_matching(*, user: User, text: str, limit: int = PEOPLE_LIMIT) -> list[Colleague]:
    """Active people of ``user``'s organisation, ``user`` left out, whose user name,
    first name or last name starts with each word of ``text`` (any order, any case), by
    name. One query, at most ``limit`` rows."""
    qs = User.objects.filter(tenant_id=user.member_tenant_id, is_active=True).exclude(pk=user.pk)
    for word in text.split():
        qs = qs.filter(
            Q(username__istartswith=word)
            | Q(first_name__istartswith=word)
            | Q(last_name__istartswith=word)
        )
    rows = qs.order_by("first_name", "last_name", "username").values_list(
        "username", "first_name", "last_name"
    )[:limit]
    return [Colleague(u, f"{first} {last}".strip()) for u, first, last in rows]
