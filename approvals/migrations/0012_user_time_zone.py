from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0011_tenant_fallback_approver"),
    ]

    operations = [
        migrations.AddField(
            model_name="user",
            name="time_zone",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
    ]
