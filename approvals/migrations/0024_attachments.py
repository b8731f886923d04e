from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0023_workflow_summary'),
    ]

    operations = []
