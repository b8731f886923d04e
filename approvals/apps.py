from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _directory_version_row(using: str = "default", **_: Any) -> None:
    """The one row the directory triggers bump; a flushed database (tests) gets it
    back. Without it commands still work, only without the directory cache."""
    from .models import DirectoryVersion

    DirectoryVersion.objects.using(using).get_or_create(pk=1)


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
        from .notifications.sender import mail_dispatch_for
        from .runtime.dispatch import attempts_dispatcher_set, mail_dispatcher_set
        from .services.tokens import connect_signals
        from .workers.activities import attempt_dispatch

        connect_signals()
        post_migrate.connect(_directory_version_row, sender=self)
        # The runtime hands due activity attempts to the workers through this hook,
        # so that it never imports them.
        attempts_dispatcher_set(attempt_dispatch)
        mail_dispatcher_set(mail_dispatch_for)
