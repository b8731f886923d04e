import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0018_bounded_times'),
    ]

    # A schedule made before this has no owner: it starts nothing until someone saves
    # it again (and so becomes the one its requests are filed for).
    operations = [
        migrations.AddField(
            model_name='startschedule',
            name='owner',
            field=models.ForeignKey(blank=True, editable=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='made by'),
        ),
    ]
