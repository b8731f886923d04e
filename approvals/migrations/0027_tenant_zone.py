# The organisation's time zone: what mails show times in for a person who chose none.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("approvals", "0026_search_text")]
    operations = [
        migrations.AddField(
            model_name="tenant",
            name="time_zone",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="E-mails show times in this zone to people who chose none of their own.",
                max_length=64,
            ),
        ),
    ]
