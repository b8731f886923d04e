"""A mail kind for a held decision refused when its undo window passed."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0006_digest_hour"),
    ]

    operations = [
        migrations.AlterField(
            model_name="mailmessage",
            name="kind",
            field=models.CharField(
                choices=[
                    ("task_assigned", "Task Assigned"),
                    ("reminder", "Reminder"),
                    ("escalated", "Escalated"),
                    ("escalated_away", "Escalated Away"),
                    ("sent_back", "Sent Back"),
                    ("outcome_approved", "Outcome Approved"),
                    ("outcome_rejected", "Outcome Rejected"),
                    ("outcome_cancelled", "Outcome Cancelled"),
                    ("outcome_failed", "Outcome Failed"),
                    ("comment", "Comment"),
                    ("mentioned", "Mentioned"),
                    ("withdrawn", "Withdrawn"),
                    ("held_not_recorded", "Held Not Recorded"),
                ],
                max_length=32,
            ),
        ),
    ]
