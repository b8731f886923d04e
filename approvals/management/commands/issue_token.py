from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.models import User
from approvals.services.tokens import token_issue

NO_SUCH_USER = "No active user named {username!r}."


class Command(BaseCommand):
    help = (
        "Issue an API token for an integration and print its secret (shown only now). "
        "--start and --signal restrict what it may start and signal."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="")
        parser.add_argument("--ttl-seconds", type=int, default=None)
        parser.add_argument(
            "--start", nargs="+", default=None, metavar="KEY", help="workflow template keys"
        )
        parser.add_argument("--signal", nargs="+", default=None, metavar="NAME")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["username"], is_active=True).first()
        if user is None:
            raise CommandError(NO_SUCH_USER.format(username=options["username"]))
        ttl = options["ttl_seconds"]
        if ttl is not None and ttl <= 0:
            raise CommandError("--ttl-seconds must be positive.")
        token, secret = token_issue(
            user=user,
            name=options["name"],
            ttl_seconds=ttl,
            may_start=options["start"],
            may_signal=options["signal"],
        )
        self.stderr.write(f"Token {token.prefix}… for {user.username}, expires {token.expires_at}")
        self.stdout.write(secret)
