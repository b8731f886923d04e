"""The departments an organisation keeps (``Department``): a request's department field
offers them as a choice and a start names one of them. The table is tenant-owned, so its
row-level security policies are applied from approvals/sql/policies/tenant_isolation.sql
while the file's statements are the ones this migration knew (as 0046 does), where the
roles of migration 0035 exist; its ``tenant_id`` samples as every other table's (0041)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import django.db.models.deletion
import django.db.models.functions.text
from django.db import migrations, models

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
ROLES = ("approvals_app", "approvals_system")
SQL_FILES = {
    "policies/tenant_isolation.sql": "a6910a31f79865d8f74a692c57fb729ae8b5d686af817ab8a2b72afaf6ee3b25",
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
            "Migration 0180: row-level security's policies not applied: the roles"
            " approvals_app and approvals_system do not exist (see migration 0035).\n"
        )
        return
    for name, digest in SQL_FILES.items():
        path = SQL_DIR / name
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        if statements_digest(text) == digest:
            schema_editor.execute(text, None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0170_archived_workflow_index"),
    ]

    operations = [
        migrations.CreateModel(
            name="Department",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "key",
                    models.SlugField(
                        help_text=(
                            "What a request records and rules compare, such as eng."
                            " Keep it once used."
                        ),
                        max_length=64,
                    ),
                ),
                (
                    "name",
                    models.CharField(
                        help_text="What people choose from, such as Engineering.", max_length=64
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="approvals.tenant",
                    ),
                ),
            ],
            options={
                "ordering": ["name"],
                "constraints": [
                    models.UniqueConstraint(fields=("tenant", "key"), name="department_key_once"),
                    models.UniqueConstraint(
                        models.F("tenant"),
                        django.db.models.functions.text.Lower("name"),
                        name="department_name_once",
                    ),
                ],
            },
        ),
        migrations.RunSQL(
            "ALTER TABLE approvals_department ALTER COLUMN tenant_id SET STATISTICS 1000",
            migrations.RunSQL.noop,
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
