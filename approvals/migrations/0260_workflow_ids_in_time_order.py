"""A new workflow's id is a UUID of version 7 (time-ordered: its first 48 bits are the
millisecond of the start) instead of version 4 (random).

Every table the command path writes is keyed or indexed by the workflow's id (events,
tasks, participants, timers, visits, mails). A random id put each new row on a random
page of each of those indexes: a page to read into memory once the indexes outgrow it,
and a full image of that page in the write-ahead log when it is the first change to it
since the last checkpoint. Time-ordered ids put a new workflow's rows at the right-hand
end, on pages the previous starts touched. Existing ids stay as they are; the schema
does not change (the default lives in Python). bench/wal_per_command.py measures the
log written per start and decision."""

import uuid_utils.compat
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("approvals", "0250_inbox_counted_by_the_command")]

    operations = [
        migrations.AlterField(
            model_name="workflow",
            name="id",
            field=models.UUIDField(
                default=uuid_utils.compat.uuid7,
                editable=False,
                primary_key=True,
                serialize=False,
            ),
        ),
    ]
