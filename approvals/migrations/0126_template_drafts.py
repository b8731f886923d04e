"""Four eyes on rules: a change to a workflow template is saved as a draft
(``WorkflowTemplateDraft``) that a second finance admin publishes; a version records
who drafted it beside who published it; an organisation may turn the rule off.

The drafts' table is tenant-owned, so its row-level security policies are applied from
approvals/sql/policies/tenant_isolation.sql while the file's statements are the ones
this migration knew (as 0046 does), where the roles of migration 0035 exist."""

from __future__ import annotations

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
    "policies/tenant_isolation.sql": "77f45e9d1ea5883c8b916f62d36bd7368abf0f08bb3a8b704ff24e845abf3b35",
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
            "Migration 0126: row-level security's policies not applied: the roles"
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
        ("approvals", "0125_withdrawn_status"),
    ]

    operations = [
        migrations.AddField(
            model_name="tenant",
            name="template_four_eyes",
            field=models.BooleanField(
                db_default=True,
                default=True,
                help_text=(
                    "A change to a workflow template is saved as a draft and published by a"
                    " second finance admin. Untick it and Save publishes at once, after asking"
                    " first."
                ),
                verbose_name="Four eyes on workflow templates",
            ),
        ),
        migrations.AddField(
            model_name="workflowtemplate",
            name="drafted_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.CreateModel(
            name="WorkflowTemplateDraft",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.SlugField(max_length=64)),
                ("definition", models.JSONField()),
                ("drafted_at", models.DateTimeField(auto_now_add=True)),
                ("closed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "based_on",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="approvals.workflowtemplate",
                    ),
                ),
                (
                    "closed_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "drafted_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "published",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="approvals.workflowtemplate",
                    ),
                ),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="approvals.tenant",
                    ),
                ),
            ],
            options={
                "ordering": ["tenant", "key", "-drafted_at"],
                "indexes": [
                    models.Index(
                        fields=["tenant", "key", "closed_at"], name="template_draft_open"
                    )
                ],
            },
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
