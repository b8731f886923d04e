from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0018_bounded_times'),
    ]

    operations = []
