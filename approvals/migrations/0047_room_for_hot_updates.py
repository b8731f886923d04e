"""Room on every page for the rows each command updates in place: the rollup's day rows
(``approvals_stepday``, two per decision: the step left and the step entered) and each
person's inbox version (``approvals_inboxversion``, every holder a command touches).

An UPDATE is HOT (heap-only: no new index entry, less WAL) when no indexed column
changes and the row's page has room for the new version. Neither table's updates
change an indexed column, but both were packed full (the default fillfactor, 100), so
the new version usually went to another page and every index got a new entry (the
rollup has three). At 50 a page keeps half its space for new versions, which
PostgreSQL reclaims when it prunes the page. Both tables are small (a row per
organisation, template, step and day; a row per person), so the space costs little.
Existing pages get the room as they are rewritten (VACUUM FULL or a new page)."""

from django.db import migrations

TABLES = ("approvals_stepday", "approvals_inboxversion")


class Migration(migrations.Migration):
    dependencies = [("approvals", "0046_database_objects_from_files")]
    operations = [
        migrations.RunSQL(
            [f"ALTER TABLE {table} SET (fillfactor = 50)" for table in TABLES],
            [f"ALTER TABLE {table} RESET (fillfactor)" for table in TABLES],
        )
    ]
