"""The files a draft keeps while it is written (``DraftFile``): recorded on the request
when the draft is submitted, removed with the draft when it is deleted."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("approvals", "0038_write_path")]

    operations = [
        migrations.CreateModel(
            name="DraftFile",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("sha256", models.CharField(max_length=64)),
                ("name", models.CharField(max_length=255)),
                ("size", models.BigIntegerField()),
                ("content_type", models.CharField(max_length=64)),
                ("added_at", models.DateTimeField()),
                (
                    "draft",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="files",
                        to="approvals.draft",
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
                "constraints": [
                    models.UniqueConstraint(fields=("draft", "sha256"), name="draft_file_once")
                ],
            },
        ),
    ]
