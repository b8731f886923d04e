"""A request its submitter cancelled reads "Withdrawn": its public status becomes
WITHDRAWN (``templates_engine.state.public_status``). The stored public status of each
one withdrawn before is put in the new form (what ``rebuild_read_models`` would write):
cancelled by its submitter, at once or after the undo the cancel started."""

from django.db import migrations

WITHDRAWN = """
UPDATE approvals_workflow w
SET public_status = 'WITHDRAWN'
FROM approvals_user u
WHERE w.submitter_id = u.id
  AND w.status = 'CANCELLED'
  AND w.public_status = 'CANCELLED'
  AND EXISTS (
    SELECT 1 FROM approvals_workflowevent e
    WHERE e.workflow_id = w.id
      AND (
        (e.type = 'WorkflowCancelled' AND e.payload->>'actor' = u.username)
        OR (
          e.type = 'CompensationStarted'
          AND e.payload->>'outcome' = 'CANCELLED'
          AND starts_with(e.payload->>'reason', 'cancelled by ' || u.username || ':')
        )
      )
  )
"""
CANCELLED = (
    "UPDATE approvals_workflow SET public_status = 'CANCELLED' WHERE public_status = 'WITHDRAWN'"
)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0124_event_recorded_names")]
    operations = [migrations.RunSQL(WITHDRAWN, CANCELLED)]
