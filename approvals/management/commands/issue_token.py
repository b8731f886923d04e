from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.models import User
from approvals.services.tokens import TokenInvalid, token_issue

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
        name = options["username"]
        # No user name holds a NUL (PostgreSQL's text refuses one: asked, it is an error).
        user = (
            None if "\x00" in name else User.objects.filter(username=name, is_active=True).first()
        )
        if user is None:
            raise CommandError(NO_SUCH_USER.format(username=options["username"]))
        try:
            token, secret = token_issue(
                user=user,
                name=options["name"],
                ttl_seconds=options["ttl_seconds"],
                may_start=options["start"],
                may_signal=options["signal"],
            )
        except TokenInvalid as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write(f"Token {token.prefix}… for {user.username}, expires {token.expires_at}")
        self.stdout.write(secret)
