"""Finding a colleague by what one types: the out-of-office and hand-over fields ask
this instead of listing an organisation of 20,000 people in every page."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from ..models import User

PEOPLE_LIMIT = 10


@dataclass(frozen=True)
class Colleague:
    username: str
    name: str

    @property
    def label(self) -> str:
        return f"{self.name} ({self.username})" if self.name else self.username


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
