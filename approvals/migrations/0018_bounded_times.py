from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0017_shared_rows_unchecked'),
    ]

    operations = []
