"""Out-of-office times held to 1970..2200 (approvals/models/time_bounds.py): one
delegation stored with a BC first day stopped every command that assigns people.

Rows already outside are mended first: one that ended before the range or starts after
it never applies and is deleted; one that reaches past an end is cut to it, which keeps
what it meant (away since long ago, or until further notice). The check constraint
``delegation_bounded_times`` is added with its SQL written out (the state records the
same constraint); the model's validators check the times before they reach it."""

import datetime
from typing import Any

from django.db import migrations, models

import approvals.models.time_bounds


def postgres_sql(sql: str, reverse_sql: str) -> migrations.RunPython:
    """``sql`` forwards and ``reverse_sql`` backwards, each handed whole to the schema
    editor (this migration's own copy: a migration imports no helper of the app)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(sql)

    def backwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(reverse_sql)

    return migrations.RunPython(forwards, backwards)


EARLIEST = datetime.datetime(1969, 12, 31, 0, 0, tzinfo=datetime.UTC)
LATEST = datetime.datetime(2201, 1, 2, 0, 0, tzinfo=datetime.UTC)


def mend_delegations(apps, schema_editor):
    Delegation = apps.get_model("approvals", "Delegation")
    Delegation.objects.filter(
        models.Q(ends_at__lte=EARLIEST) | models.Q(starts_at__gte=LATEST)
    ).delete()
    Delegation.objects.filter(starts_at__lt=EARLIEST).update(starts_at=EARLIEST)
    Delegation.objects.filter(ends_at__gt=LATEST).update(ends_at=LATEST)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0017_shared_rows_unchecked"),
    ]

    operations = [
        migrations.RunPython(mend_delegations, migrations.RunPython.noop),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="delegation",
                    name="starts_at",
                    field=models.DateTimeField(
                        validators=[approvals.models.time_bounds.validate_stored_moment]
                    ),
                ),
                migrations.AlterField(
                    model_name="delegation",
                    name="ends_at",
                    field=models.DateTimeField(
                        validators=[approvals.models.time_bounds.validate_stored_moment]
                    ),
                ),
                migrations.AddConstraint(
                    model_name="delegation",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("starts_at__gte", EARLIEST), ("ends_at__lte", LATEST)),
                        name="delegation_bounded_times",
                        violation_error_message="Enter a date and time between 1 January 1970 and 31 December 2200.",
                    ),
                ),
            ],
            database_operations=[
                postgres_sql(
                    'ALTER TABLE "approvals_delegation" ADD CONSTRAINT "delegation_bounded_times"'
                    " CHECK (\"starts_at\" >= '1969-12-31T00:00:00+00:00'::timestamptz"
                    " AND \"ends_at\" <= '2201-01-02T00:00:00+00:00'::timestamptz)",
                    'ALTER TABLE "approvals_delegation" DROP CONSTRAINT "delegation_bounded_times"',
                ),
            ],
        ),
    ]
