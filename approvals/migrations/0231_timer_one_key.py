"""The timers' ``timer_tenant_key`` (tenant, workflow, key) is dropped: every timer's
insert wrote it and ``timer_key`` (workflow, key, tenant), the unique key, has the same
columns.

Migration 0044 made it in place of an index on the tenant alone, which the planner
walked for an organisation new since the last ANALYZE; with no index led by the tenant
the command path's lookups by workflow take ``timer_key`` whatever the planner believes
of the organisation (tests/approvals/access/test_new_organisation_plans.py). The one read
of an organisation's timers, the parked ones on the attention page, reads the timers
still to fire in ``timer_due`` (tests/approvals/test_write_path_indexes.py)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("approvals", "0230_event_indexes_of_what_is_named")]

    operations = [
        migrations.RemoveIndex(model_name="timer", name="timer_tenant_key"),
    ]
