"""A person's own settings."""

from __future__ import annotations

from ..models import User
from ..runtime import tenant_scope
from ..words.zones import ZONE_INVALID, zone_named


class SettingRefused(ValueError):
    pass


@tenant_scope.atomic_for_tenant_of("user")
def user_time_zone_set(*, user: User, time_zone: str) -> None:
    """Show ``user`` their times in ``time_zone`` (an IANA name); blank goes back to
    what their browser says. Raises SettingRefused for a name that is no zone."""
    if time_zone and zone_named(time_zone) is None:
        raise SettingRefused(ZONE_INVALID)
    User.objects.filter(pk=user.pk).update(time_zone=time_zone)
    user.time_zone = time_zone
