from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0019_schedule_owner'),
    ]

    operations = [
        migrations.AddField(
            model_name='tenant',
            name='outbound_hosts',
            field=models.TextField(
                blank=True,
                db_default='',
                default='',
                help_text=(
                    "The hosts workflow templates may call, one per line (erp.example.com). Add the"
                    " word 'private' after a host to allow its private addresses too."
                ),
            ),
        ),
    ]
