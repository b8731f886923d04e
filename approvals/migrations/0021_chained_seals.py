from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0020_outbound_hosts'),
    ]

    operations = []
