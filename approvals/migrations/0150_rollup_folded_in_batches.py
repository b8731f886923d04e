"""The analytics rollup folded by a periodic job instead of statement triggers.

Until now three statement triggers on the step visits (0033, 0038) upserted the rollup
rows (``approvals_stepday``) in every command's transaction. From here a visit carries
``counted``: written false, set by the periodic fold when it adds the visit to the
rollup. A counted visit that is changed or deleted is kept, as counted, in
``approvals_stepvisitretraction`` by a row trigger (and a changed one marked uncounted),
for the fold to take off. The page adds what is still pending when it reads.

The visits already present were counted by the old triggers: the column is added with
the default true (no rewrite of the table), then its default set to false. The old
triggers and their functions are dropped; the new function, trigger and the new
table's policies are applied from approvals/sql/ while the files' statements are the
ones this migration knew (as 0046 does), the policies where the roles of 0035 exist."""

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
    "functions/approvals_visit_retract.sql": (
        "1fb314ff06f0d7b32c5db43eb0e9520234de976729b38f6c1590fc5cdce1cec4"
    ),
    "triggers/analytics_rollup.sql": (
        "d72008186002628c584fe237ffc97d52a8cee13c2027f3c670d1c502774643d3"
    ),
    "policies/tenant_isolation.sql": (
        "52a3af290162121c5470678b78ad74271ae4abbc4cbd0b7d16ced7b3f7145677"
    ),
}

DROP_OLD = [
    "DROP TRIGGER IF EXISTS stepday_insert ON approvals_stepvisit",
    "DROP TRIGGER IF EXISTS stepday_update ON approvals_stepvisit",
    "DROP TRIGGER IF EXISTS stepday_delete ON approvals_stepvisit",
    "DROP FUNCTION IF EXISTS approvals_stepday_insert()",
    "DROP FUNCTION IF EXISTS approvals_stepday_update()",
    "DROP FUNCTION IF EXISTS approvals_stepday_delete()",
    "DROP FUNCTION IF EXISTS approvals_stepday_move(approvals_stepvisit, approvals_stepvisit)",
    "DROP FUNCTION IF EXISTS approvals_stepday_one(approvals_stepvisit, integer)",
    "DROP FUNCTION IF EXISTS approvals_stepday_add("
    "approvals_stepvisit, integer[], integer, integer, integer, integer)",
    "DROP FUNCTION IF EXISTS approvals_bump(integer[], integer, integer)",
]

ADD_COUNTED = [
    # Present visits are in the rollup: true for them without rewriting the table.
    "ALTER TABLE approvals_stepvisit ADD COLUMN counted boolean NOT NULL DEFAULT true",
    "ALTER TABLE approvals_stepvisit ALTER COLUMN counted SET DEFAULT false",
]


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
        roles = cursor.fetchone()[0] == len(ROLES)
    if not roles:
        sys.stderr.write(
            "Migration 0150: row-level security's policies not applied: the roles"
            " approvals_app and approvals_system do not exist (see migration 0035).\n"
        )
    for name, digest in SQL_FILES.items():
        if name.startswith("policies/") and not roles:
            continue
        path = SQL_DIR / name
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        if statements_digest(text) == digest:
            schema_editor.execute(text, None)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0140_tenant_seal_checked_cheaply")]

    operations = [
        migrations.RunSQL(DROP_OLD),
        migrations.RunSQL(
            ADD_COUNTED,
            state_operations=[
                migrations.AddField(
                    model_name="stepvisit",
                    name="counted",
                    field=models.BooleanField(db_default=False, default=False),
                )
            ],
        ),
        migrations.AddIndex(
            model_name="stepvisit",
            index=models.Index(
                condition=models.Q(("counted", False)),
                fields=["tenant", "entered_at"],
                name="visit_uncounted",
            ),
        ),
        migrations.CreateModel(
            name="StepVisitRetraction",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("template_key", models.SlugField(db_index=False, max_length=64)),
                ("entry", models.PositiveIntegerField()),
                ("step", models.CharField(max_length=64)),
                ("kind", models.CharField(max_length=16)),
                ("entered_at", models.DateTimeField()),
                ("left_at", models.DateTimeField(blank=True, null=True)),
                ("due_at", models.DateTimeField(blank=True, null=True)),
                ("outcome", models.CharField(blank=True, default="", max_length=16)),
                ("escalated", models.BooleanField(default=False)),
                ("dims", models.JSONField(blank=True, default=dict)),
                (
                    "tenant",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        to="approvals.tenant",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["tenant", "entered_at"], name="retraction_period")
                ],
            },
        ),
        migrations.RunSQL(
            "ALTER TABLE approvals_stepvisitretraction ALTER COLUMN tenant_id SET STATISTICS 1000"
        ),
        migrations.RunPython(forwards, elidable=False),
    ]
