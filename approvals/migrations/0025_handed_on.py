from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0024_attachments'),
    ]

    operations = []
