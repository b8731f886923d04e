# The inbox's summary line and amount, projected onto the workflow row
# (approvals.data_words), and filled for the workflows that ran before them.

from django.db import migrations, models

BATCH = 500


def fill_summaries(apps, schema_editor):
    """Each workflow's summary and amount, computed as the command path computes them:
    from its data under its pinned workflow template version."""
    from approvals.data_words import summary_line, workflow_summary
    from templates_engine import Definition, DefinitionError

    Workflow = apps.get_model("approvals", "Workflow")
    WorkflowTemplate = apps.get_model("approvals", "WorkflowTemplate")
    definitions = {}

    def summarise(wf):
        if wf.template_id not in definitions:
            template = WorkflowTemplate.objects.get(pk=wf.template_id)
            try:
                definitions[wf.template_id] = Definition.parse(
                    template.definition, version=template.version
                )
            except DefinitionError:
                definitions[wf.template_id] = template.title or template.key
        definition = definitions[wf.template_id]
        data = wf.data if isinstance(wf.data, dict) else {}
        if isinstance(definition, str):  # no longer parses: the default line, no amount
            line = summary_line(
                title=definition, summary=None, schema=None, subject_id=wf.subject_id, data={}
            )
            return line, ""
        return workflow_summary(definition, wf.subject_id, data)

    batch = []
    for wf in Workflow.objects.only("id", "template_id", "subject_id", "data").iterator(
        chunk_size=BATCH
    ):
        wf.summary, wf.amount_display = summarise(wf)
        batch.append(wf)
        if len(batch) >= BATCH:
            Workflow.objects.bulk_update(batch, ["summary", "amount_display"])
            batch = []
    if batch:
        Workflow.objects.bulk_update(batch, ["summary", "amount_display"])


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0022_drafts"),
    ]

    operations = [
        migrations.AddField(
            model_name="workflow",
            name="summary",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="workflow",
            name="amount_display",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(fill_summaries, migrations.RunPython.noop),
    ]
