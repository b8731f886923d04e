from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0021_chained_seals'),
    ]

    operations = []
