from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0022_drafts'),
    ]

    operations = []
