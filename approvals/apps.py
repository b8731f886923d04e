from importlib import import_module
from typing import Any

from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


def _directory_version_row(using: str = "default", **_: Any) -> None:
    """The one row the directory triggers bump; a flushed database (tests) gets it
    back. Without it commands still work, only without the directory cache."""
    from .models import DirectoryVersion

    DirectoryVersion.objects.using(using).get_or_create(pk=1)


def _row_level_security(using: str = "default", **_: Any) -> None:
    """Policies for tenant-owned tables added after migration 0035."""
    from django.db import connections

    from .sql import row_level_security_ensure

    with connections[using].cursor() as cursor:
        row_level_security_ensure(cursor)


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approvals"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
        from .notifications.sender import mail_dispatch_for
        from .runtime.dispatch import attempts_dispatcher_set, mail_dispatcher_set
        from .runtime.loaders import fast_timestamps
        from .services.tokens import connect_signals
        from .workers.activities import attempt_dispatch

        connect_signals()
        # Timestamps parsed by psycopg's C loader (runtime/loaders.py).
        connection_created.connect(fast_timestamps, dispatch_uid="approvals-fast-timestamps")
        post_migrate.connect(_directory_version_row, sender=self)
        post_migrate.connect(_row_level_security, sender=self)
        # The runtime hands due activity attempts to the workers through this hook,
        # so that it never imports them.
        attempts_dispatcher_set(attempt_dispatch)
        mail_dispatcher_set(mail_dispatch_for)


class ApprovalsAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the approvals site (admin/site.py). It lives here, not in
    the admin package: settings load it before the models, and the package's
    ``__init__`` registers them. Named in INSTALLED_APPS, never the app's default."""

    default = False
    default_site = "approvals.admin.site.ApprovalsAdminSite"

    def ready(self) -> None:
        # The package registers the models on import, and the site's class lives in it:
        # imported first, the registrations build the one site; were the site built
        # first (by another app's admin), building it would import the package and
        # register into a site that is then replaced.
        import_module("approvals.admin")
        super().ready()
