"""The live index of archived workflows (``ArchivedWorkflow``): one row per workflow
whose month went to the archive store, so its page, the API, the search and the export
read it in place; a tombstone once retention has deleted it. Its ``tenant_id`` is
sampled at statistics target 1000, as every tenant table's (migration 0041).

The table is tenant-owned, so its row-level security policies are applied from
approvals/sql/policies/tenant_isolation.sql while the file's statements are the ones
this migration knew (as 0046 does), where the roles of migration 0035 exist."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import django.db.models.deletion
from django.db import migrations, models

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
ROLES = ("approvals_app", "approvals_system")
SQL_FILES = {
    "policies/tenant_isolation.sql": "e9e8f0cef0de12e2c2d812b3aba1043cb63ebc918d495ad1861852fe5cd47e58",
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
            "Migration 0170: row-level security's policies not applied: the roles"
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
        ("approvals", "0160_live_window"),
    ]

    operations = [
        migrations.CreateModel(
            name="ArchivedWorkflow",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("workflow_id", models.UUIDField()),
                ("month", models.DateField()),
                ("subject_type", models.CharField(max_length=64)),
                ("subject_id", models.CharField(max_length=200)),
                ("template_key", models.CharField(max_length=64)),
                ("template_version", models.PositiveIntegerField()),
                ("submitter_id", models.BigIntegerField(blank=True, null=True)),
                ("submitter_name", models.CharField(blank=True, default="", max_length=300)),
                ("started_at", models.DateTimeField()),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("status", models.CharField(max_length=32)),
                ("summary", models.TextField(blank=True, default="")),
                ("amount_display", models.CharField(blank=True, default="", max_length=100)),
                ("participants", models.JSONField(default=list)),
                ("deciders", models.JSONField(default=list)),
                ("data_name", models.CharField(blank=True, default="", max_length=300)),
                ("manifest_name", models.CharField(blank=True, default="", max_length=300)),
                ("offset", models.PositiveBigIntegerField(default=0)),
                ("length", models.PositiveBigIntegerField(default=0)),
                ("events", models.PositiveIntegerField()),
                ("head_seq", models.PositiveIntegerField()),
                ("head_hash", models.CharField(max_length=64)),
                ("manifest_sha256", models.CharField(max_length=64)),
                ("indexed_at", models.DateTimeField()),
                ("deleted_at", models.DateTimeField(blank=True, null=True)),
                ("deleted_reason", models.TextField(blank=True, default="")),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, to="approvals.tenant"
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["tenant", "month"], name="archivedworkflow_month"),
                    models.Index(fields=["tenant", "subject_id"], name="archivedworkflow_subject"),
                    models.Index(fields=["tenant", "started_at"], name="archivedworkflow_started"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tenant", "workflow_id"), name="archivedworkflow_tenant_workflow"
                    )
                ],
            },
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
        # sampled by organisation as every tenant table is since migration 0041
        migrations.RunSQL(
            "ALTER TABLE approvals_archivedworkflow ALTER COLUMN tenant_id SET STATISTICS 1000",
            "ALTER TABLE approvals_archivedworkflow ALTER COLUMN tenant_id SET STATISTICS -1",
        ),
    ]
