"""The workflows' index on ``template_id`` alone is dropped: every start wrote it, and
every decision's update of the workflow opened it. No read asks for the workflows of
one template version (the lists filter by ``template_key`` and the tenant), and nothing
deletes a template version (the admin refuses; the reference has no database
constraint), so Django's ``PROTECT`` check, the one query by it, never runs."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("approvals", "0232_task_assignee_unindexed")]

    operations = [
        migrations.AlterField(
            model_name="workflow",
            name="template",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                to="approvals.workflowtemplate",
            ),
        ),
    ]
