"""Rupees are written with their sign (₹45,000.00), not "Rs 45,000.00": the stored
summary line and amount of each request are put in the new form (the same text
``rebuild_read_models`` would write)."""

from django.db import migrations

REWRITE = """
UPDATE approvals_workflow
SET summary = replace(summary, 'Rs ', '₹'), amount_display = replace(amount_display, 'Rs ', '₹')
WHERE summary LIKE '%Rs %' OR amount_display LIKE '%Rs %'
"""


class Migration(migrations.Migration):
    dependencies = [("approvals", "0030_absence_handover")]
    operations = [migrations.RunSQL(REWRITE, migrations.RunSQL.noop)]
