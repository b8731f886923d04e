from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0019_schedule_owner'),
    ]

    operations = []
