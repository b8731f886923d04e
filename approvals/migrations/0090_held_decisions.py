"""Decisions sent from a page, held by the server for their undo window
(approvals.models.held), and the table's row-level security from
approvals/sql/policies/tenant_isolation.sql, applied as migration 0046 applies its files:
read from disk when the migration runs, and only while its statements are the ones this
migration knew."""

import hashlib
import sys
from pathlib import Path
from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
ROLES = ("approvals_app", "approvals_system")
SQL_FILES = {
    "policies/tenant_isolation.sql": "ff349447925ef09d4b2e389775c697e9c7dcf49fd624136c16df63acbb484cf5",
}


def statements_digest(text: str) -> str:
    """The SHA-256 of a file's text after its leading comment lines."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("--"):
        start += 1
    return hashlib.sha256("".join(lines[start:]).encode()).hexdigest()


def forwards(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_roles WHERE rolname = ANY(%s)", [list(ROLES)])
        roles = cursor.fetchone()[0]
    if roles != len(ROLES):
        sys.stderr.write(
            "Migration 0090: row-level security's policies not applied: the roles"
            " approvals_app and approvals_system do not exist (see migration 0035).\n"
        )
        return
    for name, digest in SQL_FILES.items():
        path = SQL_DIR / name
        if path.exists():
            text = path.read_text(encoding="utf-8")
            if statements_digest(text) == digest:
                schema_editor.execute(text, None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0070_exchange_rates"),
    ]

    operations = [
        migrations.CreateModel(
            name="HeldDecision",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("step", models.CharField(max_length=64)),
                ("decision", models.CharField(max_length=16)),
                ("comment", models.TextField(blank=True, default="")),
                ("on_behalf_of", models.CharField(blank=True, default="", max_length=150)),
                ("request_id", models.CharField(max_length=128)),
                ("held_at", models.DateTimeField()),
                ("release_at", models.DateTimeField()),
                ("recorded_at", models.DateTimeField(blank=True, null=True)),
                ("undone_at", models.DateTimeField(blank=True, null=True)),
                ("refused", models.TextField(blank=True, default="")),
                ("failures", models.PositiveIntegerField(default=0)),
                (
                    "actor",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="held_decisions",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        to="approvals.tenant",
                    ),
                ),
                (
                    "workflow",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="held_decisions",
                        to="approvals.workflow",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        condition=models.Q(
                            ("recorded_at__isnull", True),
                            ("refused", ""),
                            ("undone_at__isnull", True),
                        ),
                        fields=["release_at"],
                        name="held_due",
                    ),
                    models.Index(fields=["tenant", "workflow"], name="held_tenant_workflow"),
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("workflow", "request_id"), name="held_request"),
                    models.UniqueConstraint(
                        condition=models.Q(
                            ("recorded_at__isnull", True),
                            ("refused", ""),
                            ("undone_at__isnull", True),
                        ),
                        fields=("workflow",),
                        name="held_one_open",
                    ),
                ],
            },
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
