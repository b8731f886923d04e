# Drafts: requests saved before they are submitted (approvals.models.drafts).

import uuid

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import approvals.models.drafts


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0021_chained_seals'),
    ]

    operations = [
        migrations.CreateModel(
            name='Draft',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('template_key', models.SlugField(max_length=64)),
                ('subject_type', models.CharField(blank=True, max_length=64)),
                ('subject_id', models.CharField(blank=True, max_length=128)),
                ('data', models.JSONField(default=dict)),
                ('idempotency_key', models.CharField(default=approvals.models.drafts.new_idempotency_key, max_length=255)),
                ('created_at', models.DateTimeField()),
                ('updated_at', models.DateTimeField()),
                ('submitted_at', models.DateTimeField(blank=True, null=True)),
                ('author', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='drafts', to=settings.AUTH_USER_MODEL)),
                ('tenant', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='drafts', to='approvals.tenant')),
                ('workflow', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='approvals.workflow')),
            ],
            options={
                'indexes': [models.Index(fields=['tenant', 'author', '-updated_at'], name='approvals_d_tenant__cad1f0_idx')],
            },
        ),
    ]
