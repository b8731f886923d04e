"""Indexes every mail insert wrote and no query needs: the workflow's own index (the
unique (workflow, event_seq, recipient) index starts with it) and the LIKE index of
``message_id``, whose unique constraint is kept under the name the model now gives it."""

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def postgres_sql(sql: str, reverse_sql: str) -> migrations.RunPython:
    """``sql`` forwards and ``reverse_sql`` backwards, each handed whole to the schema
    editor (this migration's own copy: a migration imports no helper of the app)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(sql)

    def backwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(reverse_sql)

    return migrations.RunPython(forwards, backwards)


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0015_fewer_indexes'),
        ('notifications', '0002_mail_facts'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "notifications_mailmessage_message_id_d6391bc6_like"',
                    'CREATE INDEX "notifications_mailmessage_message_id_d6391bc6_like"'
                    ' ON "notifications_mailmessage" (message_id varchar_pattern_ops)',
                ),
                postgres_sql(
                    'ALTER TABLE "notifications_mailmessage" RENAME CONSTRAINT'
                    ' "notifications_mailmessage_message_id_key" TO "mail_message_id"',
                    'ALTER TABLE "notifications_mailmessage" RENAME CONSTRAINT'
                    ' "mail_message_id" TO "notifications_mailmessage_message_id_key"',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "notifications_mailmessage_workflow_id_056d1300"',
                    'CREATE INDEX "notifications_mailmessage_workflow_id_056d1300"'
                    ' ON "notifications_mailmessage" (workflow_id)',
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='mailmessage',
                    name='message_id',
                    field=models.CharField(max_length=255),
                ),
                migrations.AlterField(
                    model_name='mailmessage',
                    name='workflow',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='approvals.workflow'),
                ),
                migrations.AddConstraint(
                    model_name='mailmessage',
                    constraint=models.UniqueConstraint(fields=('message_id',), name='mail_message_id'),
                ),
            ],
        ),
    ]
