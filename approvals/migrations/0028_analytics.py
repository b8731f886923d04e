# The analytics read model (approvals.models.analytics.StepVisit): one row per visit of
# a workflow to a step, projected in the command's transaction.
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("approvals", "0027_tenant_zone")]
    operations = [
        migrations.CreateModel(
            name="StepVisit",
            fields=[
                ("id", models.UUIDField(primary_key=True, serialize=False)),
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
                (
                    "workflow",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="visits",
                        to="approvals.workflow",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["tenant", "template_key", "entered_at"], name="visit_period"
                    ),
                    models.Index(fields=["tenant", "entered_at"], name="visit_tenant_period"),
                    models.Index(
                        condition=models.Q(("left_at__isnull", True)),
                        fields=["tenant", "entered_at"],
                        name="visit_open",
                    ),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tenant", "workflow", "entry"), name="visit_unique"
                    )
                ],
            },
        ),
    ]
