"""Reserved: filled in by the change that owns this number."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("approvals", "0036_daily_seals")]
    operations: list = []
