# Reserved: filled in by the change that needs it (kept as a no-op until then).
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("approvals", "0031_rupee_sign")]
    operations: list[migrations.operations.base.Operation] = []
